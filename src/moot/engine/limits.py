"""Budgets on tokens, cost and active time, checked before every new model call."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from moot.config import Limits
from moot.engine.standing import active_seconds
from moot.errors import LimitReached
from moot.models.pricing import UNPRICED_USD_PER_TOKEN
from moot.types import Event, Usage

__all__ = ["Budget", "active_seconds"]


class _Totals(Protocol):
    usage: Usage
    cost: float
    unpriced_tokens: int  # tokens of calls whose cost is unknown


class Budget:
    def __init__(self, limits: Limits, events: Iterable[Event], clock: Callable[[], float]) -> None:
        self.limits = limits
        self._clock = clock
        self._prior = active_seconds(events)
        self._started = clock()

    def elapsed(self) -> float:
        return self._prior + (self._clock() - self._started)

    def check(self, totals: Iterable[_Totals]) -> None:
        """Raise `LimitReached` if a new call would start past a limit."""
        items = list(totals)
        limits = self.limits
        if limits.max_tokens is not None:
            used = sum(t.usage.total for t in items)
            if used >= limits.max_tokens:
                raise LimitReached(
                    f"token limit reached: {used:,} of {limits.max_tokens:,} tokens used",
                )
        if limits.max_cost is not None:
            cost = sum(t.cost + t.unpriced_tokens * UNPRICED_USD_PER_TOKEN for t in items)
            if cost >= limits.max_cost:
                raise LimitReached(f"cost limit reached: ${cost:.4f} of ${limits.max_cost:.4f}")
        if limits.timeout is not None:
            elapsed = self.elapsed()
            if elapsed >= limits.timeout:
                raise LimitReached(
                    f"time limit reached: {elapsed:.0f}s of {limits.timeout:.0f}s of running time"
                )
