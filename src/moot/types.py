"""Data every layer shares: messages, requests, completions, usage and events."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from moot.errors import ConfigError

__all__ = [
    "Completion",
    "Event",
    "FailureKind",
    "Message",
    "ModelFailure",
    "ModelSettings",
    "Outcome",
    "Request",
    "Spec",
    "Usage",
    "estimate_tokens",
    "parse_spec",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Message(_Frozen):
    role: Literal["system", "user", "assistant"]
    content: str


class Request(_Frozen):
    """One model call. `meta` carries the step id and alias for logs and scripted models;
    real providers never send it."""

    messages: tuple[Message, ...]
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    json_schema: dict[str, Any] | None = None
    timeout: float | None = None
    meta: dict[str, str] = Field(default_factory=dict)

    @property
    def prompt(self) -> str:
        """The last user message: what this call adds to the conversation."""
        for message in reversed(self.messages):
            if message.role == "user":
                return message.content
        return ""


class Usage(_Frozen):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    estimated: bool = False

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            estimated=self.estimated or other.estimated,
        )


class FailureKind(StrEnum):
    AUTH = "auth"
    RATE_LIMIT = "rate_limit"
    CONTEXT_LENGTH = "context_length"
    CONTENT_FILTER = "content_filter"
    TIMEOUT = "timeout"
    SERVER = "server"
    CONNECTION = "connection"
    BAD_RESPONSE = "bad_response"
    BAD_REQUEST = "bad_request"
    UNKNOWN = "unknown"

    @property
    def transient(self) -> bool:
        return self in _TRANSIENT


_TRANSIENT = frozenset(
    {FailureKind.RATE_LIMIT, FailureKind.TIMEOUT, FailureKind.SERVER, FailureKind.CONNECTION}
)


class ModelFailure(_Frozen):
    kind: FailureKind
    message: str
    retry_after: float | None = None

    @property
    def transient(self) -> bool:
        return self.kind.transient


class Completion(_Frozen):
    """What a model call produced. `status == "error"` carries a `failure` instead of text."""

    status: Literal["ok", "error"] = "ok"
    text: str = ""
    usage: Usage = Field(default_factory=Usage)
    cost: float | None = None  # USD; None means unknown
    latency: float = 0.0
    model: str = ""
    failure: ModelFailure | None = None
    attempts: int = 1

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @classmethod
    def error(cls, kind: FailureKind, message: str, **extra: Any) -> Completion:
        retry_after = extra.pop("retry_after", None)
        failure = ModelFailure(kind=kind, message=message, retry_after=retry_after)
        return cls(status="error", failure=failure, **extra)


class Event(BaseModel):
    """Something that happened in a session. Durable events are journal lines; others only
    feed the faces (live view, logs)."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    step: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    seq: int | None = None
    ts: float | None = None


class Outcome(_Frozen):
    """How a deliberation ended, in terms every protocol shares."""

    protocol: str
    status: Literal["consensus", "no_consensus", "failed"]
    consensus: bool
    how: str
    final_answer: str
    rounds: int
    disagreements: tuple[str, ...] = ()
    positions: dict[str, str] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)


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
    prices: dict[str, dict[str, float]] = field(default_factory=dict)  # the run config's [prices]


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
            f"model spec {text!r} is not of the form PROVIDER:MODEL (for example local:smollm2); "
            "`moot models` lists the providers"
        )
    return Spec(provider=provider.lower(), name=name)


def estimate_tokens(text: str) -> int:
    """A cheap, deterministic token estimate (about four characters a token)."""
    return (len(text) + 3) // 4
