"""The append-only, hash-chained journal (`events.jsonl`).

Each line is one event: `seq`, `ts`, `kind`, `step`, `data`, the previous line's hash (`prev`)
and its own SHA-256 (`hash`) over the canonical JSON of those fields; with a key, an HMAC of the
hash too. A line is written and fsync'd before the effect it records is used. On the event loop
(`commit`) the fsync is shared: lines written while one is in flight wait for the next, so the
answers of a phase that arrive together cost one or two fsyncs, not one each (group commit).

A write that fails (a full or read-only disk) is undone back to the last complete line and
raises a StorageError; the journal then takes no more lines, so the run ends, and `moot resume`
continues it once the disk is fixed. A line the undo could not cut is a torn tail to the next
load.

On load, a torn last line (a write cut short by a crash) is cut off and reported; any other
break in the chain refuses the whole journal, naming the line. Lines cut off the end are found
by the sealed head beside the journal (`head.json`, see `head.py`): a journal shorter than its
head is refused, naming the events that are missing.

Without MOOT_JOURNAL_KEY this protects against accidents (a bad copy, a stray edit, a crash),
not against someone who can rewrite the whole folder: they can recompute every hash and the
head. With the key, lines and head carry HMACs that cannot be recomputed without it; a session
records that it was signed in its head and in `session.json` (and a signed result.json says so
too), so stripping the HMACs is caught; without the key it loads only when the user accepts it
unsigned (`moot resume --accept-unsigned`, journaled). Evidence beside the journal that it was
cut or rewritten is `evidence.py`'s.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import Any

from msgspec import Struct

from moot.engine.head import (
    HEAD_NAME,
    Head,
    Sealer,
    check_mac,
    read_head,
    read_head_bytes,
    write_head,
)
from moot.engine.lines import as_written, canonical_json, read_line
from moot.engine.store import read_json, storage_error
from moot.errors import JournalError, StorageError
from moot.text import plural
from moot.types import Event

__all__ = [
    "GENESIS",
    "UNSIGNED_ACCEPTED",
    "Journal",
    "JournalRepair",
    "canonical_json",
    "check_head",
    "key_from_env",
    "signed_by",
    "unsigned_accepted",
]

GENESIS = "0" * 64
KEY_ENV = "MOOT_JOURNAL_KEY"
ANCHOR_NAME = "session.json"  # records that the journal is sealed, and whether it is signed
RESULT_NAME = "result.json"  # a result sealed with an HMAC records that the journal was signed
# the key of the warning a resume journals when its user continues a signed session unsigned
UNSIGNED_ACCEPTED = "accepted_unsigned"


def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def _sign(key: bytes, digest: str) -> str:
    return hmac.new(key, digest.encode("ascii"), hashlib.sha256).hexdigest()


def _split_lines(raw: bytes) -> list[bytes]:
    """`raw.split(b"\\n")`, each newline found by `find` (memchr): split compares byte by byte,
    a few milliseconds of a resume's load of a journal of some megabytes."""
    lines = []
    start, find = 0, raw.find
    while (end := find(b"\n", start)) >= 0:
        lines.append(raw[start:end])
        start = end + 1
    lines.append(raw[start:])
    return lines


def _is_json_object(raw: bytes) -> bool:
    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False


class JournalRepair(Struct, frozen=True):
    """What load cut from a torn tail."""

    line: int
    dropped_bytes: int


def key_from_env() -> bytes | None:
    value = os.environ.get(KEY_ENV)
    return value.encode("utf-8") if value else None


def signed_by(folder: Path, sealed: Head | None, head_path: Path) -> list[str]:
    """The files in `folder` that say its session was signed: its sealed head, session.json,
    and a result.json of this session sealed with an HMAC."""
    says = [head_path.name] if sealed is not None and sealed.signed else []
    if (read_json(folder / ANCHOR_NAME) or {}).get("journal_signed") is True:
        says.append(ANCHOR_NAME)
    result = read_json(folder / RESULT_NAME) or {}
    seal = result.get("journal")
    if result.get("session_id") == folder.name and isinstance(seal, dict) and seal.get("signed"):
        says.append(RESULT_NAME)
    return says


