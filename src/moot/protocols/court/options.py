"""The court's options: the `[court]` section of a config file (seed 002's DebateConfig)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from moot.config import AgentConfig, Section

__all__ = ["COURT_DEFAULTS", "CourtOptions"]


class CourtOptions(Section):
    """The court (seed 002 DebateConfig). The seed's timeouts, retries, concurrency and total
    limits are `limits` and `engine` (see COURT_DEFAULTS); the agents are `agents`."""

    topic: str | None = Field(
        default=None, min_length=1, max_length=1000, description="the task when none is given"
    )
    initial_query: str | None = Field(default=None, max_length=2000)
    judge_panel_enabled: bool = True
    judges: list[AgentConfig] | None = Field(
        default=None,
        max_length=15,
        description="judge models; unset: one judge per agent model, at least 3",
    )
    max_agent_rounds: int = Field(default=4, ge=1, le=10)
    max_judge_rounds: int = Field(default=3, ge=1, le=5)
    consensus_threshold: float = Field(default=0.67, ge=0.5, le=1.0)
    judge_consensus_threshold: float = Field(default=0.6, ge=0.5, le=1.0)
    judge_min_confidence: float = Field(default=0.7, ge=0.0, le=1.0)
    judge_positions_scope: Literal["all_rounds", "last_round"] = "all_rounds"
    context_topology: Literal["full_history", "last_round", "last_round_with_self"] = (
        "last_round_with_self"
    )
    checkpoint_dir: str | None = Field(
        default=None, description="plays MOOT_HOME for this run: sessions go to DIR/sessions"
    )
    round_timeout: float = Field(default=300.0, ge=10, le=1800, description="seconds a round")
    max_tokens_per_response: int = Field(default=2048, ge=256, le=16384)
    max_context_tokens: int = Field(default=12_000, ge=1000, le=128_000)
    deterministic_mode: bool = Field(
        default=False, description="temperature 0, no retries, no JSON repair, no re-ask"
    )
    allow_external_paths: bool = Field(
        default=False, description="allow files named in the config outside the working folder"
    )

    @field_validator("judges")
    @classmethod
    def _panel_size(
        cls, value: list[AgentConfig] | None, info: ValidationInfo
    ) -> list[AgentConfig] | None:
        if value is not None and info.data.get("judge_panel_enabled", True) and len(value) < 3:
            raise ValueError(
                f"the judge panel needs at least 3 judges when enabled ({len(value)} given); "
                "add judges or set judge_panel_enabled = false"
            )
        return value

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
        return [agents[i % len(agents)].model_copy(update=as_judge) for i in range(count)]

    def participant(self, agent: AgentConfig, *, judge: bool) -> AgentConfig:
        """`agent` as the court calls it: the seed's temperatures (0.7 agents, 0.3 judges)
        unless set, 0 in deterministic mode; `max_tokens_per_response` unless set."""
        if self.deterministic_mode:
            temperature: float | None = 0.0
        elif agent.temperature is not None:
            temperature = agent.temperature
        else:
            temperature = 0.3 if judge else 0.7
        return agent.model_copy(
            update={
                "temperature": temperature,
                "max_tokens": agent.max_tokens or self.max_tokens_per_response,
            }
        )


# The seed's defaults for the settings the court shares with other protocols, applied to
# `limits` and `engine` when a court config leaves them out (seed section 4).
COURT_DEFAULTS: dict[str, dict[str, Any]] = {
    "limits": {"call_timeout": 120.0, "timeout": 1200.0, "max_tokens": 200_000, "max_cost": 25.0},
    "engine": {"attempts": 3, "backoff_initial": 1.0, "backoff_max": 8.0, "concurrency": 4},
}
