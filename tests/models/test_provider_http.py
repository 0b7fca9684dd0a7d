"""OpenAI, Anthropic, Gemini and Cursor Cloud through their real client code, with only the wire
replaced (an httpx2.MockTransport answering in each API's real shape)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from moot.config import RunConfig
from moot.errors import ConfigError, ProviderMissing
from moot.models.anthropic_messages import AnthropicModel
from moot.models.base import ModelSettings, Spec, create_model, register_provider
from moot.models.cursor_cloud import CursorModel
from moot.models.google_genai import GoogleModel
from moot.models.openai_chat import OpenAIChatModel
from moot.types import Completion, FailureKind, Message, Request, dump
from tests.fakes.cursor_api import CursorApi

OPENAI_KEY = "sk-test-OPENAIKEYVALUE0123456789"
ANTHROPIC_KEY = "sk-ant-test-ANTHROPICKEY0123456789"
GEMINI_KEY = "AIzaTESTGEMINIKEY0123456789abcdef"
CURSOR_KEY = "cursor-test-KEYVALUE0123456789"
KEYS = (OPENAI_KEY, ANTHROPIC_KEY, GEMINI_KEY, CURSOR_KEY)

Reply = httpx2.Response | Callable[[httpx2.Request], httpx2.Response]


class Wire:
    """Answers requests with scripted replies, in order (the last one repeats); records them."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return reply(request) if callable(reply) else reply

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) if r.content else {} for r in self.requests]


def timeout(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ReadTimeout("timed out", request=request)


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    monkeypatch.setenv("CURSOR_API_KEY", CURSOR_KEY)


def ask(model: Any, **extra: Any) -> Completion:
    request = Request(
        messages=(
            Message(role="system", content="Be brief."),
            Message(role="user", content="What is 6 x 7?"),
        ),
        timeout=10,
        seed=11,
        meta={"step": "r0/solve/agent_a", "agent": "agent_a"},
        **extra,
    )
    result: Completion = asyncio.run(model.complete(request))
    return result


def kind_of(completion: Completion) -> FailureKind | None:
    return completion.failure.kind if completion.failure else None


def no_key_in(completion: Completion) -> bool:
    text = json.dumps(dump(completion))
    return not any(key in text for key in KEYS)


# -- OpenAI ----------------------------------------------------------------------------------
def chat(content: str = "42", finish: str = "stop", **message: Any) -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
            "object": "chat.completion",
            "created": 1741569952,
            "model": "gpt-5.4-mini-2026-03-05",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": content,
                        "refusal": None,
                        **message,
                    },
                    "logprobs": None,
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": 1200,
                "completion_tokens": 30,
                "total_tokens": 1230,
                "prompt_tokens_details": {"cached_tokens": 1000, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
            "service_tier": "default",
            "system_fingerprint": None,
        },
    )


def openai_error(status: int, message: str, code: str, **headers: str) -> httpx2.Response:
    body = {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    }
    return httpx2.Response(status, json=body, headers=headers)


def openai_model(wire: Wire, settings: ModelSettings | None = None) -> OpenAIChatModel:
    return OpenAIChatModel(
        Spec("openai", "gpt-5.4-mini"), settings or ModelSettings(), transport=wire.transport()
    )


def test_openai_success_reports_usage_cache_and_cost() -> None:
    wire = Wire(chat())
    completion = ask(openai_model(wire, ModelSettings(temperature=0.2)))
    assert completion.ok and completion.text == "42"
    assert completion.usage.prompt_tokens == 1200 and completion.usage.cache_read_tokens == 1000
    # 200 fresh at $0.75/M + 1000 cached at $0.075/M + 30 out at $4.50/M
    assert completion.cost == pytest.approx((200 * 0.75 + 1000 * 0.075 + 30 * 4.5) / 1e6)
    [body] = wire.bodies()
    assert body["seed"] == 11 and body["temperature"] == 0.2
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert "meta" not in json.dumps(body) and "agent_a" not in json.dumps(body)
    assert wire.requests[0].headers["authorization"] == f"Bearer {OPENAI_KEY}"


