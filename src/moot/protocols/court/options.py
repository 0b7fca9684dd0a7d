"""The court's options: the `[court]` section of a config file (seed 002's DebateConfig)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta
from msgspec.structs import replace

from moot.config import AgentConfig, Section
from moot.config.reading import FieldProblem

__all__ = ["COURT_DEFAULTS", "CourtOptions"]


class CourtOptions(Section):
    """The court (seed 002 DebateConfig). The seed's timeouts, retries, concurrency and total
    limits are `limits` and `engine` (see COURT_DEFAULTS); the agents are `agents`."""

    topic: (
        Annotated[
            str, Meta(min_length=1, max_length=1000, description="the task when none is given")
        ]
        | None
    ) = None
    initial_query: Annotated[str, Meta(max_length=2000)] | None = None
    judge_panel_enabled: bool = True
    judges: (
        Annotated[
            list[AgentConfig],
            Meta(
                max_length=15,
                description="judge models; unset: one judge per agent model, at least 3",
            ),
        ]
        | None
    ) = None
    max_agent_rounds: Annotated[int, Meta(ge=1, le=10)] = 4
    max_judge_rounds: Annotated[int, Meta(ge=1, le=5)] = 3
    consensus_threshold: Annotated[float, Meta(ge=0.5, le=1.0)] = 0.67
    judge_consensus_threshold: Annotated[float, Meta(ge=0.5, le=1.0)] = 0.6
    judge_min_confidence: Annotated[float, Meta(ge=0.0, le=1.0)] = 0.7
    judge_positions_scope: Literal["all_rounds", "last_round"] = "all_rounds"
    context_topology: Literal["full_history", "last_round", "last_round_with_self"] = (
        "last_round_with_self"
    )
    checkpoint_dir: (
        Annotated[
            str, Meta(description="plays MOOT_HOME for this run: sessions go to DIR/sessions")
        ]
        | None
    ) = None
    round_timeout: Annotated[float, Meta(ge=10, le=1800, description="seconds a round")] = 300.0
    max_tokens_per_response: Annotated[int, Meta(ge=256, le=16384)] = 2048
    max_context_tokens: Annotated[int, Meta(ge=1000, le=128_000)] = 12_000
    deterministic_mode: Annotated[
        bool, Meta(description="temperature 0, no retries, no JSON repair, no re-ask")
    ] = False
    allow_external_paths: Annotated[
        bool, Meta(description="allow files named in the config outside the working folder")
    ] = False

    def __post_init__(self) -> None:
        judges = self.judges
        if judges is not None and self.judge_panel_enabled and len(judges) < 3:
            raise FieldProblem(
                "judges",
                f"the judge panel needs at least 3 judges when enabled ({len(judges)} given); "
                "add judges or set judge_panel_enabled = false",
            )

    def judge_configs(self, agents: list[AgentConfig]) -> list[AgentConfig]:
        """The panel: the configured judges, else the agents (cycled to 3), each called as its
        agent is (options, base URL, key, headers, timeout, prices) but with a judge's own
        temperature, answer size and no role description."""
        if not self.judge_panel_enabled:
            return []
        if self.judges is not None:
            return list(self.judges)
        count = max(3, len(agents))
        as_judge = {"temperature": None, "max_tokens": None, "system_prompt": None}
        return [replace(agents[i % len(agents)], **as_judge) for i in range(count)]

    def participant(self, agent: AgentConfig, *, judge: bool) -> AgentConfig:
        """`agent` as the court calls it: the seed's temperatures (0.7 agents, 0.3 judges)
        unless set, 0 in deterministic mode; `max_tokens_per_response` unless set."""
        if self.deterministic_mode:
            temperature: float | None = 0.0
        elif agent.temperature is not None:
            temperature = agent.temperature
        else:
            temperature = 0.3 if judge else 0.7
        return replace(
            agent,
            temperature=temperature,
            max_tokens=agent.max_tokens or self.max_tokens_per_response,
        )


# The seed's defaults for the settings the court shares with other protocols, applied to
# `limits` and `engine` when a court config leaves them out (seed section 4).
COURT_DEFAULTS: dict[str, dict[str, Any]] = {
    "limits": {"call_timeout": 120.0, "timeout": 1200.0, "max_tokens": 200_000, "max_cost": 25.0},
    "engine": {"attempts": 3, "backoff_initial": 1.0, "backoff_max": 8.0, "concurrency": 4},
}
