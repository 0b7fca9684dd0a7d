"""The library face: start, resume and replay sessions. The CLI calls these.

start(task, config)   create a session and run its protocol
resume(ref)           run the protocol again over its journal; recorded steps cost nothing
replay(ref)           recompute the outcome from the journal alone (zero model calls)

Each resolves which protocol runs (its record), hands the engine the participants and the
protocol's run function (`engine.lifecycle`), and writes the reports once the run has ended.

The outcome is known before the reports are written: `on_outcome(run)` is called with it first
(the CLI prints it there), then report.md and report.html are rendered. By then result.json and
the journal are on disk, so a process killed in between loses nothing: `moot show` and
`moot export` build the reports from them.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import time
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock

from moot.config import RunConfig, check_task
from moot.engine import lifecycle
from moot.engine.journal import Journal, key_from_env
from moot.engine.lifecycle import Ended, ProtocolFn
from moot.engine.result import Result, exit_code_for, unsealed
from moot.engine.session import Agent, Chooser, Session, Sleep, Subscriber
from moot.engine.store import SessionFolder, atomic_write, find_session, sessions_root
from moot.errors import ConfigError, JournalError, ReplayIncomplete, WorkspaceError
from moot.lifecycle.plan import Plan, load_config, participants, resolve
from moot.models.base import create_model
from moot.text import plural
from moot.types import Event, EventKind, estimate_tokens

if TYPE_CHECKING:
    from moot.engine.cache import ResponseCache

__all__ = [
    "FINDING_RULE",
    "ReplayReport",
    "RunResult",
    "outcome_change",
    "replay",
    "resume",
    "resume_async",
    "run",
    "start",
    "start_async",
]


@dataclass(frozen=True)
class RunResult:
    """How a run ended: its session, result and exit code."""

    session_id: str
    folder: Path
    result: Result
    exit_code: int
    message: str | None = None
    model_calls: int = 0


OnOutcome = Callable[[RunResult], None]


# The rule under which an outcome replayed today may differ from one stored before it.
FINDING_RULE = "moot's finding (labels are decided from the agents' final answers)"


@dataclass(frozen=True)
class ReplayReport:
    """A replay's result, and whether it matches the stored result.json. `changed` explains a
    difference that is not a mismatch: the stored result was computed from this very journal
    (its seal holds) before labels were moot's finding, and the replay gives the outcome under
    that rule ("outcome changed: ..."); None when identical, or when nothing explains it."""

    session_id: str
    result: Result
    identical: bool | None  # None: no stored result.json to compare with
    steps: int
    changed: str | None = None


def _protocol(plan: Plan) -> ProtocolFn:
    run, options = plan.record.run, plan.options

    def protocol(session: Session) -> Any:
        return run(session, session.task, options)

    return protocol


def _create_models(agents: list[Agent]) -> None:
    for agent in agents:  # a bad spec fails before anything more is written
        agent.model = create_model(agent.spec, agent.config.settings())


def _check_task_fits(task: str, agents: list[Agent]) -> None:
    """Refuse, before any folder exists, a task that cannot fit a participant's context
    window with room for its answer."""
    size = estimate_tokens(task)
    for agent in agents:
        if agent.model is None:
            continue
        window = agent.model.capabilities.context_window
        room = agent.config.max_tokens or 1024
        larger = "a larger context window (a local model's options.n_ctx)"
        if room >= window:
            raise ConfigError(
                f"{agent.spec} ({agent.alias}) has a context window of {window:,} tokens, no "
                f"more than the {room:,} kept for its answer, so no task fits; give it {larger} "
                "or a smaller max_tokens"
            )
        if size + room > window:
            raise ConfigError(
                f"the task is about {size:,} tokens, too large for {agent.spec} "
                f"({agent.alias}), whose context window is {window:,} tokens with {room:,} kept "
                f"for its answer; shorten the task, or give the model {larger} or a smaller "
                "max_tokens"
            )


def start(
    task: str,
    config: RunConfig | Plan | None = None,
    *,
    subscribers: Iterable[Subscriber] = (),
    root: Path | None = None,
    sleep: Sleep = asyncio.sleep,
    chooser: Chooser | None = None,
    on_outcome: OnOutcome | None = None,
) -> RunResult:
    """Create a session for `task` and run it to its end, a limit, or an interruption.
    `chooser` reads a human's choice (default: standard input); `on_outcome` is called with
    the outcome before the reports are written."""
    opened = _open_new(task, config, root)
    lock = opened.folder.acquire()
    try:
        _prepare_workspace(opened, lock)
        ended = lifecycle.run_sync(lambda: _run(opened, subscribers, sleep, chooser))
    finally:
        lock.release()
    return _reported(ended, on_outcome)


async def start_async(
    task: str,
    config: RunConfig | Plan | None = None,
    *,
    subscribers: Iterable[Subscriber] = (),
    root: Path | None = None,
    sleep: Sleep = asyncio.sleep,
    chooser: Chooser | None = None,
    on_created: Callable[[Path], None] | None = None,
    on_outcome: OnOutcome | None = None,
) -> RunResult:
    """`start` on the caller's event loop (many sessions in one loop: `moot batch`); the caller
    handles signals by cancelling the task. `on_created(folder)` runs once the session's
    folder exists and before its first step is asked."""
    opened = _open_new(task, config, root)
    lock = opened.folder.acquire()
    try:
        _prepare_workspace(opened, lock)
        if on_created is not None:
            on_created(opened.folder.path)
        ended = await _run(opened, subscribers, sleep, chooser)
    finally:
        lock.release()
    return _reported(ended, on_outcome)


@dataclass(frozen=True)
class _Opened:
    """A session ready to run: its folder and journal open, its participants' models made."""

    folder: SessionFolder
    journal: Journal
    plan: Plan
    config: RunConfig
    agents: list[Agent]
    cache: ResponseCache | None


