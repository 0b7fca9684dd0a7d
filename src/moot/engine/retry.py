"""The retry policy of one model call (`Session.ask`), as tenacity's stop and wait.

A call makes at most `engine.attempts` tries and waits at most `engine.retry_max_wait` seconds
between them in all. A backoff wait (exponential, with jitter) is shortened to what is left of
that budget; a wait the server asked for (Retry-After) is honoured whole or not at all, since
coming back sooner only earns another refusal. The call then ends with its last failure, which
the journal records like any other (and an outage of every agent pauses the session).

A call's first try runs without any of this (`ModelCalls.call`, engine/calls.py); only a
transient failure hands the call to `retried`, which imports tenacity then: most calls succeed
on their first try, and a run's first request does not wait for the import (issue 12).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from moot.config import EngineConfig
from moot.types import Completion

if TYPE_CHECKING:
    from tenacity import RetryCallState

__all__ = ["RetryBudget", "Transient", "pause_before_retry", "retried"]


class Transient(Exception):
    """A failed try that may be retried: it carries the error completion."""

    def __init__(self, completion: Completion) -> None:
        super().__init__(completion.failure.message if completion.failure else "transient")
        self.completion = completion


def pause_before_retry(
    backoff: float, asked: float | None, *, left: float, last: bool
) -> float | None:
    """The wait before the next try, or None for no next try: `backoff` shortened to the
    `left` seconds of the call's budget; a server's `asked` wait whole or not at all."""
    if last:
        return None
    if asked is not None and asked > 0:
        pause = max(backoff, asked)
        return pause if pause <= left else None
    if backoff <= left:
        return backoff
    return left if left > 0 else None


class RetryBudget:
    """One call's retries: pass `stop` and `wait` to tenacity. Each failed try is planned
    once (tenacity asks for the wait and for the stop in an order that differs between its
    versions, and the backoff's jitter must be drawn once)."""

    def __init__(self, engine: EngineConfig) -> None:
        from tenacity import wait_exponential_jitter

        self._engine = engine
        self._backoff = wait_exponential_jitter(
            initial=engine.backoff_initial, max=engine.backoff_max
        )
        self._plans: dict[int, float | None] = {}  # failed try -> wait before the next
        self.waited = 0.0  # seconds planned so far

    def _plan(self, state: RetryCallState) -> float | None:
        if state.attempt_number not in self._plans:
            pause = pause_before_retry(
                self._backoff(state),
                _asked(state),
                left=self._engine.retry_max_wait - self.waited,
                last=state.attempt_number >= self._engine.attempts,
            )
            self._plans[state.attempt_number] = pause
            self.waited += pause or 0.0
        return self._plans[state.attempt_number]

    def stop(self, state: RetryCallState) -> bool:
        return self._plan(state) is None

    def wait(self, state: RetryCallState) -> float:
        return self._plan(state) or 0.0


def _asked(state: RetryCallState) -> float | None:
    """The wait a failed try's server asked for (Retry-After), if any."""
    outcome = state.outcome
    error = outcome.exception() if outcome is not None else None
    if isinstance(error, Transient) and error.completion.failure is not None:
        return error.completion.failure.retry_after
    return None


async def retried(
    first: Transient,
    again: Callable[[], Awaitable[Completion]],
    engine: EngineConfig,
    *,
    sleep: Callable[[float], Awaitable[None]],
    before_retry: Callable[[int, Completion, float], None],
) -> Completion:
    """Retry a call whose first try failed with `first`: `again()` makes one more try and
    raises `Transient` for another transient failure. `before_retry(tries so far, the last
    failure, seconds to wait)` is told of each retry before its wait. The completion of the
    try that succeeded, or of the last failure."""
    from tenacity import AsyncRetrying, retry_if_exception_type

    budget = RetryBudget(engine)
    made: Transient | None = first

    async def attempt() -> Completion:
        nonlocal made
        if made is not None:  # tenacity's first try: the one already made
            failed, made = made, None
            raise failed
        return await again()

    def before_sleep(state: RetryCallState) -> None:
        outcome = state.outcome
        error = outcome.exception() if outcome is not None else None
        if isinstance(error, Transient):
            before_retry(state.attempt_number, error.completion, state.upcoming_sleep)

    retrying = AsyncRetrying(
        stop=budget.stop,
        wait=budget.wait,
        retry=retry_if_exception_type(Transient),
        before_sleep=before_sleep,
        sleep=sleep,
        reraise=True,
    )
    try:
        completion: Completion = await retrying(attempt)
    except Transient as final:
        completion = final.completion
    return completion
