"""Run configuration: pydantic models (unknown keys refused), loaded from TOML, JSON or YAML."""

import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from moot import lazy
from moot.errors import ConfigError
from moot.text import bound_problem, closest, plural
from moot.types import ModelSettings, parse_spec

__all__ = [
    "DEFAULT_MODEL",
    "AgentConfig",
    "CacheSettings",
    "CodeSettings",
    "EngineConfig",
    "Limits",
    "RoleModel",
    "RunConfig",
    "Section",
    "SynthesisSettings",
    "check_task",
    "format_validation_error",
    "problem_lines",
    "read_config_file",
]

DEFAULT_MODEL = "local:smollm2"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


ENV_REFERENCE = lazy.pattern(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _from_env(value: str, what: str) -> str:
    """`value` with each `${NAME}` replaced by that environment variable; a `ConfigError`
    naming `what` and the variable when it is not set."""

    def read(match: re.Match[str]) -> str:
        name = match.group(1)
        found = os.environ.get(name)
        if found is None:
            raise ConfigError(
                f"the agent's {what} reads ${{{name}}} from the environment, and {name} is "
                "not set: export it (moot resume needs it too)"
            )
        return found

    return ENV_REFERENCE.sub(read, value)


class AgentConfig(_Strict):
    """One participant: a model spec and how to call it."""

    model: str
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    timeout: float | None = Field(default=None, gt=0)
    base_url: str | None = None
    api_key_env: str | None = None
    headers: dict[str, str] = {}
    concurrency: int | None = Field(default=None, gt=0)
    options: dict[str, Any] = {}
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
        """How a provider calls: `${NAME}` in a header or base_url read from the environment
        (the config, and so the session's files, keep the reference, not the secret)."""
        return ModelSettings(
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            timeout=self.timeout,
            base_url=_from_env(self.base_url, "base_url") if self.base_url else None,
            api_key_env=self.api_key_env,
            headers={k: _from_env(v, f"header {k!r}") for k, v in self.headers.items()},
            concurrency=self.concurrency,
            options=dict(self.options),
            prices=dict(self._prices),
        )


def _model_table(value: Any) -> Any:
    """`chairman = "openai:gpt-5.2"` is the table `{model = "openai:gpt-5.2"}`."""
    return {"model": value} if isinstance(value, str) else value


# The model of a role of its own (a chairman, an aggregator): a spec, or a table like an agent's.
RoleModel = Annotated[AgentConfig | None, BeforeValidator(_model_table)]


class Limits(_Strict):
    """Budgets. Reaching one pauses the session (exit code 3); `moot resume` continues."""

    max_tokens: int | None = Field(default=None, gt=0, description="tokens in the session")
    max_cost: float | None = Field(default=None, gt=0, description="USD in the session")
    timeout: float | None = Field(default=None, gt=0, description="active seconds in the session")
    call_timeout: float = Field(default=300.0, gt=0, description="seconds for one model call")


class EngineConfig(_Strict):
    """How calls are made: concurrency, the retry policy, and the size caps on what goes in
    (the task) and what comes back (a reply)."""

    # 32: every ask of a phase starts at once for up to 32 agents; one endpoint is kept from a
    # flood by its shared connection pool (moot/models/http.py) and by Retry-After.
    concurrency: int = Field(default=32, ge=1, le=256, description="model calls at once")
    attempts: int = Field(default=3, ge=1, le=100, description="tries per call, first included")
    backoff_initial: float = Field(default=1.0, ge=0)
    backoff_max: float = Field(default=30.0, ge=0)
    retry_max_wait: float = Field(
        default=120.0,
        ge=0,
        description="seconds of waiting between the tries of one call, in total; a retry "
        "whose Retry-After does not fit is not made (raise with attempts to ride out outages)",
    )
    shell_timeout: float = Field(default=600.0, gt=0, description="seconds per verify command")
    max_reply_bytes: int = Field(
        default=4_000_000,
        ge=1000,
        description="a longer reply is cut to this many UTF-8 bytes and marked truncated",
    )
    max_task_bytes: int = Field(
        default=2_000_000, ge=1, description="a longer task is refused before anything runs"
    )


_CACHE_STORES = ("sqlite", "sqlite:", "redis://", "rediss://")


class CacheSettings(_Strict):
    """The response cache (`--cache`, or a `[cache]` table): a request asked before is answered
    from the store without a call (moot/engine/cache.py)."""

    store: str = Field(
        default="sqlite",
        description="sqlite (cache.sqlite under MOOT_HOME), sqlite:PATH, or redis://HOST:PORT/DB",
    )
    ttl: float = Field(default=7 * 24 * 3600.0, gt=0, description="seconds an entry lives")
    allow_sampled: bool = Field(
        default=False,
        description="also serve requests sampled above temperature 0 without a seed",
    )

    @field_validator("store")
    @classmethod
    def _store(cls, value: str) -> str:
        if not value.strip().startswith(_CACHE_STORES):
            raise ValueError(
                f"{value!r} is not a cache store; use sqlite, sqlite:PATH or redis://HOST:PORT/DB"
            )
        return value.strip()


class SynthesisSettings(_Strict):
    """A chairman's final answer after the outcome (`--synthesize`, or a `[synthesis]` table),
    written from the picked answer and what the judges, critics or losing sides said should
    change; moot keeps it only where it keeps the agreed answer (protocols/synthesis.py)."""

    enabled: bool | None = Field(
        default=None,
        description="ask a chairman for the final answer; unset: the protocol's default (on "
        "for a protocol whose own last stage is a chairman, such as council; off otherwise)",
    )
    chairman: RoleModel = Field(
        default=None,
        description="the model that writes it: a model spec, or a table like an agent's; "
        "unset: the model of the agent whose answer was picked",
    )


class CodeSettings(_Strict):
    """A code task (`--repo`, or a `[code]` table): every agent works in its own git worktree
    of `repo`, and its answer is a change to the code (moot/code/workspace.py). Any protocol."""

    repo: str = Field(min_length=1, description="the git repository (any folder inside it)")
    context: list[str] = Field(
        default=[],
        description="globs of files API models see whole (--context); none: a file listing",
    )
    context_budget_tokens: int = Field(default=20_000, ge=100, description="for those files")
    verify_commands: list[str] = Field(
        default=[], description="shell commands run in each worktree after a change"
    )
    verify_timeout: float = Field(default=600.0, gt=0, description="seconds per verify command")
    output_tail_chars: int = Field(
        default=4000, ge=200, description="characters of a verify command's output kept as evidence"
    )
    worktree_root: str | None = Field(
        default=None, description="where worktrees go (default: the session folder's worktrees/)"
    )


def _default_agents() -> list[AgentConfig]:
    return [AgentConfig(model=DEFAULT_MODEL) for _ in range(3)]


class Section(_Strict):
    """Base of a protocol's options: the config section named after the protocol
    (`[arena]`, `[court]`). Each protocol's folder defines its own (protocols/<name>/options.py);
    this module knows none of them."""


class RunConfig(_Strict):
    """What every run has: the protocol's name, agents, limits, engine settings, seed and
    prices. Protocol sections (`[arena]`, `[court]`, ...) are kept as given and validated by
    the protocol that runs (`moot.protocols.resolve`), so this module names no protocol."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    protocol: str = Field(default="arena", min_length=1, description="the deliberation protocol")
    agents: list[AgentConfig] = Field(default_factory=_default_agents, min_length=1)
    limits: Limits = Field(default_factory=Limits)
    engine: EngineConfig = Field(default_factory=EngineConfig)
    seed: int | None = None
    cache: CacheSettings | None = Field(default=None, description="the response cache; unset: off")
    code: CodeSettings | None = Field(default=None, description="a code task; unset: a question")
    synthesis: SynthesisSettings | None = Field(
        default=None, description="a chairman's final answer after the outcome; unset: defaults"
    )
    prices: dict[str, dict[str, float]] = Field(
        default={},
        description='USD per million tokens by "provider:model" (input, output, cache_read, '
        "cache_write); overrides the bundled table and $MOOT_HOME/prices.toml",
    )

    @model_validator(mode="after")
    def _share_prices(self) -> "RunConfig":
        for agent in self.agents:  # providers see them through AgentConfig.settings()
            agent._prices = self.prices
        return self

    def section(self, name: str) -> Any:
        """A protocol section as given (a dict, or the options model once resolved)."""
        extra = self.__pydantic_extra__ or {}
        return extra.get(name, {})

    def sections(self) -> dict[str, Any]:
        return dict(self.__pydantic_extra__ or {})


def problem_lines(
    error: ValidationError,
    prefix: str = "",
    model: type[BaseModel] | None = None,
    owner: str | None = None,
) -> list[str]:
    """Each problem of a validation error as `dotted.path: message`; a misspelt key gets the
    closest known one ("did you mean ...") when `model` is given, a number out of bounds the
    bounds of its field, and who sets them (`owner`: 'the court protocol')."""
    known = _field_names(model) if model is not None else set()
    lines = []
    for item in error.errors():
        path = ".".join(str(part) for part in (prefix, *item["loc"]) if part != "")
        # pydantic prefixes a validator's own message with its error type; the message is ours
        message = str(item["msg"]).removeprefix("Value error, ")
        if item["type"] == "extra_forbidden" and item["loc"]:
            close = closest(str(item["loc"][-1]), sorted(known))
            message = "unknown key" + (f"; did you mean {close!r}?" if close else "")
        info = _field_at(model, item["loc"])
        limits = {
            key: getattr(bound, key)
            for bound in (info.metadata if info is not None else ())
            for key in ("ge", "gt", "le", "lt")
            if getattr(bound, key, None) is not None
        } or dict(item.get("ctx") or {})
        types = _types(info.annotation) if info is not None else ()
        whole = int in types and float not in types
        bounded = bound_problem(item["type"], item.get("input"), limits, whole, owner)
        lines.append(f"{path or '(top level)'}: {bounded or message}")
    return lines


def _types(annotation: Any) -> tuple[Any, ...]:
    """An annotation and every type inside it: `list[AgentConfig] | None` holds AgentConfig."""
    return (annotation, *(t for arg in get_args(annotation) for t in _types(arg)))


def _field_at(model: type[BaseModel] | None, loc: tuple[int | str, ...]) -> Any:
    """The field a validation error's location names in `model` (list indexes skipped)."""
    info = None
    for part in loc:
        if isinstance(part, int):
            continue
        if model is None or part not in model.model_fields:
            return None
        info = model.model_fields[part]
        inner = (t for t in _types(info.annotation) if isinstance(t, type))
        model = next((t for t in inner if issubclass(t, BaseModel)), None)
    return info


def _field_names(model: type[BaseModel], depth: int = 0) -> set[str]:
    names = set(model.model_fields)
    for info in model.model_fields.values():
        for arg in (info.annotation, *getattr(info.annotation, "__args__", ())):
            if depth < 3 and isinstance(arg, type) and issubclass(arg, BaseModel):
                names |= _field_names(arg, depth + 1)
    return names


def format_validation_error(error: ValidationError, source: str) -> str:
    lines = [f"{source} has {plural(error.error_count(), 'problem')}:"]
    lines += [f"  {line}" for line in problem_lines(error)]
    return "\n".join(lines)


def read_config_file(path: Path) -> dict[str, Any]:
    """The top-level table of a TOML, JSON or YAML file; `ConfigError` naming the file when it
    cannot be read, is not UTF-8 (with the byte offset) or cannot be parsed."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {str(path)!r}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:  # a ValueError: without this, a traceback
        raise ConfigError(
            f"config file {str(path)!r} is not valid UTF-8 (byte {exc.start}: "
            f"{raw[exc.start : exc.start + 1]!r}); save it as UTF-8"
        ) from None
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            import tomllib

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


def read_lines(path: Path, what: str) -> list[tuple[int, str, str]]:
    """The non-blank lines of a user's line-per-item UTF-8 file (`what`: "task file", "suite
    file"), each as (number, where, text): `where` ("PATH line N") starts every message about
    it. `ConfigError` naming the file when it does not exist or is not UTF-8 text."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ConfigError(f"{what} {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read {what} {path} as UTF-8 text: {error}") from None
    return [
        (number, f"{path} line {number}", text)
        for number, text in enumerate(lines, start=1)
        if text.strip()
    ]


def check_task(task: str, engine: EngineConfig) -> None:
    """Refuse a task that is not text (lone surrogates: bytes that were not UTF-8, as from a
    command line) or is longer than `engine.max_task_bytes`, naming the fix."""
    try:
        size = len(task.encode("utf-8"))
    except UnicodeEncodeError as exc:
        offset = len(task[: exc.start].encode("utf-8"))  # the first bad character: clean before
        raise ConfigError(
            f"the task is not valid UTF-8 (byte {offset}); give it as UTF-8 text"
        ) from None
    if size > engine.max_task_bytes:
        raise ConfigError(
            f"the task is {size:,} bytes, more than the cap of {engine.max_task_bytes:,} "
            "(engine.max_task_bytes); shorten it, or raise max_task_bytes in the [engine] "
            "table of the config"
        )
