"""A call that cannot connect names the URL it went to (issue 24), without the user, password or
query a base_url may hold: a wrong base_url or a server that is not up is seen at once."""

from __future__ import annotations

import socket

import httpx2
import pytest

from moot.models.anthropic_messages import AnthropicModel
from moot.models.http import shown_url
from moot.models.openai_chat import OpenAIChatModel
from moot.types import FailureKind, ModelSettings, Spec
from tests.models.test_provider_http import Wire, ask


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # closed again: nothing listens there


def test_a_refused_connection_names_the_url() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    model = OpenAIChatModel(Spec("openai-compat", f"{url}#qwen3"), ModelSettings())
    completion = ask(model)
    assert completion.failure is not None
    assert completion.failure.kind is FailureKind.CONNECTION
    assert f"(connecting to {url})" in completion.failure.message


def test_an_sdk_provider_names_the_url_without_its_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-ANTHROPICKEY0123456789")

    def unreachable(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("Name or service not known", request=request)

    base = "https://me:hunter2@proxy.example:8443/anthropic?token=abc123"
    model = AnthropicModel(
        Spec("anthropic", "claude-sonnet-4-6"),
        ModelSettings(base_url=base),
        transport=Wire(unreachable).transport(),
    )
    completion = ask(model)
    assert completion.failure is not None
    message = completion.failure.message
    assert "(connecting to https://proxy.example:8443/anthropic)" in message, message
    assert "hunter2" not in message and "abc123" not in message


def test_a_failure_that_is_not_a_connection_names_no_url() -> None:
    model = OpenAIChatModel(
        Spec("openai-compat", "http://127.0.0.1:9/v1#qwen3"),
        ModelSettings(),
        transport=Wire(httpx2.Response(500, text="boom")).transport(),
    )
    completion = ask(model)
    assert completion.failure is not None and "connecting to" not in completion.failure.message


def test_a_url_is_shown_without_credentials_query_or_fragment() -> None:
    assert shown_url("http://u:p@[::1]:8080/v1?k=1#m") == "http://[::1]:8080/v1"
    assert shown_url("https://api.example/v1") == "https://api.example/v1"
