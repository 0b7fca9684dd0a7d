"""`scripted`: a model whose replies a Python function computes or a file lists.

It scripts agents for tests and demos (agent B always disagrees, the judge says CONTINUE twice).
Spec forms:
    scripted:replies.json          a JSON list of replies, given in order
    scripted:replies.json#judge    the list under key "judge" of a JSON object
    scripted:agents.py             the function `reply(request)` of that file
    scripted:agents.py#stubborn    the function `stubborn(request)` of that file
    scripted:@name                 a function registered in this process with `register_script`
A function returns the reply text or a `Completion`; raising `ScriptedFailure` (or any
exception) yields an error completion, as a failing provider would.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from moot.errors import ConfigError
from moot.models.base import Capabilities, ModelSettings, Spec
from moot.models.provider import Provider, ProviderError
from moot.models.provider import Reply as ProviderReply
from moot.types import Completion, FailureKind, Request, Usage, estimate_tokens

__all__ = ["ReplyFn", "ScriptedFailure", "ScriptedModel", "register_script"]

Reply = str | Completion
ReplyFn = Callable[[Request], Reply | Awaitable[Reply]]


_SCRIPTS: dict[str, ReplyFn] = {}


def register_script(name: str, reply: ReplyFn) -> None:
    """Make `reply` available as the model spec `scripted:@name` in this process."""
    _SCRIPTS[name] = reply


class ScriptedFailure(Exception):
    """Raise from a reply function to make the call fail with a given kind."""

    def __init__(self, kind: FailureKind | str = FailureKind.SERVER, message: str = "") -> None:
        self.kind = FailureKind(kind)
        super().__init__(message or f"scripted {self.kind.value} failure")


class ScriptedModel(Provider):
    """No timeout guard of its own (a script's delays are what a test controls; the engine's
    guard still applies), no label in messages, and every reply costs nothing."""

    guards_timeout = False

    def __init__(
        self,
        reply: ReplyFn | Sequence[str],
        *,
        name: str = "scripted",
        latency: float = 0.0,
        capabilities: Capabilities | None = None,
    ) -> None:
        if callable(reply):
            self._fn: ReplyFn = reply
        else:
            replies = list(reply)
            counter = itertools.count()

            def from_list(request: Request) -> Reply:
                index = next(counter)
                if index >= len(replies):
                    raise ScriptedFailure(
                        FailureKind.BAD_RESPONSE, "the script has no more replies"
                    )
                return replies[index]

            self._fn = from_list
        super().__init__(
            f"scripted:{name}",
            ModelSettings(),
            capabilities or Capabilities(json_schema=False, seed=True),
            label="",
        )
        self.latency = latency
        self.calls: list[Request] = []

    @classmethod
    def from_spec(cls, spec: Spec, settings: ModelSettings) -> ScriptedModel:
        latency = float(settings.options.get("latency", 0.0))
        if spec.name.startswith("@"):
            fn = _SCRIPTS.get(spec.name[1:])
            if fn is None:
                raise ConfigError(f"no script registered as {spec.name[1:]!r} (spec {spec})")
            return cls(fn, name=spec.name, latency=latency)
        path_text, _, fragment = spec.name.partition("#")
        path = Path(path_text).expanduser()
        if not path.is_file():
            raise ConfigError(f"scripted model file {str(path)!r} does not exist (spec {spec})")
        model: ScriptedModel
        if path.suffix == ".py":
            model = cls(_load_function(path, fragment or "reply"), name=spec.name, latency=latency)
        else:
            model = cls(_load_replies(path, fragment), name=spec.name, latency=latency)
        model.spec = str(spec)
        return model

    def connection_key(self) -> str:
        return "scripted"

    def classify(self, exc: Exception) -> ProviderError:
        if isinstance(exc, ScriptedFailure):
            return ProviderError(exc.kind, str(exc))
        # a broken script is a failing model, not a crash
        return ProviderError(FailureKind.BAD_RESPONSE, f"{type(exc).__name__}: {exc}")

    def price(self, usage: Usage) -> float:
        return 0.0

    async def send(self, request: Request, timeout: float) -> ProviderReply | Completion:
        self.calls.append(request)
        if self.latency:
            await asyncio.sleep(self.latency)
        result = self._fn(request)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, Completion):
            return result
        text = str(result)
        usage = Usage(
            prompt_tokens=sum(estimate_tokens(m.content) for m in request.messages),
            completion_tokens=estimate_tokens(text),
            estimated=True,
        )
        return ProviderReply(text, usage)


def _load_function(path: Path, name: str) -> ReplyFn:
    module_spec = importlib.util.spec_from_file_location(f"moot_script_{path.stem}", path)
    if module_spec is None or module_spec.loader is None:
        raise ConfigError(f"cannot load scripted model file {str(path)!r}")
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ConfigError(f"scripted model file {str(path)!r} defines no function {name!r}")
    result: ReplyFn = fn
    return result


def _load_replies(path: Path, key: str) -> list[str]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"scripted model file {str(path)!r} is not valid JSON: {exc}") from exc
    if key:
        if not isinstance(data, dict) or key not in data:
            raise ConfigError(f"scripted model file {str(path)!r} has no key {key!r}")
        data = data[key]
    if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
        raise ConfigError(f"scripted model file {str(path)!r} must hold a list of strings")
    return list(data)
