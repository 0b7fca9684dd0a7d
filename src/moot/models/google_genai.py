"""`google:MODEL` (alias `gemini:MODEL`): Gemini through the google-genai SDK.

The key comes from GEMINI_API_KEY or GOOGLE_API_KEY. The SDK's own retries are switched off
(one attempt) so the engine sees and journals every failure. JSON schemas go as
`response_json_schema` with a JSON mime type; replies are still checked here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from moot.models.base import Capabilities, ModelSettings, Spec
from moot.models.http import Api, SdkProvider
from moot.models.provider import ProviderError, Reply
from moot.models.schema import schema_problem
from moot.types import FailureKind, Request, Usage

if TYPE_CHECKING:
    from google import genai
    from google.genai import types as gtypes

__all__ = ["GoogleModel"]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
_FILTERED = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION"}


class GoogleModel(SdkProvider["genai.Client"]):
    """Gemini's generate_content, its client built per event loop on the endpoint's shared pool."""

    sdk = "google.genai"

    def api(self, spec: Spec, settings: ModelSettings) -> Api:
        return Api(
            "google",
            DEFAULT_BASE_URL,
            ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            Capabilities(json_schema=True, seed=True, temperature=True, context_window=1_000_000),
        )

    def new_client(self) -> genai.Client:
        from google import genai
        from google.genai import types as gtypes

        options = gtypes.HttpOptions(
            base_url=self.settings.base_url or None,
            headers=self.settings.headers or None,
            retry_options=gtypes.HttpRetryOptions(attempts=1),
            httpx_async_client=self._endpoint.client(),
        )
        return genai.Client(api_key=self._key, http_options=options)

    async def send(self, request: Request, timeout: float) -> Reply:
        response = await self.client().aio.models.generate_content(
            model=self.model, contents=_contents(request), config=self._config(request, timeout)
        )
        return self._reply(response, request)

    def _config(self, request: Request, timeout: float) -> gtypes.GenerateContentConfig:
        from google.genai import types as gtypes

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

    def _reply(self, response: Any, request: Request) -> Reply:
        feedback = getattr(response, "prompt_feedback", None)
        if feedback is not None and getattr(feedback, "block_reason", None):
            raise ProviderError(
                FailureKind.CONTENT_FILTER,
                f"google: the prompt was blocked ({_name(feedback.block_reason)})",
            )
        candidates = response.candidates or []
        if not candidates:
            raise ProviderError(FailureKind.BAD_RESPONSE, "google: the reply has no candidates")
        candidate = candidates[0]
        reason = _name(candidate.finish_reason)
        if reason in _FILTERED:
            raise ProviderError(
                FailureKind.CONTENT_FILTER, f"google: the reply was stopped ({reason})"
            )
        parts = candidate.content.parts if candidate.content and candidate.content.parts else []
        text = "".join(part.text for part in parts if part.text and not part.thought)
        if request.json_schema is not None and self.capabilities.json_schema:
            if schema_problem(text, request.json_schema) is not None:
                self.capabilities = msgspec.structs.replace(self.capabilities, json_schema=False)
        meta = response.usage_metadata
        usage = Usage(
            prompt_tokens=int(getattr(meta, "prompt_token_count", 0) or 0),
            completion_tokens=int(getattr(meta, "candidates_token_count", 0) or 0)
            + int(getattr(meta, "thoughts_token_count", 0) or 0),  # thinking is billed as output
            cache_read_tokens=int(getattr(meta, "cached_content_token_count", 0) or 0),
        )
        return Reply(text, usage, hit_max_tokens=reason == "MAX_TOKENS")


def _contents(request: Request) -> list[gtypes.Content]:
    from google.genai import types as gtypes

    return [
        gtypes.Content(
            role="model" if m.role == "assistant" else "user", parts=[gtypes.Part(text=m.content)]
        )
        for m in request.messages
        if m.role != "system"
    ]


def _name(value: Any) -> str:
    return str(getattr(value, "name", value) or "")
