"""A length of time in words for people: "81 s", "1 min 21 s", "0.05 s", never "80.7681s".

It lives with the models, not in `moot.text`, because the local model's worker process
(`models/local_worker.py`) words its own timeout and must start without pydantic; it imports
nothing. The engine and the faces use it too."""

from __future__ import annotations

__all__ = ["seconds_text"]


def seconds_text(seconds: float) -> str:
    """Below a second two significant digits, below ten one decimal, then whole seconds,
    minutes from a minute on and hours from an hour on: "0.05 s", "2.5 s", "45 s",
    "1 min 21 s", "2 min", "1 h 5 min"."""
    if seconds < 1:
        return f"{max(seconds, 0.0):.2g} s"
    if seconds < 10:
        return f"{seconds:.1f}".rstrip("0").rstrip(".") + " s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"
