"""What the session does to every answer and event before it is journaled: cut a reply past
`engine.max_reply_bytes` (with a mark and `truncated_from`), and mask known keys and any run
of 8 or more of their characters (`models.keys.mask_known`), model text included.

Done once, in the session, for every provider and the cache alike: the protocol then uses what
the journal holds, so a resume or a replay sees the same text.
"""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from moot.models.keys import call_settings_masked, mask_known
from moot.types import CUT_MARK, Completion

__all__ = ["CUT_MARK", "call_settings_masked", "masked", "settle"]

# CUT_MARK (defined in moot.types, where the parsers read it too) ends a reply cut to the cap.


def settle(completion: Completion, limit: int) -> Completion:
    """`completion` as the session keeps it: text the journal can hold (a lone surrogate
    becomes '?'), cut to `limit` UTF-8 bytes (on a character boundary) with `CUT_MARK` and
    `truncated_from` (the full size), known keys masked in the text and the failure message.
    A completion cut before (a cache hit) is not cut again for its mark."""
    data = completion.text.encode("utf-8", "replace")
    text = data.decode("utf-8")
    update: dict[str, Any] = {}
    cut_before = completion.truncated_from is not None and text.endswith(CUT_MARK)
    if len(data) > limit + (len(CUT_MARK.encode()) if cut_before else 0):
        text = data[:limit].decode("utf-8", "ignore") + CUT_MARK
        update["truncated_from"] = completion.truncated_from or len(data)
    text = mask_known(text)
    if text != completion.text:
        update["text"] = text
    failure = completion.failure
    if failure is not None:
        message = mask_known(failure.message)
        if message != failure.message:
            update["failure"] = replace(failure, message=message)
    return replace(completion, **update) if update else completion


def masked(value: Any, keep: frozenset[str] = frozenset()) -> Any:
    """`value` (JSON data) with known keys masked in every string, but for the values under
    a key named in `keep` (at any depth), which are left as they are."""
    if isinstance(value, str):
        return mask_known(value)
    if isinstance(value, dict):
        return {key: item if key in keep else masked(item, keep) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [masked(item, keep) for item in value]
    return value
