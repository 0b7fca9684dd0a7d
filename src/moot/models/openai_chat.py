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

import json
import os
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import Struct

from moot import lazy
from moot.errors import ConfigError
from moot.models.base import Capabilities, ModelSettings, Spec, endpoint, runs_free
from moot.models.http import Api, HttpProvider, json_object
from moot.models.provider import ProviderError, Reply
from moot.types import FailureKind, Request, Usage, estimate_tokens

if TYPE_CHECKING:
    from moot.models import classify, schema
else:
    (schema,) = lazy.modules("moot.models", "schema")  # on a reply
    (classify,) = lazy.modules("moot.models", "classify")  # on a refused call

if TYPE_CHECKING:
    import httpx2

__all__ = ["PRESETS", "OpenAIChatModel", "Preset"]

_SCHEMA_LADDER = ("json_schema", "json_object", "none")
# The SDK's optional account headers, read from the same variables it reads them from.
_ACCOUNT_HEADERS = (
    ("OpenAI-Organization", "OPENAI_ORG_ID"),
    ("OpenAI-Project", "OPENAI_PROJECT_ID"),
)


class Preset(Struct, frozen=True):
    """A named OpenAI-compatible service: its key and token parameter (its address is the
    provider registry's `default_url`)."""

    key_env: tuple[str, ...] = ()
    key_required: bool = False
    tokens_param: str = "max_tokens"


PRESETS: dict[str, Preset] = {
    # OpenAI's newer models take max_completion_tokens and refuse max_tokens.
    "openai": Preset(("OPENAI_API_KEY",), True, "max_completion_tokens"),
    "openrouter": Preset(("OPENROUTER_API_KEY",), True),
    "ollama": Preset(),
    "vllm": Preset(("VLLM_API_KEY",)),
    "lmstudio": Preset(),
    "openai-compat": Preset(),
}


class _Refused(Exception):
    """An HTTP error reply, in the words the openai SDK used for it."""

    def __init__(self, response: httpx2.Response) -> None:
        self.status_code = response.status_code
        self.response = response
        message = f"Error code: {response.status_code}"
        text = response.text.strip()
        body: Any = text
        try:
            body = json.loads(text)
        except ValueError:
            pass
        else:
            error = body.get("error", body) if isinstance(body, dict) else None
            detail = error.get("message") if isinstance(error, dict) else None
            if isinstance(detail, str) and detail:
                message += f" - {detail}"
            body = error if error is not None else body
        super().__init__(message)
        self.message = message
        self.body = body