@pytest.mark.parametrize(
    ("reply", "kind", "retry_after"),
    [
        (
            openai_error(
                429,
                "Rate limit reached for gpt-5.4-mini",
                "rate_limit_exceeded",
                **{"retry-after": "7"},
            ),
            FailureKind.RATE_LIMIT,
            7.0,
        ),
        (
            openai_error(429, "You exceeded your current quota", "insufficient_quota"),
            FailureKind.AUTH,
            None,
        ),
        (
            httpx2.Response(
                500, json={"error": {"message": "The server had an error", "type": "server_error"}}
            ),
            FailureKind.SERVER,
            None,
        ),
        (
            httpx2.Response(503, text="upstream connect error", headers={"retry-after-ms": "1500"}),
            FailureKind.SERVER,
            1.5,
        ),
        (
            httpx2.Response(
                200, text="<html>bad gateway</html>", headers={"content-type": "application/json"}
            ),
            FailureKind.BAD_RESPONSE,
            None,
        ),
        (timeout, FailureKind.TIMEOUT, None),
        (
            openai_error(401, f"Incorrect API key provided: {OPENAI_KEY}.", "invalid_api_key"),
            FailureKind.AUTH,
            None,
        ),
        (
            openai_error(
                400,
                "This model's maximum context length is 128000 tokens. However, your"
                " messages resulted in 130001 tokens.",
                "context_length_exceeded",
            ),
            FailureKind.CONTEXT_LENGTH,
            None,
        ),
        (chat("", finish="content_filter"), FailureKind.CONTENT_FILTER, None),
        (chat("", refusal="I can't help with that."), FailureKind.CONTENT_FILTER, None),
    ],
)
def test_openai_failures_are_classified_and_never_leak_the_key(
    reply: Reply, kind: FailureKind, retry_after: float | None
) -> None:
    wire = Wire(reply)
    completion = ask(openai_model(wire))
    assert kind_of(completion) == kind
    assert completion.failure is not None and completion.failure.retry_after == retry_after
    assert len(wire.requests) == 1  # the SDK's own retries are off: the engine retries
    assert no_key_in(completion)


def test_openai_drops_a_parameter_the_model_refuses_and_remembers() -> None:
    refusal = openai_error(
        400,
        "Unsupported value: 'temperature' does not support 0.2 with this model. Only the "
        "default (1) value is supported.",
        "unsupported_value",
    )
    wire = Wire(refusal, chat(), chat())
    model = openai_model(wire, ModelSettings(temperature=0.2))
    assert ask(model).ok and ask(model).ok
    bodies = wire.bodies()
    assert "temperature" in bodies[0]
    assert all("temperature" not in body for body in bodies[1:])
    assert len(bodies) == 3 and not model.capabilities.temperature


SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
    "additionalProperties": False,
}


