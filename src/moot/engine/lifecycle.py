"""A session's life: its folder and begin event, running a protocol function over it with the
state writer and the faces subscribed, and how the run ends (finished, paused by a limit,
interrupted, failed), ending in `result.json`.

The engine knows no protocol: `engine.opening.open_session` takes the participants and the
resolved config, and `running` opens a run whose protocol its caller awaits over
`run.session`, so the engine never calls back up into the lifecycle. `moot.lifecycle.run`
decides which protocol runs, runs it, and writes the reports afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from moot import collector, lazy
from moot.config import RunConfig, dump
from moot.engine.journal import Journal

# Result names Ended's field: help() and inspect.signature() resolve it at run time.
from moot.engine.result import AgentUsage, Result, Status, build_result, exit_code_for
from moot.engine.session import Agent, Session, Sleep, Subscriber
from moot.engine.state import StateWriter
from moot.engine.store import (
    SessionFolder,
    atomic_write,
    sessions_root,
    unwritable,
)
from moot.errors import (
    CacheError,
    Interrupted,
    LimitReached,
    MootError,
    ProtocolAborted,
    ReplayIncomplete,
    Waiting,
)
from moot.types import Event, EventKind, Outcome

if TYPE_CHECKING:
    from moot.engine import outage as outages
    from moot.engine import seal
    from moot.engine.choice import Chooser
else:
    (seal,) = lazy.modules("moot.engine", "seal")  # at the end of a run
    (outages,) = lazy.modules("moot.engine", "outage")  # once asks have failed

# The cache and the code workspace are imported when a run uses them (sqlite3, git plumbing):
# a question with no cache starts without them.
if TYPE_CHECKING:
    from moot.code.workspace import CodeWorkspace
    from moot.engine.cache import ResponseCache

__all__ = [
    "Ended",
    "ProtocolFn",
    "Running",
    "code_workspace",
    "replay_session",
    "response_cache",
    "running",
    "storage_problem",
]

ProtocolFn = Callable[[Session], Awaitable[Outcome]]


class Ended(Struct, frozen=True):
    """How a run of a session ended."""

    folder: SessionFolder
    result: Result
    exit_code: int
    message: str | None
    model_calls: int
    events: list[Event]


def last_end(events: list[Event]) -> Event | None:
    """How the latest run ended (`finished`, `failed` or `stopped`), None if it has not (it
    crashed, or runs now)."""
    for event in reversed(events):
        if event.kind in (EventKind.FINISHED, EventKind.FAILED, EventKind.STOPPED):
            return event
        if event.kind == EventKind.RUN_STARTED:
            return None
    return None


def response_cache(config: RunConfig) -> ResponseCache | None:
    """The response cache a config asks for (`--cache`, `[cache]`), or None. A spec that names
    no store is a ConfigError, a store that cannot be opened a CacheError: both before the run
    starts, so nothing is created."""
    if config.cache is None:
        return None
    from moot.engine.cache import ResponseCache, open_cache

    settings = config.cache
    store = open_cache(settings.store)
    return ResponseCache(store, ttl=settings.ttl, allow_sampled=settings.allow_sampled)


def storage_problem(config: RunConfig, root: Path | None = None) -> str | None:
    """Why a run of `config` could not store what it must before its first call (its response
    cache, then its session under `root`, default `sessions_root()`): a file where a folder
    must be, or a sessions folder that cannot be written (`store.unwritable`: tried with a
    temporary folder, removed at once), worded as the run words it. Leaves nothing behind:
    `plan.start_problems` asks it."""
    if config.cache is not None:
        from moot.engine.cache import store_problem

        problem = store_problem(config.cache.store)
        if problem is not None:
            return problem
    return unwritable(root or sessions_root())


def finished(journal: Journal) -> bool:
    """Whether the session has reached its outcome (nothing left to run)."""
    end = last_end(journal.events)
    return end is not None and end.kind == EventKind.FINISHED


def retries_failures(journal: Journal) -> bool:
    """A session that failed, or paused for an outage, asks its failed steps again on resume;
    after any other stop a failed step stays final (later steps were decided knowing it)."""
    end = last_end(journal.events)
    if end is None:
        return False
    return end.kind == EventKind.FAILED or (
        end.kind == EventKind.STOPPED and end.data.get("reason") == "outage"
    )


def code_workspace(
    config: RunConfig, folder: SessionFolder, agents: list[Agent], *, prepare: bool
) -> CodeWorkspace | None:
    """The workspace of a code task (None for a question). `prepare` (live runs): take the
    baseline once and make each agent's worktree (judges get none); repeating it after a crash
    keeps the agents' work and remakes what a crash left half made."""
    if config.code is None:
        return None
    from moot.code.workspace import CodeWorkspace

    workspace = CodeWorkspace(config.code, folder.id, folder.path)
    if prepare:
        workspace.prepare([a.alias for a in agents if a.alias.startswith("agent_")])
    return workspace


