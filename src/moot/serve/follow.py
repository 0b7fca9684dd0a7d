"""A journal followed as it grows: the lines appended since the last read, never the whole
file again. The file's size is checked every `interval`; only new bytes are read, and a line
is taken once its newline is written (a torn tail waits for the rest)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from moot.types import Event

__all__ = ["Follower", "follow"]

INTERVAL = 0.025  # seconds between size checks while nothing new was written (one stat each)


class Follower:
    """Reads the complete lines a journal gained since the last `read`."""

    def __init__(self, path: Path, offset: int = 0) -> None:
        self.path = path
        self.offset = offset
        self._partial = b""

    def read(self) -> list[Event]:
        """The events appended since the last call (none if the file did not grow)."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return []
        if size <= self.offset:
            return []
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            chunk = handle.read(size - self.offset)
        self.offset += len(chunk)
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        events = []
        for line in lines:
            if not line.strip():
                continue
            record = json.loads(line)
            record.pop("hash", None)
            record.pop("hmac", None)
            events.append(Event.from_record(record))
        return events


async def follow(path: Path, interval: float = INTERVAL) -> AsyncIterator[list[Event]]:
    """Each batch of events appended to `path`, the first batch being all it holds now."""
    follower = Follower(path)
    while True:
        batch = follower.read()
        if batch:
            yield batch
        else:
            await anyio.sleep(interval)
