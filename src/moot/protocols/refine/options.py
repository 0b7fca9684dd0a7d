"""The refine protocol's options: the `[refine]` section of a config file (seed 004,
"Tournaments" and its configuration: `num_judges`, `convergence_k`, `max_rounds`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, field

from moot.config import AgentConfig, Section

__all__ = ["PRESETS", "RefineOptions", "RefineRoles"]

# The seed's two tournaments: the plan tournament (the default) and the implementation one.
# `impl` is the implementation tournament itself: its defaults, on a code task (--repo), where
# the candidates A, B and AB are changes in worktrees a, b<n> and ab<n> (refine/code.py).
PRESETS: dict[str, dict[str, int]] = {
    "plan-defaults": {"judges": 3, "convergence_k": 2, "max_passes": 15},
    "impl-defaults": {"judges": 1, "convergence_k": 1, "max_passes": 3},
    "impl": {"judges": 1, "convergence_k": 1, "max_passes": 3},
}


class RefineRoles(Section):
    """A model per role; an unset role rotates through the agents given with `--models`."""

    critic: AgentConfig | None = None
    author_b: AgentConfig | None = None
    synthesizer: AgentConfig | None = None
    judge: AgentConfig | None = None

    def by_prefix(self) -> tuple[tuple[str, AgentConfig | None], ...]:
        """Each role with the alias prefix its model takes part under (author B's: reviser)."""
        return (
            ("critic", self.critic),
            ("reviser", self.author_b),
            ("synthesizer", self.synthesizer),
            ("judge", self.judge),
        )


class RefineOptions(Section):
    """Self-refinement by tournament: critic, author B, synthesizer, Borda judges."""

    preset: (
        Annotated[
            Literal["plan-defaults", "impl-defaults", "impl"],
            Meta(
                description="the seed's defaults: plan-defaults (3 judges, k=2, 15 passes) or "
                "impl-defaults (1 judge, k=1, 3 passes); impl: the implementation tournament, "
                "impl-defaults on a code task (--repo); options set explicitly win"
            ),
        ]
        | None
    ) = None
    judges: Annotated[int, Meta(ge=1, le=9, description="judges ranking A, B and AB")] = 3
    convergence_k: Annotated[
        int, Meta(ge=1, le=10, description="the incumbent must win this many passes in a row")
    ] = 2
    max_passes: Annotated[int, Meta(ge=1, le=50, description="passes at most")] = 15
    input: (
        Annotated[
            str,
            Meta(
                description="the text to refine, or on a code task a unified diff against the "
                "repository, applied as change A (set by --input FILE); unset: the first is written"
            ),
        ]
        | None
    ) = None
    max_quote_chars: Annotated[int, Meta(ge=200, description="per quoted version")] = 20_000
    roles: RefineRoles = field(default_factory=RefineRoles)

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        """A preset fills the options the section leaves unset."""
        if data.get("preset") in PRESETS:
            return {**PRESETS[data["preset"]], **data}
        return data
