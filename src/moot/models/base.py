"""The `Model` protocol, model specs, the provider registry and the call context.

`Model` is the type the engine uses. Providers implement it by subclassing `Provider`
(moot/models/provider.py), which writes the call's policy once; any object with these methods
will do.

A provider registers a factory by name; its module is imported only when a model of that
provider is created, so `moot --help` never pays for an SDK. `create_model` then calls the
model's `prepare()`, if it has one, which imports its SDK (moot/models/provider.py).

The call context is the one seam between a running call and the journal: the Session sets it
around `Model.complete`, and a provider that learns something it must not forget across a crash
(a remote agent's id, a CLI's version) journals it with `checkpoint(...)`; on resume the same
step sees what was recorded and carries on instead of starting over.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, ClassVar, Protocol, runtime_checkable

from msgspec import Struct

from moot.errors import ConfigError, ProviderMissing
from moot.types import Completion, ModelSettings, Request, Spec, parse_spec

__all__ = [
    "CALL_CONTEXT",
    "CallContext",
    "Capabilities",
    "Model",
    "ModelSettings",
    "ProviderInfo",
    "Spec",
    "call_context",
    "create_model",
    "endpoint",
    "parse_spec",
    "provider_info",
    "providers",
    "register_provider",
    "runs_free",
]


class Capabilities(Struct, frozen=True):
    """What a backend really enforces. Protocols may rely on nothing else."""

    json_schema: bool = False
    seed: bool = False
    temperature: bool = True
    context_window: int = 128_000
    max_concurrency: int | None = None  # calls at once per connection key; None: no limit
    # The most tokens a call writes when neither the call nor the config caps it (None: the
    # model's own limit, unknown here): what a projection counts its answers at.
    max_tokens: int | None = None
    # Answered by the user's coding agent through delegation files (models/inline.py): it keeps
    # its context between asks, so no judging role may use it.
    inline: bool = False


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


class CallContext(Struct, frozen=True):
    """Where a call runs: its step and agent, what earlier runs journaled for this agent, and
    how to journal more. `recorded` holds the data of every `checkpoint` event of the agent,
    oldest first, each with the `step` it was recorded at. Call from the event loop only."""

    step: str
    agent: str
    recorded: tuple[dict[str, Any], ...]
    checkpoint: Callable[[dict[str, Any]], None]
    warn: Callable[[str], None]  # journaled once per session and message
    cwd: str | None = None  # a code task's worktree: where a coding agent works
    read_only: bool = False  # cwd is only a place to run in (a judge's sandbox): change nothing
    folder: str | None = None  # the session folder (where an inline agent's delegations go)

    def for_step(self) -> list[dict[str, Any]]:
        return [item for item in self.recorded if item.get("step") == self.step]


CALL_CONTEXT: ContextVar[CallContext | None] = ContextVar("moot_call_context", default=None)


def call_context() -> CallContext | None:
    """The context of the call in progress, or None outside a Session (library use, doctor)."""
    return CALL_CONTEXT.get()


Factory = Callable[[Spec, ModelSettings], Model]


class ProviderInfo(Struct, frozen=True):
    """A provider in the registry: where its class lives and what it needs. An installed
    package offers one as a plugin (moot/plugins/) by naming an instance in its `moot.plugins`
    entry points."""

    plugin_kind: ClassVar[str] = "provider"
    name: str
    module: str
    attribute: str
    extra: str | None = None
    requires: tuple[str, ...] = ()
    example: str = ""
    summary: str = ""
    key_env: tuple[str, ...] = ()  # default variables holding the key, any one will do
    # Where its calls go when the config names no base_url (None: a spec may name it, as
    # openai-compat:URL#MODEL does, or it has no address).
    default_url: str | None = None
    free: bool = False  # it runs on this machine: its tokens cost nothing
    judge: bool = False  # a judge plugin's: its models take judge seats, never an agent's

    def installed(self) -> bool:
        try:
            return all(importlib.util.find_spec(mod) is not None for mod in self.requires)
        except (ImportError, ValueError):  # a parent package missing or half-installed
            return False

    def install_hint(self) -> str:
        """The command that adds this provider's extra, for how moot was installed: an
        editable checkout (`pip install -e`) gets the checkout's path, a package the name."""
        if not self.extra:
            return "reinstall moot"
        from moot.text.install import extra_install_hint  # importlib.metadata: only when said

        return extra_install_hint(self.extra)


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
    key_env: tuple[str, ...] = (),
    default_url: str | None = None,
    free: bool = False,
) -> None:
    """Register a provider whose factory lives at `module.attribute`, imported on first use."""
    _REGISTRY[name] = ProviderInfo(
        name, module, attribute, extra, requires, example, summary, key_env, default_url, free
    )


