"""`state.json`: a snapshot derived from the session's events, for `moot status` and UIs.

It is rewritten atomically (never half-written) but without fsync: the journal is the truth and
the snapshot can always be rebuilt from it."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from moot.engine.store import SessionFolder, atomic_write
from moot.engine.tally import Tally
from moot.types import Event, EventKind

__all__ = ["WRITE_INTERVAL", "StateWriter", "pid_alive"]

WRITE_INTERVAL = 0.25  # seconds between snapshot writes while a run is busy


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class StateWriter:
    """Keeps `state.json` current from a tally: the Session's own (`tally=`), which it updates
    before telling its subscribers, or one of its own fed by `absorb` (migrate)."""

    def __init__(
        self, folder: SessionFolder, meta: dict[str, Any], tally: Tally | None = None
    ) -> None:
        self.folder = folder
        self._written = 0.0
        self._own = tally is None
        self.tally = tally if tally is not None else Tally.for_aliases(meta["aliases"])
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
        return {**self.header, **self.tally.snapshot(), "updated": time.time()}

    def absorb(self, events: list[Event]) -> None:
        """Catch up with events journaled before this run, writing once."""
        if self._own:
            self.tally.absorb(events)
        self.write()

    def __call__(self, event: Event) -> None:
        # Writing costs about half a millisecond; at most a few writes a second are plenty for
        # a snapshot, and the journal (not this file) is what must be current.
        if self._own:
            self.tally.apply(event)
        if (
            event.kind != EventKind.ASK_STARTED
            and time.monotonic() - self._written >= WRITE_INTERVAL
        ):
            self.write()

    def set_status(self, status: str, message: str | None = None) -> None:
        self.header["status"] = status
        self.header["message"] = message
        self.write()

    def write(self) -> None:
        self._written = time.monotonic()
        atomic_write(self.folder.state_json, json.dumps(self.state, indent=2), durable=False)
