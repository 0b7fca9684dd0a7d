"""The JSON object in model text, and its repair when malformed, bounded (issue 30).

A repair is costly: json_repair's time grows faster than the text (a 4 MB reply took about 65 s
of CPU; 64 KB of unclosed braces takes about 30 s). So a reply cut at the size cap is never
repaired, a candidate over `REPAIR_CAP` characters is not either, and the session repairs the
rest in a worker process with a time limit (engine/repair.py), off the event loop, once: it
journals the result, which a resume or a replay hands back through `remember` instead of
repairing again. A parser (deliberation/parsing.py) asks `recall` first; inside `deferring()`
a miss raises `RepairNeeded` for the session to do the work; elsewhere it repairs in place.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from moot.types import CUT_MARK

__all__ = [
    "BALANCE_SCANS",
    "REPAIR_CAP",
    "RepairNeeded",
    "balanced_object",
    "deferring",
    "digest",
    "loads_object",
    "recall",
    "remember",
    "repair",
    "repair_target",
]

# The longest JSON candidate (from its first "{" on) that is repaired when malformed, in
# characters. A structured reply the protocols parse (a vote, scores, a verdict) is a few KB.
REPAIR_CAP = 64_000

# How many scans for a balanced object, each from a later "{", before giving up: a scan that finds
# no close runs to the end of the text, so hostile text with many unclosed braces would cost
# time quadratic in its length (issue 30: reading a session is linear in its size).
BALANCE_SCANS = 8

# Repairs known in this process, by digest of the text repaired (None: unrepairable). Bounded:
# an entry forgotten is repaired again where it is next parsed, to the same result.
_KNOWN: OrderedDict[str, dict[str, Any] | None] = OrderedDict()
_KNOWN_MAX = 256
_DEFER: ContextVar[bool] = ContextVar("moot_defer_json_repair", default=False)


class RepairNeeded(Exception):
    """Raised by a parser inside `deferring()` for a malformed JSON object it has no repair of
    yet: the caller repairs `target` off the event loop, `remember`s it, and parses again."""

    def __init__(self, target: str) -> None:
        super().__init__("the JSON object needs a repair")
        self.target = target


def balanced_object(text: str) -> str | None:
    """The first balanced `{...}` in `text`, strings and escapes respected; None when none of
    the first BALANCE_SCANS opening braces closes."""
    start = text.find("{")
    scans = 0
    while start != -1 and scans < BALANCE_SCANS:
        scans += 1
        depth = 0
        in_string = False
        escaped = False
        for index in range(start, len(text)):
            char = text[index]
            if in_string:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return text[start : index + 1]
        start = text.find("{", start + 1)
    return None


def loads_object(text: str) -> dict[str, Any] | None:
    """`text` parsed strictly (`json.loads`, no repair) when it is one JSON object; None when
    it is malformed, nests too deep (RecursionError) or holds another JSON value."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def strict_object(text: str) -> dict[str, Any] | None:
    """The first balanced JSON object of `text`, parsed strictly; None if there is none."""
    candidate = balanced_object(text)
    return loads_object(candidate) if candidate is not None else None


def repair_target(text: str) -> str | None:
    """What a repair of `text` would read (from its first "{" on), or None when there is
    nothing to repair: no "{", a strict object found, a reply cut at the size cap, or a
    candidate longer than REPAIR_CAP."""
    start = text.find("{")
    if start == -1 or text.endswith(CUT_MARK) or len(text) - start > REPAIR_CAP:
        return None
    if strict_object(text) is not None:
        return None
    return text[start:]


def repair(target: str) -> dict[str, Any] | None:
    """json_repair's object for `target`, in this thread; None when it finds no non-empty
    object (or fails: hostile nesting raises RecursionError)."""
    from json_repair import repair_json

    try:
        repaired = repair_json(target, return_objects=True)
    except (ValueError, RecursionError):
        return None
    return repaired if isinstance(repaired, dict) and repaired else None


def digest(target: str) -> str:
    return hashlib.sha256(target.encode("utf-8", "replace")).hexdigest()


def remember(target: str, value: dict[str, Any] | None) -> None:
    """Keep the repair of `target` (None: unrepairable) for the parsers of this process."""
    key = digest(target)
    _KNOWN[key] = value
    _KNOWN.move_to_end(key)
    while len(_KNOWN) > _KNOWN_MAX:
        _KNOWN.popitem(last=False)


def recall(target: str) -> tuple[bool, dict[str, Any] | None]:
    """(known, value): the repair of `target` this process was given, if any."""
    key = digest(target)
    if key not in _KNOWN:
        return False, None
    return True, _KNOWN[key]


def deferring_now() -> bool:
    return _DEFER.get()


@contextlib.contextmanager
def deferring() -> Iterator[None]:
    """Within this block a parser does not repair in place: it raises `RepairNeeded`."""
    token = _DEFER.set(True)
    try:
        yield
    finally:
        _DEFER.reset(token)