def _run(
    opened: _Opened, subscribers: Iterable[Subscriber], sleep: Sleep, chooser: Chooser | None
) -> Coroutine[Any, Any, Ended]:
    return lifecycle.run_session(
        opened.folder,
        opened.journal,
        opened.config,
        opened.agents,
        _protocol(opened.plan),
        subscribers=subscribers,
        sleep=sleep,
        cache=opened.cache,
        chooser=chooser,
    )


def _prepare_workspace(opened: _Opened, lock: FileLock) -> None:
    """A code task's workspace, made once the session is locked."""
    try:
        lifecycle.code_workspace(opened.config, opened.folder, opened.agents, prepare=True)
    except WorkspaceError:  # (a submodule): leave nothing behind
        opened.journal.close()
        lock.release()
        shutil.rmtree(opened.folder.path, ignore_errors=True)
        raise


def _open_new(task: str, config: RunConfig | Plan | None, root: Path | None) -> _Opened:
    plan = config if isinstance(config, Plan) else resolve(config or RunConfig())
    if plan.config.code is not None:  # a bad repository fails before anything is created
        from moot.code.workspace import check_repo

        config_ = plan.config.model_copy(update={"code": check_repo(plan.config.code)})
        plan = Plan(plan.record, config_, plan.options)
    record, options = plan.record, plan.options
    if not task.strip() and record.default_task is not None:
        task = record.default_task(options) or ""
    if not task.strip():
        raise ConfigError(
            'the task is empty: give the question to deliberate, as in moot run "..."'
        )
    check_task(task, plan.config.engine)  # bad UTF-8 or too large: before any folder
    if record.check is not None:
        problems = record.check(plan.config.model_dump(mode="json"), Path.cwd())
        if problems:
            listed = "\n  ".join(problems)
            raise ConfigError(f"the config has {plural(len(problems), 'problem')}:\n  {listed}")
    if root is None and record.sessions_root is not None:
        root = record.sessions_root(options)
    seed = plan.config.seed if plan.config.seed is not None else secrets.randbits(31)
    agents = participants(plan, seed)
    _create_models(agents)
    _check_task_fits(task, agents)
    cache = lifecycle.response_cache(plan.config)
    folder, journal = lifecycle.open_session(
        root or sessions_root(),
        task=task,
        seed=seed,
        protocol=record.name,
        config=plan.config,
        agents=agents,
    )
    return _Opened(folder, journal, plan, plan.config, agents, cache)


def run(
    task: str,
    *,
    models: Sequence[str] | None = None,
    protocol: str = "arena",
    config: str | Path | None = None,
    **options: Any,
) -> Result:
    """Deliberate on `task` and return the outcome: the shortest way in from Python.

    `models` gives one agent per spec (default: three on the embedded model); `options` set the
    protocol's options (`moot.run(task, protocol="court", max_agent_rounds=2)`); `config` names
    a config file. Bad input raises `moot.errors.ConfigError`; the session is kept on disk like
    any other (`result.session_id`)."""
    overrides: dict[str, Any] = {"protocol": protocol}
    if models:
        overrides["agents"] = [{"model": spec} for spec in models]
    for key, value in options.items():
        overrides[f"{protocol}.{key}"] = value
    plan = load_config(Path(config) if config is not None else None, overrides)
    return start(task, plan).result


def _reported(ended: Ended, on_outcome: OnOutcome | None = None) -> RunResult:
    """The run's result, shown through `on_outcome` before its reports are rendered (the
    slowest part of the end of a run, and one that result.json and the journal can redo)."""
    run = RunResult(
        ended.folder.id,
        ended.folder.path,
        ended.result,
        ended.exit_code,
        ended.message,
        ended.model_calls,
    )
    try:
        if on_outcome is not None:
            on_outcome(run)
    finally:
        _write_reports(ended.folder, ended.result, ended.events)
    return run


