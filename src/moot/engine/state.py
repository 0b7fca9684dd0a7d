"""`state.json`: a snapshot derived from the session's events, for `moot status` and UIs.

It is rewritten atomically (never half-written) but without fsync: the journal is the truth and
the snapshot can always be rebuilt from it. So a snapshot that cannot be written (a full or
read-only disk) is a warning, said once, and the run goes on."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from typing import Any

from msgspec import Struct

from moot.engine.standing import Standing
from moot.engine.store import SessionFolder, atomic_write
from moot.errors import StorageError
from moot.types import Event

__all__ = ["WRITE_INTERVAL", "Seen", "StateWriter", "pid_alive", "seen_state"]

WRITE_INTERVAL = 0.25  # seconds between snapshot writes while a run is busy
_log = logging.getLogger("moot")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


STOPPED_UNEXPECTEDLY = "stopped unexpectedly"


class Seen(Struct, frozen=True):
    """A session's state as another process sees it: `state.json`, with a `running` session
    whose process is gone read as stopped unexpectedly (crashed or killed)."""

    state: dict[str, Any]
    status: str
    crashed: bool
    updated: float

    def standing(self) -> Standing:
        """The snapshot's standing; a crashed session's clock stopped at its last update."""
        tally = Standing.from_snapshot(self.state)
        if self.crashed:
            tally.ended_at = self.updated
        return tally


def seen_state(folder: SessionFolder) -> Seen | None:
    state = folder.state()
    if state is None:
        return None
    status = str(state.get("status", "?"))
    updated = float(state.get("updated") or time.time())
    crashed = status == "running" and not pid_alive(int(state.get("pid", 0)))
    return Seen(state, STOPPED_UNEXPECTEDLY if crashed else status, crashed, updated)


class StateWriter:
    """Keeps `state.json` current from a standing: the Session's own (`standing=`), which it
    updates before telling its subscribers, or one of its own fed by `absorb` (migrate)."""

    def __init__(
        self, folder: SessionFolder, meta: dict[str, Any], standing: Standing | None = None
    ) -> None:
        self.folder = folder
        self._written = 0.0
        self._warned = False  # a failed write was said once
        self._later: asyncio.TimerHandle | None = None  # a write scheduled for a later event
        self._own = standing is None
        self.standing = standing if standing is not None else Standing.for_aliases(meta["aliases"])
        self.header: dict[str, Any] = {
            "session_id": folder.id,
            "status": "running",
            "pid": os.getpid(),
            "protocol": meta["protocol"],
            "task": meta["task"],
            "message": None,
        }

    @property
    def state(self) -> dict[str, Any]:
        return {**self.header, **self.standing.snapshot(), "updated": time.time()}

    def absorb(self, events: list[Event]) -> None:
        """Catch up with events journaled before this run, writing once."""
        if self._own:
            self.standing.absorb(events)
        self.write()

    def __call__(self, event: Event) -> None:
        # Writing costs about half a millisecond; at most a few writes a second are plenty for
        # a snapshot. An event that comes sooner is written by a write scheduled for then, so
        # the snapshot is never left behind: a phase starts with its asks (ask_started), and
        # its first answer may be minutes away, while `moot status` shows the phase.
        if self._own:
            self.standing.apply(event)
        waited = time.monotonic() - self._written
        if waited >= WRITE_INTERVAL:
            self.write()
        elif self._later is None:
            with contextlib.suppress(RuntimeError):  # no running loop (migrate): next event
                loop = asyncio.get_running_loop()
                self._later = loop.call_later(WRITE_INTERVAL - waited, self._catch_up)

    def _catch_up(self) -> None:
        self._later = None
        self.write()

    def set_status(self, status: str, message: str | None = None) -> None:
        self.header["status"] = status
        self.header["message"] = message
        self.write()

    def write(self) -> None:
        if self._later is not None:
            self._later.cancel()
            self._later = None
        self._written = time.monotonic()
        try:
            atomic_write(self.folder.state_json, json.dumps(self.state, indent=2), durable=False)
        except StorageError as exc:
            if not self._warned:
                self._warned = True
                _log.warning("warning: %s (state.json is a snapshot; the run goes on)", exc)
