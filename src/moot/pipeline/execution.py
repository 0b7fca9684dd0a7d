"""The execute phase (seed 004, steps 6-8): an approved plan's tasks, serially, in dependency
order, each through the task state machine (task.py):

    plan = the plan given (validated; an edit of the approved plan journaled as the user's)
    main = worktree at the baseline                      # the plan's branch, one commit a task
    gates = the QA gates, configured or detected from the repository
    for task in plan order:
        --task ID: skip the tasks ID does not need
        a task it depends on is not complete: blocked too
        run the task (task.py)
    any task blocked: wait for the user (exit 3; `moot resume` tries it again)
    else: the branch's cumulative patch; lessons learnt for the repository

The user's branch and working tree are never touched: the result is the branch
`moot-plan/<session>`, to merge or `moot apply`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from moot.engine.session import Session
from moot.errors import FormatError, ProtocolAborted, Waiting
from moot.pipeline import lessons
from moot.pipeline.document import PlanDoc, parse_plan
from moot.pipeline.gates import detect, plugins, resolve
from moot.pipeline.options import PipelineOptions
from moot.pipeline.planning import repo_lessons, repo_of, role, warn_self_review
from moot.pipeline.task import Context, TaskRun, move, run_task
from moot.text import plural
from moot.types import Finding, Outcome

__all__ = ["execute_phase"]


# -- the plan, and what the user changed ------------------------------------------------------
def _accepted(s: Session, opts: PipelineOptions) -> PlanDoc:
    if not opts.plan:
        raise ProtocolAborted("no plan to execute: give one with moot execute PLAN")
    try:
        doc = parse_plan(opts.plan)
    except FormatError as exc:
        raise ProtocolAborted(f"the plan is not valid: {exc}; fix the file and run again") from None
    if opts.approved is not None and opts.approved.strip() != opts.plan.strip():
        import difflib

        diff = "".join(
            difflib.unified_diff(
                opts.approved.splitlines(keepends=True),
                opts.plan.splitlines(keepends=True),
                "approved plan",
                "executed plan",
            )
        )
        s.note("t0/user_change", source=opts.plan_from or "", diff=diff)
        s.artifact("plan/user_change.diff", diff)
    s.artifact("plan.json", doc.to_json())
    return doc


# -- the plan ---------------------------------------------------------------------------------
async def execute_phase(s: Session, task: str, opts: PipelineOptions) -> Outcome:
    doc = _accepted(s, opts)
    if opts.task is not None and doc.task(opts.task) is None:
        raise ProtocolAborted(
            f"the plan has no task {opts.task!r}; its tasks: {', '.join(t.id for t in doc.tasks)}"
        )
    warn_self_review(s, "developer", "reviewer")
    known = await repo_lessons(s, "t0/lessons", opts)
    await s.add_worktree("main", step="t0/worktree/main")

    async def detected() -> dict[str, Any]:
        return {"detected": detect(Path(s.worktree_path("main"))), "plugins": plugins()}

    found = await s.effect("t0/gates", "gates", detected)
    ctx = Context(
        task,
        doc,
        opts,
        resolve(opts.gates, dict(found["detected"]), dict(found["plugins"])),
        known,
        opts.branch or f"moot-plan/{s.folder.id}",
    )
    wanted = doc.needed_by(opts.task) if opts.task else None
    runs: dict[str, TaskRun] = {}
    for number, spec in enumerate(doc.order(), 1):
        run = runs[spec.id] = TaskRun(spec, number)
        if wanted is not None and spec.id not in wanted:
            move(s, run, "skipped", f"not needed for --task {opts.task}")
            continue
        stuck = [d for d in spec.depends_on if runs[d].state != "complete"]
        if stuck:
            move(
                s,
                run,
                "blocked",
                "depends on " + ", ".join(f"{d} ({runs[d].state})" for d in stuck),
            )
            run.reason = run.path[-1]["why"]
            continue
        await run_task(s, ctx, run)
    await _learn(s, ctx)
    return _outcome(s, ctx, runs, await _final(s, runs))


async def _final(s: Session, runs: dict[str, TaskRun]) -> str:
    """The branch's cumulative patch against the user's HEAD (final.patch); none while a task
    is blocked: the resume that completes it changes the patch, and a step is journaled once."""
    if any(r.state == "blocked" for r in runs.values()):
        return ""
    done = await s.change(role(s, "developer"), step="t0/final/change", tree="main")
    s.artifact("final.patch", done.patch)
    return done.patch


async def _learn(s: Session, ctx: Context) -> None:
    repo = repo_of(s)
    if not ctx.opts.lessons or not repo or not ctx.learnt:
        return

    async def compute() -> list[str]:
        return lessons.learn(repo, ctx.learnt, s.folder.id)

    await s.effect("t0/learn", "lessons", compute)


def _waiting(s: Session, ctx: Context, blocked: list[TaskRun], done: list[TaskRun]) -> str:
    """What a run that stops on blocked tasks says: each task and why, what is kept (a branch
    only when a task was committed on it), and what the person can do about it."""
    listed = "; ".join(f"{r.spec.id} ({r.reason})" for r in blocked)
    if done:
        kept = (
            f"{plural(len(done), 'completed task')} ({', '.join(r.spec.id for r in done)}) "
            f"{'is' if len(done) == 1 else 'are'} committed on branch {ctx.branch}."
        )
    else:
        kept = "No task was completed, so no branch was made."
    folder = s.folder.path
    own = [r for r in blocked if not r.reason.startswith("depends on ")] or blocked
    ids = ", ".join(r.spec.id for r in own)
    return (
        f"{plural(len(blocked), 'task')} blocked: {listed}. {kept} To go on: read "
        f"what was tried ({folder / 'evidence'}), then either make the task clearer or smaller "
        f"(copy {folder / 'plan.json'}, edit {ids} in the copy, and run: moot execute COPY), "
        f"or try it again as it is with: moot resume {s.folder.id}"
    )


def _outcome(s: Session, ctx: Context, runs: dict[str, TaskRun], final: str) -> Outcome:
    rows = [
        {
            "id": r.spec.id,
            "title": r.spec.title,
            "state": r.state,
            "attempts": r.attempts,
            "commit": r.commit,
            "reason": r.reason,
            "path": r.path,
            "evidence": {k: len(v) for k, v in r.evidence.items()},
        }
        for r in runs.values()
    ]
    details: dict[str, Any] = {
        "winner": "main",  # `moot apply ID` applies the branch's cumulative change
        "pipeline": {
            "phase": "execute",
            "branch": ctx.branch,
            "tasks": rows,
            "final_diff": final,
            "gates": [g.shown for g in ctx.gates],
        },
    }
    s.artifact("tasks.json", json.dumps(rows, indent=2, ensure_ascii=False))
    blocked = [r for r in runs.values() if r.state == "blocked"]
    done = [r for r in runs.values() if r.state == "complete"]
    if blocked:
        raise Waiting(_waiting(s, ctx, blocked, done))
    how = (
        f"{plural(len(done), 'task')} committed on branch {ctx.branch}; merge it with "
        f"`git merge {ctx.branch}`, or apply the change to your working tree with "
        f"`moot apply {s.folder.id}` (until then your branch and working tree are untouched)"
    )
    finding = Finding(
        label="chosen",
        reason="every task passed its QA gates, review and tests, and was committed",
        started=len(runs),
        valid=len(done),
    )
    trust = (
        "Each task's change passed the project's QA gates and its tests at commit time; the "
        "reviewer's approval and the tournament's pick are models' opinions."
    )
    return Outcome(
        protocol="pipeline",
        status="consensus",
        consensus=True,
        how=how,
        final_answer="\n".join(
            f"{r.spec.id} {r.state} {r.commit[:12]} {r.spec.title}" for r in runs.values()
        ),
        rounds=len(runs),
        details=details,
        trust=trust,
        finding=finding,
    )
