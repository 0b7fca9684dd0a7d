"""The deliberations an MCP server runs: each on a task of its own, its phases reported as
progress, stopped by a client's cancel or the stop tool and left resumable.

A run is a plain asyncio task beside the request that asked for it: when the client cancels the
request, the run is cancelled once (the engine journals the interruption and writes
result.json) and the request waits, shielded, until that is on disk. A run of this process
stopped by the stop tool ends the same way; a session another process runs is asked to stop
through its stop file and signal (`moot stop`)."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Unpack

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from msgspec import Struct, field

from moot.engine.store import find_session
from moot.errors import ConfigError
from moot.lifecycle import code as code_sessions
from moot.lifecycle.listing import outcome_json
from moot.lifecycle.plan import RunOptions, load_run
from moot.lifecycle.run import RunResult, resume_async, start_async
from moot.models.keys import redact
from moot.types import Event, EventKind, Step

__all__ = ["Phases", "Report", "Runs", "masked"]

Report = Callable[[float, str], Awaitable[None]]  # (progress, message): one notification
Launch = Callable[["Phases", Callable[[Path], None]], Coroutine[Any, Any, RunResult]]
_ASKED = frozenset({EventKind.ASK_STARTED, EventKind.SHELL_STARTED})


def masked(data: Any) -> Any:
    """`data` with anything shaped like an API key masked (a session an older moot wrote
    holds a pasted key unmasked), as `moot show --json` prints it."""
    return json.loads(redact(json.dumps(data, ensure_ascii=True, default=str)))


def phase_text(where: Step) -> str:
    """A phase as a person reads it: "round 1: solve", "judges 2: score", "setup"."""
    head = where.stage if where.number is None else f"{where.stage} {where.number}"
    return f"{head}: {where.phase}" if where.phase else head


class Phases:
    """A subscriber of a run's events that queues one message per phase entered: the first
    ask (or command) of each new phase of the step ids."""

    def __init__(self) -> None:
        channel: tuple[
            MemoryObjectSendStream[tuple[int, str]], MemoryObjectReceiveStream[tuple[int, str]]
        ] = anyio.create_memory_object_stream(math.inf)
        self.sending, self.received = channel
        self.count = 0
        self._last: tuple[str, int | None, str | None] | None = None

    def __call__(self, event: Event) -> None:
        if event.kind not in _ASKED:
            return
        where = Step.parse(event.step)
        key = (where.stage, where.number, where.phase)
        if key == self._last:
            return
        self._last = key
        self.count += 1
        self.sending.send_nowait((self.count, phase_text(where)))

    async def pump(self, report: Report) -> None:
        """Send each queued phase through `report`, until the run is over."""
        async with self.received:
            async for count, text in self.received:
                await report(count, text)


async def _no_choice(prompt: str, options: Sequence[str]) -> str | None:
    """No human at this server's standard input (it carries the protocol): no choice is made,
    as with an empty answer on a terminal (`moot apply ID --agent ALIAS` applies one later)."""
    return None


class Runs(Struct):
    """The runs this server has under way, by session id; `root`: the sessions folder (None:
    moot's home)."""

    root: Path | None = None
    running: dict[str, asyncio.Task[RunResult]] = field(default_factory=dict)

    async def start(
        self,
        task: str,
        report: Report,
        *,
        config: str | None = None,
        **options: Unpack[RunOptions],
    ) -> dict[str, Any]:
        """Deliberate on `task` with a run's `options` (`load_run`; bad arguments raise
        ConfigError before any session exists)."""
        if not task.strip():
            raise ConfigError("task: give the question or task to deliberate on")
        config_path = Path(config).expanduser() if config else None
        if config_path is not None and not config_path.is_file():
            raise ConfigError(f"config: no such file: {config_path}")
        plan = load_run(config_path, **options)

        def launch(phases: Phases, created: Callable[[Path], None]) -> Coroutine[Any, Any, Any]:
            return start_async(
                task,
                plan,
                subscribers=[phases],
                root=self.root,
                chooser=_no_choice,
                on_created=created,
            )

        return await self._drive(launch, report, None)

    async def resume(
        self,
        ref: str | None,
        report: Report,
        *,
        max_cost: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Continue a session (the latest without `ref`), its budgets raised to the limits
        given."""
        folder = find_session(ref, self.root)
        if folder.id in self.running:
            raise ConfigError(f"session {folder.id} is running in this server already")
        pairs = {"max_cost": max_cost, "max_tokens": max_tokens, "timeout": timeout}
        limits = {key: value for key, value in pairs.items() if value is not None} or None

        def launch(phases: Phases, created: Callable[[Path], None]) -> Coroutine[Any, Any, Any]:
            return resume_async(
                folder.id, limits=limits, subscribers=[phases], root=self.root, chooser=_no_choice
            )

        return await self._drive(launch, report, folder.id)

    async def stop(self, ref: str | None) -> dict[str, Any]:
        """Stop a session: one this server runs is cancelled and waited for (its interruption
        journaled); another process's is asked to stop as `moot stop` asks."""
        folder = find_session(ref, self.root)
        run = self.running.get(folder.id)
        if run is not None:
            run.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.wait([run])
            return {"session_id": folder.id, "stopped": True, "status": _status(folder.id, run)}
        pid = code_sessions.stop(folder)
        return {"session_id": folder.id, "stopped": pid is not None, "asked_process": pid}

    async def _drive(self, launch: Launch, report: Report, known: str | None) -> dict[str, Any]:
        """Run `launch` on a task of its own, its phases sent through `report`; a cancel of
        this request cancels the run once and waits for its end to be journaled."""
        phases = Phases()
        ids: list[str] = [known] if known else []

        def created(folder: Path) -> None:
            ids.append(folder.name)
            self.running[folder.name] = run

        run: asyncio.Task[RunResult] = asyncio.ensure_future(launch(phases, created))
        if known:
            self.running[known] = run
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(phases.pump, report)
                try:
                    result = await asyncio.shield(run)
                except asyncio.CancelledError:
                    run.cancel()
                    with anyio.CancelScope(shield=True):
                        await asyncio.wait([run])  # the interruption journaled, its files written
                    raise
                finally:
                    phases.sending.close()
        finally:
            for session_id in ids:
                if self.running.get(session_id) is run:
                    del self.running[session_id]
        folder = find_session(result.session_id, self.root)
        outcome: dict[str, Any] = outcome_json(folder)
        outcome.setdefault("trust", result.result.trust)
        outcome["exit_code"] = result.exit_code
        outcome["message"] = result.message
        return dict(masked(outcome))


def _status(session_id: str, run: asyncio.Task[RunResult]) -> str:
    if run.cancelled():
        return "interrupted"
    error = run.exception()
    if error is not None:
        return f"failed: {error}"
    return str(run.result().result.status)
