"""The Provider base class: a minimal subclass gets the timeout, the failure classification,
latency, pricing, connection key, concurrency and warm-up without writing any of them."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

from moot.models.base import Capabilities
from moot.models.pricing import Pricer
from moot.models.provider import Provider, ProviderError, Reply
from moot.types import Completion, FailureKind, Message, ModelSettings, Request, Usage, dump

KEY = "sk-test-BASECLASSKEY0123456789"


class Refused(Exception):
    """Shaped like an SDK's status error: a status code and a response with headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str]) -> None:
        super().__init__(message)
        self.status_code = status
        self.response = type("Response", (), {"headers": headers})()


class Echo(Provider):
    """Answers with the last message after `delay` seconds, or raises `error`."""

    def __init__(self, settings: ModelSettings | None = None, **behaviour: Any) -> None:
        settings = settings or ModelSettings(options={"price": {"input": 1.0, "output": 2.0}})
        super().__init__(
            "echo:one",
            settings,
            Capabilities(),
            label="echo",
            endpoint="http://127.0.0.1:9/v1",
            pricer=Pricer("echo:one", ["echo:one"], settings),
        )
        self.delay = float(behaviour.get("delay", 0.0))
        self.error: BaseException | None = behaviour.get("error")
        self.cost: float | None = behaviour.get("cost")
        self.warmed: list[str] = []

    async def send(self, request: Request, timeout: float) -> Reply:
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        text = request.messages[-1].content
        return Reply(text, Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000), self.cost)

    def warm_up(self) -> None:
        self.warmed.append(threading.current_thread().name)


def ask(model: Provider, timeout: float | None = 5.0) -> Completion:
    request = Request(messages=(Message(role="user", content="ping"),), timeout=timeout)
    result: Completion = asyncio.run(model.complete(request))
    return result


def test_a_reply_is_timed_and_priced_by_the_base() -> None:
    completion = ask(Echo(delay=0.05))
    assert completion.ok and completion.text == "ping" and completion.model == "echo:one"
    assert completion.latency >= 0.05
    assert completion.cost == pytest.approx(3.0)  # 1M in at $1 + 1M out at $2
    assert ask(Echo(cost=0.5)).cost == 0.5  # a cost the backend reported wins


def test_the_call_timeout_cuts_a_slow_send() -> None:
    completion = ask(Echo(delay=5), timeout=0.1)
    assert completion.failure is not None and completion.failure.kind == FailureKind.TIMEOUT
    assert completion.failure.message == "no answer within 0.1 s"
    assert 0.1 <= completion.latency < 2


def test_the_timeout_falls_back_to_the_settings_then_the_default() -> None:
    request = Request(messages=(Message(role="user", content="x"),))
    assert Echo(ModelSettings(timeout=7)).timeout_for(request) == 7
    assert Echo().timeout_for(request) == Provider.default_timeout


def test_a_provider_enforcing_its_own_deadline_is_not_cut() -> None:
    class Patient(Echo):
        guards_timeout = False

    completion = ask(Patient(delay=0.3), timeout=0.05)
    assert completion.ok and completion.text == "ping"


@pytest.mark.parametrize(
    ("error", "kind", "retry_after", "message"),
    [
        (
            Refused(429, "slow down", {"retry-after": "4"}),
            FailureKind.RATE_LIMIT,
            4.0,
            "echo: HTTP 429: slow down",
        ),
        (
            Refused(401, f"bad key {KEY}", {}),
            FailureKind.AUTH,
            None,
            "echo: HTTP 401: bad key [redacted]",
        ),
        (ConnectionRefusedError("refused"), FailureKind.CONNECTION, None, None),
        (ValueError("not JSON"), FailureKind.BAD_RESPONSE, None, None),
        (
            ProviderError(FailureKind.CONTENT_FILTER, "echo: refused to answer"),
            FailureKind.CONTENT_FILTER,
            None,
            "echo: refused to answer",
        ),
    ],
)
def test_an_escaping_exception_is_classified_and_redacted(
    error: Exception, kind: FailureKind, retry_after: float | None, message: str | None
) -> None:
    from moot.models.keys import remember_secret

    remember_secret(KEY)
    completion = ask(Echo(error=error))
    assert completion.failure is not None
    assert completion.failure.kind == kind and completion.failure.retry_after == retry_after
    if message is not None:
        assert completion.failure.message == message
    assert completion.failure.message.startswith("echo: ")
    assert KEY not in json.dumps(dump(completion))


def test_cancellation_and_base_exceptions_are_not_swallowed() -> None:
    class Crash(BaseException):
        pass

    with pytest.raises(Crash):
        ask(Echo(error=Crash()))


def test_connection_key_and_concurrency_come_from_the_base() -> None:
    assert Echo().connection_key() == "echo:http://127.0.0.1:9/v1"
    assert Echo().capabilities.max_concurrency is None
    assert Echo(ModelSettings(concurrency=3)).capabilities.max_concurrency == 3

    class Narrow(Echo):
        default_max_concurrency = 2

    assert Narrow().capabilities.max_concurrency == 2


def test_prepare_warms_up_once_on_the_calling_thread() -> None:
    """Issue 23: an import in a worker thread beside the session's set-up took the
    interpreter's lock back and forth some thousand times (80 ms of CPU) and sent the first
    request no sooner; `prepare` imports where it is called."""
    model = Echo()
    before = threading.active_count()
    model.prepare()
    model.prepare()
    assert model.warmed == [threading.current_thread().name]
    assert threading.active_count() == before


def test_a_warm_up_that_fails_is_left_to_the_first_call() -> None:
    class Broken(Echo):
        def warm_up(self) -> None:
            raise ImportError("no such SDK")

    model = Broken()
    model.prepare()  # the first call does the same work, and reports what fails
    assert ask(model).ok


def test_a_provider_without_a_warm_up_still_answers() -> None:
    class Cold(Provider):
        async def send(self, request: Request, timeout: float) -> Reply:
            return Reply("", Usage())

    model = Cold("cold:x", ModelSettings(), Capabilities(), label="cold")
    model.prepare()
    assert ask(model).cost is None  # no pricer: the cost is unknown, never a crash