def endpoint(spec: Spec, base_url: str | None = None) -> str | None:
    """Where the calls of `spec` go: the configured `base_url`, else its provider's default,
    else the address the spec names itself (`openai-compat:URL#MODEL`); None when it has none
    (a model run in-process, a CLI)."""
    if base_url:
        return base_url
    info = provider_info(spec.provider)
    if info is not None and info.default_url:
        return info.default_url
    url, sep, _ = spec.name.rpartition("#")
    return url if sep and "://" in url else None


def runs_free(spec: Spec, base_url: str | None = None) -> bool:
    """Whether the tokens of `spec` cost nothing: a model run on this machine (the embedded
    model, a scripted one) or a server on it (a loopback address: Ollama, vLLM, LM Studio at
    their default ports). Runs and projections both price by this."""
    from moot.models.network_guard import is_loopback_url

    info = provider_info(spec.provider)
    if info is not None and info.free:
        return True
    url = endpoint(spec, base_url)
    return url is not None and is_loopback_url(url)


def provider_info(name: str) -> ProviderInfo | None:
    if name not in _REGISTRY:
        _plugin_providers()
    return _REGISTRY.get(name)


def providers() -> list[ProviderInfo]:
    _plugin_providers()
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]


def _plugin_providers() -> None:
    """Register the providers and judges installed packages offer (moot/plugins/), read on
    the first name the registry does not know; moot's own names are never replaced."""
    from moot import plugins

    for plugin in plugins.of_kind("provider", "judge"):
        info = plugin.value
        if isinstance(info, plugins.JudgePlugin):
            summary = f"judge: {info.summary}" if info.summary else "judge"
            info = ProviderInfo(
                info.name,
                info.module,
                info.attribute,
                example=info.example,
                summary=summary,
                judge=True,
            )
        if not isinstance(info, ProviderInfo):
            plugins.skip(plugin, f"is not a {plugins.CLASSES['provider']}")
        elif _REGISTRY.setdefault(info.name, info) != info:
            plugins.skip(plugin, f"moot already has a provider {info.name!r}")


def _remember_environment_keys() -> None:
    """Every provider's key variable set in the environment is a secret to mask, used by this
    session or not: a CLI agent runs with the user's environment and may print one."""
    import os

    from moot.models.keys import remember_secret

    for info in _REGISTRY.values():
        for name in info.key_env:
            remember_secret(os.environ.get(name, "").strip())


def create_model(
    spec: str | Spec, settings: ModelSettings | None = None, *, prepare: bool = True
) -> Model:
    """The model of `spec`, its settings checked as its provider checks them (ConfigError).
    `prepare=False` makes it only, to check a config: no warm-up starts (no connection)."""
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    info = provider_info(parsed.provider)
    if info is None:
        raise ConfigError(
            f"unknown model provider {parsed.provider!r} in {str(parsed)!r}; "
            f"known providers: {', '.join(sorted(_REGISTRY))}"
        )
    if not info.installed():
        raise ProviderMissing(
            f"provider {info.name!r} needs {', '.join(info.requires)}, which is not installed: "
            f"run {info.install_hint()}"
        )
    target: Any = importlib.import_module(info.module)
    for part in info.attribute.split("."):
        target = getattr(target, part)
    factory: Factory = target
    _remember_environment_keys()
    if settings is not None:  # a config's token in a header or URL, masked like a key
        from moot.models.keys import remember_config_secrets

        remember_config_secrets(settings.headers, settings.base_url)
    model = factory(parsed, settings or ModelSettings())
    # Its slow set-up now (an SDK import here, a certificate bundle in a worker thread), not
    # in its first call.
    warm = getattr(model, "prepare", None)
    if prepare and callable(warm):
        warm()
    return model


