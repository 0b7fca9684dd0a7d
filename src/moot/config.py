"""Run configuration: pydantic models (unknown keys refused), loaded from TOML, JSON or YAML."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from moot.errors import ConfigError
from moot.types import ModelSettings, parse_spec

__all__ = [
    "DEFAULT_MODEL",
    "AgentConfig",
    "ArenaOptions",
    "CourtOptions",
    "EngineConfig",
    "Limits",
    "RunConfig",
    "check_config",
    "format_validation_error",
    "load_config",
    "path_problems",
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
    system_prompt: str | None = Field(
        default=None,
        max_length=4000,
        description="role description put in this participant's system prompt (court)",
    )
    _prices: dict[str, dict[str, float]] = PrivateAttr(default_factory=dict)  # RunConfig's

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
            prices=dict(self._prices),
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


class CourtOptions(_Strict):
    """The court (seed 002 DebateConfig). The seed's timeouts, retries, concurrency and total
    limits are `limits` and `engine` (see COURT_DEFAULTS); the agents are `agents`."""

    topic: str | None = Field(
        default=None, min_length=1, max_length=1000, description="the task when none is given"
    )
    initial_query: str | None = Field(default=None, max_length=2000)
    judge_panel_enabled: bool = True
    judges: list[AgentConfig] | None = Field(
        default=None,
        max_length=15,
        description="judge models; unset: one judge per agent model, at least 3",
    )
    max_agent_rounds: int = Field(default=4, ge=1, le=10)
    max_judge_rounds: int = Field(default=3, ge=1, le=5)
    consensus_threshold: float = Field(default=0.67, ge=0.5, le=1.0)
    judge_consensus_threshold: float = Field(default=0.6, ge=0.5, le=1.0)
    judge_min_confidence: float = Field(default=0.7, ge=0.0, le=1.0)
    judge_positions_scope: Literal["all_rounds", "last_round"] = "all_rounds"
    context_topology: Literal["full_history", "last_round", "last_round_with_self"] = (
        "last_round_with_self"
    )
    checkpoint_dir: str | None = Field(
        default=None, description="plays MOOT_HOME for this run: sessions go to DIR/sessions"
    )
    round_timeout: float = Field(default=300.0, ge=10, le=1800, description="seconds a round")
    max_tokens_per_response: int = Field(default=2048, ge=256, le=16384)
    max_context_tokens: int = Field(default=12_000, ge=1000, le=128_000)
    deterministic_mode: bool = Field(
        default=False, description="temperature 0, no retries, no JSON repair, no re-ask"
    )
    allow_external_paths: bool = Field(
        default=False, description="allow files named in the config outside the working folder"
    )

    @field_validator("judges")
    @classmethod
    def _panel_size(
        cls, value: list[AgentConfig] | None, info: ValidationInfo
    ) -> list[AgentConfig] | None:
        if value is not None and info.data.get("judge_panel_enabled", True) and len(value) < 3:
            raise ValueError(
                f"the judge panel needs at least 3 judges when enabled ({len(value)} given); "
                "add judges or set judge_panel_enabled = false"
            )
        return value

    def judge_configs(self, agents: list[AgentConfig]) -> list[AgentConfig]:
        """The panel: the configured judges, else the agents' models (cycled to 3)."""
        if not self.judge_panel_enabled:
            return []
        if self.judges is not None:
            return list(self.judges)
        count = max(3, len(agents))
        return [AgentConfig(model=agents[i % len(agents)].model) for i in range(count)]

    def participant(self, agent: AgentConfig, *, judge: bool) -> AgentConfig:
        """`agent` as the court calls it: the seed's temperatures (0.7 agents, 0.3 judges)
        unless set, 0 in deterministic mode; `max_tokens_per_response` unless set."""
        if self.deterministic_mode:
            temperature: float | None = 0.0
        elif agent.temperature is not None:
            temperature = agent.temperature
        else:
            temperature = 0.3 if judge else 0.7
        return agent.model_copy(
            update={
                "temperature": temperature,
                "max_tokens": agent.max_tokens or self.max_tokens_per_response,
            }
        )


# The seed's defaults for the settings the court shares with other protocols, applied to
# `limits` and `engine` when a court config leaves them out (seed section 4).
COURT_DEFAULTS: dict[str, dict[str, Any]] = {
    "limits": {"call_timeout": 120.0, "timeout": 1200.0, "max_tokens": 200_000, "max_cost": 25.0},
    "engine": {"attempts": 3, "backoff_initial": 1.0, "backoff_max": 8.0, "concurrency": 4},
}


