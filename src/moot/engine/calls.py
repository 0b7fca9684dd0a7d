"""Where a live ask's answer comes from (`Session.ask` once the journal has none): the
response cache, or a model call.

The cache (engine/cache.py): a hit costs nothing and calls nothing; it is journaled like any
answer, so resume and replay never look at the cache. A store that fails is warned about once
and left alone for the rest of the run: the cache saves money, it must never stop a session.

A call: under the session's concurrency limits (one for the run, one per provider connection)
and the round's time limit (`deadline`), with a guard around a provider that does not enforce
its own timeout, the checkpoints a provider journals (models/base.py: CallContext), and the
retries of a transient failure (engine/retry.py), each journaled as an
`attempt` before its wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from moot import lazy
from moot.config import EngineConfig, Limits
from moot.engine.agent import Agent
from moot.errors import CacheError, ConfigError, Stopped
from moot.models.base import CALL_CONTEXT, CallContext, runs_free
from moot.types import Completion, Event, EventKind, FailureKind, Request, dump, parse_spec

# sqlite3 and the stores load only when a run has a cache; a failed call's retries and the
# words of its time limit, while the first asks are in flight (moot/lazy.py).
if TYPE_CHECKING:
    from moot.engine import retry
    from moot.engine.cache import CacheHit, ResponseCache
    from moot.models import durations
else:
    (retry,) = lazy.modules("moot.engine", "retry")
    (durations,) = lazy.modules("moot.models", "durations")

__all__ = ["ModelCalls", "Sleep", "deadline"]

Sleep = Callable[[float], Awaitable[None]]
# (monotonic end, seconds) of the innermost `deadline` block around an ask
_DEADLINE: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar(
    "moot_deadline", default=None
)


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Model calls started inside this block must end within `seconds` of entering it (see
    `Session.deadline`)."""
    if seconds is None:
        yield
        return
    token = _DEADLINE.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