def test_openai_sends_a_strict_schema_and_checks_the_reply_itself() -> None:
    wire = Wire(chat('{"answer": 42}'), chat('{"answer": "forty-two"}'))
    model = openai_model(wire)
    assert ask(model, json_schema=SCHEMA).text == '{"answer": 42}'
    fmt = wire.bodies()[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert model.capabilities.json_schema
    bad = ask(model, json_schema=SCHEMA)
    assert bad.ok  # the ladder in the engine parses, re-asks and marks it invalid
    assert not model.capabilities.json_schema  # claimed, not enforced: no longer trusted


def test_openai_compat_falls_back_to_llama_cpp_json_object_schemas() -> None:
    refused = httpx2.Response(
        500,
        text="1 validation error: body.response_format.type Input should be 'text' or "
        "'json_object'",
    )
    wire = Wire(refused, chat('{"answer": 4}'))
    model = OpenAIChatModel(
        Spec("openai-compat", "http://127.0.0.1:9/v1#tiny"),
        ModelSettings(),
        transport=wire.transport(),
    )
    completion = ask(model, json_schema=SCHEMA)
    assert completion.ok and completion.cost == 0.0  # a server on this machine costs nothing
    second = wire.bodies()[1]["response_format"]
    assert second == {"type": "json_object", "schema": SCHEMA}
    assert second and "max_tokens" not in wire.bodies()[1]


def test_openrouter_prices_through_the_vendor_table() -> None:
    wire = Wire(chat())
    model = OpenAIChatModel(
        Spec("openrouter", "openai/gpt-5.4-mini"),
        ModelSettings(api_key_env="OPENAI_API_KEY"),
        transport=wire.transport(),
    )
    assert ask(model).cost == pytest.approx((200 * 0.75 + 1000 * 0.075 + 30 * 4.5) / 1e6)
    assert str(wire.requests[0].url).startswith("https://openrouter.ai/api/v1/")


# -- Anthropic -------------------------------------------------------------------------------
def message(text: str = "42", stop: str = "end_turn") -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [{"type": "text", "text": text}],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 100,
                "cache_creation_input_tokens": 400,
                "cache_read_input_tokens": 2000,
                "output_tokens": 50,
                "service_tier": "standard",
            },
        },
    )


def anthropic_error(status: int, kind: str, text: str, **headers: str) -> httpx2.Response:
    body = {
        "type": "error",
        "error": {"type": kind, "message": text},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    }
    return httpx2.Response(status, json=body, headers=headers)


def anthropic_model(wire: Wire, settings: ModelSettings | None = None) -> AnthropicModel:
    return AnthropicModel(
        Spec("anthropic", "claude-sonnet-4-6"),
        settings or ModelSettings(),
        transport=wire.transport(),
    )


def test_anthropic_success_counts_cache_tokens_and_sends_no_sampling() -> None:
    wire = Wire(message())
    completion = ask(anthropic_model(wire, ModelSettings(temperature=0.4, max_tokens=300)))
    assert completion.ok and completion.text == "42"
    usage = completion.usage
    assert (usage.prompt_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        2500,
        2000,
        400,
    )
    expected = (100 * 3.0 + 2000 * 0.30 + 400 * 3.75 + 50 * 15.0) / 1e6
    assert completion.cost == pytest.approx(expected)
    [body] = wire.bodies()
    assert body["system"] == "Be brief." and body["max_tokens"] == 300
    assert body["messages"] == [{"role": "user", "content": "What is 6 x 7?"}]
    assert not {"temperature", "top_p", "top_k"} & set(body)  # 2026-10-21 API refuses them


def test_anthropic_structured_output_goes_in_output_config() -> None:
    wire = Wire(message('{"answer": 42}'))
    assert ask(anthropic_model(wire), json_schema=SCHEMA).ok
    assert wire.bodies()[0]["output_config"] == {
        "format": {"type": "json_schema", "schema": SCHEMA}
    }


@pytest.mark.parametrize(
    ("reply", "kind", "retry_after"),
    [
        (
            anthropic_error(
                429,
                "rate_limit_error",
                "Number of request tokens has exceeded your per-minute rate limit",
                **{"retry-after": "12"},
            ),
            FailureKind.RATE_LIMIT,
            12.0,
        ),
        (anthropic_error(529, "overloaded_error", "Overloaded"), FailureKind.SERVER, None),
        (anthropic_error(500, "api_error", "Internal server error"), FailureKind.SERVER, None),
        (
            httpx2.Response(200, text="{not json", headers={"content-type": "application/json"}),
            FailureKind.BAD_RESPONSE,
            None,
        ),
        (timeout, FailureKind.TIMEOUT, None),
        (
            anthropic_error(401, "authentication_error", f"invalid x-api-key {ANTHROPIC_KEY}"),
            FailureKind.AUTH,
            None,
        ),
        (
            anthropic_error(
                400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
            ),
            FailureKind.CONTEXT_LENGTH,
            None,
        ),
        (message("", stop="refusal"), FailureKind.CONTENT_FILTER, None),
    ],
)
def test_anthropic_failures_are_classified(
    reply: Reply, kind: FailureKind, retry_after: float | None
) -> None:
    wire = Wire(reply)
    completion = ask(anthropic_model(wire))
    assert kind_of(completion) == kind
    assert completion.failure is not None and completion.failure.retry_after == retry_after
    assert len(wire.requests) == 1 and no_key_in(completion)


