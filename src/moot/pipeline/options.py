"""The feature pipeline's options: the `[pipeline]` section of a config file (seed 004's
config.json: roles and their models, the two tournaments, QA gates, `qa_retry_limit`,
guardrails). `moot plan` and `moot execute` set `phase` and `plan`."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, field

from moot.config import AgentConfig, Section

__all__ = ["GATE_NAMES", "Gates", "Guardrails", "PipelineOptions", "Roles", "TournamentSettings"]

# The QA gates in the order they run (seed 004: syntax -> lint -> build -> tests -> secretscan).
GATE_NAMES = ("syntax", "lint", "build", "tests", "secrets")


class Roles(Section):
    """A model per role. An unset role takes one of the agents given with `--models`, in turn,
    so that no role judges its own output where there are two models or more: the reviewer, the
    critic and the judges are never the developer's or the architect's model then."""

    explorer: AgentConfig | None = None
    domain_expert: AgentConfig | None = None
    architect: AgentConfig | None = None
    critic: Annotated[AgentConfig, Meta(description="plan gate and tournament critic")] | None = (
        None
    )
    reviser: Annotated[AgentConfig, Meta(description="the tournaments' author B")] | None = None
    synthesizer: AgentConfig | None = None
    judge: AgentConfig | None = None
    developer: AgentConfig | None = None
    reviewer: AgentConfig | None = None
    test_engineer: AgentConfig | None = None
    sounding_board: AgentConfig | None = None


class TournamentSettings(Section):
    enabled: bool = True
    judges: Annotated[int, Meta(ge=1, le=9)] = 3
    convergence_k: Annotated[int, Meta(ge=1, le=10)] = 2
    max_passes: Annotated[int, Meta(ge=1, le=50)] = 15


def _impl() -> TournamentSettings:
    return TournamentSettings(judges=1, convergence_k=1, max_passes=3)


class Gates(Section):
    """Each gate: "auto" (detected from the repository: for a Python project, compile for
    syntax, ruff for lint when the project uses it, pytest for tests when it has tests), a shell
    command of your own, or "" to skip it. `secrets` scans each change for keys."""

    syntax: str = "auto"
    lint: str = "auto"
    build: str = "auto"
    tests: str = "auto"
    secrets: bool = True
    timeout: Annotated[float, Meta(gt=0, description="seconds per gate command")] = 600.0


class Guardrails(Section):
    """Per task: model calls (retries and re-asks included), wall time of its live work, the
    size of its diff. The plan's cost budget is `--max-cost` (`[limits] max_cost`)."""

    max_calls_per_task: Annotated[int, Meta(ge=1)] = 60
    max_seconds_per_task: Annotated[float, Meta(gt=0)] = 900.0
    max_diff_bytes: Annotated[int, Meta(ge=1)] = 5_242_880


class PipelineOptions(Section):
    """Seed 004's pipeline: `phase = "plan"` explores, drafts, refines and gates a plan;
    `phase = "execute"` runs an approved plan's tasks."""

    phase: Literal["plan", "execute"] = "plan"
    plan: Annotated[str, Meta(description="execute: the plan's JSON (moot execute)")] | None = None
    approved: (
        Annotated[str, Meta(description="execute: the plan as the critic approved it, when known")]
        | None
    ) = None
    plan_from: Annotated[str, Meta(description="execute: where the plan came from")] | None = None
    task: Annotated[str, Meta(description="execute: this task and those it needs")] | None = None
    roles: Roles = field(default_factory=Roles)
    plan_tournament: TournamentSettings = field(default_factory=TournamentSettings)
    impl_tournament: TournamentSettings = field(default_factory=_impl)
    gate_revisions: Annotated[
        int, Meta(ge=0, le=10, description="plan revisions after the critic's NEEDS_REVISION")
    ] = 2
    qa_retry_limit: Annotated[
        int, Meta(ge=0, le=20, description="developer retries per task (gates, review, tests)")
    ] = 3
    gates: Gates = field(default_factory=Gates)
    guardrails: Guardrails = field(default_factory=Guardrails)
    branch: (
        Annotated[
            str, Meta(description="the branch the tasks are committed on (moot-plan/<session>)")
        ]
        | None
    ) = None
    lessons: Annotated[bool, Meta(description="keep and offer lessons per repository")] = True
    plan_max_tokens: Annotated[
        int,
        Meta(
            ge=256,
            description="the most tokens the architect's plan (the draft, each revision) may "
            "take; an agent's larger max_tokens wins",
        ),
    ] = 2048
    max_quote_chars: Annotated[int, Meta(ge=200)] = 20_000
