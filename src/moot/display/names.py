"""Model names cut to a narrow column so that different models still look different.

Cutting at the end (rich's ellipsis) turns `openai-compat:http://127.0.0.1:18777/v1#m0` and
`...#m1` into the same `openai-comp…` at 80 columns. A model spec names its model last, so
here the start goes first; where two models also end alike, the part where they differ stays."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["short_models"]

_CUT = "…"


def short_models(models: Sequence[str], width: int) -> list[str]:
    """Each of `models` in at most `width` characters (at least 4): unchanged where it fits;
    else, among different models, its end; where ends are alike too, the part where the models
    differ. One model alone is cut at its end, its provider first, as written."""
    width = max(width, 4)
    long = sorted({m for m in models if len(m) > width})
    if not long:
        return list(models)
    if len(set(models)) < 2:  # nothing to tell apart
        return [m if len(m) <= width else m[: width - 1] + _CUT for m in models]
    short = {m: _CUT + m[-(width - 1) :] for m in long}
    if len(set(short.values())) < len(short) and len(long) > 1:
        start = _shared(long)
        end = _shared([m[::-1] for m in long])
        short = {m: _differing(m, width, start, end) for m in long}
    return [short.get(m, m) for m in models]


def _shared(names: Sequence[str]) -> int:
    """How many characters all of `names` begin with."""
    first, last = min(names), max(names)  # the two that differ earliest
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return n


def _differing(model: str, width: int, start: int, end: int) -> str:
    """The part of `model` from `start` to `end` characters before its end (where the models
    differ), with as much of its start and end as fits."""
    differing = model[start : max(start, len(model) - end)] or model[start:]
    if len(differing) + 2 <= width:  # whole, with what follows it as far as fits
        return _CUT + model[start : start + width - 2] + _CUT
    head = (width - 1) // 2
    return _CUT + differing[:head] + _CUT + differing[-(width - 2 - head) :]