# -- running ----------------------------------------------------------------------------------
def _session(
    folder: SessionFolder,
    journal: Journal,
    config: RunConfig,
    agents: list[Agent],
    *,
    mode: str = "live",
    sleep: Sleep = asyncio.sleep,
    retry_failed: bool = False,
    cache: ResponseCache | None = None,
    chooser: Chooser | None = None,
) -> Session:
    meta = journal.events[0].data
    return Session(
        folder=folder,
        journal=journal,
        task=meta["task"],
        seed=meta["seed"],
        agents=agents,
        engine=config.engine,
        limits=config.limits,
        mode="replay" if mode == "replay" else "live",
        sleep=sleep,
        retry_failed=retry_failed,
        cache=cache,
        code=code_workspace(config, folder, agents, prepare=mode != "replay"),
        chooser=chooser,
    )


def _usage(session: Session) -> dict[str, AgentUsage]:
    return {
        row.alias: AgentUsage(
            model=agent.spec,
            prompt_tokens=row.usage.prompt_tokens,
            completion_tokens=row.usage.completion_tokens,
            tokens_estimated=row.usage.estimated,
            cost=round(row.cost, 6) if row.cost_known else None,
            calls=row.calls,
            failures=row.failures,
        )
        for agent in session.agents
        for row in [session.standing.agents[agent.alias]]
    }


def _result(
    folder: SessionFolder,
    session: Session,
    outcome: Outcome | None,
    status: Status,
    message: str | None,
) -> Result:
    meta = session.meta
    end = last_end(session.journal.events)
    if outcome is not None and end is not None and end.kind == EventKind.FINISHED:
        # lost asks, a retry's earlier outcome
        outcome = outages.noted(outcome, end.data, folder.id)
    result = build_result(
        session_id=folder.id,
        protocol=meta["protocol"],
        task=meta["task"],
        # sorted: the journal reads the begin event's maps back in key order, so a replay
        # lists them that way; the live run must too, or its result differs from the replay's
        aliases=dict(sorted(meta["aliases"].items())),
        agents=_usage(session),
        outcome=outcome,
        status=status,
        stop_message=message,
    )
    return seal.seal_result(result, session.journal)  # carries the journal head it came from


class Running(Struct):
    """A run in progress (`running`): the Session its protocol runs over. The block sets
    `outcome` when the protocol returns; `ended` says how the run ended once the block is left."""

    session: Session
    outcome: Outcome | None = None
    ended: Ended | None = None


def retried_before(events: Iterable[Event]) -> dict[str, Any] | None:
    """The outcome a `--retry-failed` resume replaces while no run has finished since (the
    retry paused for an outage again, or was interrupted): every run until then records it in
    its `run_started` event, and the run that finishes in its end event."""
    for event in reversed(list(events)):
        if event.kind == EventKind.FINISHED:
            return None
        if event.kind == EventKind.RUN_STARTED:
            before = event.data.get("before")
            if isinstance(before, dict):
                return before
    return None


