"""`google:MODEL` (alias `gemini:MODEL`): Gemini through the google-genai SDK.

The key comes from GEMINI_API_KEY or GOOGLE_API_KEY. The SDK's own retries are switched off
(one attempt) so the engine sees and journals every failure. JSON schemas go as
`response_json_schema` with a JSON mime type; replies are still checked here.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import httpx2
from google import genai
from google.genai import types as gtypes

from moot.models.base import Capabilities, ModelSettings, Spec
from moot.models.failures import failure, guard_network, guarded_call, read_key
from moot.models.pricing import Pricer
from moot.models.schema import schema_problem
from moot.types import Completion, FailureKind, Request, Usage

__all__ = ["GoogleModel"]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
DEFAULT_TIMEOUT = 300.0
_FILTERED = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION"}


class GoogleModel:
    def __init__(
        self,
        spec: Spec,
        settings: ModelSettings,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        base_url = (settings.base_url or DEFAULT_BASE_URL).rstrip("/")
        guard_network(base_url, provider="google", injected=transport is not None)
        key = read_key(settings, ("GEMINI_API_KEY", "GOOGLE_API_KEY"), provider="google")
        self.spec = str(spec)
        self.model = spec.name
        self.base_url = base_url
        self.settings = settings
        self.capabilities = Capabilities(
            json_schema=True,
            seed=True,
            temperature=True,
            context_window=int(settings.options.get("context_window", 1_000_000)),
            max_concurrency=settings.concurrency,
        )
        options = gtypes.HttpOptions(
            base_url=settings.base_url or None,
            headers=settings.headers or None,
            retry_options=gtypes.HttpRetryOptions(attempts=1),
            httpx_async_client=httpx2.AsyncClient(transport=transport) if transport else None,
        )
        self._client = genai.Client(api_key=key, http_options=options)
        self.pricer = Pricer(self.spec, [f"google:{spec.name}"], settings)

    def connection_key(self) -> str:
        return f"google:{self.base_url}"

    async def complete(self, request: Request) -> Completion:
        started = time.perf_counter()
        timeout = request.timeout or self.settings.timeout or DEFAULT_TIMEOUT
        return await guarded_call(
            self._generate(request, timeout, started),
            label="google",
            model=self.spec,
            timeout=timeout,
            started=started,
        )

    async def _generate(self, request: Request, timeout: float, started: float) -> Completion:
        response = await self._client.aio.models.generate_content(
            model=self.model, contents=_contents(request), config=self._config(request, timeout)
        )
        return self._completion(response, request, started)

    def _config(self, request: Request, timeout: float) -> gtypes.GenerateContentConfig:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        temperature = request.temperature
        if temperature is None:
            temperature = self.settings.temperature
        config: dict[str, Any] = {
            "system_instruction": system or None,
            "temperature": temperature,
            "max_output_tokens": request.max_tokens or self.settings.max_tokens,
            "seed": request.seed,
            "http_options": gtypes.HttpOptions(timeout=int(timeout * 1000)),
        }
        if request.json_schema is not None and self.capabilities.json_schema:
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = request.json_schema
        return gtypes.GenerateContentConfig(**config)

    def _completion(self, response: Any, request: Request, started: float) -> Completion:
        latency = time.perf_counter() - started
        feedback = getattr(response, "prompt_feedback", None)
        if feedback is not None and getattr(feedback, "block_reason", None):
            return failure(
                FailureKind.CONTENT_FILTER,
                f"google: the prompt was blocked ({_name(feedback.block_reason)})",
                model=self.spec,
                latency=latency,
            )
        candidates = response.candidates or []
        if not candidates:
            return failure(
                FailureKind.BAD_RESPONSE,
                "google: the reply has no candidates",
                model=self.spec,
                latency=latency,
            )
        candidate = candidates[0]
        reason = _name(candidate.finish_reason)
        if reason in _FILTERED:
            return failure(
                FailureKind.CONTENT_FILTER,
                f"google: the reply was stopped ({reason})",
                model=self.spec,
                latency=latency,
            )
        parts = candidate.content.parts if candidate.content and candidate.content.parts else []
        text = "".join(part.text for part in parts if part.text and not part.thought)
        if request.json_schema is not None and self.capabilities.json_schema:
            if schema_problem(text, request.json_schema) is not None:
                self.capabilities = dataclasses.replace(self.capabilities, json_schema=False)
        meta = response.usage_metadata
        usage = Usage(
            prompt_tokens=int(getattr(meta, "prompt_token_count", 0) or 0),
            completion_tokens=int(getattr(meta, "candidates_token_count", 0) or 0)
            + int(getattr(meta, "thoughts_token_count", 0) or 0),  # thinking is billed as output
            cache_read_tokens=int(getattr(meta, "cached_content_token_count", 0) or 0),
        )
        return Completion(
            text=text, usage=usage, cost=self.pricer.cost(usage), latency=latency, model=self.spec
        )

    async def aclose(self) -> None:
        await self._client.aio.aclose()


def _contents(request: Request) -> list[gtypes.Content]:
    return [
        gtypes.Content(
            role="model" if m.role == "assistant" else "user", parts=[gtypes.Part(text=m.content)]
        )
        for m in request.messages
        if m.role != "system"
    ]


def _name(value: Any) -> str:
    return str(getattr(value, "name", value) or "")
