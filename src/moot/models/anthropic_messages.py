"""`anthropic:MODEL`: the Messages API through the anthropic SDK (2.x).

The 2.x SDK speaks API version 2026-10-21, which removed `temperature`, `top_p` and `top_k`
(a request carrying one is refused, even at its default), so this provider sends no sampling
parameter and declares `temperature=False`. Structured output goes in
`output_config.format` as a JSON schema, and replies are still checked here. Usage counts
cache reads and writes, which Anthropic reports apart from `input_tokens`.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import anthropic
import httpx2

from moot.models.base import Capabilities, ModelSettings, Spec
from moot.models.failures import failure, guard_network, guarded_call, read_key
from moot.models.pricing import Pricer
from moot.models.schema import schema_problem
from moot.types import Completion, FailureKind, Message, Request, Usage

__all__ = ["AnthropicModel"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096  # the API requires a bound
DEFAULT_TIMEOUT = 300.0


class AnthropicModel:
    def __init__(
        self,
        spec: Spec,
        settings: ModelSettings,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        base_url = (settings.base_url or DEFAULT_BASE_URL).rstrip("/")
        guard_network(base_url, provider="anthropic", injected=transport is not None)
        key = read_key(settings, ("ANTHROPIC_API_KEY",), provider="anthropic")
        self.spec = str(spec)
        self.model = spec.name
        self.base_url = base_url
        self.settings = settings
        self.capabilities = Capabilities(
            json_schema=True,
            seed=False,
            temperature=False,
            context_window=int(settings.options.get("context_window", 200_000)),
            max_concurrency=settings.concurrency,
        )
        self._client = anthropic.AsyncAnthropic(
            api_key=key,
            base_url=base_url,
            max_retries=0,  # the engine retries, and journals every attempt
            timeout=settings.timeout or DEFAULT_TIMEOUT,
            default_headers=settings.headers or None,
            http_client=httpx2.AsyncClient(transport=transport) if transport else None,
        )
        self.pricer = Pricer(self.spec, [f"anthropic:{spec.name}"], settings)

    def connection_key(self) -> str:
        return f"anthropic:{self.base_url}"

    async def complete(self, request: Request) -> Completion:
        started = time.perf_counter()
        timeout = request.timeout or self.settings.timeout or DEFAULT_TIMEOUT
        return await guarded_call(
            self._create(request, timeout, started),
            label="anthropic",
            model=self.spec,
            timeout=timeout,
            started=started,
        )

    async def _create(self, request: Request, timeout: float, started: float) -> Completion:
        response = await self._client.messages.create(**self._params(request), timeout=timeout)
        return self._completion(response, request, started)

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

    def _completion(self, response: Any, request: Request, started: float) -> Completion:
        latency = time.perf_counter() - started
        text = "".join(
            getattr(block, "text", "") for block in response.content if block.type == "text"
        )
        if response.stop_reason == "refusal":
            return failure(
                FailureKind.CONTENT_FILTER,
                "anthropic: the model refused to answer",
                model=self.spec,
                latency=latency,
            )
        if response.stop_reason == "model_context_window_exceeded":
            return failure(
                FailureKind.CONTEXT_LENGTH,
                "anthropic: the conversation exceeds the model's context window",
                model=self.spec,
                latency=latency,
            )
        if request.json_schema is not None and self.capabilities.json_schema:
            if schema_problem(text, request.json_schema) is not None:
                self.capabilities = dataclasses.replace(self.capabilities, json_schema=False)
        raw = response.usage
        cache_read = int(raw.cache_read_input_tokens or 0)
        cache_write = int(raw.cache_creation_input_tokens or 0)
        usage = Usage(
            prompt_tokens=int(raw.input_tokens) + cache_read + cache_write,
            completion_tokens=int(raw.output_tokens),
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
        )
        return Completion(
            text=text, usage=usage, cost=self.pricer.cost(usage), latency=latency, model=self.spec
        )

    async def aclose(self) -> None:
        await self._client.close()


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