@contextlib.asynccontextmanager
async def running(
    folder: SessionFolder,
    journal: Journal,
    config: RunConfig,
    agents: list[Agent],
    *,
    subscribers: Iterable[Subscriber] = (),
    sleep: Sleep = asyncio.sleep,
    cache: ResponseCache | None = None,
    chooser: Chooser | None = None,
    retrying: Mapping[str, Any] | None = None,
) -> AsyncIterator[Running]:
    """The run of a session, around its protocol: the block runs the protocol over
    `run.session` and sets `run.outcome`; leaving it journals how the run ended (its end, a
    limit, an interruption, an abort), writes result.json and closes the models (and the
    cache). The protocol is awaited by the caller, above the engine: a run goes down the floors
    from `moot run` to the journal without the engine calling back up into the lifecycle.
    `retrying`: a finished session's outcome (status, final answer) that a resume asking its
    failed steps again (`--retry-failed`) recomputes; the new end event keeps it (`before`)."""
    meta = journal.events[0].data
    before = dict(retrying) if retrying is not None else retried_before(journal.events)
    retry = before is not None or retries_failures(journal)  # a retry goes on until it ends
    kept: dict[str, Any] = {"before": before} if before is not None else {}
    (folder.path / "stop").unlink(missing_ok=True)  # a `moot stop` of an earlier run is done
    session = _session(
        folder,
        journal,
        config,
        agents,
        sleep=sleep,
        retry_failed=retry,
        cache=cache,
        chooser=chooser,
    )
    state = StateWriter(folder, meta, session.standing)
    state.absorb(journal.events)
    session.subscribe(state)
    for subscriber in subscribers:
        session.subscribe(subscriber)
    # Faces start from the session's meta and what earlier runs journaled (on resume).
    session.signal(EventKind.OPENED, session_id=folder.id, meta=meta, past=list(journal.events))
    session.record(
        EventKind.RUN_STARTED,
        pid=os.getpid(),
        limits=dump(config.limits),
        **kept,
    )
    run = Running(session)
    message: str | None = None
    outcome: Outcome | None = None
    try:
        yield run
        if run.outcome is None:
            raise RuntimeError("a run's block ended without setting the protocol's outcome")
        status: Status
        lost = outages.lost_asks(journal.events, session.steps_reached)
        if run.outcome.status != "consensus" and outages.outage(lost):
            # the failures, not the agents, decided it: wait for the provider, then ask again
            status, message = "paused", outages.paused_without(folder.id, run.outcome, lost)
            session.record(
                EventKind.STOPPED,
                reason="outage",
                message=message,
                lost=[x.record() for x in lost],
                without={"status": run.outcome.status, "how": run.outcome.how},
            )
        else:
            outcome = run.outcome
            status = outcome.status
            # reached without asks a provider's outage lost: said in its trust statement
            transient = [x.record() for x in lost if x.transient]
            lost_note: dict[str, Any] = {"lost": transient} if transient else {}
            session.record(EventKind.FINISHED, status=status, **lost_note, **kept)
    except LimitReached as exc:
        status, message = (
            "paused",
            f"{exc}; continue with: moot resume {folder.id} " + _raise_hint(str(exc)),
        )
        session.record(EventKind.STOPPED, reason="limit", message=message)
    except Waiting as exc:
        status, message = "paused", str(exc)
        session.record(EventKind.STOPPED, reason="waiting", message=message)
    except (asyncio.CancelledError, Interrupted):
        status = "interrupted"
        message = _interrupted(folder.id, journal.events)
        session.record(EventKind.STOPPED, reason="interrupted", message=message)
    except ProtocolAborted as exc:
        lost = outages.lost_asks(journal.events, session.steps_reached)
        if outages.outage(lost):
            status, message = (
                "paused",
                f"{exc}; every failure was transient ({outages.describe(lost)}; a provider down or "
                f"refusing connections?): once it is back, continue with: "
                f"moot resume {folder.id}",
            )
            session.record(
                EventKind.STOPPED,
                reason="outage",
                message=message,
                lost=[x.record() for x in lost],
            )
        else:
            status, message = "failed", str(exc)
            session.record(EventKind.FAILED, message=message)
    finally:
        await session.copies_written()  # before the journal closes: a failure is journaled
        for agent in agents:
            if agent.model is not None:
                await agent.model.aclose()
        if cache is not None:
            with contextlib.suppress(CacheError):
                await cache.store.close()
        journal.close()
    result = _result(folder, session, outcome, status, message)
    # the journal holds the run: a result.json that cannot be written is rebuilt by resume
    then = f"then `moot resume {folder.id}` writes it from the journal, asking nothing again"
    atomic_write(folder.result_json, result.to_json(), then=then)
    state.set_status(status, message)
    # Worktrees with no change are removed once the run has ended; said after the stop
    # message only (result.json stays what the journal alone gives, so replay matches it).
    tidied = session.code.tidy(status) if session.code is not None else None
    run.ended = Ended(
        folder,
        result,
        exit_code_for(status),
        "\n".join(m for m in (message, tidied) if m) or None,
        session.calls_made,
        list(journal.events),
    )


