"""A journal line's canonical JSON (`canonical_json`: what its hash is taken over), and the
check that a line is as the journal wrote it without encoding its record again
(`as_written`, issue 23: a resume loads every line, and the answers are most of them)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["as_written", "canonical_json"]

# json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False), its encoder
# made once: dumps makes a new one per call for arguments other than its defaults
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> str:
    return _CANONICAL.encode(value)


_BODY = frozenset({"data", "kind", "prev", "seq", "step", "ts"})  # what `Journal._put` hashes


def as_written(line: bytes, record: dict[str, Any], stored_hash: Any, stored_mac: Any) -> bool:
    """Whether `line` is as `Journal._put` wrote `record`, shown without encoding it again (a
    resume loads every line): the hash and HMAC sort between `data` and the short fields, so
    the line with them cut out, found by encoding the short fields, must hash to the stored
    hash; then it is the body that was hashed, `data` included. Any other line (another
    layout, an edit) is checked by encoding its record."""
    if set(record) != _BODY:
        return False
    tail = ("," + canonical_json({k: v for k, v in record.items() if k != "data"})[1:]).encode()
    cut = f',"hash":{_string(stored_hash)}'
    cut += "" if stored_mac is None else f',"hmac":{_string(stored_mac)}'
    end = cut.encode("utf-8") + tail
    if not line.endswith(end):
        return False
    body = line[: len(line) - len(end)] + tail
    return body.startswith(b'{"data":') and hashlib.sha256(body).hexdigest() == stored_hash


def _string(value: Any) -> str:
    """The canonical JSON of a hash or HMAC: hex digits in quotes."""
    hexed = isinstance(value, str) and value.isascii() and value.isalnum()
    return f'"{value}"' if hexed else canonical_json(value)
