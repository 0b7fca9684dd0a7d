"""A run, from a task and a config (or a session to continue) to its result and reports: the
one async core under `moot.api`'s start and resume, `moot batch` and the benches.

start_async(task, config)   create a session and run its protocol
resume_async(ref)           run the protocol again over its journal; recorded steps cost nothing

Each resolves which protocol runs (its definition, through the plan), opens the run in the
engine (`engine.lifecycle.running`), awaits the protocol over its Session here, and writes the
reports once the run has ended. `run_sync` drives either on an event loop of its own. The run
goes down the floors, `moot run` to the journal line: the engine never calls back up.

The outcome is known before the reports are written: `on_outcome(run)` is called with it first
(the CLI prints it there), then report.md and report.html are rendered. By then result.json and
the journal are on disk, so a process killed in between loses nothing: `moot show` and
`moot export` build the reports from them. A process that exits after the run (`moot run`)
leaves the reports to a detached writer (`detach_reports`, lifecycle/reports.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import secrets
import shutil
import signal
import sys
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from filelock import FileLock
from msgspec import Struct
from msgspec.structs import replace

from moot import lazy
from moot.config import RunConfig, check_task, read_config_file
from moot.engine import lifecycle, opening, startup
from moot.engine.journal import Journal, key_from_env
from moot.engine.lifecycle import Ended

# Result names RunResult's field: help() and inspect.signature() resolve it at run time.
from moot.engine.result import Result, exit_code_for
from moot.engine.session import Agent, Sleep, Subscriber
from moot.engine.store import SessionFolder, atomic_write, find_session, sessions_root
from moot.errors import ConfigError, StorageError, WorkspaceError
from moot.lifecycle import plan as plans
from moot.lifecycle.plan import Plan, participants, resolve
from moot.types import Event, EventKind

if TYPE_CHECKING:
    from moot.engine import outage as outages
    from moot.engine.cache import ResponseCache
    from moot.engine.choice import Chooser
    from moot.lifecycle import reports
else:
    (reports,) = lazy.modules("moot.lifecycle", "reports")  # once the outcome is known
    (outages,) = lazy.modules("moot.engine", "outage")  # a resume's failed asks

__all__ = ["OnOutcome", "RunResult", "resume_async", "run_sync", "start_async"]

T = TypeVar("T")


class RunResult(Struct, frozen=True):
    """How a run ended: its session, result and exit code."""

    session_id: str
    folder: Path
    result: Result
    exit_code: int
    message: str | None = None
    model_calls: int = 0


OnOutcome = Callable[[RunResult], None]


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
    session_id: str | None = None,
    detach_reports: bool = False,
) -> RunResult:
    """Create a session for `task` and run it to its end, a limit, or an interruption, on the
    caller's event loop (many sessions in one loop: `moot batch`); the caller handles signals
    by cancelling the task (`engine.lifecycle.run_sync` does). `chooser` reads a human's choice
    (default: standard input); `on_created(folder)` runs once the session's folder exists and
    before its first step is asked; `on_outcome` is called with the outcome before the reports
    are written. `session_id`: the new session's id instead of a fresh one (a composition's
    sessions, named after their parent and step so a resume finds them). `detach_reports`: a
    writer of its own writes the reports (lifecycle/reports.py), for a process that exits
    after the outcome (`moot run`)."""
    opened = _open_new(task, config, root, session_id)
    lock = opened.folder.acquire()
    try:
        _prepare_workspace(opened, lock)
        if on_created is not None:
            on_created(opened.folder.path)
        ended = await _run(opened, subscribers, sleep, chooser)
    finally:
        lock.release()
    return _reported(ended, on_outcome, detach_reports)


async def resume_async(
    ref: str | None,
    *,
    limits: dict[str, Any] | None = None,
    subscribers: Iterable[Subscriber] = (),
    root: Path | None = None,
    sleep: Sleep = asyncio.sleep,
    chooser: Chooser | None = None,
    on_outcome: OnOutcome | None = None,
    detach_reports: bool = False,
    retry_failed: bool = False,
    accept_tampered: bool = False,
    accept_unsigned: bool = False,
    config: Path | Mapping[str, Any] | None = None,
) -> RunResult:
    """Continue a session on the caller's event loop (see `start_async`); `limits` (for example
    {"max_cost": 5}) raises its budgets. A session that has already finished is replayed (its
    outputs rebuilt), on a thread: the replay runs a loop of its own; with `retry_failed`, a
    finished session whose journal holds failed calls asks them again instead, and its outcome
    is recomputed (the end event keeps the one it replaces). A tampered session, or a signed
    one without its key, is refused unless `accept_tampered` / `accept_unsigned` says to go on
    knowingly (`engine.opening.reopen_session` journals it). `config`: the config file the
    session ran with (or its data), where the secrets of its headers and base URLs are taken
    from (the session's files hold them masked)."""
    folder = opening.current_format(find_session(ref, root))
    reports.wait(folder.path)  # an earlier run's writer must not overwrite this run's reports
    lock = folder.acquire()
    try:
        opened = _open_old(folder, limits, retry_failed, accept_tampered, accept_unsigned, config)
        if opened is None:
            return await asyncio.to_thread(_already_finished, folder, on_outcome)
        ended = await _run(opened, subscribers, sleep, chooser)
    finally:
        lock.release()
    return _reported(ended, on_outcome, detach_reports)


# -- opening ----------------------------------------------------------------------------------
class _Opened(Struct, frozen=True):
    """A session ready to run: its folder and journal open, its participants' models made."""

    folder: SessionFolder
    journal: Journal
    plan: Plan
    config: RunConfig
    agents: list[Agent]
    cache: ResponseCache | None
    retrying: dict[str, Any] | None = None  # a finished outcome a --retry-failed recomputes


def _open_new(
    task: str, config: RunConfig | Plan | None, root: Path | None, session_id: str | None = None
) -> _Opened:
    plan = config if isinstance(config, Plan) else resolve(config or RunConfig())
    if plan.config.code is not None:  # a bad repository fails before anything is created
        from moot.code.workspace import check_repo

        code = check_repo(plan.config.code)
        plan = msgspec.structs.replace(plan, config=replace(plan.config, code=code))
    record, options = plan.record, plan.options
    if not task.strip() and record.default_task is not None:
        task = record.default_task(options) or ""
    if not task.strip():
        raise ConfigError(
            'the task is empty: give the question to deliberate, as in moot run "..."'
        )
    check_task(task, plan.config.engine)  # bad UTF-8 or too large: before any folder
    plan = plans.checked(plan)  # unless check_config has run it already
    if root is None and record.sessions_root is not None:
        root = record.sessions_root(options)
    seed = _seed(task, plan.config)
    agents = participants(plan, seed)
    # what `moot validate` checks too (plan.start_problems)
    plans.make_models(agents, plan=plan)
    plans.check_task_fits(task, agents)
    cache = lifecycle.response_cache(plan.config)
    folder, journal = opening.open_session(
        root or sessions_root(),
        task=task,
        seed=seed,
        protocol=record.name,
        config=plan.config,
        agents=agents,
        session_id=session_id,
    )
    return _Opened(folder, journal, plan, plan.config, agents, cache)


def _seed(task: str, config: RunConfig) -> int:
    """`--seed` if given; under `--cache` one derived from the run's inputs, so the same
    command run again is answered from the cache (engine/cache.py: run_seed); else random."""
    if config.seed is not None:
        return config.seed
    if config.cache is not None:
        from moot.engine.cache import run_seed

        return run_seed(task, config)
    return secrets.randbits(31)


def _open_old(
    folder: SessionFolder,
    limits: dict[str, Any] | None,
    retry_failed: bool = False,
    accept_tampered: bool = False,
    accept_unsigned: bool = False,
    secrets_from: Path | Mapping[str, Any] | None = None,
) -> _Opened | None:
    """A session to continue, ready to run; None when it has already finished (and, with
    `retry_failed`, holds no failed call to ask again)."""
    journal, meta = opening.reopen_session(
        folder, accept_tampered=accept_tampered, accept_unsigned=accept_unsigned
    )
    retrying: dict[str, Any] | None = None
    if lifecycle.finished(journal):
        if not (
            retry_failed and outages.lost_asks(journal.events, outages.asked_steps(journal.events))
        ):
            journal.close()
            return None
        retrying = _finished_outcome(folder, journal)
    try:
        given = read_config_file(secrets_from) if isinstance(secrets_from, Path) else secrets_from
        plan, agents = plans.reopen(meta, given, calls=True)
    except ConfigError:
        journal.close()
        raise
    config = plan.config
    if limits:
        config = replace(config, limits=replace(config.limits, **limits))
    plans.make_models(agents, plan=plan)
    cache = lifecycle.response_cache(config)
    if limits:
        journal.append(
            Event(kind=EventKind.LIMITS_CHANGED, ts=time.time(), data={"limits": limits})
        )
    return _Opened(folder, journal, plan, config, agents, cache, retrying)


def _finished_outcome(folder: SessionFolder, journal: Journal) -> dict[str, Any]:
    """The outcome of a finished session that a --retry-failed resume is about to recompute:
    its status as journaled, its final answer as result.json holds it (if it is readable)."""
    end = lifecycle.last_end(journal.events)
    status = end.data.get("status") if end is not None else None
    outcome: dict[str, Any] = {"status": status, "final_answer": None}
    try:
        stored = Result.read(folder.result_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return outcome
    if stored.status == status:
        outcome["final_answer"] = stored.final_answer
    return outcome


def _prepare_workspace(opened: _Opened, lock: FileLock) -> None:
    """A code task's workspace, made once the session is locked."""
    try:
        lifecycle.code_workspace(opened.config, opened.folder, opened.agents, prepare=True)
    except WorkspaceError:  # (a submodule): leave nothing behind
        opened.journal.close()
        lock.release()
        shutil.rmtree(opened.folder.path, ignore_errors=True)
        raise


# -- running and the end ----------------------------------------------------------------------
async def _run(
    opened: _Opened, subscribers: Iterable[Subscriber], sleep: Sleep, chooser: Chooser | None
) -> Ended:
    protocol = plans.protocol_fn(opened.plan)
    async with lifecycle.running(
        opened.folder,
        opened.journal,
        opened.config,
        opened.agents,
        subscribers=subscribers,
        sleep=sleep,
        cache=opened.cache,
        chooser=chooser,
        retrying=opened.retrying,
    ) as run:
        run.outcome = await protocol(run.session)
    assert run.ended is not None  # set as the block is left
    return run.ended


def _reported(ended: Ended, on_outcome: OnOutcome | None = None, detach: bool = False) -> RunResult:
    """The run's result, shown through `on_outcome` before its reports are rendered (the
    slowest part of the end of a run, and one that result.json and the journal can redo): by
    this process, or with `detach` by a writer of their own, so the process can exit."""
    run = RunResult(
        ended.folder.id,
        ended.folder.path,
        ended.result,
        ended.exit_code,
        ended.message,
        ended.model_calls,
    )
    folder = ended.folder.path
    if detach:  # the process exits once this returns: its loop's idle workers end meanwhile
        startup.end_workers()
    detach = detach and reports.mark(folder)  # before the outcome: `moot show` waits for them
    try:
        if on_outcome is not None:
            on_outcome(run)
    finally:
        if not (detach and reports.detach(folder)):
            _write_reports(ended.folder, ended.result, ended.events)
    return run


def _write_reports(folder: SessionFolder, result: Result, events: list[Event]) -> None:
    """report.md and report.html; ones that cannot be written (a full or read-only disk) are a
    warning: the run has ended, and `moot export` renders them again from the journal."""
    from moot.report import write_reports  # imported late: not needed before the outcome

    try:
        write_reports(folder, result, events)
    except StorageError as exc:
        logging.getLogger("moot").warning(
            "warning: %s (the reports are optional: `moot export %s` renders them again)",
            exc,
            folder.id,
        )


def _already_finished(folder: SessionFolder, on_outcome: OnOutcome | None = None) -> RunResult:
    """Nothing to run: rebuild the outputs from the journal (they may have been lost)."""
    from moot.lifecycle.replay import replay  # only here: `moot run` never replays

    report = replay(folder.id, root=folder.path.parent)
    journal, _ = Journal.open(folder.events, key_from_env(), repair=False)
    failed = len(outages.lost_asks(journal.events, outages.asked_steps(journal.events)))
    hint = (
        f" ({failed} failed call{'s' if failed != 1 else ''} in it: "
        f"moot resume {folder.id} --retry-failed asks them again)"
        if failed
        else ""
    )
    run = RunResult(
        folder.id,
        folder.path,
        report.result,
        exit_code_for(report.result.status),
        f"session {folder.id} had already finished; nothing was asked{hint}",
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
            _write_reports(folder, report.result, journal.events)
    return run


# -- a loop of its own ----------------------------------------------------------------------
def run_sync(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run `factory()` (a run: opening a session, running it, its end) on a fresh event loop
    where Ctrl-C and SIGTERM cancel it cleanly (the journal is already durable), so
    `engine.lifecycle.running` records the interruption and writes its files.
    Start-up ends on this loop: once it first waits on the models, it loads the modules left
    for later and resumes a paused garbage collector (engine/startup.py, moot/collector.py).

    Called where an event loop already runs in this thread (Jupyter, an async web app), the run
    goes on a thread of its own with its own loop, and this call waits for it: a loop cannot
    run inside another. Ctrl-C then reaches the caller's thread, not the run's: the run ends
    when it ends (or with the process), its journal durable either way."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="moot-run") as pool:
            running: concurrent.futures.Future[T] = pool.submit(run_sync, factory)
            return running.result()
    loop = startup.event_loop()
    try:
        task = loop.create_task(factory())
        handled = []
        if sys.platform != "win32":
            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    loop.add_signal_handler(sig, task.cancel)
                    handled.append(sig)
                except (RuntimeError, ValueError):  # not the main thread
                    pass
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            # A signal cancelled what no run_session records (the replay of a finished session
            # on `moot resume`, a run still opening): it ends as Ctrl-C would have.
            raise KeyboardInterrupt from None
        finally:
            for sig in handled:
                loop.remove_signal_handler(sig)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