def _default_agents() -> list[AgentConfig]:
    return [AgentConfig(model=DEFAULT_MODEL) for _ in range(3)]


class RunConfig(_Strict):
    protocol: Literal["arena", "court"] = "arena"
    agents: list[AgentConfig] = Field(default_factory=_default_agents, min_length=1)
    limits: Limits = Field(default_factory=Limits)
    engine: EngineConfig = Field(default_factory=EngineConfig)
    arena: ArenaOptions = Field(default_factory=ArenaOptions)
    court: CourtOptions = Field(default_factory=CourtOptions)
    seed: int | None = None
    prices: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description='USD per million tokens by "provider:model" (input, output, cache_read, '
        "cache_write); overrides the bundled table and $MOOT_HOME/prices.toml",
    )

    @model_validator(mode="after")
    def _share_prices(self) -> RunConfig:
        for agent in self.agents:  # providers see them through AgentConfig.settings()
            agent._prices = self.prices
        return self

    @model_validator(mode="before")
    @classmethod
    def _court_defaults(cls, data: Any) -> Any:
        # Only raw input (dicts); on attribute assignment the sections are already models.
        if not isinstance(data, dict) or data.get("protocol") != "court":
            return data
        data = dict(data)
        for section, defaults in COURT_DEFAULTS.items():
            given = data.get(section, {})
            if isinstance(given, dict):
                data[section] = {**defaults, **given}
        court = data.get("court")
        if isinstance(court, dict) and court.get("deterministic_mode") is True:
            if isinstance(data["engine"], dict):
                data["engine"] = {**data["engine"], "attempts": 1}  # no retries
        return data

    @field_validator("agents")
    @classmethod
    def _court_agents(cls, value: list[AgentConfig], info: ValidationInfo) -> list[AgentConfig]:
        if info.data.get("protocol") == "court" and not 2 <= len(value) <= 10:
            raise ValueError(f"the court needs 2 to 10 agents ({len(value)} given)")
        return value


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


def _spec_file(spec: Any) -> str | None:
    """The file a model spec names, if any: `scripted:FILE[#fn]`, `local:PATH.gguf`."""
    if not isinstance(spec, str):
        return None
    provider, _, name = spec.strip().partition(":")
    if provider == "scripted" and name and not name.startswith("@"):
        return name.partition("#")[0]
    if provider == "local" and (name.endswith(".gguf") or "/" in name or "\\" in name):
        return name
    return None


def path_problems(data: dict[str, Any], cwd: Path) -> list[str]:
    """Court configs may name files only inside `cwd` unless court.allow_external_paths
    (seed section 9): model files of agents and judges, and court.checkpoint_dir."""
    court = data.get("court")
    court = court if isinstance(court, dict) else {}
    if data.get("protocol") != "court" or court.get("allow_external_paths") is True:
        return []
    named: list[tuple[str, Any]] = []
    for section, items in (("agents", data.get("agents")), ("court.judges", court.get("judges"))):
        for index, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict):
                named.append((f"{section}.{index}.model", _spec_file(item.get("model"))))
    named.append(("court.checkpoint_dir", court.get("checkpoint_dir")))
    root = cwd.resolve()
    problems = []
    for where, value in named:
        if not isinstance(value, str) or not value:
            continue
        resolved = (root / Path(value).expanduser()).resolve()
        if not resolved.is_relative_to(root):
            problems.append(
                f"{where}: {value!r} is outside the working folder {root}; move it inside, or "
                "set court.allow_external_paths = true"
            )
    return problems


def check_config(
    path: Path | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    cwd: Path | None = None,
) -> tuple[RunConfig | None, list[str]]:
    """Every problem of a config at once, each as `dotted.path: message`; the config if none.
    A file that cannot be read or parsed raises `ConfigError`."""
    data: dict[str, Any] = _read_file(path) if path else {}
    for dotted, value in (overrides or {}).items():
        target = data
        *parents, leaf = dotted.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    problems = path_problems(data, cwd or Path.cwd())
    try:
        config = RunConfig.model_validate(data)
    except ValidationError as exc:
        problems = format_validation_error(exc, "").splitlines()[1:] + problems
        return None, [line.strip() for line in problems]
    return (None if problems else config), problems


def load_config(path: Path | None = None, overrides: dict[str, Any] | None = None) -> RunConfig:
    """Read a config file (optional), apply command-line overrides, validate everything."""
    config, problems = check_config(path, overrides)
    if config is None:
        source = str(path) if path else "options"
        listed = "\n".join(f"  {line}" for line in problems)
        raise ConfigError(f"{source} has {len(problems)} problem(s):\n{listed}")
    return config
