"""Run configuration: pydantic models (unknown keys refused), loaded from TOML, JSON or YAML."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from moot.errors import ConfigError
from moot.models.base import ModelSettings, parse_spec

__all__ = [
    "DEFAULT_MODEL",
    "AgentConfig",
    "ArenaOptions",
    "EngineConfig",
    "Limits",
    "RunConfig",
    "format_validation_error",
    "load_config",
]

DEFAULT_MODEL = "local:smollm2"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class AgentConfig(_Strict):
    """One participant: a model spec and how to call it."""

    model: str
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    timeout: float | None = Field(default=None, gt=0)
    base_url: str | None = None
    api_key_env: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    concurrency: int | None = Field(default=None, gt=0)
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("model")
    @classmethod
    def _spec(cls, value: str) -> str:
        try:
            parse_spec(value)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return value

    def settings(self) -> ModelSettings:
        return ModelSettings(
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            timeout=self.timeout,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            headers=dict(self.headers),
            concurrency=self.concurrency,
            options=dict(self.options),
        )


class Limits(_Strict):
    """Budgets. Reaching one pauses the session (exit code 3); `moot resume` continues."""

    max_tokens: int | None = Field(default=None, gt=0, description="tokens in the session")
    max_cost: float | None = Field(default=None, gt=0, description="USD in the session")
    timeout: float | None = Field(default=None, gt=0, description="active seconds in the session")
    call_timeout: float = Field(default=300.0, gt=0, description="seconds for one model call")


class EngineConfig(_Strict):
    concurrency: int = Field(default=8, ge=1, le=256, description="model calls at once")
    attempts: int = Field(default=3, ge=1, le=20, description="tries per call, first included")
    backoff_initial: float = Field(default=1.0, ge=0)
    backoff_max: float = Field(default=30.0, ge=0)
    shell_timeout: float = Field(default=600.0, gt=0, description="seconds per verify command")


class ArenaOptions(_Strict):
    max_rounds: int = Field(default=3, ge=1, le=50)
    consensus_score: int = Field(default=8, ge=1, le=10)
    context_budget_tokens: int = Field(
        default=50_000, ge=500, description="past this estimate, later rounds start fresh"
    )
    max_quote_chars: int = Field(default=12_000, ge=200, description="per quoted agent text")
    verify_commands: list[str] = Field(default_factory=list)
    reask_on_bad_format: bool = True


def _default_agents() -> list[AgentConfig]:
    return [AgentConfig(model=DEFAULT_MODEL) for _ in range(3)]


class RunConfig(_Strict):
    protocol: Literal["arena"] = "arena"
    agents: list[AgentConfig] = Field(default_factory=_default_agents, min_length=1)
    limits: Limits = Field(default_factory=Limits)
    engine: EngineConfig = Field(default_factory=EngineConfig)
    arena: ArenaOptions = Field(default_factory=ArenaOptions)
    seed: int | None = None


def format_validation_error(error: ValidationError, source: str) -> str:
    lines = [f"{source} has {error.error_count()} problem(s):"]
    for item in error.errors():
        path = ".".join(str(part) for part in item["loc"]) or "(top level)"
        lines.append(f"  {path}: {item['msg']}")
    return "\n".join(lines)


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {str(path)!r}: {exc.strerror}") from None
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            data: Any = tomllib.loads(text)
        elif suffix == ".json":
            data = json.loads(text)
        elif suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            raise ConfigError(f"config file {str(path)!r} must end in .toml, .json, .yaml or .yml")
    except ConfigError:
        raise
    except Exception as exc:  # each parser has its own error type
        raise ConfigError(f"config file {str(path)!r} cannot be parsed: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r} must hold a table/object at the top")
    return data


def load_config(path: Path | None = None, overrides: dict[str, Any] | None = None) -> RunConfig:
    """Read a config file (optional), apply command-line overrides, validate everything."""
    data: dict[str, Any] = _read_file(path) if path else {}
    for dotted, value in (overrides or {}).items():
        target = data
        *parents, leaf = dotted.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, str(path) if path else "options")) from None