# -- Google ----------------------------------------------------------------------------------
def generated(text: str = "42", finish: str = "STOP") -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "candidates": [
                {
                    "content": {"parts": [{"text": text}], "role": "model"},
                    "finishReason": finish,
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 1000,
                "candidatesTokenCount": 20,
                "thoughtsTokenCount": 80,
                "cachedContentTokenCount": 500,
                "totalTokenCount": 1100,
            },
            "modelVersion": "gemini-2.5-flash",
            "responseId": "mK1xaPnhLtHbz7IPpJqe4Ag",
        },
    )


def google_error(status: int, state: str, text: str, **headers: str) -> httpx2.Response:
    return httpx2.Response(
        status,
        json={"error": {"code": status, "message": text, "status": state}},
        headers=headers,
    )


def google_model(wire: Wire) -> GoogleModel:
    return GoogleModel(
        Spec("google", "gemini-2.5-flash"), ModelSettings(), transport=wire.transport()
    )


def test_gemini_success_with_a_response_schema() -> None:
    wire = Wire(generated('{"answer": 42}'))
    completion = ask(google_model(wire), json_schema=SCHEMA)
    assert completion.ok and completion.text == '{"answer": 42}'
    assert completion.usage.completion_tokens == 100  # thinking is billed as output
    assert completion.cost == pytest.approx((500 * 0.30 + 500 * 0.03 + 100 * 2.50) / 1e6)
    [body] = wire.bodies()
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == SCHEMA and config["seed"] == 11
    assert body["systemInstruction"]["parts"][0]["text"] == "Be brief."
    assert wire.requests[0].headers["x-goog-api-key"] == GEMINI_KEY


@pytest.mark.parametrize(
    ("reply", "kind", "retry_after"),
    [
        (
            google_error(
                429,
                "RESOURCE_EXHAUSTED",
                "Resource has been exhausted (e.g. check quota).",
                **{"retry-after": "3"},
            ),
            FailureKind.RATE_LIMIT,
            3.0,
        ),
        (
            google_error(500, "INTERNAL", "An internal error has occurred."),
            FailureKind.SERVER,
            None,
        ),
        (
            httpx2.Response(200, text="]]garbage", headers={"content-type": "application/json"}),
            FailureKind.BAD_RESPONSE,
            None,
        ),
        (timeout, FailureKind.TIMEOUT, None),
        (
            google_error(
                400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."
            ),
            FailureKind.AUTH,
            None,
        ),
        (
            google_error(403, "PERMISSION_DENIED", f"Key {GEMINI_KEY} was reported as leaked."),
            FailureKind.AUTH,
            None,
        ),
        (generated("", finish="SAFETY"), FailureKind.CONTENT_FILTER, None),
    ],
)
def test_gemini_failures_are_classified(
    reply: Reply, kind: FailureKind, retry_after: float | None
) -> None:
    wire = Wire(reply)
    completion = ask(google_model(wire))
    assert kind_of(completion) == kind
    assert completion.failure is not None and completion.failure.retry_after == retry_after
    assert len(wire.requests) == 1 and no_key_in(completion)


def test_gemini_alias_names_the_same_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOOT_ALLOW_NETWORK", "1")  # constructed, never called
    assert isinstance(create_model("gemini:gemini-2.5-flash"), GoogleModel)


