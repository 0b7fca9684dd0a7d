"""The retry policy: a call retries transient failures (429, 5xx) up to `engine.attempts` tries
and `engine.retry_max_wait` seconds of waiting in total, a server's Retry-After honoured whole
or not at all. Against a real OpenAI-compatible server on loopback; the engine's sleep is
recorded instead of slept."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from moot import api
from moot.config import RunConfig
from tests.loopback import serving
from tests.scripts import events


@dataclass
class Answer:
    """One response of the server: a status, headers, and the reply text (or error message)."""

    status: int = 200
    text: str = "6 x 7 = 42\nAnswer: 42"
    headers: dict[str, str] = field(default_factory=dict)
    finish: str = "stop"  # the choice's finish_reason ("length": stopped at max_tokens)


class ChatServer(ThreadingHTTPServer):
    """An OpenAI-compatible chat endpoint on loopback answering from a list, in order (the
    last answer repeats), counting the requests it was sent."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answers: list[Answer] = [Answer()]
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    @property
    def spec(self) -> str:
        return f"openai-compat:http://127.0.0.1:{self.server_address[1]}/v1#tiny"

    def next_answer(self, body: dict[str, Any]) -> Answer:
        with self.lock:
            self.requests.append(body)
            index = min(len(self.requests), len(self.answers)) - 1
            return self.answers[index]


class _Handler(BaseHTTPRequestHandler):
    server: ChatServer

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        answer = self.server.next_answer(body)
        if answer.status >= 400:
            payload: dict[str, Any] = {
                "error": {"message": answer.text, "type": "server_error", "code": None}
            }
        else:
            payload = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": "tiny",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": answer.finish,
                        "message": {"role": "assistant", "content": answer.text},
                    }
                ],
                "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
            }
        data = json.dumps(payload).encode()
        self.send_response(answer.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with serving(ChatServer()) as running:
        yield running


class Sleeps:
    """The engine's sleep, recorded: the waits a real run would have made."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def vote_config(spec: str, **engine: Any) -> RunConfig:
    """One agent asked once (the vote protocol): every request the server sees is that call."""
    return RunConfig.read(
        {
            "protocol": "vote",
            "agents": [{"model": spec}],
            "seed": 1,
            "vote": {"samples": 1},
            "engine": engine,
        }
    )


def _ask(folder: Any) -> dict[str, Any]:
    (ask,) = [e for e in events(folder) if e["kind"] == "ask"]
    completion: dict[str, Any] = ask["data"]["completion"]
    return completion


RATE_LIMITED = Answer(429, "Rate limit reached, slow down", {"retry-after": "40"})


def test_a_long_retry_budget_rides_out_rate_limits_waiting_what_the_server_asks(
    server: ChatServer,
) -> None:
    server.answers = [RATE_LIMITED, RATE_LIMITED, RATE_LIMITED, Answer()]
    sleeps = Sleeps()
    run = api.start(
        "What is 6 x 7?",
        vote_config(server.spec, attempts=10, retry_max_wait=600),
        sleep=sleeps,
    )
    assert run.exit_code == 0, run.message
    assert run.result.final_answer == "42"
    assert len(server.requests) == 4
    assert sleeps.waits == [40.0, 40.0, 40.0]  # Retry-After, above the backoff (1-4 s)
    attempts = [e for e in events(run.folder) if e["kind"] == "attempt"]
    assert [a["data"]["retry_in"] for a in attempts] == [40.0, 40.0, 40.0]
    assert {a["data"]["failure"]["kind"] for a in attempts} == {"rate_limit"}
    assert _ask(run.folder)["attempts"] == 4


def test_a_retry_after_that_does_not_fit_the_budget_is_not_waited(server: ChatServer) -> None:
    # 40 + 40 fit in 100 s; a third 40 s wait would not: the call fails after three tries
    # instead of waiting past the budget.
    server.answers = [RATE_LIMITED]
    sleeps = Sleeps()
    run = api.start(
        "What is 6 x 7?",
        vote_config(server.spec, attempts=10, retry_max_wait=100),
        sleep=sleeps,
    )
    assert sleeps.waits == [40.0, 40.0]
    assert len(server.requests) == 3
    completion = _ask(run.folder)
    assert completion["status"] == "error" and completion["failure"]["kind"] == "rate_limit"
    assert completion["attempts"] == 3
    assert run.result.final_answer != "42"


def test_an_hour_long_retry_after_is_not_slept_by_default(server: ChatServer) -> None:
    # Before the budget, the engine slept whatever Retry-After said, per try.
    server.answers = [Answer(429, "quota window resets in an hour", {"retry-after": "3600"})]
    sleeps = Sleeps()
    run = api.start("What is 6 x 7?", vote_config(server.spec), sleep=sleeps)
    assert sleeps.waits == []
    assert len(server.requests) == 1
    assert _ask(run.folder)["failure"]["retry_after"] == 3600.0


def test_backoff_waits_are_shortened_to_the_budget_and_never_exceed_it(
    server: ChatServer,
) -> None:
    server.answers = [Answer(503, "upstream connect error")]
    sleeps = Sleeps()
    run = api.start(
        "What is 6 x 7?",
        vote_config(server.spec, attempts=20, retry_max_wait=10, backoff_initial=4, backoff_max=30),
        sleep=sleeps,
    )
    # 4 s (+ up to 1 s jitter), then 8 s cut to what is left of 10, then no more waiting.
    assert len(sleeps.waits) == 2 and 4 <= sleeps.waits[0] <= 5
    assert sum(sleeps.waits) == pytest.approx(10.0)
    assert len(server.requests) == 3
    completion = _ask(run.folder)
    assert completion["failure"]["kind"] == "server" and completion["attempts"] == 3


def test_attempts_still_bound_the_tries_within_the_budget(server: ChatServer) -> None:
    server.answers = [Answer(500, "internal error")]
    sleeps = Sleeps()
    api.start(
        "What is 6 x 7?",
        vote_config(server.spec, attempts=3, backoff_initial=0.5, backoff_max=1),
        sleep=sleeps,
    )
    assert len(server.requests) == 3 and len(sleeps.waits) == 2
