"""One task of a plan through seed 004's task state machine:

    pending -> in_progress -> coded -> auto_gated -> reviewed -> tested -> tournamented -> complete
    coded -> in_progress            a QA gate failed (the developer gets its output)
    auto_gated -> in_progress       the reviewer asked for changes (its findings)
    reviewed -> in_progress         the tests failed after the test engineer's tests
    any -> blocked                  retries exhausted (qa_retry_limit), a guardrail breached, or
                                    a loop; the sounding board is asked once
    blocked -> in_progress          `moot resume` (a new attempt from the plan's branch)

    tree = worktree from main                              # the tasks before it, committed
    repeat up to 1 + qa_retry_limit times:
        developer -> gates -> reviewer -> test engineer -> gates (retry edges above)
    winner = impl tournament(A = the developer's change)   # a refine session in a worktree
    apply the winner on main; commit "<id>: <title>"; branch moot-plan/<session> -> main

Every transition is a journal note (`t<n>/state/<k>`), every call, gate, worktree and commit a
journaled step. A task blocked in an earlier run of the session is tried again (a new epoch, a
fresh worktree) when the session is resumed: `moot resume` is the user saying the cause is
fixed. Guardrails decide on journaled data only (calls reached, journaled times, diff size),
so a resume and a replay decide as the live run did."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from moot.deliberation.anonymize import quote
from moot.engine.session import Session
from moot.errors import LimitReached
from moot.pipeline import prompts
from moot.pipeline.document import PlanDoc, TaskSpec
from moot.pipeline.gates import Gate, run_plugin, scan_secrets
from moot.pipeline.options import PipelineOptions
from moot.pipeline.planning import role
from moot.pipeline.tournaments import play
from moot.protocols import codework
from moot.protocols.codework import Work
from moot.protocols.shown import nonce
from moot.text import cut
from moot.types import Message, Step

__all__ = ["Context", "TaskRun", "move", "run_task"]

_REVIEW = ("APPROVED", "NEEDS_CHANGES")


class TaskRun(Struct):
    """One task's way through the states, as this run derives it from the journal."""

    spec: TaskSpec
    number: int
    state: str = "pending"
    attempts: int = 0
    path: list[dict[str, str]] = field(default_factory=list)
    reason: str = ""
    commit: str = ""
    evidence: dict[str, list[Any]] = field(default_factory=dict)

    def add(self, kind: str, item: Any) -> None:
        self.evidence.setdefault(kind, []).append(item)


class Context(Struct):
    task: str  # the feature
    doc: PlanDoc
    opts: PipelineOptions
    gates: list[Gate]
    lessons: list[str]
    branch: str
    learnt: list[str] = field(default_factory=list)
    spent_elsewhere: float = 0.0  # the tournaments' cost


def _step(run: TaskRun, phase: str, *parts: str) -> str:
    return Step.at(run.number, phase, *parts, prefix="t")


def move(s: Session, run: TaskRun, state: str, why: str) -> None:
    """A transition: journaled once (a resume that derives it again adds nothing), with the
    task's attempts, commit and evidence counts so far, which `moot status` shows (view.py)."""
    run.path.append({"from": run.state, "to": state, "why": why})
    run.state = state
    counts = {kind: len(items) for kind, items in run.evidence.items()}
    s.note(
        _step(run, "state", str(len(run.path))),
        task=run.spec.id,
        state=state,
        why=why,
        attempts=run.attempts,
        commit=run.commit,
        evidence=counts,
    )


def _user(text: str) -> Message:
    return Message(role="user", content=text)


def _quoted(s: Session, label: str, text: str, step: str, limit: int) -> str:
    return quote(label, text, nonce=nonce(s, f"{step}/{label}"), limit=limit)


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {x}" for x in items) or "- (none given)"


