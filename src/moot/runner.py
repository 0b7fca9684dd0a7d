"""Start, resume and replay sessions: the library face that the CLI calls.

start(task, config)   create a session folder and run the protocol
resume(ref)           run the protocol again over its journal; recorded steps cost nothing
replay(ref)           recompute the outcome from the journal alone (zero model calls)
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import random
import secrets
import signal
import sys
import time
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moot import __version__
from moot.config import RunConfig, path_problems
from moot.deliberation.anonymize import alias_for
from moot.engine.head import anchors
from moot.engine.journal import Journal, key_from_env
from moot.engine.session import Agent, Session, Sleep, Subscriber
from moot.engine.state import StateWriter
from moot.engine.store import (
    SessionFolder,
    atomic_write,
    find_session,
    new_session_id,
    sessions_root,
)
from moot.errors import (
    ConfigError,
    Interrupted,
    JournalError,
    LimitReached,
    MootError,
    ProtocolAborted,
    ReplayIncomplete,
)
from moot.models.base import create_model
from moot.protocols import PROTOCOLS, load_protocol
from moot.report import write_reports
from moot.result import FORMAT_VERSION, AgentUsage, Result, Status, build_result, exit_code_for
from moot.types import Event, Outcome

__all__ = ["ReplayReport", "RunResult", "replay", "resume", "start"]


@dataclass(frozen=True)
class RunResult:
    session_id: str
    folder: Path
    result: Result
    exit_code: int
    message: str | None = None
    model_calls: int = 0


@dataclass(frozen=True)
class ReplayReport:
    session_id: str
    result: Result
    identical: bool | None  # None: no stored result.json to compare with
    steps: int


# -- public API -------------------------------------------------------------------------------
def start(
    task: str,
    config: RunConfig | None = None,
    *,
    subscribers: Iterable[Subscriber] = (),
    root: Path | None = None,
    sleep: Sleep = asyncio.sleep,
) -> RunResult:
    """Create a session for `task` and run it to its end, a limit, or an interruption."""
    config = config or RunConfig()
    court = config.court if config.protocol == "court" else None
    if not task.strip() and court is not None and court.topic:
        task = court.topic
    if not task.strip():
        raise ConfigError(
            'the task is empty: give the question to deliberate, as in moot run "..."'
        )
    problems = path_problems(config.model_dump(mode="json"), Path.cwd())
    if problems:
        listed = "\n  ".join(problems)
        raise ConfigError(f"the config names files outside the working folder:\n  {listed}")
    if root is None and court is not None and court.checkpoint_dir:
        root = Path(court.checkpoint_dir).expanduser() / "sessions"  # plays MOOT_HOME
    seed = config.seed if config.seed is not None else secrets.randbits(31)
    agents = _participants(config, seed)
    for agent in agents:  # fail on a bad spec before anything is written
        agent.model = create_model(agent.spec, agent.config.settings())
    session_id = new_session_id()
    folder = SessionFolder((root or sessions_root()) / session_id)
    folder.path.mkdir(parents=True)
    lock = folder.acquire()
    try:
        meta = {
            "format_version": FORMAT_VERSION,
            "session_id": session_id,
            "protocol": config.protocol,
            "task": task,
            "seed": seed,
            "config": config.model_dump(mode="json"),
            "aliases": {a.alias: a.spec for a in agents},
            "context_windows": {
                a.alias: a.model.capabilities.context_window for a in agents if a.model
            },
            "cwd": os.getcwd(),
            "moot_version": __version__,
        }
        atomic_write(
            folder.session_json,
            json.dumps(
                {
                    **meta,
                    "created": time.time(),
                    "python": platform.python_version(),
                    **anchors(key_from_env()),  # sealed head and signature, outside the lines
                },
                indent=2,
            ),
        )
        journal, _ = Journal.open(folder.events, key_from_env())
        journal.append(Event(kind="begin", data=meta, ts=time.time()))
        return _run_sync(lambda: _drive(folder, journal, config, agents, subscribers, sleep))
    finally:
        lock.release()


def resume(
    ref: str | None,
    *,
    limits: dict[str, Any] | None = None,
    subscribers: Iterable[Subscriber] = (),
    root: Path | None = None,
    sleep: Sleep = asyncio.sleep,
) -> RunResult:
    """Continue a session; `limits` (for example {"max_cost": 5}) raises its budgets."""
    folder = _current_format(find_session(ref, root))
    lock = folder.acquire()
    try:
        journal, repair = Journal.open(folder.events, key_from_env())
        meta = _begin(journal, folder)
        if repair is not None:
            journal.append(
                Event(
                    kind="warning",
                    ts=time.time(),
                    data={
                        "message": f"cut a torn last line ({repair.dropped_bytes} bytes at line "
                        f"{repair.line}) left by a crash; nothing recorded before it was lost",
                    },
                )
            )
        if any(e.kind in ("finished", "failed") for e in journal.events):
            return _already_finished(folder, journal, meta)
        config = RunConfig.model_validate(meta["config"])
        if limits:
            config.limits = config.limits.model_copy(update=limits)
        agents = _agents(meta, config)
        for agent in agents:
            agent.model = create_model(agent.spec, agent.config.settings())
        if limits:
            journal.append(Event(kind="limits_changed", ts=time.time(), data={"limits": limits}))
        return _run_sync(lambda: _drive(folder, journal, config, agents, subscribers, sleep))
    finally:
        lock.release()


def replay(ref: str | None, *, root: Path | None = None) -> ReplayReport:
    """Recompute the outcome from the journal alone and compare it with `result.json`."""
    folder = _current_format(find_session(ref, root))
    journal, _ = Journal.open(folder.events, key_from_env(), repair=False)
    meta = _begin(journal, folder)
    config = RunConfig.model_validate(meta["config"])
    session = Session(
        folder=folder,
        journal=journal,
        task=meta["task"],
        seed=meta["seed"],
        agents=_agents(meta, config),
        engine=config.engine,
        limits=config.limits,
        mode="replay",
    )
    protocol = load_protocol(config.protocol)
    options = getattr(config, PROTOCOLS[config.protocol][1])
    stop = _last_stop(journal.events)
    try:
        outcome: Outcome | None = asyncio.run(protocol(session, meta["task"], options))
        status: Status = outcome.status if outcome else "failed"
        message = None
    except ReplayIncomplete:
        if stop is None:
            raise MootError(
                f"session {folder.id} never finished and holds no stop record (it may still be "
                f"running, or it crashed): run moot resume {folder.id} first"
            ) from None
        outcome, status, message = None, stop[0], stop[1]
    except ProtocolAborted as exc:
        outcome, status, message = None, "failed", str(exc)
    result = _result(folder, meta, session, outcome, status, message)
    stored = folder.result_json.read_text(encoding="utf-8") if folder.result_json.exists() else None
    identical = None if stored is None else result.same_as_stored(stored)
    steps = sum(1 for e in journal.events if e.kind in ("ask", "shell"))
    return ReplayReport(folder.id, result, identical, steps)


# -- internals --------------------------------------------------------------------------------
def _already_finished(folder: SessionFolder, journal: Journal, meta: dict[str, Any]) -> RunResult:
    """Nothing to run: rebuild the outputs from the journal (they may have been lost)."""
    journal.close()
    report = replay(folder.id, root=folder.path.parent)
    if report.identical is not True:
        atomic_write(folder.result_json, report.result.to_json())
        write_reports(folder, report.result, journal.events)
    return RunResult(
        folder.id,
        folder.path,
        report.result,
        exit_code_for(report.result.status),
        f"session {folder.id} had already finished; nothing was asked",
    )


def _current_format(folder: SessionFolder) -> SessionFolder:
    """Older session folders are read-only until `moot migrate` upgrades them."""
    from moot.migrate import folder_version

    version = folder_version(folder)
    if version < FORMAT_VERSION:
        raise JournalError(
            f"session {folder.id} was written in format version {version} by an older moot; "
            f"upgrade it first with: moot migrate {folder.id}"
        )
    return folder


def _begin(journal: Journal, folder: SessionFolder) -> dict[str, Any]:
    if not journal.events or journal.events[0].kind != "begin":
        raise JournalError(f"{folder.events} does not start with a begin event; not a moot session")
    return journal.events[0].data


def _participants(config: RunConfig, seed: int) -> list[Agent]:
    """The agents (agent_a, ...) then, in a court, the judges (judge_a, ...). Aliases are
    random per session but derived from the seed, so resume and replay find the same ones."""
    groups = [("agent", "aliases", config.agents)]
    if config.protocol == "court":
        groups.append(("judge", "judges", config.court.judge_configs(config.agents)))
    participants = []
    for role, salt, configs in groups:
        order = list(range(len(configs)))
        random.Random(f"{seed}/{salt}").shuffle(order)
        for i, k in enumerate(order):
            settings = configs[k]
            if config.protocol == "court":
                settings = config.court.participant(settings, judge=role == "judge")
            participants.append(
                Agent(alias=alias_for(i, role), spec=settings.model, config=settings)
            )
    return participants


def _agents(meta: dict[str, Any], config: RunConfig) -> list[Agent]:
    """Rebuild the participants in alias order and check them against the recorded map."""
    agents = _participants(config, meta["seed"])
    if {a.alias: a.spec for a in agents} != meta["aliases"]:
        raise JournalError(
            f"the alias map of session {meta['session_id']} does not match "
            "its config; the session folder was edited"
        )
    return agents


def _last_stop(events: list[Event]) -> tuple[Status, str] | None:
    for event in reversed(events):
        if event.kind == "stopped":
            reason = event.data.get("reason")
            return ("paused" if reason == "limit" else "interrupted"), event.data.get("message", "")
        if event.kind == "run_started":
            return None
    return None


def _usage(session: Session) -> dict[str, AgentUsage]:
    return {
        agent.alias: AgentUsage(
            model=agent.spec,
            prompt_tokens=totals.usage.prompt_tokens,
            completion_tokens=totals.usage.completion_tokens,
            tokens_estimated=totals.usage.estimated,
            cost=round(totals.cost, 6) if totals.cost_known else None,
            calls=totals.calls,
            failures=totals.failures,
        )
        for agent in session.agents
        for totals in [session.totals[agent.alias]]
    }


def _result(
    folder: SessionFolder,
    meta: dict[str, Any],
    session: Session,
    outcome: Outcome | None,
    status: Status,
    message: str | None,
) -> Result:
    return build_result(
        session_id=folder.id,
        protocol=meta["protocol"],
        task=meta["task"],
        aliases=meta["aliases"],
        agents=_usage(session),
        outcome=outcome,
        status=status,
        stop_message=message,
        journal=session.journal,  # the result carries the journal head it was computed from
    )


async def _drive(
    folder: SessionFolder,
    journal: Journal,
    config: RunConfig,
    agents: list[Agent],
    subscribers: Iterable[Subscriber],
    sleep: Sleep,
) -> RunResult:
    meta = journal.events[0].data
    session = Session(
        folder=folder,
        journal=journal,
        task=meta["task"],
        seed=meta["seed"],
        agents=agents,
        engine=config.engine,
        limits=config.limits,
        sleep=sleep,
    )
    state = StateWriter(folder, meta)
    state.absorb(journal.events)
    session.subscribe(state)
    for subscriber in subscribers:
        session.subscribe(subscriber)
    # Faces start from the session's meta and what earlier runs journaled (on resume).
    session.signal("opened", session_id=folder.id, meta=meta, past=list(journal.events))
    protocol = load_protocol(config.protocol)
    options = getattr(config, PROTOCOLS[config.protocol][1])
    session.record("run_started", pid=os.getpid(), limits=config.limits.model_dump(mode="json"))
    outcome: Outcome | None = None
    message: str | None = None
    try:
        outcome = await protocol(session, meta["task"], options)
        status: Status = outcome.status
        session.record("finished", status=status)
    except LimitReached as exc:
        status, message = (
            "paused",
            f"{exc}; continue with: moot resume {folder.id} " + _raise_hint(str(exc)),
        )
        session.record("stopped", reason="limit", message=message)
    except (asyncio.CancelledError, Interrupted):
        status, message = "interrupted", f"interrupted; continue with: moot resume {folder.id}"
        session.record("stopped", reason="interrupted", message=message)
    except ProtocolAborted as exc:
        status, message = "failed", str(exc)
        session.record("failed", message=message)
    finally:
        for agent in agents:
            if agent.model is not None:
                await agent.model.aclose()
        journal.close()
    result = _result(folder, meta, session, outcome, status, message)
    atomic_write(folder.result_json, result.to_json())
    write_reports(folder, result, journal.events)
    state.set_status(status, message)
    return RunResult(
        folder.id, folder.path, result, exit_code_for(status), message, session.calls_made
    )


def _raise_hint(message: str) -> str:
    for word, flag in (
        ("token", "--max-tokens N"),
        ("cost", "--max-cost USD"),
        ("time", "--timeout S"),
    ):
        if message.startswith(word):
            return flag + " (a higher limit)"
    return ""


def _run_sync(factory: Callable[[], Coroutine[Any, Any, RunResult]]) -> RunResult:
    """Run on a fresh event loop where Ctrl-C and SIGTERM cancel the run cleanly (the journal
    is already durable), so `_drive` records the interruption and writes its files."""
    loop = asyncio.new_event_loop()
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
        finally:
            for sig in handled:
                loop.remove_signal_handler(sig)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
