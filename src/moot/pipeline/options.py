"""The feature pipeline's options: the `[pipeline]` section of a config file (seed 004's
config.json: roles and their models, the two tournaments, QA gates, `qa_retry_limit`,
guardrails). `moot plan` and `moot execute` set `phase` and `plan`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

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
    critic: AgentConfig | None = Field(default=None, description="plan gate and tournament critic")
    reviser: AgentConfig | None = Field(default=None, description="the tournaments' author B")
    synthesizer: AgentConfig | None = None
    judge: AgentConfig | None = None
    developer: AgentConfig | None = None
    reviewer: AgentConfig | None = None
    test_engineer: AgentConfig | None = None
    sounding_board: AgentConfig | None = None


class TournamentSettings(Section):
    enabled: bool = True
    judges: int = Field(default=3, ge=1, le=9)
    convergence_k: int = Field(default=2, ge=1, le=10)
    max_passes: int = Field(default=15, ge=1, le=50)


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
    timeout: float = Field(default=600.0, gt=0, description="seconds per gate command")


class Guardrails(Section):
    """Per task: model calls (retries and re-asks included), wall time of its live work, the
    size of its diff. The plan's cost budget is `--max-cost` (`[limits] max_cost`)."""

    max_calls_per_task: int = Field(default=60, ge=1)
    max_seconds_per_task: float = Field(default=900.0, gt=0)
    max_diff_bytes: int = Field(default=5_242_880, ge=1)


class PipelineOptions(Section):
    """Seed 004's pipeline: `phase = "plan"` explores, drafts, refines and gates a plan;
    `phase = "execute"` runs an approved plan's tasks."""

    phase: Literal["plan", "execute"] = "plan"
    plan: str | None = Field(default=None, description="execute: the plan's JSON (moot execute)")
    approved: str | None = Field(
        default=None, description="execute: the plan as the critic approved it, when known"
    )
    plan_from: str | None = Field(default=None, description="execute: where the plan came from")
    task: str | None = Field(default=None, description="execute: this task and those it needs")
    roles: Roles = Field(default_factory=Roles)
    plan_tournament: TournamentSettings = Field(default_factory=TournamentSettings)
    impl_tournament: TournamentSettings = Field(default_factory=_impl)
    gate_revisions: int = Field(
        default=2, ge=0, le=10, description="plan revisions after the critic's NEEDS_REVISION"
    )
    qa_retry_limit: int = Field(
        default=3, ge=0, le=20, description="developer retries per task (gates, review, tests)"
    )
    gates: Gates = Field(default_factory=Gates)
    guardrails: Guardrails = Field(default_factory=Guardrails)
    branch: str | None = Field(
        default=None, description="the branch the tasks are committed on (moot-plan/<session>)"
    )
    lessons: bool = Field(default=True, description="keep and offer lessons per repository")
    plan_max_tokens: int = Field(
        default=2048,
        ge=256,
        description="the most tokens the architect's plan (the draft, each revision) may take; "
        "an agent's larger max_tokens wins",
    )
    max_quote_chars: int = Field(default=20_000, ge=200)