def unsigned_accepted(events: list[Event]) -> bool:
    """Whether a resume recorded that its user continued this session without its key
    (`moot resume --accept-unsigned`): its signatures are known to be gone."""
    return any(e.kind == "warning" and e.data.get(UNSIGNED_ACCEPTED) for e in events)


def check_head(
    path: Path,
    head_path: Path,
    sealed: Head | None,
    hashes: list[str],
    key: bytes | None,
    *,
    signed_lines: int = 0,
    unsigned_ok: bool = False,
) -> list[str]:
    """Check a verified chain (`hashes`, one per event) against its sealed head (`sealed`, read
    from `head_path` before the journal was) and against what `session.json` and `result.json`
    beside it say. Returns what says the session was signed when, without the key,
    `unsigned_ok` let it load unverified (else refused): the files, and `signed_lines`, how many
    of its lines carry an HMAC that cannot be checked.

    A journal longer than its head is fine (the seal of the last appends did not land before a
    crash, or a writer appended after the head was read); a shorter one had lines cut off its
    end, and is refused naming them."""
    anchor = read_json(path.parent / ANCHOR_NAME) or {}
    says_signed = signed_by(path.parent, sealed, head_path) if key is None else []
    if signed_lines:
        says_signed.append(f"{signed_lines} of its lines")
    if says_signed and not unsigned_ok:
        stripped = (
            "; its lines carry no HMAC, so their signatures were stripped"
            if hashes and not signed_lines
            else ""
        )
        raise JournalError(
            f"{path} belongs to a signed session ({_listed(says_signed)} "
            f"{'say' if len(says_signed) > 1 else 'says'} so){stripped}. "
            "Set MOOT_JOURNAL_KEY to the key it was written with; refusing to use it unverified. "
            f"If the key is lost: `moot resume {path.parent.name} --accept-unsigned` continues "
            "it unsigned, and records that in its journal"
        )
    count = len(hashes)
    if sealed is None:
        if anchor.get("journal_head") and count > 1:
            raise JournalError(
                f"{head_path} is missing, but {ANCHOR_NAME} says this journal is sealed there: "
                f"it was deleted, and nothing shows whether lines were cut off the end of the "
                f"{count} events left. Refusing to use this session"
            )
        return says_signed  # written before heads existed, or died before its first seal
    if count < sealed.events:
        missing = sealed.events - count
        raise JournalError(
            f"{path} holds {count} events, but its sealed head ({head_path.name}) records "
            f"{sealed.events}: the last {plural(missing, 'event')} (seq {count} to "
            f"{sealed.events - 1}, lines {count + 1} to {sealed.events}) were cut off. Refusing "
            "to use this session; restore the journal from a backup"
        )
    if sealed.events and hashes[sealed.events - 1] != sealed.hash:
        raise JournalError(
            f"{path}, line {sealed.events} does not match the sealed head ({head_path.name}): "
            "the journal was rewritten after it was sealed. Refusing to use this session"
        )
    return says_signed


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