# -- one task ---------------------------------------------------------------------------------
async def _gates(
    s: Session, ctx: Context, run: TaskRun, tree: str, work: Work, step: str
) -> tuple[str, str]:
    """Run the gates in order; ("", "") when all pass, else (the gate, its output tail)."""
    results = []
    failed = ("", "")
    for gate in ctx.gates:
        if gate.name == "secrets":
            found = scan_secrets(work.patch)
            results.append({"gate": "secrets", "passed": not found, "output": "\n".join(found)})
            if found:
                failed = (
                    "secrets",
                    "the change adds what looks like secrets:\n" + "\n".join(found),
                )
                break
            continue
        if gate.plugin:
            passed, output = await _plugin(s, gate, tree, work.patch, f"{step}/gate/{gate.name}")
            results.append(
                {
                    "gate": gate.name,
                    "plugin": gate.plugin,
                    "passed": passed,
                    "output": output[-2000:],
                }
            )
            if not passed:
                failed = (gate.name, f"plugin {gate.plugin}\n[failed]\n{output[-3000:]}")
                break
            continue
        ran = await s.run_in(
            tree, gate.command, step=f"{step}/gate/{gate.name}", timeout=ctx.opts.gates.timeout
        )
        results.append(
            {
                "gate": gate.name,
                "command": gate.command,
                "exit_code": ran.exit_code,
                "timed_out": ran.timed_out,
                "passed": ran.passed,
                "output": ran.tail[-2000:],
            }
        )
        if not ran.passed:
            failed = (gate.name, f"$ {gate.command}\n[{ran.status}]\n{ran.tail[-3000:]}")
            break
    run.add("gates", {"step": step, "results": results})
    return failed


async def _plugin(s: Session, gate: Gate, tree: str, patch: str, step: str) -> tuple[bool, str]:
    """A plugin gate's verdict on the change in `tree`, journaled (a resume does not run it
    again)."""

    async def compute() -> dict[str, Any]:
        where = Path(s.worktree_path(tree))
        passed, output = await asyncio.to_thread(run_plugin, gate.plugin, where, patch)
        return {"passed": passed, "output": output[-20_000:]}

    found = await s.effect(step, "gate", compute)
    return bool(found["passed"]), str(found["output"])


def _guardrail(
    s: Session, ctx: Context, run: TaskRun, first_step: str, last_step: str, patch: str
) -> str:
    """The guardrail this task has breached, or ""; decided on journaled data only."""
    rails = ctx.opts.guardrails
    calls = s.asked(_step(run, ""))  # "t1/": task 1's steps, not task 10's
    if calls > rails.max_calls_per_task:
        return f"guardrail: {calls} model calls, over max_calls_per_task {rails.max_calls_per_task}"
    began, now = s.recorded_at(first_step), s.recorded_at(last_step)
    if began is not None and now is not None and now - began > rails.max_seconds_per_task:
        limit = rails.max_seconds_per_task
        return f"guardrail: {now - began:.0f} s of work, over max_seconds_per_task {limit:g}"
    size = len(patch.encode())
    if size > rails.max_diff_bytes:
        return f"guardrail: a diff of {size:,} bytes, over max_diff_bytes {rails.max_diff_bytes:,}"
    return ""


def _fingerprint(why: str, feedback: str, patch: str) -> str:
    return hashlib.sha256(json.dumps([why, feedback, patch]).encode()).hexdigest()


async def _review(
    s: Session, ctx: Context, run: TaskRun, work: Work, gates_text: str, attempt: int
) -> tuple[bool, str]:
    reviewer = role(s, "reviewer")
    step = _step(run, "review", reviewer, str(attempt))
    spec = run.spec
    prompt = prompts.REVIEWER.format(
        **_task_fields(ctx, spec),
        change="THE CHANGE:\n" + _quoted(s, "Change", work.patch, step, ctx.opts.max_quote_chars),
        gates="QA GATES:\n" + gates_text,
    )
    reply = await s.ask(reviewer, [_user(prompt)], step=step)
    verdict = None
    if reply.ok:
        for line in reversed(reply.text.strip().splitlines()):
            word = line.strip().strip("*`").upper().replace(" ", "_")
            if word.startswith("VERDICT"):
                verdict = next((v for v in _REVIEW if word.endswith(v)), None)
                break
    findings = (
        reply.text.strip() if reply.ok else (reply.failure.message if reply.failure else "no reply")
    )
    run.add("review", {"step": step, "verdict": verdict or "none", "findings": findings[:8000]})
    if verdict is None:
        return False, "the reviewer's reply held no verdict line:\n" + findings[:2000]
    return verdict == "APPROVED", findings


