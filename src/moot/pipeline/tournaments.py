"""The pipeline's two tournaments (seed 004): each is a `refine` session of its own, a child of
the pipeline's session, in `<session>/tournaments/<session>-<label>/`.

The plan tournament refines the plan's JSON as a text (plan defaults: 3 judges, k = 2, up to 15
passes). The implementation tournament runs on a code task whose repository is a worktree of
the pipeline holding the task's starting state, with the developer's change as version A (impl
defaults: 1 judge, k = 1, 3 passes).

A child is one journaled effect of the pipeline's session (`Session.effect`): its id is derived
from the parent's and the step, so a pipeline killed while a child runs finds the child again on
resume and resumes it (its recorded steps cost nothing), or starts it again when the kill came
while its folder was being made (nothing was asked in it then); once the child has ended, the
parent's journal holds what the pipeline needs from it (final text or patch, label, cost), and
neither resume nor replay runs it again."""

from __future__ import annotations

import shutil
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from moot.config import CodeSettings, RunConfig, dump
from moot.engine.replies import call_settings_masked, masked
from moot.engine.session import Session
from moot.engine.store import folder_problem
from moot.errors import Interrupted, LimitReached
from moot.pipeline.options import PipelineOptions, TournamentSettings

__all__ = ["Played", "play"]

_PROTOCOL = "refine"  # the seed's tournaments, composed from the floor above the protocols


class Played(Struct, frozen=True):
    """What the pipeline keeps of a child tournament."""

    session: str  # the child's id
    status: str  # consensus (converged), no_consensus, failed
    final: str  # the final text, or the winning change's patch
    reason: str  # the child's label reason or failure message
    passes: int
    cost: float
    details: dict[str, Any]

    @property
    def ended(self) -> bool:
        return self.status in ("consensus", "no_consensus")


def _child_config(
    parent: RunConfig,
    opts: PipelineOptions,
    settings: TournamentSettings,
    *,
    input_text: str,
    seed: int,
    code: CodeSettings | None,
    max_cost: float | None,
) -> RunConfig:
    roles = {
        "critic": opts.roles.critic,
        "author_b": opts.roles.reviser,
        "synthesizer": opts.roles.synthesizer,
        "judge": opts.roles.judge,
    }
    section = {
        "judges": settings.judges,
        "convergence_k": settings.convergence_k,
        "max_passes": settings.max_passes,
        "input": input_text,
        "max_quote_chars": opts.max_quote_chars,
        "roles": {k: dump(v) for k, v in roles.items() if v is not None},
    }
    limits = replace(parent.limits, max_cost=max_cost)
    return RunConfig.read(
        {
            "protocol": _PROTOCOL,
            "agents": dump(parent.agents),
            "limits": dump(limits),
            "engine": dump(parent.engine),
            "prices": parent.prices,
            "seed": seed,
            "code": dump(code) if code is not None else None,
            _PROTOCOL: section,
        }
    )


def _with_call_secrets(s: Session, parent: RunConfig) -> RunConfig:
    """The recorded config with each agent's header and base_url secrets (masked in the
    session's files) taken from the participant configured alike: a child tournament calls
    with them."""
    real = [s.agent(alias).config for alias in s.aliases]
    agents = []
    for entry in parent.agents:
        recorded = call_settings_masked(dump(entry))
        same = (c for c in real if masked(call_settings_masked(dump(c))) == recorded)
        agents.append(next(same, entry))
    return replace(parent, agents=agents)


async def play(
    s: Session,
    step: str,
    label: str,
    *,
    task: str,
    input_text: str,
    settings: TournamentSettings,
    opts: PipelineOptions,
    tree: str | None = None,
    verify: tuple[list[str], float] = ([], 600.0),
    max_cost: float | None = None,
) -> Played:
    """Run (or find again and finish) the child tournament `label` and journal what it gave:
    a text tournament, or with `tree` a code one whose repository is that worktree of the
    pipeline, verified by `verify` (commands, seconds each)."""
    parent = _with_call_secrets(s, RunConfig.read(s.meta.get("config") or {}))
    seed = s.rng(step).randrange(2**31)
    child_id = f"{s.folder.id}-{label}"
    root = s.folder.path / "tournaments"

    async def compute() -> dict[str, Any]:
        from moot.lifecycle.run import resume_async, start_async

        folder = root / child_id
        if folder.is_dir() and folder_problem(folder) is not None:
            # killed while the child was being created (its folder, session.json, begin
            # event): nothing was asked in it, so it starts again
            shutil.rmtree(folder)
        code = None
        if tree is not None:
            commands, seconds = verify
            code = CodeSettings(
                repo=s.worktree_path(tree), verify_commands=commands, verify_timeout=seconds
            )
        config = _child_config(
            parent,
            opts,
            settings,
            input_text=input_text,
            seed=seed,
            code=code,
            max_cost=max_cost,
        )
        if folder.is_dir():  # its headers' secrets, masked in its files, from its config
            ran = await resume_async(child_id, root=root, config=config.dump())
        else:
            ran = await start_async(task, config, root=root, session_id=child_id)
        result = ran.result
        if result.status == "paused":
            raise LimitReached(f"the tournament {child_id} stopped: {ran.message or 'a limit'}")
        if result.status == "interrupted":
            raise Interrupted(f"the tournament {child_id} was interrupted")
        return {
            "session": child_id,
            "status": result.status,
            "final": result.final_answer,
            "reason": result.finding.reason if result.finding is not None else ran.message or "",
            "passes": result.rounds,
            "cost": result.cost or 0.0,
            "details": _kept(result.details),
        }

    data = await s.effect(step, "tournament", compute)
    return Played(
        session=str(data["session"]),
        status=str(data["status"]),
        final=str(data["final"]),
        reason=str(data["reason"]),
        passes=int(data["passes"]),
        cost=float(data["cost"]),
        details=dict(data["details"]),
    )


def _kept(details: dict[str, Any]) -> dict[str, Any]:
    """The part of the child's details the pipeline decides on: the winning worktree and each
    candidate's verification (not its patch again)."""
    code = details.get("code") or {}
    return {
        "winner": details.get("winner"),
        "checks": {
            name: [bool(c.get("exit_code") == 0 and not c.get("timed_out")) for c in row["checks"]]
            for name, row in code.items()
            if isinstance(row, dict)
        },
    }