# -- Cursor Cloud Agents ---------------------------------------------------------------------
def cursor_model(api: Any) -> CursorModel:
    settings = ModelSettings(
        options={
            "repository": "https://github.com/acme/widgets",
            "ref": "main",
            "poll_interval": 0,
            "retry_base": 0,
        }
    )
    return CursorModel(
        Spec("cursor", "claude-4-sonnet"), settings, transport=httpx2.MockTransport(api)
    )


def test_cursor_launches_polls_through_transient_errors_and_reads_the_reply() -> None:
    api = CursorApi(
        flaky=[
            httpx2.Response(429, json={"error": "slow down"}, headers={"retry-after": "0"}),
            httpx2.Response(502, text="bad gateway"),
        ]
    )
    completion = ask(cursor_model(api))
    assert completion.ok, completion.failure
    assert completion.text == "<solution>answer 1</solution>"
    assert completion.usage.estimated and completion.cost is None
    assert api.launches == 1
    launch = json.loads(api.requests[0].content)
    assert launch["source"] == {"repository": "https://github.com/acme/widgets", "ref": "main"}
    assert launch["model"] == "claude-4-sonnet"
    assert "Be brief." in launch["prompt"]["text"] and "6 x 7" in launch["prompt"]["text"]
    assert api.requests[0].headers["authorization"] == f"Bearer {CURSOR_KEY}"


def test_cursor_continues_a_conversation_with_a_follow_up() -> None:
    api = CursorApi()
    model = cursor_model(api)
    first = ask(model)
    follow = Request(
        messages=(
            Message(role="system", content="Be brief."),
            Message(role="user", content="What is 6 x 7?"),
            Message(role="assistant", content=first.text),
            Message(role="user", content="Now critique it."),
        ),
        timeout=10,
    )
    second = asyncio.run(model.complete(follow))
    assert second.text == "<solution>answer 2</solution>"  # only the new reply
    assert (api.launches, api.followups) == (1, 1)
    followup = next(r for r in api.requests if r.url.path.endswith("/followup"))
    assert json.loads(followup.content) == {"prompt": {"text": "Now critique it."}}


@pytest.mark.parametrize(
    ("reply", "kind", "retry_after"),
    [
        (
            httpx2.Response(
                429,
                json={"error": {"code": "RATE_LIMIT_EXCEEDED", "message": "Too many requests"}},
                headers={"retry-after": "30"},
            ),
            FailureKind.RATE_LIMIT,
            30.0,
        ),
        (
            httpx2.Response(500, json={"error": {"code": "INTERNAL_ERROR"}}),
            FailureKind.SERVER,
            None,
        ),
        (httpx2.Response(201, text="<html>oops</html>"), FailureKind.BAD_RESPONSE, None),
        (httpx2.Response(201, json={"name": "no id"}), FailureKind.BAD_RESPONSE, None),
        (timeout, FailureKind.TIMEOUT, None),
        (
            httpx2.Response(
                401, json={"error": {"code": "UNAUTHORIZED", "message": f"bad key {CURSOR_KEY}"}}
            ),
            FailureKind.AUTH,
            None,
        ),
    ],
)
def test_cursor_launch_failures_are_classified(
    reply: Reply, kind: FailureKind, retry_after: float | None
) -> None:
    wire = Wire(reply)
    completion = ask(cursor_model(wire))
    assert kind_of(completion) == kind
    assert completion.failure is not None and completion.failure.retry_after == retry_after
    assert len(wire.requests) == 1  # a launch is never repeated inside a call
    assert no_key_in(completion)


def test_cursor_agent_that_errors_or_outlives_the_call() -> None:
    api = CursorApi(
        flaky=[
            httpx2.Response(200, json={"id": "bc_0001", "status": "ERROR", "summary": "VM crashed"})
        ]
    )
    failed = ask(cursor_model(api))
    assert kind_of(failed) == FailureKind.UNKNOWN
    assert failed.failure is not None and "VM crashed" in failed.failure.message
    slow = CursorApi(runs=10**9)
    model = cursor_model(slow)
    request = Request(messages=(Message(role="user", content="hi"),), timeout=0.3)
    completion = asyncio.run(model.complete(request))
    assert kind_of(completion) == FailureKind.TIMEOUT  # transient: a retry polls the same agent


