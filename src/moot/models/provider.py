"""`Provider`: the base class every provider subclasses. It owns the call's policy; a subclass
owns its wire, in one method.

    class EchoProvider(Provider):
        async def send(self, request: Request, timeout: float) -> Reply:
            text = request.messages[-1].content
            return Reply(text, Usage(prompt_tokens=len(text), completion_tokens=len(text)))

The contract, for a new provider (the llama.cpp one included):

- `__init__(spec, settings, capabilities, label=..., endpoint=..., pricer=...)`: `label` names
  the provider in messages ("openai", "cursor"), `endpoint` is what calls share (a base URL, an
  executable, a model file): `connection_key()` is `label:endpoint`, and the engine runs the
  calls of one key in one concurrency pool. `capabilities.max_concurrency` left at None becomes
  the agent's `concurrency` setting, else `default_max_concurrency`.
- `send(request, timeout)` does the call and returns a `Reply` (text, usage, and a cost only if
  the backend reported one), or a finished `Completion` to pass through untouched. It raises
  `ProviderError(kind, message)` for a failure it recognises (a refusal, an empty reply), and
  may let anything else escape: `classify(exc)` turns an escaped exception into a kind, a
  message and a Retry-After wait. `send` never prints and never journals, except through the
  call context's `checkpoint` (moot/models/base.py).
- `complete(request)` (do not override) is what the engine calls. It resolves the call's
  timeout with `timeout_for` (request, then settings, then `default_timeout`), bounds `send`
  by it unless `guards_timeout` is False (a provider that enforces its own deadline: a CLI
  kills its process tree, Cursor polls to a deadline), measures latency, prices the usage
  with `price`, and
  returns every failure as a redacted error completion: nothing escapes but cancellation and
  BaseExceptions.
- `prepare()` runs `warm_up()` (an SDK import, httpx2's) once, on the calling thread, as the run
  makes its models; `create_model` calls it. Override `warm_up` only. An import in a worker
  thread beside the session's set-up took the interpreter's lock back and forth some thousand
  times (80 ms of CPU) and sent the first request no sooner; only work that runs without the
  lock goes to a thread (the certificate bundle: moot/models/http.py).
- `aclose()` releases what the provider holds (its share of a connection pool).

A provider of an HTTP API subclasses `HttpProvider` (moot/models/http.py) instead, which does
the set-up they share (base URL, network guard, key, prices, a share of the endpoint's pool):
it writes `api()`, saying what it is, and the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

import msgspec
from msgspec import Struct

from moot import lazy
from moot.models.base import Capabilities
from moot.models.pricing import Pricer
from moot.types import Completion, FailureKind, ModelSettings, Request, Usage

if TYPE_CHECKING:
    from moot.models import classify, durations
else:
    (classify,) = lazy.modules("moot.models", "classify")  # on a failed call
    (durations,) = lazy.modules("moot.models", "durations")  # on a call out of time

__all__ = ["Provider", "ProviderError", "Reply"]


class ProviderError(Exception):
    """A failure the provider recognised; its message is reported as written (then redacted)."""

    def __init__(self, kind: FailureKind, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retry_after = retry_after


class Reply(Struct, frozen=True):
    """What a backend answered. `cost` only when the backend itself reported it (a CLI's
    total_cost_usd); otherwise the provider's `price` computes it from `usage`."""

    text: str
    usage: Usage
    cost: float | None = None
    hit_max_tokens: bool = False  # it stopped at the request's max_tokens, maybe mid-way


class Provider(ABC):
    """A model backend: one abstract method, `send`, and policy hooks with defaults."""

    default_timeout: ClassVar[float] = 300.0
    default_max_concurrency: ClassVar[int | None] = None
    guards_timeout: ClassVar[bool] = True

    def __init__(
        self,
        spec: str,
        settings: ModelSettings,
        capabilities: Capabilities,
        *,
        label: str,
        endpoint: str = "",
        pricer: Pricer | None = None,
    ) -> None:
        self.spec = spec
        self.settings = settings
        self.label = label
        self.endpoint = endpoint
        self.pricer = pricer
        if capabilities.max_concurrency is None:
            limit = settings.concurrency or self.default_max_concurrency
            capabilities = msgspec.structs.replace(capabilities, max_concurrency=limit)
        self.capabilities = capabilities
        self._prepared = False

    # -- the one method a provider writes ----------------------------------------------------
    @abstractmethod
    async def send(self, request: Request, timeout: float) -> Reply | Completion:
        """Make the call within `timeout` seconds; raise `ProviderError` for a known failure."""

    # -- policy hooks --------------------------------------------------------------------------
    def connection_key(self) -> str:
        """Calls sharing a key share one concurrency pool (one API host, one local file)."""
        return f"{self.label}:{self.endpoint}"

    def timeout_for(self, request: Request) -> float:
        """Seconds this call may take: the request's, else the agent's, else the default."""
        return request.timeout or self.settings.timeout or self.default_timeout

    def classify(self, exc: Exception) -> ProviderError:
        """What an exception escaping `send` means: by its shape (a status code, a response
        with headers, a timeout or connection class), prefixed with the provider's label."""
        if isinstance(exc, ProviderError):
            return exc
        kind, message, wait = classify.classify_exception(exc)
        return ProviderError(kind, f"{self.label}: {message}" if self.label else message, wait)

    def price(self, usage: Usage) -> float | None:
        """USD for `usage`; None when unknown."""
        return self.pricer.cost(usage) if self.pricer is not None else None

    def warm_up(self) -> None:  # noqa: B027 - a hook: doing nothing is the default
        """Set-up the first call needs, done ahead of it by `prepare`: an import, on the
        calling thread; work that runs without the interpreter's lock (a certificate bundle)
        may go to a worker thread of its own (moot/models/http.py)."""

    # -- what the engine calls -----------------------------------------------------------------
    def prepare(self) -> None:
        """Run `warm_up` once, here, as the run makes its models; later calls do nothing. A
        failure is left to the first call, which does the same work and reports it."""
        if self._prepared:
            return
        self._prepared = True
        with contextlib.suppress(Exception):
            self.warm_up()

    async def complete(self, request: Request) -> Completion:
        """Run one call. Failures are returned as error completions, never raised."""
        started = time.perf_counter()
        timeout = self.timeout_for(request)
        try:
            if self.guards_timeout:
                async with asyncio.timeout(timeout):  # in this task, as engine/calls.py says
                    reply = await self.send(request, timeout)
            else:
                reply = await self.send(request, timeout)
        except TimeoutError as exc:
            if self.guards_timeout:
                error = ProviderError(
                    FailureKind.TIMEOUT, f"no answer within {durations.seconds_text(timeout)}"
                )
            else:
                error = self.classify(exc)
        except Exception as exc:
            error = self.classify(exc)
        else:
            if isinstance(reply, Completion):
                return reply
            latency = time.perf_counter() - started
            cost = reply.cost if reply.cost is not None else self.price(reply.usage)
            return Completion(
                text=reply.text,
                usage=reply.usage,
                cost=cost,
                latency=latency,
                model=self.spec,
                hit_max_tokens=reply.hit_max_tokens,
            )
        return classify.failure(
            error.kind,
            error.message,
            model=self.spec,
            retry_after=error.retry_after,
            latency=time.perf_counter() - started,
        )

    async def aclose(self) -> None:  # noqa: B027 - a hook: most hold nothing
        """Release what this provider holds; the default holds nothing."""