async def _test_engineer(
    s: Session, ctx: Context, run: TaskRun, tree: str, work: Work, attempt: int
) -> Work:
    engineer = role(s, "test_engineer")
    step = _step(run, "test", engineer, str(attempt))
    spec = run.spec
    prompt = prompts.TEST_ENGINEER.format(
        **_task_fields(ctx, spec),
        change="THE CHANGE SO FAR:\n"
        + _quoted(s, "Change", work.patch, step, ctx.opts.max_quote_chars),
    )
    messages = await codework.first_messages(s, engineer, prompt)
    reply = await codework.ask(s, engineer, messages, step=step, tree=tree)
    tested = await codework.realize(
        s, engineer, messages, reply, step=step, tree=tree, optional=True
    )
    run.add(
        "test",
        {
            "step": step,
            "ok": tested.ok,
            "problem": tested.problem,
            "summary": tested.summary[:4000],
        },
    )
    return tested if tested.change is not None else work


def _task_fields(ctx: Context, spec: TaskSpec) -> dict[str, str]:
    """What the developer's, the reviewer's and the test engineer's prompts say of the task
    (`str.format` passes over the fields a prompt does not name)."""
    return {
        "feature": ctx.task,
        "task_id": spec.id,
        "title": spec.title,
        "description": spec.description,
        "acceptance": _bullets(spec.acceptance),
    }


def _gate_evidence(s: Session, ctx: Context, output: str, step: str) -> str:
    """A failed QA gate's output as the developer is shown it, at `step`."""
    return "GATE OUTPUT:\n" + _quoted(s, "Gate output", output, step, ctx.opts.max_quote_chars)


def _developer_prompt(ctx: Context, spec: TaskSpec, prior: str) -> str:
    lessons_text = ""
    if ctx.lessons:
        lessons_text = "\nLessons learnt in this repository:\n" + _bullets(ctx.lessons) + "\n"
    return prompts.DEVELOPER.format(
        **_task_fields(ctx, spec),
        files=", ".join(spec.files) or "(as needed)",
        lessons=lessons_text,
        prior=prior,
    )