def test_cursor_needs_a_repository() -> None:
    with pytest.raises(ConfigError, match=r"options\.repository"):
        CursorModel(Spec("cursor", "auto"), ModelSettings(), transport=Wire().transport())


def test_cursor_ping_checks_the_key_without_launching() -> None:
    wire = Wire(httpx2.Response(200, json={"apiKeyName": "ci", "userEmail": "a@b.c"}))
    result = asyncio.run(cursor_model(wire).ping())
    assert result.ok and [r.url.path for r in wire.requests] == ["/v0/me"]


# -- around them -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec",
    [
        "openai:gpt-5.4-mini",
        "anthropic:claude-haiku-4-5",
        "google:gemini-2.5-flash",
        "openrouter:openai/gpt-5.4",
        "cursor:auto",
    ],
)
def test_real_apis_are_refused_under_tests(spec: str) -> None:
    settings = ModelSettings(
        api_key_env="OPENAI_API_KEY", options={"repository": "https://github.com/a/b"}
    )
    with pytest.raises(ConfigError, match="MOOT_ALLOW_NETWORK=1"):
        create_model(spec, settings)


def test_a_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ConfigError, match="set ANTHROPIC_API_KEY"):
        anthropic_model(Wire(message()))
    with pytest.raises(ConfigError, match="set MY_KEY"):
        anthropic_model(Wire(message()), ModelSettings(api_key_env="MY_KEY"))


def test_a_missing_sdk_gives_a_one_line_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec

    def without_anthropic(name: str, *args: Any) -> Any:
        return None if name == "anthropic" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_anthropic)
    # as installed from a package (an editable checkout is told its path: test_models_commands)
    monkeypatch.setattr("moot.text.install.editable_checkout", lambda: None)
    with pytest.raises(ProviderMissing) as caught:
        create_model("anthropic:claude-haiku-4-5")
    assert "pip install 'moot[anthropic]'" in str(caught.value)
    assert "\n" not in str(caught.value)


SESSION_WIRE = Wire(
    openai_error(401, f"Incorrect API key provided: {OPENAI_KEY}.", "invalid_api_key")
)


def mock_openai(spec: Spec, settings: ModelSettings) -> OpenAIChatModel:
    return OpenAIChatModel(
        Spec("openai", spec.name), settings, transport=httpx2.MockTransport(SESSION_WIRE)
    )


register_provider("openai-mock", __name__, "mock_openai")


def test_no_key_reaches_the_session_folder() -> None:
    from tests.scripts import start

    config = RunConfig.read({"agents": [{"model": "openai-mock:gpt-5.4-mini"}] * 3, "seed": 1})
    run = start("What is 6 x 7?", config)
    assert run.exit_code == 1  # every agent failed its solve: nothing to deliberate
    texts = [p.read_text(errors="replace") for p in run.folder.rglob("*") if p.is_file()]
    journal = (run.folder / "events.jsonl").read_text()
    assert "invalid_api_key" in journal or "Incorrect API key" in journal
    assert not any(OPENAI_KEY in text for text in texts)


@pytest.mark.parametrize(
    ("make", "reply", "limit"),
    [
        (openai_model, chat, "length"),
        (anthropic_model, message, "max_tokens"),
        (google_model, generated, "MAX_TOKENS"),
    ],
)
def test_each_vendor_s_stop_at_max_tokens_is_recorded(make: Any, reply: Any, limit: str) -> None:
    """A reply the model stopped at max_tokens may lack its end: each vendor's own finish reason
    for it sets `hit_max_tokens`; an ordinary stop does not."""
    stopped = ask(make(Wire(reply("The answer is", limit))))
    assert stopped.ok and stopped.hit_max_tokens
    assert not ask(make(Wire(reply("42")))).hit_max_tokens
