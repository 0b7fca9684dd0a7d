"""OpenAI chat completions, and every server that speaks them.

    openai:MODEL                      api.openai.com, key OPENAI_API_KEY
    openai-compat:BASE_URL#MODEL      any compatible server (llama.cpp, SGLang, TGI, ...)
    ollama:MODEL  vllm:MODEL  lmstudio:MODEL     local servers at their default ports
    openrouter:VENDOR/MODEL           openrouter.ai, key OPENROUTER_API_KEY

Servers differ in what they accept. A request the server rejects for one parameter (a reasoning
model refusing `temperature`, a server without `json_schema` response formats, `max_tokens`
renamed) is sent again without it, once per parameter, and the model remembers; the JSON schema
ladder is json_schema, then json_object with a schema (llama.cpp's form), then none. Whatever
the server claims, a reply to a schema request is checked here (`schema_problem`); a server
that lets a bad one through loses its `json_schema` capability.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import httpx2
import openai

from moot.errors import ConfigError
from moot.models.base import Capabilities, ModelSettings, Spec
from moot.models.failures import (
    failure,
    guard_network,
    guarded_call,
    is_loopback_url,
    read_key,
)
from moot.models.pricing import Pricer
from moot.models.schema import schema_problem
from moot.types import Completion, FailureKind, Request, Usage, estimate_tokens

__all__ = ["PRESETS", "OpenAIChatModel", "Preset"]

DEFAULT_TIMEOUT = 300.0
_SCHEMA_LADDER = ("json_schema", "json_object", "none")


@dataclass(frozen=True)
class Preset:
    base_url: str | None
    key_env: tuple[str, ...] = ()
    key_required: bool = False
    tokens_param: str = "max_tokens"


PRESETS: dict[str, Preset] = {
    # OpenAI's newer models take max_completion_tokens and refuse max_tokens.
    "openai": Preset(
        "https://api.openai.com/v1", ("OPENAI_API_KEY",), True, "max_completion_tokens"
    ),
    "openrouter": Preset("https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",), True),
    "ollama": Preset("http://127.0.0.1:11434/v1"),
    "vllm": Preset("http://127.0.0.1:8000/v1", ("VLLM_API_KEY",)),
    "lmstudio": Preset("http://127.0.0.1:1234/v1"),
    "openai-compat": Preset(None),
}


class OpenAIChatModel:
    def __init__(
        self,
        spec: Spec,
        settings: ModelSettings,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        preset = PRESETS[spec.provider]
        model, base_url = spec.name, settings.base_url or preset.base_url
        if spec.provider == "openai-compat":
            url, sep, model = spec.name.rpartition("#")
            if not sep or not url or not model:
                raise ConfigError(
                    f"{spec} must be openai-compat:BASE_URL#MODEL, "
                    "for example openai-compat:http://127.0.0.1:8080/v1#qwen3"
                )
            base_url = settings.base_url or url
        assert base_url is not None
        guard_network(base_url, provider=spec.provider, injected=transport is not None)
        key = read_key(
            settings, preset.key_env, provider=spec.provider, required=preset.key_required
        )
        self.spec = str(spec)
        self.provider = spec.provider
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.settings = settings
        self.capabilities = Capabilities(
            json_schema=settings.options.get("response_format", "json_schema") != "none",
            seed=True,
            temperature=True,
            context_window=int(settings.options.get("context_window", 128_000)),
            max_concurrency=settings.concurrency,
        )
        self._schema_mode = str(settings.options.get("response_format", "json_schema"))
        if self._schema_mode not in _SCHEMA_LADDER:
            raise ConfigError(
                f"options.response_format of {spec} must be one of {', '.join(_SCHEMA_LADDER)}"
            )
        self._tokens_param = str(settings.options.get("tokens_param", preset.tokens_param))
        self._dropped: set[str] = set()
        self._client = openai.AsyncOpenAI(
            api_key=key or "not-needed",  # local servers take any key; the SDK wants one
            base_url=self.base_url,
            max_retries=0,  # the engine retries, and journals every attempt
            timeout=settings.timeout or DEFAULT_TIMEOUT,
            default_headers=settings.headers or None,
            http_client=httpx2.AsyncClient(transport=transport) if transport else None,
        )
        keys = [f"{spec.provider}:{model}"]
        if spec.provider == "openrouter" and "/" in model:
            keys.append(model.replace("/", ":", 1))  # openrouter:openai/gpt-5.4 -> openai:gpt-5.4
        # A server on this machine costs nothing per token.
        self.pricer = Pricer(self.spec, keys, settings, free=is_loopback_url(self.base_url))

    def connection_key(self) -> str:
        return f"{self.provider}:{self.base_url}"

    async def complete(self, request: Request) -> Completion:
        started = time.perf_counter()
        timeout = request.timeout or self.settings.timeout or DEFAULT_TIMEOUT
        return await guarded_call(
            self._complete(request, started, timeout),
            label=self.provider,
            model=self.spec,
            timeout=timeout,
            started=started,
        )

    async def _complete(self, request: Request, started: float, timeout: float) -> Completion:
        while True:
            params = self._params(request)
            try:
                response = await self._client.chat.completions.create(**params, timeout=timeout)
            except openai.APIStatusError as exc:
                # A request refused for its shape: 400 or 422, or llama-cpp-python's 500 for a
                # failed validation of the request body.
                text = f"{exc} {exc.body} {exc.response.text}".lower()
                shape = exc.status_code in (400, 422) or (
                    exc.status_code == 500 and "validation error" in text
                )
                if shape and self._fall_back(text, params):
                    continue
                raise
            return self._completion(response, request, started)

    def _params(self, request: Request) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        temperature = request.temperature
        if temperature is None:
            temperature = self.settings.temperature
        if temperature is not None and "temperature" not in self._dropped:
            params["temperature"] = temperature
        if request.seed is not None and "seed" not in self._dropped:
            params["seed"] = request.seed
        max_tokens = request.max_tokens or self.settings.max_tokens
        if max_tokens:
            params[self._tokens_param] = max_tokens
        if request.json_schema is not None and self._schema_mode == "json_schema":
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": request.json_schema, "strict": True},
            }
        elif request.json_schema is not None and self._schema_mode == "json_object":
            params["response_format"] = {"type": "json_object", "schema": request.json_schema}
        extra = self.settings.options.get("extra_body")
        if isinstance(extra, dict):
            params["extra_body"] = extra
        return params

    def _fall_back(self, error: str, params: dict[str, Any]) -> bool:
        """Adapt to a server that rejected one of our parameters; False if none is to blame."""
        if "response_format" in params and any(
            word in error for word in ("response_format", "json_schema", "schema", "json_object")
        ):
            self._schema_mode = _SCHEMA_LADDER[_SCHEMA_LADDER.index(self._schema_mode) + 1]
            if self._schema_mode == "none":
                self.capabilities = dataclasses.replace(self.capabilities, json_schema=False)
            return True
        for name in ("max_completion_tokens", "max_tokens"):
            if name in params and name in error and name not in self._dropped:
                self._dropped.add(name)
                self._tokens_param = (
                    "max_tokens" if name == "max_completion_tokens" else "max_completion_tokens"
                )
                return True
        for name in ("temperature", "seed"):
            if name in params and name in error:
                self._dropped.add(name)
                self.capabilities = dataclasses.replace(self.capabilities, **{name: False})
                return True
        return False

    def _completion(self, response: Any, request: Request, started: float) -> Completion:
        latency = time.perf_counter() - started
        choices = getattr(response, "choices", None)
        if not choices:
            return failure(
                FailureKind.BAD_RESPONSE,
                f"{self.provider}: the reply has no choices",
                model=self.spec,
                latency=latency,
            )
        choice = choices[0]
        message = choice.message
        text = message.content or ""
        if choice.finish_reason == "content_filter" or getattr(message, "refusal", None):
            reason = getattr(message, "refusal", None) or "the content filter stopped the reply"
            return failure(
                FailureKind.CONTENT_FILTER,
                f"{self.provider}: {reason}",
                model=self.spec,
                latency=latency,
            )
        if request.json_schema is not None and self.capabilities.json_schema:
            if schema_problem(text, request.json_schema) is not None:
                # Claimed, not enforced: stop relying on it; the engine's ladder takes over.
                self.capabilities = dataclasses.replace(self.capabilities, json_schema=False)
        usage = _usage(response, request, text)
        return Completion(
            text=text, usage=usage, cost=self.pricer.cost(usage), latency=latency, model=self.spec
        )

    async def aclose(self) -> None:
        await self._client.close()


def _usage(response: Any, request: Request, text: str) -> Usage:
    usage = getattr(response, "usage", None)
    if usage is None or not getattr(usage, "prompt_tokens", None):
        return Usage(
            prompt_tokens=sum(estimate_tokens(m.content) for m in request.messages),
            completion_tokens=estimate_tokens(text),
            estimated=True,
        )
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    return Usage(
        prompt_tokens=int(usage.prompt_tokens),
        completion_tokens=int(usage.completion_tokens or 0),
        cache_read_tokens=int(cached),
    )
