"""The append-only, hash-chained journal (`events.jsonl`).

Each line is one event: `seq`, `ts`, `kind`, `step`, `data`, the previous line's hash (`prev`)
and its own SHA-256 (`hash`) over the canonical JSON of those fields; with a key, an HMAC of the
hash too. A line is written and fsync'd before the effect it records is used.

On load, a torn last line (a write cut short by a crash) is cut off and reported; any other
break in the chain refuses the whole journal, naming the line.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moot.errors import JournalError
from moot.types import Event

__all__ = ["GENESIS", "Journal", "JournalRepair", "canonical_json"]

GENESIS = "0" * 64
KEY_ENV = "MOOT_JOURNAL_KEY"


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def _sign(key: bytes, digest: str) -> str:
    return hmac.new(key, digest.encode("ascii"), hashlib.sha256).hexdigest()


def _is_json_object(raw: bytes) -> bool:
    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False


@dataclass(frozen=True)
class JournalRepair:
    """What load cut from a torn tail."""

    line: int
    dropped_bytes: int


def key_from_env() -> bytes | None:
    value = os.environ.get(KEY_ENV)
    return value.encode("utf-8") if value else None


class Journal:
    def __init__(self, path: Path, events: list[Event], last_hash: str, key: bytes | None) -> None:
        self.path = path
        self.events = events
        self.last_hash = last_hash
        self._key = key
        self._fd: int | None = None

    # -- loading ---------------------------------------------------------------------------
    @classmethod
    def open(
        cls, path: Path, key: bytes | None = None, *, repair: bool = True
    ) -> tuple[Journal, JournalRepair | None]:
        """Load and verify `path` (created if missing). A torn last line is cut from the file,
        or with `repair=False` (read-only uses) only left out."""
        if not path.exists():
            path.touch()
        raw = path.read_bytes()
        events: list[Event] = []
        prev = GENESIS
        offset = 0
        cut: JournalRepair | None = None
        lines = raw.split(b"\n")
        trailing = lines.pop()  # bytes after the last newline: b"" unless the tail is torn
        for number, line in enumerate(lines, start=1):
            event, prev = cls._verify(path, number, line, prev, key)
            events.append(event)
            offset += len(line) + 1
        if trailing:
            number = len(lines) + 1
            try:
                event, new_prev = cls._verify(path, number, trailing, prev, key)
            except JournalError:
                if _is_json_object(trailing):
                    raise  # a complete line that fails to verify was edited, not torn
                cut = JournalRepair(line=number, dropped_bytes=len(trailing))
                if not repair:
                    return cls(path, events, prev, key), cut
                with path.open("r+b") as handle:
                    handle.truncate(offset)
                    handle.flush()
                    os.fsync(handle.fileno())
            else:  # complete line whose newline was lost: keep it
                events.append(event)
                prev = new_prev
                if repair:
                    with path.open("ab") as handle:
                        handle.write(b"\n")
                        handle.flush()
                        os.fsync(handle.fileno())
        return cls(path, events, prev, key), cut

    @staticmethod
    def _verify(
        path: Path, number: int, line: bytes, prev: str, key: bytes | None
    ) -> tuple[Event, str]:
        where = f"{path}, line {number}"
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise JournalError(
                f"{where} is not valid JSON ({exc}); the journal is damaged"
            ) from exc
        if not isinstance(record, dict):
            raise JournalError(f"{where} is not a JSON object; the journal is damaged")
        stored_hash = record.pop("hash", None)
        stored_mac = record.pop("hmac", None)
        if record.get("prev") != prev:
            raise JournalError(
                f"{where} does not follow line {number - 1} (broken hash chain): "
                "a line was removed, reordered or edited; refusing to use this session"
            )
        if _digest(record) != stored_hash:
            raise JournalError(
                f"{where} does not match its hash: it was edited after it was written; "
                "refusing to use this session"
            )
        if key is not None:
            if stored_mac is None:
                raise JournalError(
                    f"{where} carries no HMAC but MOOT_JOURNAL_KEY is set: it was written "
                    "without the key, or the signature was stripped"
                )
            if not hmac.compare_digest(_sign(key, stored_hash), str(stored_mac)):
                raise JournalError(
                    f"{where} has a wrong HMAC: wrong MOOT_JOURNAL_KEY, or the line was forged"
                )
        elif stored_mac is not None:
            raise JournalError(
                f"{where} is signed: set MOOT_JOURNAL_KEY to the key it was written with"
            )
        try:
            event = Event(
                kind=record["kind"],
                step=record.get("step"),
                data=record.get("data") or {},
                seq=record.get("seq"),
                ts=record.get("ts"),
            )
        except (KeyError, ValueError) as exc:
            raise JournalError(f"{where} is not a moot event ({exc})") from exc
        return event, stored_hash

    # -- writing ---------------------------------------------------------------------------
    def append(self, event: Event) -> Event:
        """Chain, write and fsync one event; returns it with `seq` set."""
        event.seq = len(self.events)
        body = {
            "seq": event.seq,
            "ts": event.ts,
            "kind": event.kind,
            "step": event.step,
            "data": event.data,
            "prev": self.last_hash,
        }
        digest = _digest(body)
        body["hash"] = digest
        if self._key is not None:
            body["hmac"] = _sign(self._key, digest)
        line = (canonical_json(body) + "\n").encode("utf-8")
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self._fd, line)
        os.fsync(self._fd)
        self.events.append(event)
        self.last_hash = digest
        return event

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
