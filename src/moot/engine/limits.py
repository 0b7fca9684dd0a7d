"""Budgets on tokens, cost and active time, checked before every new model call.

The asks of a phase start together, before any has answered, so each call holds its worst
case (its prompt's estimate plus its `max_tokens`, `ASSUMED_COMPLETION` when unset; that at its
model's prices) against the token and cost limits until it is journaled. A call whose worst
case does not fit beside the calls in flight waits for them; alone, it starts while its prompt
still fits under the limit, so a limit is overshot by at most that call's own `max_tokens`
(when its provider keeps to it and the estimate holds), never by a whole phase.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from msgspec import Struct

from moot import lazy
from moot.config import Limits
from moot.engine.standing import active_seconds
from moot.errors import LimitReached
from moot.models.pricing import UNPRICED_USD_PER_TOKEN
from moot.types import Event, Usage

if TYPE_CHECKING:
    from moot.models import durations
else:
    (durations,) = lazy.modules("moot.models", "durations")  # once a time limit is passed

__all__ = ["ASSUMED_COMPLETION", "Budget", "Worst", "active_seconds", "worst_case"]

# The completion a call without `max_tokens` is assumed to stay within, for its reservation.
ASSUMED_COMPLETION = 4096


class _Totals(Protocol):
    usage: Usage
    cost: float
    unpriced_tokens: int  # tokens of calls whose cost is unknown


class Worst(Struct, frozen=True):
    """What one call may spend at most: tokens (prompt and completion) and USD. `prompt`:
    what it spends whatever it answers."""

    prompt: int
    tokens: int
    cost: float
    prompt_cost: float


def worst_case(model: object, prompt: int, max_tokens: int | None) -> Worst:
    """`Worst` of a call to `model` with a prompt of about `prompt` tokens: its completion
    at `max_tokens` (`ASSUMED_COMPLETION` when unset), priced as `model` prices it, else at
    the rate the cost limit counts unpriced tokens at."""
    completion = max_tokens or ASSUMED_COMPLETION

    def usd(usage: Usage) -> float:
        price = getattr(model, "price", None)
        known = price(usage) if callable(price) else None
        return float(known) if known is not None else usage.total * UNPRICED_USD_PER_TOKEN

    return Worst(
        prompt=prompt,
        tokens=prompt + completion,
        cost=usd(Usage(prompt_tokens=prompt, completion_tokens=completion)),
        prompt_cost=usd(Usage(prompt_tokens=prompt)),
    )


class Budget:
    def __init__(self, limits: Limits, events: Iterable[Event], clock: Callable[[], float]) -> None:
        self.limits = limits
        self._clock = clock
        self._prior = active_seconds(events)
        self._started = clock()
        self._held: list[Worst] = []  # the calls in flight
        self._freed: asyncio.Condition | None = None  # made in the loop, on first use

    @contextlib.asynccontextmanager
    async def reserved(
        self, totals: Callable[[], Iterable[_Totals]], worst: Worst
    ) -> AsyncIterator[None]:
        """Hold `worst` against the limits for the block (a call, until it is journaled):
        raise `LimitReached` if a new call would start past a limit; wait while the calls in
        flight hold what it needs; alone, start it while its prompt fits under the limits."""
        if self._freed is None:
            self._freed = asyncio.Condition()
        async with self._freed:
            while True:
                self.check(totals())
                if not self._held or self._fits(list(totals()), worst):
                    break
                await self._freed.wait()
            if not self._held:
                self._check_spent(list(totals()), worst)
            self._held.append(worst)
        try:
            yield
        finally:
            self._held.remove(worst)
            async with self._freed:
                self._freed.notify_all()

    def _fits(self, items: list[_Totals], worst: Worst) -> bool:
        limits = self.limits
        if limits.max_tokens is not None:
            held = sum(w.tokens for w in self._held)
            if _tokens(items) + held + worst.tokens > limits.max_tokens:
                return False
        if limits.max_cost is not None:
            held_cost = sum(w.cost for w in self._held)
            if _cost(items) + held_cost + worst.cost > limits.max_cost:
                return False
        return True

    def _check_spent(self, items: list[_Totals], worst: Worst | None = None) -> None:
        """Raise `LimitReached` if what `items` spent reaches the token or cost limit; with
        `worst`, a call with none in flight, if its prompt alone would reach it."""
        limits = self.limits
        if limits.max_tokens is not None:
            used = _tokens(items)
            if used + (worst.prompt if worst else 0) >= limits.max_tokens:
                ahead = f", and the next call's prompt is about {worst.prompt:,}" if worst else ""
                raise LimitReached(
                    f"token limit reached: {used:,} of {limits.max_tokens:,} tokens used{ahead}"
                )
        if limits.max_cost is not None:
            cost = _cost(items)
            if cost + (worst.prompt_cost if worst else 0.0) >= limits.max_cost:
                ahead = (
                    f", and the next call's prompt costs about ${worst.prompt_cost:.4f}"
                    if worst
                    else ""
                )
                raise LimitReached(
                    f"cost limit reached: ${cost:.4f} of ${limits.max_cost:.4f}{ahead}"
                )

    def elapsed(self) -> float:
        return self._prior + (self._clock() - self._started)

    def check(self, totals: Iterable[_Totals]) -> None:
        """Raise `LimitReached` if a new call would start past a limit."""
        self._check_spent(list(totals))
        limits = self.limits
        if limits.timeout is not None:
            elapsed = self.elapsed()
            if elapsed >= limits.timeout:
                spent, allowed = (
                    durations.seconds_text(elapsed),
                    durations.seconds_text(limits.timeout),
                )
                raise LimitReached(f"time limit reached: {spent} of {allowed} of running time")


def _tokens(items: Iterable[_Totals]) -> int:
    return sum(t.usage.total for t in items)


def _cost(items: Iterable[_Totals]) -> float:
    """Known USD, and the tokens of calls whose price is unknown at a high assumed price."""
    return sum(t.cost + t.unpriced_tokens * UNPRICED_USD_PER_TOKEN for t in items)