register_provider(
    "local",
    "moot.models.local",
    "LocalModel",
    extra="local",
    requires=("xllamacpp", "llguidance"),
    example="local:smollm2  or  local:/path/to/model.gguf",
    summary="llama.cpp in a worker process on a GGUF file (default: SmolLM2-135M-Instruct)",
    free=True,
)
register_provider(
    "llama",
    "moot.models.local",
    "LlamaModel",
    extra="llama",
    requires=("llama_cpp",),
    example="llama:smollm2  or  llama:/path/to/model.gguf",
    summary="llama.cpp (llama-cpp-python) in a worker process on a GGUF file",
    free=True,
)
register_provider(
    "scripted",
    "moot.models.scripted",
    "ScriptedModel.from_spec",
    example="scripted:replies.json  or  scripted:agent.py#name",
    summary="replies computed by a Python function or read from a file (tests, demos)",
    free=True,
)

# The OpenAI-compatible services, one class over httpx2 (no SDK): name, example, summary, the
# variables holding the key, and the default address.
_OPENAI_COMPAT: tuple[tuple[str, str, str, tuple[str, ...], str | None], ...] = (
    (
        "openai",
        "openai:gpt-5.4-mini",
        "OpenAI chat completions (usage, seed, strict JSON schema)",
        ("OPENAI_API_KEY",),
        "https://api.openai.com/v1",
    ),
    (
        "openai-compat",
        "openai-compat:http://127.0.0.1:8080/v1#qwen3",
        "any OpenAI-compatible server (llama.cpp, SGLang, TGI...): BASE_URL#MODEL",
        (),
        None,  # the spec names it
    ),
    (
        "ollama",
        "ollama:qwen3",
        "Ollama's OpenAI-compatible API (default http://127.0.0.1:11434/v1)",
        (),
        "http://127.0.0.1:11434/v1",
    ),
    (
        "vllm",
        "vllm:Qwen/Qwen3-8B",
        "a vLLM server (default http://127.0.0.1:8000/v1)",
        (),
        "http://127.0.0.1:8000/v1",
    ),
    (
        "lmstudio",
        "lmstudio:qwen3-8b",
        "LM Studio's local server (default http://127.0.0.1:1234/v1)",
        (),
        "http://127.0.0.1:1234/v1",
    ),
    (
        "openrouter",
        "openrouter:anthropic/claude-sonnet-4.6",
        "OpenRouter, many vendors behind one key",
        ("OPENROUTER_API_KEY",),
        "https://openrouter.ai/api/v1",
    ),
)
for _name, _example, _summary, _key_env, _url in _OPENAI_COMPAT:
    register_provider(
        _name,
        "moot.models.openai_chat",
        "OpenAIChatModel",
        extra="openai",
        requires=("httpx2",),
        example=_example,
        summary=_summary,
        key_env=_key_env,
        default_url=_url,
    )
register_provider(
    "anthropic",
    "moot.models.anthropic_messages",
    "AnthropicModel",
    extra="anthropic",
    requires=("anthropic",),
    example="anthropic:claude-sonnet-4-6",
    summary="Anthropic Messages API (usage with cache tokens, JSON schema output)",
    key_env=("ANTHROPIC_API_KEY",),
)
for _google in ("google", "gemini"):
    register_provider(
        _google,
        "moot.models.google_genai",
        "GoogleModel",
        extra="google",
        requires=("google.genai",),
        example=f"{_google}:gemini-2.5-flash",
        summary="Google Gemini through google-genai (response schemas)"
        + ("" if _google == "google" else "; alias of google"),
        key_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    )
register_provider(
    "cli",
    "moot.models.cli_agents",
    "CliModel",
    example="cli:claude  cli:codex  cli:gemini  cli:cursor-agent  cli:qwen  cli:/path/tool",
    summary="a coding agent's CLI in print mode, or any command (args with {{PROMPT}})",
)
register_provider(
    "inline",
    "moot.models.inline",
    "InlineModel.from_spec",
    example="inline:  or  inline:claude  (the name is a label)",
    summary="your coding agent answers through delegation files; moot pauses until it has",
    free=True,
)
register_provider(
    "cursor",
    "moot.models.cursor_cloud",
    "CursorModel",
    extra="cursor",
    requires=("httpx2",),
    example="cursor:claude-4-sonnet  (options.repository = GitHub URL)",
    summary="Cursor Cloud Agents working on a GitHub repository",
    key_env=("CURSOR_API_KEY",),
)
