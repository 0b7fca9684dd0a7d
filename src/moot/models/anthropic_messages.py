"""`anthropic:MODEL`: the Messages API through the anthropic SDK (2.x).

The 2.x SDK speaks API version 2026-10-21, which removed `temperature`, `top_p` and `top_k`
(a request carrying one is refused, even at its default), so this provider sends no sampling
parameter and declares `temperature=False`. Structured output goes in
`output_config.format` as a JSON schema, and replies are still checked here. Usage counts
cache reads and writes, which Anthropic reports apart from `input_tokens`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from moot.models.base import Capabilities, ModelSettings, Spec
from moot.models.http import Api, SdkProvider
from moot.models.provider import ProviderError, Reply
from moot.models.schema import schema_problem
from moot.types import FailureKind, Message, Request, Usage

if TYPE_CHECKING:
    import anthropic

__all__ = ["AnthropicModel"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096  # the API requires a bound


class AnthropicModel(SdkProvider["anthropic.AsyncAnthropic"]):
    """The Messages API, its client built per event loop on the endpoint's shared pool."""

    sdk = "anthropic"

    def api(self, spec: Spec, settings: ModelSettings) -> Api:
        return Api(
            "anthropic",
            DEFAULT_BASE_URL,
            ("ANTHROPIC_API_KEY",),
            Capabilities(
                json_schema=True,
                seed=False,
                temperature=False,
                context_window=200_000,
                max_tokens=settings.max_tokens or DEFAULT_MAX_TOKENS,
            ),
        )

    def new_client(self) -> anthropic.AsyncAnthropic:
        import anthropic

        return anthropic.AsyncAnthropic(
            api_key=self._key,
            base_url=self.base_url,
            max_retries=0,  # the engine retries, and journals every attempt
            timeout=self.settings.timeout or self.default_timeout,
            default_headers=self.settings.headers or None,
            http_client=self._endpoint.client(),
        )

    async def send(self, request: Request, timeout: float) -> Reply:
        response = await self.client().messages.create(**self._params(request), timeout=timeout)
        return self._reply(response, request)

    def _params(self, request: Request) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens or self.settings.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": _turns(request.messages),
        }
        if system:
            params["system"] = system
        if request.json_schema is not None and self.capabilities.json_schema:
            params["output_config"] = {
                "format": {"type": "json_schema", "schema": request.json_schema}
            }
        return params

    def _reply(self, response: Any, request: Request) -> Reply:
        text = "".join(
            getattr(block, "text", "") for block in response.content if block.type == "text"
        )
        if response.stop_reason == "refusal":
            raise ProviderError(
                FailureKind.CONTENT_FILTER, "anthropic: the model refused to answer"
            )
        if response.stop_reason == "model_context_window_exceeded":
            raise ProviderError(
                FailureKind.CONTEXT_LENGTH,
                "anthropic: the conversation exceeds the model's context window",
            )
        if request.json_schema is not None and self.capabilities.json_schema:
            if schema_problem(text, request.json_schema) is not None:
                self.capabilities = msgspec.structs.replace(self.capabilities, json_schema=False)
        raw = response.usage
        cache_read = int(raw.cache_read_input_tokens or 0)
        cache_write = int(raw.cache_creation_input_tokens or 0)
        usage = Usage(
            prompt_tokens=int(raw.input_tokens) + cache_read + cache_write,
            completion_tokens=int(raw.output_tokens),
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
        )
        return Reply(text, usage, hit_max_tokens=response.stop_reason == "max_tokens")


def _turns(messages: tuple[Message, ...]) -> list[dict[str, str]]:
    """User and assistant turns, neighbours of one role joined (the API wants them to alternate)."""
    turns: list[dict[str, str]] = []
    for message in messages:
        if message.role == "system":
            continue
        if turns and turns[-1]["role"] == message.role:
            turns[-1]["content"] += "\n\n" + message.content
        else:
            turns.append({"role": message.role, "content": message.content})
    return turns
