"""The sealed head of a journal (`head.json`): how many events it held and the last one's hash.

Lines cut off the end of `events.jsonl` leave a chain that still verifies; the head, kept in a
separate file, is what tells. It is written after the event it names is fsync'd (a temporary
file, fsync, rename), so on disk it never claims more than the journal holds: after a crash the
journal may be longer than its head (an append whose seal did not land), never shorter.

A journal's first head (when no head file exists yet) is written before `append` returns,
later ones by a background thread that keeps only the newest pending head, so an append does
not wait for a second fsync; `close` writes the last head before it returns.

Whether a session was signed (MOOT_JOURNAL_KEY) is recorded in the head and in `session.json`
(see `anchors`), outside the lines a forger could strip of their HMACs.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
from pathlib import Path
from typing import Any

from msgspec import Struct

from moot.errors import JournalError

__all__ = [
    "HEAD_NAME",
    "Head",
    "Sealer",
    "anchors",
    "check_mac",
    "read_head",
    "read_head_bytes",
    "write_head",
]

HEAD_NAME = "head.json"
HEAD_FORMAT = 1


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _mac(key: bytes, body: dict[str, Any]) -> str:
    return hmac.new(key, _canonical(body), hashlib.sha256).hexdigest()


def check_mac(where: str | Path, mac: object, expected: str, *, unsigned: str, forged: str) -> None:
    """Refuse, MOOT_JOURNAL_KEY being set, what has no HMAC (`unsigned`: how it came to lack
    one) or a wrong one (`forged`: what was forged); `expected` is the HMAC under the key."""
    if mac is None:
        raise JournalError(
            f"{where} carries no HMAC but MOOT_JOURNAL_KEY is set: it was written without "
            f"the key, or {unsigned}"
        )
    if not hmac.compare_digest(expected, str(mac)):
        raise JournalError(
            f"{where} has a wrong HMAC: wrong MOOT_JOURNAL_KEY, or {forged} was forged"
        )


def anchors(key: bytes | None) -> dict[str, Any]:
    """What `session.json` records about its journal: that it has a sealed head (so a missing
    one is noticed) and whether it is signed."""
    return {"journal_head": HEAD_NAME, "journal_signed": key is not None}


class Head(Struct, frozen=True):
    """What the sealed head says of its journal: how many events, the last one's hash."""

    events: int  # how many events the journal held
    hash: str  # the hash of the last of them
    signed: bool  # written with MOOT_JOURNAL_KEY

    def body(self) -> dict[str, Any]:
        return {
            "format": HEAD_FORMAT,
            "events": self.events,
            "hash": self.hash,
            "signed": self.signed,
        }


def read_head_bytes(path: Path) -> bytes | None:
    """The head file's bytes, None if there is none (a folder written before heads existed, or
    a journal that died before its first seal)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise JournalError(f"cannot read {path}: {exc.strerror or exc}") from exc


def read_head(path: Path, key: bytes | None, raw: bytes | None = None) -> Head | None:
    """The head at `path` (or `raw`, its bytes read earlier), None if there is none. Refuses
    one that is damaged or badly signed."""
    if raw is None:
        raw = read_head_bytes(path)
        if raw is None:
            return None
    try:
        record = json.loads(raw)
        mac = record.pop("hmac", None)
        head = Head(int(record["events"]), str(record["hash"]), bool(record["signed"]))
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        # Written by rename after an fsync, a head is whole or absent: this one was edited.
        raise JournalError(
            f"{path} is not a journal head ({type(exc).__name__}: {exc}); it was edited. "
            "Refusing to use this session"
        ) from None
    signed = head.signed or mac is not None
    if key is not None:
        check_mac(path, mac, _mac(key, record), unsigned="forged", forged="the head")
    return Head(head.events, head.hash, signed)


def write_head(path: Path, head: Head, key: bytes | None) -> None:
    """Replace the head atomically: a temporary file (one fixed name, since a session has one
    writer, so a crash leaves no litter), fsync, rename. The folder is not fsync'd: a rename
    lost in a crash leaves the older head, which the journal is still at least as long as."""
    body = head.body()
    if key is not None:
        body["hmac"] = _mac(key, head.body())
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, _canonical(body) + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


class Sealer:
    """Writes heads in a background thread, newest first: a head submitted while another is
    being written replaces any older one still waiting."""

    def __init__(self, path: Path, key: bytes | None) -> None:
        self._path = path
        self._key = key
        self._cond = threading.Condition()
        self._pending: Head | None = None
        self._closed = False
        self._error: OSError | None = None
        self._thread = threading.Thread(target=self._run, name="moot-journal-head", daemon=True)
        self._thread.start()

    def submit(self, head: Head) -> None:
        self._raise_error()
        with self._cond:
            self._pending = head
            self._cond.notify()

    def close(self) -> None:
        """Write the last submitted head, then stop."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()
        self._raise_error()

    def _raise_error(self) -> None:
        if self._error is not None:
            raise JournalError(
                f"cannot write {self._path}: {self._error.strerror or self._error}; the journal "
                "itself is intact, but cutting its tail could go unnoticed until it is sealed"
            )

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._closed:
                    self._cond.wait()
                head, self._pending = self._pending, None
            if head is None:
                return
            try:
                write_head(self._path, head, self._key)
            except OSError as exc:
                self._error = exc
                return
