"""One connection pool per endpoint: agents on one server share one client and its
connections, a plain http:// endpoint loads no certificate bundle, and https endpoints load it
once. Measured against a real HTTP/1.1 server on loopback that counts its connections."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import pytest

from moot.models import http
from moot.models.anthropic_messages import AnthropicModel
from moot.models.base import create_model
from moot.models.openai_chat import OpenAIChatModel
from moot.models.provider import Provider
from moot.types import Completion, FailureKind, Message, ModelSettings, Request, Spec
from tests.loopback import serving

REPLY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "tiny",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "42"}}
    ],
    "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13},
}


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.peers: list[tuple[str, int]] = []  # one entry per accepted connection
        self.paths: list[str] = []
        self.redirect_to: str | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a reused connection is one peer
    server: Server

    def setup(self) -> None:
        super().setup()
        self.server.peers.append(self.client_address)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.server.paths.append(self.path)
        if self.server.redirect_to:
            self.send_response(307)
            self.send_header("location", self.server.redirect_to)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        body = json.dumps(REPLY).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[Server]:
    with serving(Server()) as running:
        yield running


@pytest.fixture
def ca_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every load of the certificate bundle, counted (httpx2 loads it through httpcore2)."""
    import httpcore2

    loads: list[str] = []
    real = httpcore2.default_ssl_context

    def counted(*args: Any, **kwargs: Any) -> Any:
        loads.append("ca")
        return real(*args, **kwargs)

    monkeypatch.setattr(httpcore2, "default_ssl_context", counted)
    monkeypatch.setattr(http, "_ssl_context", None)  # no bundle loaded by an earlier test
    return loads


def compat(base: str) -> OpenAIChatModel:
    model = create_model(f"openai-compat:{base}#tiny")
    assert isinstance(model, OpenAIChatModel)
    return model


REQUEST = Request(messages=(Message(role="user", content="What is 6 x 7?"),), timeout=10)


async def ask_each(models: Sequence[Provider]) -> list[Completion]:
    """One call per model, one after the other (so a shared pool can reuse its connection)."""
    try:
        return [await model.complete(REQUEST) for model in models]
    finally:
        for model in models:
            await model.aclose()


def test_agents_on_one_endpoint_share_one_client_and_its_connection(server: Server) -> None:
    models = [compat(server.base) for _ in range(3)]
    other = compat(server.base.replace("127.0.0.1", "localhost"))

    async def run() -> tuple[list[Completion], int, int, bool]:
        completions = [await model.complete(REQUEST) for model in models]
        shared = len({id(model._endpoint.client()) for model in models}) == 1
        open_pools = http.pool_size()
        await other.complete(REQUEST)
        with_other = http.pool_size()
        await ask_each([*models, other])
        return completions, open_pools, with_other, shared and http.pool_size() == 0

    completions, open_pools, with_other, shared_then_closed = asyncio.run(run())
    assert all(c.ok and c.text == "42" for c in completions), completions
    assert len(server.paths) == 3 + 1 + 4
    assert open_pools == 1 and with_other == 2  # another host is another pool
    assert shared_then_closed  # one client for the three; closed when the last one closed
    # Every call of the three agents went over the same connection; `other` opened its own.
    assert len(set(server.peers)) == 2


def test_a_plain_http_endpoint_loads_no_certificate_bundle(
    server: Server, ca_loads: list[str]
) -> None:
    models: list[Provider] = [compat(server.base) for _ in range(3)]
    completions = asyncio.run(ask_each(models))
    assert all(c.ok for c in completions)
    assert ca_loads == []


def test_https_endpoints_load_the_bundle_once_for_all_agents(
    ca_loads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-POOLKEY0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-POOLKEY0123456789")
    wire = httpx2.MockTransport(lambda request: httpx2.Response(200, json=REPLY))
    models: list[Provider] = [
        OpenAIChatModel(Spec("openai", "gpt-5.4-mini"), ModelSettings(), transport=wire)
        for _ in range(3)
    ]
    models.append(
        AnthropicModel(Spec("anthropic", "claude-sonnet-4-6"), ModelSettings(), transport=wire)
    )
    asyncio.run(ask_each(models[:3]))
    assert ca_loads == ["ca"]
    for model in models:
        model.prepare()  # warming up again finds the bundle loaded
    http.ssl_in_background().join(30)
    assert ca_loads == ["ca"]


def test_an_https_endpoint_loads_its_bundle_in_one_worker_thread(
    ca_loads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23: the bundle loads in C without the interpreter's lock, so a worker thread runs
    it beside the session's set-up; httpx2 is imported on the thread that makes the models."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-POOLKEY0123456789")
    monkeypatch.setattr(http, "_SSL_THREAD", [])
    wire = httpx2.MockTransport(lambda request: httpx2.Response(200, json=REPLY))
    spec = Spec("openai", "gpt-5.4-mini")
    models = [OpenAIChatModel(spec, ModelSettings(), transport=wire) for _ in range(3)]
    for model in models:
        model.prepare()
    loading = http.ssl_in_background()
    assert loading.name == "moot-ssl" and http.ssl_in_background() is loading
    loading.join(30)
    assert ca_loads == ["ca"]


def test_an_sdk_provider_rides_the_shared_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-POOLKEY0123456789")
    seen: list[str] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.headers["authorization"])
        return httpx2.Response(
            200,
            json={
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [{"type": "text", "text": "42"}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        )

    wire = httpx2.MockTransport(answer)
    models: list[AnthropicModel] = [
        AnthropicModel(Spec("anthropic", "claude-sonnet-4-6"), ModelSettings(), transport=wire)
        for _ in range(2)
    ]

    async def run() -> tuple[bool, list[Completion]]:
        completions = [await model.complete(REQUEST) for model in models]
        same = models[0].client()._client is models[1].client()._client
        for model in models:
            await model.aclose()
        return same and http.pool_size() == 0, completions

    shared, completions = asyncio.run(run())
    assert shared and all(c.ok and c.text == "42" for c in completions), completions
    assert len(seen) == 2  # each call carried its own key, through the one client


def test_a_redirect_from_http_to_https_is_refused(server: Server) -> None:
    server.redirect_to = "https://127.0.0.1:9/v1/chat/completions"
    [completion] = asyncio.run(ask_each([compat(server.base)]))
    assert completion.failure is not None
    assert completion.failure.kind == FailureKind.BAD_REQUEST
    assert "redirected to https://127.0.0.1" in completion.failure.message
    assert "base_url" in completion.failure.message
