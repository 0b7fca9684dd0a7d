"""A journal line's canonical JSON (`canonical_json`: what its hash is taken over), how a line is
read (`read_line`), and the check that a line is as the journal wrote it without encoding its
record again (`as_written`). A resume reads every line, and the answers are most of them
(issue 23)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec

__all__ = ["as_written", "canonical_json", "read_line"]

# json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False), its encoder
# made once: dumps makes a new one per call for arguments other than its defaults
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> str:
    return _CANONICAL.encode(value)


_DECODE = msgspec.json.Decoder().decode


def read_line(line: bytes) -> Any:
    """The JSON value of a journal line. msgspec's parser reads the benchmark's journal in
    about 40% of the standard library's time (pydantic's, in Rust, in 60%); a line it refuses
    (malformed, a lone surrogate, NaN or a number too large for a float, all of which `json`
    takes) is read by `json`, so the value, or the error and its message, is the one
    `json.loads` gives. Where both read a line, they read the same value (tested)."""
    try:
        return _DECODE(line)
    except ValueError:  # msgspec's DecodeError and ValidationError are ValueErrors
        return json.loads(line)


_SHORT = ("kind", "prev", "seq", "step", "ts")  # the body's fields after `data`, in key order
_BODY = frozenset({"data", *_SHORT})  # what `Journal._put` hashes


def as_written(line: bytes, record: dict[str, Any], stored_hash: Any, stored_mac: Any) -> bool:
    """Whether `line` is as `Journal._put` wrote `record`, shown without encoding it again (a
    resume loads every line): the hash and HMAC sort between `data` and the short fields, so
    the line with their bytes cut out (`,"hash":"<hash>"`, then `,"hmac":"<hmac>"`, the last
    such bytes, before `,"kind":`) must hash to the stored hash; then it is the body that was
    hashed, `data` included. Those bytes are the record's own members as read: valid JSON
    holds them only as members of an object, and the body holds no member with its own hash
    (that hash would be in what it hashes), so a nested one would leave the record read
    without that hash. Any other line (another layout, an edit) is checked by encoding its
    record."""
    if set(record) != _BODY or not line.startswith(b'{"data":'):
        return False
    cut = f',"hash":{_string(stored_hash)}'
    cut += "" if stored_mac is None else f',"hmac":{_string(stored_mac)}'
    written = cut.encode("utf-8")
    at = line.rfind(written)
    if at < 0 or not line.startswith(b',"kind":', at + len(written)):
        return False
    body = memoryview(line)
    digest = hashlib.sha256(body[:at])
    digest.update(body[at + len(written) :])  # the body: the line with its hash and HMAC cut out
    return bool(digest.hexdigest() == stored_hash)


def _string(value: Any) -> str:
    """The canonical JSON of a hash or HMAC: hex digits in quotes."""
    hexed = isinstance(value, str) and value.isascii() and value.isalnum()
    return f'"{value}"' if hexed else canonical_json(value)