async def _develop(
    s: Session, ctx: Context, run: TaskRun, tree: str, first_step: str
) -> tuple[Work | None, str]:
    """The developer's loop up to `tested`: (the tested work, "") or (None, why it blocks)."""
    developer = role(s, "developer")
    spec = run.spec
    prior = ""
    if run.number > 1 and not s.edits_in_place(developer):
        done = await s.change(
            developer, step=_step(run, "prior", "main", str(run.attempts + 1)), tree="main"
        )
        if done.patch:
            prior = (
                "\nThe earlier tasks' changes (already in your copy; your diff applies after"
                " them):\n"
                + _quoted(s, "Earlier changes", done.patch, first_step, ctx.opts.max_quote_chars)
            )
    messages: list[Message] = []
    seen: set[str] = set()
    why, evidence, heard = "", "", ""  # heard: the feedback's raw text, for the loop detector
    work: Work | None = None
    last_step = first_step
    for attempt in range(ctx.opts.qa_retry_limit + 1):
        run.attempts += 1
        number = run.attempts
        step = _step(run, "develop", developer, str(number))
        if work is None:
            asked = _developer_prompt(ctx, spec, prior)
            messages = await codework.first_messages(s, developer, asked)
        else:
            asked = prompts.DEVELOPER_RETRY.format(task_id=spec.id, why=why, evidence=evidence)
            messages = [*work.messages, _user(asked + codework.revise_format(s, developer))]
        # the loop detector: the same request (what it is told) about the same change again
        mark = _fingerprint(why, heard, work.patch if work is not None else "")
        if mark in seen:
            return None, (
                "loop: the developer would be asked the same thing about the same change again"
            )
        seen.add(mark)
        reply = await codework.ask(s, developer, messages, step=step, tree=tree)
        work = await codework.realize(
            s, developer, messages, reply, step=step, tree=tree, optional=attempt > 0
        )
        run.add(
            "developer",
            {
                "step": step,
                "prompt": messages[-1].content[:20000],
                "reply": reply.text[:20000],
                "diff": work.patch,
                "ok": work.ok,
                "problem": work.problem,
            },
        )
        last_step = f"{step}/change" if work.change is not None else step
        breach = _guardrail(s, ctx, run, first_step, last_step, work.patch)
        if breach:
            return None, breach
        if not work.ok:
            why, evidence, heard = f"your change failed: {work.problem}", "", ""
            if work.change is None or work.change.empty:
                continue
        move(s, run, "coded", "the developer's change is ready")
        gate, output = await _gates(s, ctx, run, tree, work, step)
        if gate:
            move(s, run, "in_progress", f"QA gate {gate} failed")
            why, evidence = f"the {gate} gate failed", _gate_evidence(s, ctx, output, step)
            heard = output
            ctx.learnt.append(f"{gate} gate failed on a first try: {_first_line(output)}")
            continue
        move(s, run, "auto_gated", "every QA gate passed")
        approved, findings = await _review(s, ctx, run, work, _gates_text(run), number)
        if not approved:
            move(s, run, "in_progress", "the reviewer asked for changes")
            why, evidence = (
                "the reviewer asked for changes",
                "REVIEW:\n" + _quoted(s, "Review", findings, step, ctx.opts.max_quote_chars),
            )
            heard = findings
            ctx.learnt.append(f"review: {_first_line(findings)}")
            continue
        move(s, run, "reviewed", "the reviewer approved")
        tested = await _test_engineer(s, ctx, run, tree, work, number)
        gate, output = await _gates(s, ctx, run, tree, tested, f"{step}/tested")
        if gate:
            move(s, run, "in_progress", f"after the test engineer's tests, QA gate {gate} failed")
            why = f"after the test engineer's tests, the {gate} gate failed"
            evidence = _gate_evidence(s, ctx, output, step)
            heard, work = output, tested
            continue
        move(s, run, "tested", "the tests pass")
        return tested, ""
    return None, f"retries exhausted ({ctx.opts.qa_retry_limit} after the first try): {why}"


def _gates_text(run: TaskRun) -> str:
    last = (run.evidence.get("gates") or [{}])[-1]
    lines = [
        f"- {r['gate']}: {'passed' if r['passed'] else 'FAILED'}" for r in last.get("results", [])
    ]
    return "\n".join(lines) or "- (no gates configured)"


def _first_line(text: str) -> str:
    """The first line that says something, at most 200 characters, cut at a word with "…"."""
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("$") and not line.startswith("["):
            return cut(line, 200)
    return cut(text, 200)


async def _tournament(s: Session, ctx: Context, run: TaskRun, work: Work, epoch: int) -> str:
    """The implementation tournament's winning patch (the developer's when it is off, ends
    without a result, or its winner fails verification that A passed)."""
    settings = ctx.opts.impl_tournament
    if not settings.enabled:
        return work.patch
    base = f"t{run.number}b{epoch}"
    await s.add_worktree(base, step=_step(run, "worktree", base), base="main")
    spec = run.spec
    played = await play(
        s,
        _step(run, "tournament", "refine", str(epoch)),
        f"impl-t{run.number}-{epoch}",
        task=_developer_prompt(ctx, spec, ""),
        input_text=work.patch,
        settings=settings,
        opts=ctx.opts,
        tree=base,
        verify=([g.command for g in ctx.gates if g.command], ctx.opts.gates.timeout),
        max_cost=_remaining(s, ctx),
    )
    ctx.spent_elsewhere += played.cost
    await s.prune_worktree(base, step=_step(run, "prune", base))
    kept = {
        "session": played.session,
        "status": played.status,
        "passes": played.passes,
        "reason": played.reason,
    }
    winner = played.details.get("winner")
    checks = played.details.get("checks") or {}
    chosen = played.final if played.ended and played.final.strip() else work.patch
    if (
        winner
        and winner != "a"
        and not all(checks.get(winner, [True]))
        and all(checks.get("a", []))
    ):
        chosen, kept["fallback"] = (
            work.patch,
            f"the winner {winner} fails verification A passes: A kept",
        )
    run.add("impl_tournament", kept)
    return chosen