def _write_reports(folder: SessionFolder, result: Result, events: list[Event]) -> None:
    from moot.report import write_reports  # imported late: not needed before the outcome

    write_reports(folder, result, events)


def _reopen(meta: dict[str, Any]) -> tuple[Plan, list[Agent]]:
    """The plan and participants recorded in a session's begin meta, checked against its
    alias map."""
    plan = resolve(RunConfig.model_validate(meta["config"]))
    agents = participants(plan, meta["seed"])
    if {a.alias: a.spec for a in agents} != meta["aliases"]:
        raise JournalError(
            f"the alias map of session {meta['session_id']} does not match "
            "its config; the session folder was edited"
        )
    return plan, agents


def resume(
    ref: str | None,
    *,
    limits: dict[str, Any] | None = None,
    subscribers: Iterable[Subscriber] = (),
    root: Path | None = None,
    sleep: Sleep = asyncio.sleep,
    chooser: Chooser | None = None,
    on_outcome: OnOutcome | None = None,
) -> RunResult:
    """Continue a session; `limits` (for example {"max_cost": 5}) raises its budgets.
    `on_outcome` as for `start`."""
    folder = lifecycle.current_format(find_session(ref, root))
    lock = folder.acquire()
    try:
        opened = _open_old(folder, limits)
        if opened is None:
            return _already_finished(folder, on_outcome)
        ended = lifecycle.run_sync(lambda: _run(opened, subscribers, sleep, chooser))
    finally:
        lock.release()
    return _reported(ended, on_outcome)


async def resume_async(
    ref: str | None,
    *,
    limits: dict[str, Any] | None = None,
    subscribers: Iterable[Subscriber] = (),
    root: Path | None = None,
    sleep: Sleep = asyncio.sleep,
    chooser: Chooser | None = None,
    on_outcome: OnOutcome | None = None,
) -> RunResult:
    """`resume` on the caller's event loop (see `start_async`)."""
    folder = lifecycle.current_format(find_session(ref, root))
    lock = folder.acquire()
    try:
        opened = _open_old(folder, limits)
        if opened is None:  # the replay runs a loop of its own: not on the caller's
            return await asyncio.to_thread(_already_finished, folder, on_outcome)
        ended = await _run(opened, subscribers, sleep, chooser)
    finally:
        lock.release()
    return _reported(ended, on_outcome)


def _open_old(folder: SessionFolder, limits: dict[str, Any] | None) -> _Opened | None:
    """A session to continue, ready to run; None when it has already finished."""
    journal, meta = lifecycle.reopen_session(folder)
    if lifecycle.finished(journal):
        journal.close()
        return None
    plan, agents = _reopen(meta)
    config = plan.config
    if limits:
        config = config.model_copy(update={"limits": config.limits.model_copy(update=limits)})
    _create_models(agents)
    cache = lifecycle.response_cache(config)
    if limits:
        journal.append(
            Event(kind=EventKind.LIMITS_CHANGED, ts=time.time(), data={"limits": limits})
        )
    return _Opened(folder, journal, plan, config, agents, cache)


def _already_finished(folder: SessionFolder, on_outcome: OnOutcome | None = None) -> RunResult:
    """Nothing to run: rebuild the outputs from the journal (they may have been lost)."""
    report = replay(folder.id, root=folder.path.parent)
    run = RunResult(
        folder.id,
        folder.path,
        report.result,
        exit_code_for(report.result.status),
        f"session {folder.id} had already finished; nothing was asked",
    )
    rebuild = report.identical is not True or not (
        folder.report_md.exists() and folder.report_html.exists()
    )
    if report.identical is not True:
        atomic_write(folder.result_json, report.result.to_json())
    try:
        if on_outcome is not None:
            on_outcome(run)
    finally:
        if rebuild:  # a run killed after its outcome, before its reports, left none
            journal, _ = Journal.open(folder.events, key_from_env(), repair=False)
            _write_reports(folder, report.result, journal.events)
    return run


def replay(ref: str | None, *, root: Path | None = None) -> ReplayReport:
    """Recompute the outcome from the journal alone and compare it with `result.json`."""
    folder = lifecycle.current_format(find_session(ref, root))
    journal, _ = Journal.open(folder.events, key_from_env(), repair=False)
    meta = lifecycle.begin_meta(journal, folder)
    plan, agents = _reopen(meta)
    stored = folder.result_json.read_text(encoding="utf-8") if folder.result_json.exists() else None
    try:
        result = lifecycle.replay_session(folder, journal, plan.config, agents, _protocol(plan))
    except ReplayIncomplete as exc:
        ended = _ended_earlier(folder, journal, stored, exc)
        if ended is None:
            raise
        return ended
    identical = None if stored is None else result.same_as_stored(stored)
    steps = _steps(journal)
    changed = None
    if stored is not None and identical is False:
        changed = outcome_change(folder, journal, stored, result)
    return ReplayReport(folder.id, result, identical, steps, changed)