class OpenAIChatModel(HttpProvider):
    """Chat completions over httpx2, the client library the openai SDK itself uses; the SDK's
    typed models (about 0.4 s of imports) bring nothing this provider reads."""

    def api(self, spec: Spec, settings: ModelSettings) -> Api:
        preset = PRESETS[spec.provider]
        model, default_url = spec.name, endpoint(spec)
        if spec.provider == "openai-compat":
            _, sep, model = spec.name.rpartition("#")
            if not sep or not default_url or not model:
                raise ConfigError(
                    f"{spec} must be openai-compat:BASE_URL#MODEL, "
                    "for example openai-compat:http://127.0.0.1:8080/v1#qwen3"
                )
        assert default_url is not None
        keys = [f"{spec.provider}:{model}"]
        if spec.provider == "openrouter" and "/" in model:
            keys.append(model.replace("/", ":", 1))  # openrouter:openai/gpt-5.4 -> openai:gpt-5.4
        self._preset = preset
        return Api(
            spec.provider,
            default_url,
            preset.key_env,
            Capabilities(
                json_schema=settings.options.get("response_format", "json_schema") != "none",
                seed=True,
                temperature=True,
                context_window=128_000,
            ),
            key_required=preset.key_required,
            model=model,
            price_keys=tuple(keys),
            # A server on this machine costs nothing per token.
            free=runs_free(spec, settings.base_url),
        )

    def connected(self) -> None:
        self.provider = self.label
        options = self.settings.options
        self._schema_mode = str(options.get("response_format", "json_schema"))
        if self._schema_mode not in _SCHEMA_LADDER:
            raise ConfigError(
                f"options.response_format of {self.spec} must be one of {', '.join(_SCHEMA_LADDER)}"
            )
        self._tokens_param = str(options.get("tokens_param", self._preset.tokens_param))
        self._dropped: set[str] = set()
        # local servers take any key; send one anyway, as the SDK did
        self._headers = {"Authorization": f"Bearer {self._key or 'not-needed'}"}
        for header, variable in _ACCOUNT_HEADERS:
            if os.environ.get(variable):
                self._headers[header] = os.environ[variable]
        self._headers.update(self.settings.headers)

    async def send(self, request: Request, timeout: float) -> Reply:
        while True:
            params = self._params(request)
            try:
                data = await self._post(params, timeout)
            except _Refused as refused:
                # A request refused for its shape: 400 or 422, or llama-cpp-python's 500 for a
                # failed validation of the request body.
                text = f"{refused} {refused.body} {refused.response.text}".lower()
                status = refused.status_code
                shape = status in (400, 422) or (status == 500 and "validation error" in text)
                if shape and self._fall_back(text, params):
                    continue
                kind = classify.classify_status(status, f"{refused.body} {refused.message}")
                wait = (
                    classify.retry_after_seconds(refused.response.headers)
                    if kind.transient
                    else None
                )
                raise ProviderError(
                    kind, f"{self.provider}: HTTP {status}: {refused.message}", wait
                ) from None
            return self._reply(data, request)

    async def _post(self, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        body = dict(params)
        extra = body.pop("extra_body", None)
        if isinstance(extra, dict):
            body.update(extra)  # as the SDK's extra_body: merged into the JSON body
        response = await self._endpoint.client().post(
            f"{self.base_url}/chat/completions",
            json=body,
            headers=self._headers,
            timeout=timeout,
        )
        if response.status_code >= 400:
            raise _Refused(response)
        return json_object(
            response, lambda problem: f"{self.provider}: unexpected response ({problem})"
        )

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
                self.capabilities = msgspec.structs.replace(self.capabilities, json_schema=False)
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
                self.capabilities = msgspec.structs.replace(self.capabilities, **{name: False})
                return True
        return False

    def _reply(self, data: dict[str, Any], request: Request) -> Reply:
        choices = data.get("choices")
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
            raise ProviderError(
                FailureKind.BAD_RESPONSE, f"{self.provider}: the reply has no choices"
            )
        choice = choices[0]
        raw = choice.get("message")
        message: dict[str, Any] = raw if isinstance(raw, dict) else {}
        text = _text(message.get("content"))
        refusal = message.get("refusal")
        if choice.get("finish_reason") == "content_filter" or refusal:
            reason = refusal or "the content filter stopped the reply"
            raise ProviderError(FailureKind.CONTENT_FILTER, f"{self.provider}: {reason}")
        if request.json_schema is not None and self.capabilities.json_schema:
            if schema.schema_problem(text, request.json_schema) is not None:
                # Claimed, not enforced: stop relying on it; the engine's ladder takes over.
                self.capabilities = msgspec.structs.replace(self.capabilities, json_schema=False)
        usage = _usage(data.get("usage"), request, text)
        return Reply(text, usage, hit_max_tokens=choice.get("finish_reason") == "length")


def _text(content: Any) -> str:
    """The reply's text: a string, or (some servers) a list of typed parts."""
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def _usage(usage: Any, request: Request, text: str) -> Usage:
    if not isinstance(usage, dict) or not usage.get("prompt_tokens"):
        return Usage(
            prompt_tokens=sum(estimate_tokens(m.content) for m in request.messages),
            completion_tokens=estimate_tokens(text),
            estimated=True,
        )
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        prompt_tokens=int(usage["prompt_tokens"]),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cache_read_tokens=int(cached or 0),
    )