def _interrupted(session_id: str, events: Iterable[Event]) -> str:
    """What an interrupted run kept: its answers, or, before the first one, nothing to lose."""
    asks = (e.data.get("completion") or {} for e in events if e.kind == EventKind.ASK)
    if any(completion.get("status") == "ok" for completion in asks):
        return f"the answers so far are kept; continue with: moot resume {session_id}"
    return f"no answer had arrived; start it again with: moot resume {session_id}"


def _raise_hint(message: str) -> str:
    for word, flag in (
        ("token", "--max-tokens N"),
        ("cost", "--max-cost USD"),
        ("time", "--timeout S"),
    ):
        if message.startswith(word):
            return flag + " (a higher limit)"
    return ""


def last_stop(events: list[Event]) -> tuple[Status, str] | None:
    """How the latest run stopped (paused or interrupted), if it did."""
    for event in reversed(events):
        if event.kind == EventKind.STOPPED:
            reason = event.data.get("reason")
            status: Status = "interrupted" if reason == "interrupted" else "paused"
            return status, event.data.get("message", "")
        if event.kind == EventKind.RUN_STARTED:
            return None
    return None


def replay_session(
    folder: SessionFolder,
    journal: Journal,
    config: RunConfig,
    agents: list[Agent],
    protocol: ProtocolFn,
) -> Result:
    """The result that the journal alone gives, with zero model calls. Start-up ends here too
    (a paused garbage collector is resumed): `moot resume` of a finished session replays it."""
    collector.collect_again()
    session = _session(folder, journal, config, agents, mode="replay")
    stop = last_stop(journal.events)
    message: str | None
    try:
        outcome: Outcome | None = asyncio.run(_call(protocol, session))
        status: Status = outcome.status if outcome else "failed"
        message = None
    except ReplayIncomplete as exc:
        end = last_end(journal.events)
        if stop is None and end is not None:  # it ended; today's code goes elsewhere
            ended = "finished" if end.kind == EventKind.FINISHED else "ended (failed)"
            raise ReplayIncomplete(
                exc.step,
                exc.effect,
                f"session {folder.id} {ended}, but {exc}: the code that computes its outcome "
                "has changed since; its recorded outcome stands",
            ) from None
        if stop is None:
            raise MootError(
                f"session {folder.id} never finished and holds no stop record (it may still be "
                f"running, or it crashed), and {exc}: run moot resume {folder.id} first"
            ) from None
        outcome, status, message = None, stop[0], stop[1]
    except ProtocolAborted as exc:
        outcome, status, message = None, "failed", str(exc)
    end = last_end(journal.events)
    if stop is not None and end is not None and end.data.get("reason") == "outage":
        outcome, status, message = None, stop[0], stop[1]  # it paused for the outage there
    return _result(folder, session, outcome, status, message)


async def _call(protocol: ProtocolFn, session: Session) -> Outcome:
    return await protocol(session)
