"""The `Model` protocol, model specs and the provider registry.

A provider registers a factory by name; its module (and SDK) is imported only when a model of
that provider is created, so `moot --help` never pays for an SDK.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from moot.errors import ConfigError, ProviderMissing
from moot.types import Completion, Request

__all__ = [
    "Capabilities",
    "Model",
    "ModelSettings",
    "ProviderInfo",
    "Spec",
    "create_model",
    "parse_spec",
    "providers",
    "register_provider",
]


@dataclass(frozen=True)
class Capabilities:
    """What a backend really enforces. Protocols may rely on nothing else."""

    json_schema: bool = False
    seed: bool = False
    temperature: bool = True
    context_window: int = 128_000
    max_concurrency: int | None = None  # calls at once per connection key; None: no limit


@dataclass(frozen=True)
class ModelSettings:
    """Per-agent options from the config that a provider may use."""

    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    concurrency: int | None = None
    options: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Model(Protocol):
    spec: str
    capabilities: Capabilities

    def connection_key(self) -> str:
        """Calls sharing a key share one concurrency pool (one API host, one local file)."""
        ...

    async def complete(self, request: Request) -> Completion:
        """Run one call. Failures are returned as error completions, never raised."""
        ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class Spec:
    provider: str
    name: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}"


def parse_spec(text: str) -> Spec:
    """`provider:name`, where name may itself hold colons (`openai-compat:http://h/v1#m`)."""
    provider, sep, name = text.strip().partition(":")
    if not sep or not provider or not name:
        raise ConfigError(
            f"model spec {text!r} is not of the form PROVIDER:MODEL "
            f"(for example local:smollm2); known providers: {', '.join(sorted(_REGISTRY))}"
        )
    return Spec(provider=provider.lower(), name=name)


Factory = Callable[[Spec, ModelSettings], Model]


@dataclass(frozen=True)
class ProviderInfo:
    name: str
    module: str
    attribute: str
    extra: str | None
    requires: tuple[str, ...]
    example: str
    summary: str

    def installed(self) -> bool:
        return all(importlib.util.find_spec(mod) is not None for mod in self.requires)


_REGISTRY: dict[str, ProviderInfo] = {}


def register_provider(
    name: str,
    module: str,
    attribute: str,
    *,
    extra: str | None = None,
    requires: tuple[str, ...] = (),
    example: str = "",
    summary: str = "",
) -> None:
    """Register a provider whose factory lives at `module.attribute`, imported on first use."""
    _REGISTRY[name] = ProviderInfo(name, module, attribute, extra, requires, example, summary)


def providers() -> list[ProviderInfo]:
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]


def create_model(spec: str | Spec, settings: ModelSettings | None = None) -> Model:
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    info = _REGISTRY.get(parsed.provider)
    if info is None:
        raise ConfigError(
            f"unknown model provider {parsed.provider!r} in {str(parsed)!r}; "
            f"known providers: {', '.join(sorted(_REGISTRY))}"
        )
    if not info.installed():
        hint = f"pip install 'moot[{info.extra}]'" if info.extra else "reinstall moot"
        raise ProviderMissing(
            f"provider {info.name!r} needs {', '.join(info.requires)}, which is not installed: "
            f"run {hint}"
        )
    target: Any = importlib.import_module(info.module)
    for part in info.attribute.split("."):
        target = getattr(target, part)
    factory: Factory = target
    return factory(parsed, settings or ModelSettings())


register_provider(
    "local",
    "moot.models.local",
    "LocalModel",
    extra="local",
    requires=("llama_cpp",),
    example="local:smollm2  or  local:/path/to/model.gguf",
    summary="llama.cpp in-process on a GGUF file (embedded default: SmolLM2-135M-Instruct)",
)
register_provider(
    "scripted",
    "moot.models.scripted",
    "ScriptedModel.from_spec",
    example="scripted:replies.json  or  scripted:agent.py#name",
    summary="replies computed by a Python function or read from a file (tests, demos)",
)
