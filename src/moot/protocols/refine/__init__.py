"""The refine protocol (seed 004, "Tournaments"): one text improved pass by pass. A critic finds
its problems, author B revises it, a synthesizer merges A and B, judges rank A, B and AB by
Borda count with ties to the incumbent, until the incumbent wins k passes in a row. On a code
task (`--repo`; `--preset impl`) the candidates are changes in git worktrees (refine/code.py)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from moot.config import RunConfig
from moot.engine.session import Session
from moot.protocols.definition import (
    Conduct,
    Flag,
    Participants,
    ProtocolDefinition,
    Role,
    RoundsNeeded,
)
from moot.protocols.refine.code import run_code
from moot.protocols.refine.options import RefineOptions
from moot.protocols.refine.projection import project
from moot.protocols.refine.run import run
from moot.protocols.refine.summary import describe_round, feedback
from moot.types import Outcome

__all__ = ["PROTOCOL", "RefineOptions"]


def _participants(config: RunConfig, options: RefineOptions) -> list[Role]:
    """The agents, then a participant per role set in `[refine.roles]`. Without a judge set
    there, the agents take turns as judges (cast.py)."""
    roles = [Role("agent", "aliases", config.agents, judges=options.roles.judge is None)]
    for prefix, member in options.roles.by_prefix():
        if member is not None:
            roles.append(Role(prefix, f"{prefix}s", [member], judges=prefix == "judge"))
    return roles


async def _run(s: Session, task: str, options: RefineOptions) -> Outcome:
    if s.code_task:
        return await run_code(s, task, options)
    return await run(s, task, options)


def _check(data: Mapping[str, Any], cwd: Path) -> list[str]:
    section = data.get("refine")
    preset = section.get("preset") if isinstance(section, Mapping) else None
    if preset == "impl" and not data.get("code"):
        return [
            "refine.preset: impl is the implementation tournament of a code task: give "
            "--repo PATH (or a [code] table), or use preset impl-defaults for a text"
        ]
    return []


def _rounds_needed(options: RefineOptions) -> RoundsNeeded:
    """Converging takes `convergence_k` passes at least: the incumbent's wins in a row."""
    k = options.convergence_k
    why = f"the incumbent must win convergence_k = {k} passes in a row"
    return RoundsNeeded(rounds=k, goal="converge", why=why)


PROTOCOL = ProtocolDefinition(
    name="refine",
    summary="improve one text: critic, revision, synthesis, Borda judges, until it holds",
    options=RefineOptions,
    conduct=Conduct(_run, describe_round, project),
    participants=Participants(_participants),
    flags={Flag.ROUNDS: "max_passes", Flag.INPUT: "input", Flag.PRESET: "preset"},
    code_tasks=True,
    check=_check,
    script="moot.protocols.refine.scripting:SCRIPT",
    feedback=feedback,  # the last critique and the judges' reasons
    rounds_needed=_rounds_needed,
)