class Journal:
    def __init__(
        self,
        path: Path,
        events: list[Event],
        last_hash: str,
        key: bytes | None,
        *,
        hashes: list[str] | None = None,
        head: Path | None = None,
        sealed: bool = False,
    ) -> None:
        self.path = path
        self.events = events
        self.hashes = hashes if hashes is not None else []  # each event's hash, in order
        self.last_hash = last_hash
        self._key = key
        self._fd: int | None = None
        self.head_path = head or path.parent / HEAD_NAME
        self._sealed = sealed  # a head file exists, so later seals may lag behind
        self._sealer: Sealer | None = None
        self._failed: StorageError | None = None  # a write failed: no more lines this run
        # group commit: lines are written at once, made durable by a shared fsync
        self._durable = len(events)  # how many events are known to be on disk
        self._durable_hash = last_hash  # the hash of the last of them
        self._size = self._synced_size = 0  # bytes in the file, and fsync'd (set on open)
        self._syncing: asyncio.Future[None] | None = None  # the group fsync in flight
        self._deferred: list[Event] = []  # lines `defer` left for the next line to write
        # what says this session was signed, when `accept_unsigned` let it load without its key
        self.unverified: list[str] = []

    # -- loading ---------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: Path,
        key: bytes | None = None,
        *,
        repair: bool = True,
        head: Path | None = None,
        accept_unsigned: bool = False,
    ) -> tuple[Journal, JournalRepair | None]:
        """Load and verify `path` (created if missing) against its sealed head (`head`, by
        default `head.json` beside it). A torn last line is cut from the file, or with
        `repair=False` (read-only uses) only left out. A signed session loads without its key
        only with `accept_unsigned` (the user said so; `unverified` then names what said it was
        signed, for the resume to journal), or once a resume journaled that they did."""
        if not path.exists():
            try:
                path.touch()
            except OSError as exc:
                raise storage_error(path, exc) from exc
        head = head or path.parent / HEAD_NAME
        # The head first: it never names more than the journal held when it was written, so a
        # writer appending while we read cannot make the journal look shorter than its head.
        # It is checked after the lines, so a damaged line is named before a head problem.
        head_raw = read_head_bytes(head)
        raw = path.read_bytes()
        events: list[Event] = []
        hashes: list[str] = []
        prev = GENESIS
        offset = 0
        cut: JournalRepair | None = None
        lost_newline = False
        signed: list[int] = []  # lines with an HMAC no key can check here
        lines = _split_lines(raw)
        trailing = lines.pop()  # bytes after the last newline: b"" unless the tail is torn
        for number, line in enumerate(lines, start=1):
            event, prev = cls._verify(path, number, line, prev, key, signed)
            events.append(event)
            hashes.append(prev)
            offset += len(line) + 1
        if trailing:
            number = len(lines) + 1
            try:
                event, new_prev = cls._verify(path, number, trailing, prev, key, signed)
            except JournalError:
                if _is_json_object(trailing):
                    raise  # a complete line that fails to verify was edited, not torn
                cut = JournalRepair(line=number, dropped_bytes=len(trailing))
            else:  # complete line whose newline was lost: keep it
                events.append(event)
                hashes.append(new_prev)
                prev = new_prev
                lost_newline = True
        accepted = unsigned_accepted(events)
        if signed and not (accept_unsigned or accepted):
            raise JournalError(
                f"{path}, line {signed[0]} is signed: set MOOT_JOURNAL_KEY to the key it was "
                f"written with (if the key is lost: `moot resume {path.parent.name} "
                "--accept-unsigned` continues it unsigned, and records that in its journal)"
            )
        sealed = None if head_raw is None else read_head(head, key, head_raw)
        says = check_head(
            path,
            head,
            sealed,
            hashes,
            key,
            signed_lines=len(signed),
            unsigned_ok=accept_unsigned or accepted,
        )
        journal = cls(path, events, prev, key, hashes=hashes, head=head, sealed=bool(sealed))
        journal.unverified = [] if accepted else says
        if repair:
            try:
                journal._repair(cut, offset, lost_newline, sealed)
            except OSError as exc:
                raise storage_error(path, exc) from exc
        return journal, cut

    def _repair(
        self, cut: JournalRepair | None, offset: int, lost_newline: bool, sealed: Head | None
    ) -> None:
        """Cut a torn tail at `offset` (or end a line whose newline was lost), and seal a head
        that lags behind the journal."""
        if cut is not None:
            with self.path.open("r+b") as handle:
                handle.truncate(offset)
                handle.flush()
                os.fsync(handle.fileno())
        elif lost_newline:
            with self.path.open("ab") as handle:
                handle.write(b"\n")
                handle.flush()
                os.fsync(handle.fileno())
        if self.events and (sealed is None or sealed.events != len(self.events)):
            # a crash left the last appends unsealed, or the folder predates heads: seal now
            write_head(
                self.head_path, Head(len(self.events), self.last_hash, self.signed), self._key
            )
            self._sealed = True

    @staticmethod
    def _verify(
        path: Path, number: int, line: bytes, prev: str, key: bytes | None, signed: list[int]
    ) -> tuple[Event, str]:
        """The event on line `number` and its hash, once it follows `prev` and matches its hash
        (and, with a key, its HMAC). Without a key, a line that carries an HMAC is added to
        `signed`: `open` refuses it unless the user accepts the session unsigned."""
        where = f"{path}, line {number}"
        try:
            record = read_line(line)
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
        written = as_written(line, record, stored_hash, stored_mac)
        if not written and _digest(record) != stored_hash:
            raise JournalError(
                f"{where} does not match its hash: it was edited after it was written; "
                "refusing to use this session"
            )
        if key is not None:
            check_mac(
                where,
                stored_mac,
                _sign(key, stored_hash),
                unsigned="the signature was stripped",
                forged="the line",
            )
        elif stored_mac is not None:
            signed.append(number)
        try:
            event = Event.from_record(record)
        except (KeyError, ValueError) as exc:
            raise JournalError(f"{where} is not a moot event ({exc})") from exc
        return event, stored_hash

    # -- writing ---------------------------------------------------------------------------
    def append(self, event: Event) -> Event:
        """Chain, write and fsync one event; returns it with `seq` set."""
        self._put(event)
        self._sync()
        return event

    def defer(self, event: Event) -> Event:
        """Leave `event` to be chained and written just before the next line (or at `close`),
        with no fsync of its own: for a line a crash may lose (a verdict a resume can compute
        again). Whatever writes the next line writes it, so the code that derived it (a
        protocol's parser, called back by the engine) never writes to the journal itself."""
        self._deferred.append(event)
        return event

    async def commit(self, event: Event) -> Event:
        """`append` for the event loop, with group commit: the line is written at once (lines
        keep the order of the calls), then this waits until an fsync covers it. Lines written
        while an fsync is in flight share the next one, so answers that arrive together cost
        one or two fsyncs, not one each. Returns only once the event is durable, like `append`.
        """
        self._put(event)
        wanted = len(self.events)
        while self._durable < wanted:
            if self._failed is not None:
                raise self._failed
            if self._syncing is None:
                self._syncing = asyncio.ensure_future(self._sync_group())
            # shielded: a cancelled waiter must not cancel the fsync the others wait for
            await asyncio.shield(self._syncing)
        return event

    def _put(self, event: Event) -> None:
        """Chain `event` and write its line, without an fsync (the deferred lines first)."""
        self._write_deferred()
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
        if self._failed is not None:
            raise self._failed
        self._write(line)
        self.events.append(event)
        self.hashes.append(digest)
        self.last_hash = digest

    def _write_deferred(self) -> None:
        deferred, self._deferred = self._deferred, []
        for event in deferred:
            self._put(event)

    def _write(self, line: bytes) -> None:
        """Write all of `line`: os.write may write fewer bytes than given (a disk filling up),
        so it is called again for the rest. A failure undoes every line not yet fsync'd and
        raises a StorageError; the journal takes no more lines from then on."""
        written = 0
        try:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                self._size = self._synced_size = os.fstat(self._fd).st_size
            while written < len(line):
                count = os.write(self._fd, line[written:])
                if count <= 0:  # no progress and no error: do not spin
                    raise OSError(errno.EIO, "the disk took none of the bytes written")
                written += count
        except OSError as exc:
            self._size += written
            self._undo()
            raise self._fail(exc) from exc
        self._size += written

    def _sync(self) -> None:
        """fsync every line written so far, then seal the head that names them."""
        if self._fd is None:
            return
        count, size, digest = len(self.events), self._size, self.last_hash
        try:
            os.fsync(self._fd)
        except OSError as exc:
            self._undo()
            raise self._fail(exc) from exc
        self._synced(count, size, digest)

    async def _sync_group(self) -> None:
        """One fsync, in a thread, for every line written before it started."""
        fd, count, size, digest = self._fd, len(self.events), self._size, self.last_hash
        try:
            if fd is not None:
                await asyncio.to_thread(os.fsync, fd)
        except OSError as exc:
            if self._failed is None:
                self._undo()
                raise self._fail(exc) from exc
        finally:
            self._syncing = None
        if self._failed is not None:  # a sync append failed and cut lines meanwhile
            raise self._failed
        self._synced(count, size, digest)

    def _synced(self, count: int, size: int, digest: str) -> None:
        """The first `count` events (`size` bytes, the last hashed `digest`) are on disk: seal
        a head naming them."""
        if count <= self._durable:
            return
        self._durable, self._synced_size, self._durable_hash = count, size, digest
        self._seal(Head(count, digest, self._key is not None))

    def _undo(self) -> None:
        """Cut every byte written after the last fsync (a failed write's part, lines whose
        fsync failed), so the file ends at its last durable line again (cutting needs no
        space), and forget their events. If cutting fails too, the next load cuts the torn
        tail, as after a crash."""
        lost = len(self.events) - self._durable
        if lost > 0:
            del self.events[-lost:], self.hashes[-lost:]
        self.last_hash = self._durable_hash
        if self._fd is None or self._size == self._synced_size:
            return
        try:
            os.ftruncate(self._fd, self._synced_size)
            os.fsync(self._fd)
            self._size = self._synced_size
        except OSError:
            pass

    def _fail(self, exc: OSError, path: Path | None = None) -> StorageError:
        """The StorageError that ends this run: no more lines are taken, and what was journaled
        stays intact for `moot resume`."""
        then = (
            f"the run stopped, its journal intact up to its last complete line: once that is "
            f"fixed, continue it with: moot resume {self.path.parent.name}"
            if self.events
            else ""
        )
        self._failed = storage_error(path or self.path, exc, then=then)
        return self._failed

    def _seal(self, head: Head) -> None:
        """Seal the head after the events it names are on disk. With no head file yet, it is
        written before append returns (a missing head with more than one event is refused when
        session.json says there should be one); later ones by a thread, so an append waits for
        one fsync."""
        if not self._sealed:
            try:
                write_head(self.head_path, head, self._key)
            except OSError as exc:
                raise self._fail(exc, self.head_path) from exc
            self._sealed = True
            return
        if self._sealer is None:
            self._sealer = Sealer(self.head_path, self._key)
        try:
            self._sealer.submit(head)
        except JournalError as exc:  # the thread could not write an earlier head
            raise self._sealer_failed(self._sealer, exc) from exc

    def _sealer_failed(self, sealer: Sealer, exc: JournalError) -> StorageError:
        # the sealer keeps the OSError its thread met (head.py); its reason says what to fix
        cause = sealer._error or OSError(errno.EIO, str(exc))
        return self._fail(cause, self.head_path)

    def seal_text(self, text: str) -> str:
        """A digest of `text` bound to this journal's key: its HMAC when the journal is signed,
        else its SHA-256 (which catches accidents, not someone who can rewrite the folder)."""
        data = text.encode("utf-8")
        if self._key is not None:
            return hmac.new(self._key, data, hashlib.sha256).hexdigest()
        return hashlib.sha256(data).hexdigest()

    @property
    def durable(self) -> int:
        """How many of `events` are known to be on disk (fsync'd)."""
        return self._durable

    @property
    def signed(self) -> bool:
        return self._key is not None

    def close(self) -> None:
        """fsync what a cancelled `commit` left written, write the last head and close the file."""
        try:
            if self._failed is None:
                self._write_deferred()
            if self._failed is None and self._durable < len(self.events):
                self._sync()
            if self._sealer is not None:
                sealer, self._sealer = self._sealer, None
                try:
                    sealer.close()
                except JournalError as exc:
                    # when the run is ending on a failed write already, that error stands; the
                    # next open seals the head
                    if self._failed is None:
                        raise self._sealer_failed(sealer, exc) from exc
        finally:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