class ModelCalls:
    """The live answers of one session. `signal`, `record` and `warn` are the session's (tell
    the faces; journal; warn once); `events` its journal, for the checkpoints of earlier runs;
    `cwd` where an agent's call for a step runs, and whether read-only."""

    def __init__(
        self,
        *,
        cache: ResponseCache | None,
        engine: EngineConfig,
        limits: Limits,
        sleep: Sleep,
        signal: Callable[..., None],
        record: Callable[..., Event],
        warn: Callable[[str], None],
        events: Sequence[Event],
        cwd: Callable[[str, str], tuple[str | None, bool]],
        folder: str | None = None,
    ) -> None:
        self.cache = cache  # None: every ask calls its model (or the cache failed: off)
        self._engine = engine
        self._limits = limits
        self._sleep = sleep
        self._signal = signal
        self._record = record
        self._warn = warn
        self._cwd = cwd
        self._folder = folder  # the session folder, for a provider that writes there
        self._checkpoints: dict[str, list[dict[str, Any]]] = {}  # per agent, for providers
        for event in events:
            if event.kind == "checkpoint":
                entry = {**event.data.get("data", {}), "step": event.step}
                self._checkpoints.setdefault(str(event.data.get("agent")), []).append(entry)
        self._global = asyncio.Semaphore(engine.concurrency)
        self._pools: dict[str, asyncio.Semaphore] = {}

    async def lookup(self, agent: Agent, request: Request) -> CacheHit | None:
        if self.cache is None or agent.model is None:
            return None
        capabilities = agent.model.capabilities
        try:
            return await self.cache.lookup(
                agent.spec,
                request,
                seed_honoured=capabilities.seed,
                temperature_honoured=capabilities.temperature,
            )
        except CacheError as exc:
            self._cache_off(exc)
            return None

    async def save(self, agent: Agent, request: Request, completion: Completion) -> None:
        if self.cache is None:
            return
        try:
            await self.cache.save(agent.spec, request, completion)
        except CacheError as exc:
            self._cache_off(exc)

    def hit_note(self, hit: CacheHit) -> dict[str, Any]:
        """What an ask event answered from the cache records of it."""
        assert self.cache is not None
        return {
            "hit": True,
            "key": hit.key,
            "store": self.cache.store.location,
            "saved_cost": hit.stored.cost,
            "saved_tokens": hit.stored.usage.total,
        }

    def _cache_off(self, exc: CacheError) -> None:
        if self.cache is not None:
            self.cache = None
            self._warn(f"the response cache is off for the rest of this run: {exc}")

    def _context(self, alias: str, step: str) -> CallContext:
        """What a provider sees during a call: the checkpoints journaled for this agent by
        earlier calls and runs, and a way to journal more."""
        recorded = self._checkpoints.setdefault(alias, [])

        def checkpoint(data: dict[str, Any]) -> None:
            self._record("checkpoint", step, agent=alias, data=data)  # fsync'd before it returns
            recorded.append({**data, "step": step})

        cwd, read_only = self._cwd(alias, step)
        return CallContext(
            step, alias, tuple(recorded), checkpoint, self._warn, cwd, read_only, self._folder
        )

    def _pool(self, agent: Agent) -> asyncio.Semaphore:
        assert agent.model is not None
        key = agent.model.connection_key()
        if key not in self._pools:
            limit = agent.config.concurrency or agent.model.capabilities.max_concurrency
            self._pools[key] = asyncio.Semaphore(limit or 1_000)
        return self._pools[key]

    async def call(self, agent: Agent, request: Request, step: str) -> Completion:
        model = agent.model
        assert model is not None, "live mode needs models"
        attempts = 0
        ends = _DEADLINE.get()

        def out_of_time() -> Completion | None:
            if ends is None or time.monotonic() < ends[0]:
                return None
            return Completion.error(
                FailureKind.TIMEOUT,
                f"the round's time limit of {durations.seconds_text(ends[1])} ran out",
                model=agent.spec,
            )

        async def once() -> Completion:
            nonlocal attempts
            attempts += 1
            async with self._global, self._pool(agent):
                late = out_of_time()
                if late is not None:
                    return late  # not retried: the round has no time left
                self._signal(EventKind.CALL_STARTED, step, agent=agent.alias, attempt=attempts)
                started = time.perf_counter()
                # Providers enforce the call timeout themselves; this guard catches one that
                # does not (a hung SDK, a script), a little later: a tenth of the timeout, at
                # least 1s, at most 30s (a long timeout must not hold a hung call minutes more).
                # Not models/local.py's margin, on purpose: its worker checks the deadline only
                # between tokens, so that guard waits 5s at least and has no cap. This one is
                # never longer and starts first, so under a Session it is the one that fires;
                # its cancellation drops the worker's sequence (LocalModel._ask).
                timeout = request.timeout or self._limits.call_timeout
                sent = request
                if ends is not None and ends[0] - time.monotonic() < timeout:
                    timeout = max(0.001, ends[0] - time.monotonic())
                    sent = replace(request, timeout=timeout)
                guard = timeout + max(1.0, min(30.0, timeout / 10))
                token = CALL_CONTEXT.set(self._context(agent.alias, step))
                try:
                    # In this task (asyncio.wait_for would run the call in a task of its own on
                    # Python 3.11): each ask of a phase sends its request as soon as it is
                    # ready, not after every other ask of the phase has made its own.
                    async with asyncio.timeout(guard):
                        completion = await model.complete(sent)
                except Stopped:  # the run waits (an inline agent's delegation): not a failure
                    raise
                except TimeoutError:
                    completion = Completion.error(
                        FailureKind.TIMEOUT,
                        f"no answer within {durations.seconds_text(guard)}",
                        model=agent.spec,
                    )
                except Exception as exc:  # a provider bug is a failed call, not a crash
                    completion = Completion.error(
                        FailureKind.UNKNOWN, f"{type(exc).__name__}: {exc}", model=agent.spec
                    )
                finally:
                    CALL_CONTEXT.reset(token)
                if not completion.latency:
                    completion = replace(completion, latency=time.perf_counter() - started)
            if not completion.ok and completion.failure and completion.failure.transient:
                if out_of_time() is None:
                    raise retry.Transient(completion)
            return completion

        def before_retry(tries: int, failed: Completion, wait: float) -> None:
            failure = failed.failure
            self._record(
                "attempt",
                step,
                agent=agent.alias,
                attempt=tries,
                failure=dump(failure) if failure else None,
                retry_in=round(wait, 3),
            )

        try:
            completion = await once()
        except retry.Transient as first:  # engine/retry.py: attempts, total wait
            completion = await retry.retried(
                first, once, self._engine, sleep=self._sleep, before_retry=before_retry
            )
        update: dict[str, object] = {"attempts": attempts}
        if not completion.ok and completion.cost is None and _free(agent):
            update["cost"] = 0.0  # a failed call of a model that runs free cost nothing either
        return replace(completion, **update)


def _free(agent: Agent) -> bool:
    """Whether the agent's calls cost nothing (a model on this machine, `runs_free`, with no
    price of its own: as runs and projections price them), so a call of it that failed has a
    known cost, $0. Another model's failed call may have been billed: its cost stays unknown."""
    if isinstance(agent.config.options.get("price"), dict):
        return False
    try:
        spec = parse_spec(agent.spec)
    except ConfigError:
        return False
    return runs_free(spec, agent.config.base_url)