def _steps(journal: Journal) -> int:
    return sum(1 for e in journal.events if e.kind in (EventKind.ASK, EventKind.SHELL))


def _ended_earlier(
    folder: SessionFolder, journal: Journal, stored_text: str | None, why: ReplayIncomplete
) -> ReplayReport | None:
    """A finished session that today's code would not have ended where it did: a judge's
    CONSENSUS ended it, and under moot's finding the deliberation goes on. Its outcome under
    the rule is moot's finding over the final answers as journaled (the stored result's
    positions), with every agent that started counted. A stored result from before the rule
    gives a changed outcome; one written under it (by `moot resume`) is compared byte for byte.
    None if nothing explains the stop (no stored result, or one edited since)."""
    from moot.deliberation.finding import judge_answers
    from moot.engine.seal import seal_result

    if stored_text is None:
        return None
    try:
        stored = Result.model_validate_json(stored_text)
    except ValueError:
        return None
    started = [a for a in stored.aliases if a.startswith("agent_")]
    if not started or (stored.finding is None and not _computed_from(folder, stored, journal)):
        return None
    j = judge_answers([dict(stored.positions)], started=started, task=stored.task)
    finding = j.finding
    reason = finding.reason[:1].upper() + finding.reason[1:]
    missing = str(why).rsplit(": ", 1)[-1]  # "step r2/evaluate/agent_a is not in the journal"
    replayed = seal_result(
        stored.model_copy(
            update={
                "status": "consensus" if finding.consensus else "no_consensus",
                "consensus": finding.consensus,
                "how": f"{finding.reason} (today's code would not have ended the session there)",
                "trust": " ".join([f"{reason}.", *j.sentences()]),
                "final_answer": stored.final_answer if finding.consensus else "",
                "finding": finding,
                "claims": [c.model_copy(update={"round": stored.rounds}) for c in j.claims],
                "changes": list(j.changes),
                "verdicts": list(j.verdicts),
                "journal": None,
            }
        ),
        journal,
    )
    if stored.finding is not None:  # written under the rule (by `moot resume`): compare
        same = replayed.same_as_stored(stored_text)
        return ReplayReport(folder.id, replayed, same, _steps(journal))
    changed = (
        f"outcome changed: the stored result was labelled {stored.status} ({stored.how}); "
        f"under {FINDING_RULE} it is {finding.label}: {finding.reason}. Today's code would "
        f"not have ended the session there ({missing}): this is the finding over the final "
        "answers as journaled"
    )
    return ReplayReport(folder.id, replayed, False, _steps(journal), changed)


def outcome_change(
    folder: SessionFolder, journal: Journal, stored_text: str, replayed: Result
) -> str | None:
    """Why the replayed result differs from the stored one, when the only cause is that labels
    are now moot's finding: the stored result carries no finding, it was computed from this
    journal as it stands (its seal holds: nobody edited it) and names the same session, task
    and agents, and the replay carries a finding. None for any other difference."""
    try:
        stored = Result.model_validate_json(stored_text)
    except ValueError:
        return None
    if stored.finding is not None or replayed.finding is None:
        return None
    if not _computed_from(folder, stored, journal):
        return None
    same = ("session_id", "protocol", "task", "aliases")
    if any(getattr(stored, name) != getattr(replayed, name) for name in same):
        return None
    finding = replayed.finding
    if stored.status != finding.label or stored.consensus != replayed.consensus:
        return (
            f"outcome changed: the stored result was labelled {stored.status} ({stored.how}); "
            f"under {FINDING_RULE} it is {finding.label}: {finding.reason}"
        )
    return (
        f"outcome changed: the stored result ({stored.status}) was written before "
        f"{FINDING_RULE}; the replay adds the finding, {finding.label}: {finding.reason}"
    )


def _computed_from(folder: SessionFolder, stored: Result, journal: Journal) -> bool:
    """Whether `stored` was computed from `journal` and not edited since: its seal holds over
    its content and names a head of this journal, after which only warnings were journaled (a
    replay with changed prompts notes each one). A result from before sealed results passes
    unless its folder says its journal is sealed."""
    seal = stored.journal
    if seal is None:
        return not (folder.meta() or {}).get("journal_head")
    if seal.signed != journal.signed or not 0 < seal.events <= len(journal.events):
        return False
    expected = journal.seal_text(unsealed(stored, seal.events, seal.head, seal.signed).to_json())
    if seal.seal != expected or journal.hashes[seal.events - 1] != seal.head:
        return False
    return all(e.kind == EventKind.WARNING for e in journal.events[seal.events :])