def _remaining(s: Session, ctx: Context) -> float | None:
    limit = s.budget.limits.max_cost
    if limit is None:
        return None
    left = limit - s.spent()[1] - ctx.spent_elsewhere
    if left <= 0:
        raise LimitReached(f"the plan's cost budget (max_cost ${limit:g}) is spent")
    return left


async def _attempt(s: Session, ctx: Context, run: TaskRun, epoch: int) -> str:
    """One epoch of a task, from a fresh worktree off the plan's branch; "" once complete,
    else why it blocks."""
    tree = f"t{run.number}e{epoch}"
    first = _step(run, "worktree", tree)
    await s.add_worktree(tree, step=first, base="main")
    move(
        s, run, "in_progress", "developer assigned" if epoch == 1 else "moot resume: a new attempt"
    )
    work, why = await _develop(s, ctx, run, tree, first)
    if work is None:
        return why
    patch = await _tournament(s, ctx, run, work, epoch)
    move(
        s,
        run,
        "tournamented",
        "the implementation tournament finished"
        if ctx.opts.impl_tournament.enabled
        else "no implementation tournament (disabled)",
    )
    developer = role(s, "developer")
    merged = await s.apply_diff(
        developer, patch, step=_step(run, "merge", "main", str(epoch)), tree="main"
    )
    if not merged.applied:
        return f"the winning change does not apply on the plan's branch: {merged.error}"
    spec = run.spec
    message = f"{spec.id}: {spec.title}\n\nmoot plan {s.folder.id}, task {spec.id}.\n"
    run.commit = await s.commit("main", message, step=_step(run, "commit", "main", str(epoch)))
    await s.publish_branch("main", ctx.branch, step=_step(run, "publish", "main", str(epoch)))
    await s.prune_worktree(tree, step=_step(run, "prune", tree))
    s.artifact(f"evidence/{spec.id}.patch", patch)
    move(s, run, "complete", f"committed {run.commit[:12]} on {ctx.branch}")
    return ""


async def _sound(s: Session, ctx: Context, run: TaskRun, why: str, epoch: int) -> str:
    board = role(s, "sounding_board")
    step = _step(run, "sound", board, str(epoch))
    last = (run.evidence.get("developer") or [{}])[-1]
    evidence = "LAST CHANGE:\n" + _quoted(
        s, "Change", str(last.get("diff", "")), step, ctx.opts.max_quote_chars
    )
    reply = await s.ask(
        board,
        [
            _user(
                prompts.SOUNDING_BOARD.format(
                    why=why, task_id=run.spec.id, title=run.spec.title, evidence=evidence
                )
            )
        ],
        step=step,
    )
    advice = reply.text.strip() if reply.ok else "(no advice: the call failed)"
    run.add("sounding_board", {"step": step, "advice": advice[:4000]})
    return advice


async def run_task(s: Session, ctx: Context, run: TaskRun) -> None:
    epoch = 1
    while True:
        why = await _attempt(s, ctx, run, epoch)
        _write_evidence(s, run)
        if not why:
            return
        advice = await _sound(s, ctx, run, why, epoch)
        mark = _step(run, "blocked", str(epoch))

        async def blocked(reason: str = why) -> dict[str, str]:
            return {"reason": reason}

        await s.effect(mark, "blocked", blocked)
        move(s, run, "blocked", why)
        said = f'; the sounding board said: "{_first_line(advice)}"' if advice else ""
        run.reason = why + said
        _write_evidence(s, run)
        at, began = s.recorded_at(mark), s.run_began
        if at is None or began is None or at >= began:
            return  # blocked in this run: the user fixes the cause, then `moot resume`

        async def unblock() -> str:
            return "retry"

        await s.effect(_step(run, "unblock", str(epoch)), "unblock", unblock)
        epoch += 1


def _write_evidence(s: Session, run: TaskRun) -> None:
    tid = run.spec.id
    for kind, items in run.evidence.items():
        s.artifact(f"evidence/{tid}-{kind}.json", json.dumps(items, indent=2, ensure_ascii=False))
    s.artifact(f"evidence/{tid}-states.json", json.dumps(run.path, indent=2))
