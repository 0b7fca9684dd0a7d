"""Run configuration: msgspec Structs read from TOML, JSON or YAML, every problem at once.

Unknown keys are refused; `reading.read` reports every problem of a table with its path."""

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from msgspec import Meta, field

from moot import lazy
from moot.config.reading import (
    FieldProblem,
    Problems,
    Strict,
    default_of,
    dump,
    field_names,
    problem_lines,
    read,
)
from moot.errors import ConfigError
from moot.types import ModelSettings, parse_spec

__all__ = [
    "DEFAULT_MODEL",
    "AgentConfig",
    "CacheSettings",
    "CodeSettings",
    "EngineConfig",
    "Limits",
    "Problems",
    "RoleModel",
    "RunConfig",
    "Section",
    "SynthesisSettings",
    "check_task",
    "dump",
    "problem_lines",
    "read",
    "read_config_file",
    "role_tables",
    "synthesis_enabled",
]

DEFAULT_MODEL = "local:smollm2"


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


Positive = Meta(gt=0)


class AgentConfig(Strict):
    """One participant: a model spec and how to call it."""

    model: str
    temperature: Annotated[float, Meta(ge=0, le=2)] | None = None
    max_tokens: Annotated[int, Positive] | None = None
    timeout: Annotated[float, Positive] | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    concurrency: Annotated[int, Positive] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    system_prompt: (
        Annotated[
            str,
            Meta(
                max_length=4000,
                description="role description put in this participant's system prompt (court)",
            ),
        ]
        | None
    ) = None

    def __post_init__(self) -> None:
        try:
            parse_spec(self.model)
        except ConfigError as exc:
            raise FieldProblem("model", str(exc)) from None

    def settings(self, prices: Mapping[str, Mapping[str, float]] | None = None) -> ModelSettings:
        """How a provider calls, with the run's `prices` (RunConfig.prices): `${NAME}` in a
        header or base_url read from the environment (the config, and so the session's files,
        keep the reference, not the secret)."""
        return ModelSettings(
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            timeout=self.timeout,
            base_url=_from_env(self.base_url, "base_url") if self.base_url else None,
            api_key_env=self.api_key_env,
            headers={k: _from_env(v, f"header {k!r}") for k, v in self.headers.items()},
            concurrency=self.concurrency,
            options=dict(self.options),
            prices={k: dict(v) for k, v in (prices or {}).items()},
        )


# The model of a role of its own (a chairman, an aggregator): a spec, or a table like an
# agent's. The table that holds one turns the spec into a table first (`role_tables`).
RoleModel = AgentConfig | None


def role_tables(data: dict[str, Any], *names: str) -> dict[str, Any]:
    """`data` with each role key among `names` given as a spec ("openai:gpt-5.2") turned
    into the table `{model = "openai:gpt-5.2"}`; for a `prepare` classmethod."""
    for name in names:
        if isinstance(data.get(name), str):
            data[name] = {"model": data[name]}
    return data


class Limits(Strict):
    """Budgets. Reaching one pauses the session (exit code 3); `moot resume` continues."""

    max_tokens: Annotated[int, Meta(gt=0, description="tokens in the session")] | None = None
    max_cost: Annotated[float, Meta(gt=0, description="USD in the session")] | None = None
    timeout: Annotated[float, Meta(gt=0, description="active seconds in the session")] | None = None
    call_timeout: Annotated[float, Meta(gt=0, description="seconds for one model call")] = 300.0


class EngineConfig(Strict):
    """How calls are made: concurrency, the retry policy, and the size caps on what goes in
    (the task) and what comes back (a reply)."""

    # 32: every ask of a phase starts at once for up to 32 agents; one endpoint is kept from a
    # flood by its shared connection pool (moot/models/http.py) and by Retry-After.
    concurrency: Annotated[int, Meta(ge=1, le=256, description="model calls at once")] = 32
    attempts: Annotated[int, Meta(ge=1, le=100, description="tries per call, first included")] = 3
    backoff_initial: Annotated[float, Meta(ge=0)] = 1.0
    backoff_max: Annotated[float, Meta(ge=0)] = 30.0
    retry_max_wait: Annotated[
        float,
        Meta(
            ge=0,
            description="seconds of waiting between the tries of one call, in total; a retry "
            "whose Retry-After does not fit is not made (raise with attempts to ride out "
            "outages)",
        ),
    ] = 120.0
    shell_timeout: Annotated[float, Meta(gt=0, description="seconds per verify command")] = 600.0
    max_reply_bytes: Annotated[
        int,
        Meta(
            ge=1000,
            description="a longer reply is cut to this many UTF-8 bytes and marked truncated",
        ),
    ] = 4_000_000
    max_task_bytes: Annotated[
        int, Meta(ge=1, description="a longer task is refused before anything runs")
    ] = 2_000_000


_CACHE_STORES = ("sqlite", "sqlite:", "redis://", "rediss://")


class CacheSettings(Strict):
    """The response cache (`--cache`, or a `[cache]` table): a request asked before is answered
    from the store without a call (moot/engine/cache.py)."""

    store: Annotated[
        str,
        Meta(
            description="sqlite (cache.sqlite under MOOT_HOME), sqlite:PATH, or "
            "redis://HOST:PORT/DB"
        ),
    ] = "sqlite"
    ttl: Annotated[float, Meta(gt=0, description="seconds an entry lives")] = 7 * 24 * 3600.0
    allow_sampled: Annotated[
        bool, Meta(description="also serve requests sampled above temperature 0 without a seed")
    ] = False

    def __post_init__(self) -> None:
        if not self.store.strip().startswith(_CACHE_STORES):
            raise FieldProblem(
                "store",
                f"{self.store!r} is not a cache store; use sqlite, sqlite:PATH or "
                "redis://HOST:PORT/DB",
            )
        self.store = self.store.strip()


class SynthesisSettings(Strict):
    """A chairman's final answer after the outcome (`--synthesize`, or a `[synthesis]` table),
    written from the picked answer and what the judges, critics or losing sides said should
    change; moot keeps it only where it keeps the agreed answer (protocols/synthesis.py)."""

    enabled: (
        Annotated[
            bool,
            Meta(
                description="ask a chairman for the final answer; unset: the protocol's default "
                "(on for a protocol whose own last stage is a chairman, such as council; off "
                "otherwise)"
            ),
        ]
        | None
    ) = None
    chairman: Annotated[
        RoleModel,
        Meta(
            description="the model that writes it: a model spec, or a table like an agent's; "
            "unset: the model of the agent whose answer was picked"
        ),
    ] = None

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        return role_tables(data, "chairman")


class CodeSettings(Strict):
    """A code task (`--repo`, or a `[code]` table): every agent works in its own git worktree
    of `repo`, and its answer is a change to the code (moot/code/workspace.py). Any protocol."""

    repo: Annotated[
        str, Meta(min_length=1, description="the git repository (any folder inside it)")
    ]
    context: Annotated[
        list[str],
        Meta(description="globs of files API models see whole (--context); none: a file listing"),
    ] = field(default_factory=list)
    context_budget_tokens: Annotated[int, Meta(ge=100, description="for those files")] = 20_000
    verify_commands: Annotated[
        list[str], Meta(description="shell commands run in each worktree after a change")
    ] = field(default_factory=list)
    verify_timeout: Annotated[float, Meta(gt=0, description="seconds per verify command")] = 600.0
    output_tail_chars: Annotated[
        int, Meta(ge=200, description="characters of a verify command's output kept as evidence")
    ] = 4000
    worktree_root: (
        Annotated[
            str, Meta(description="where worktrees go (default: the session folder's worktrees/)")
        ]
        | None
    ) = None


def _default_agents() -> list[AgentConfig]:
    return [AgentConfig(model=DEFAULT_MODEL) for _ in range(3)]


class Section(Strict):
    """Base of a protocol's options: the config section named after the protocol
    (`[arena]`, `[court]`). Each protocol's folder defines its own (protocols/<name>/options.py);
    this module knows none of them."""


class RunConfig(Strict):
    """What every run has: the protocol's name, agents, limits, engine settings, seed and
    prices. Protocol sections (`[arena]`, `[court]`, ...) are the other top-level keys: read
    into `sections` as given and validated by the protocol that runs (`moot.protocols.resolve`),
    so this module names no protocol; `dump` puts them back at the top level."""

    protocol: Annotated[str, Meta(min_length=1, description="the deliberation protocol")] = "arena"
    agents: Annotated[list[AgentConfig], Meta(min_length=1)] = field(
        default_factory=_default_agents
    )
    limits: Limits = field(default_factory=Limits)
    engine: EngineConfig = field(default_factory=EngineConfig)
    seed: int | None = None
    cache: Annotated[CacheSettings, Meta(description="the response cache; unset: off")] | None = (
        None
    )
    code: Annotated[CodeSettings, Meta(description="a code task; unset: a question")] | None = None
    synthesis: (
        Annotated[
            SynthesisSettings,
            Meta(description="a chairman's final answer after the outcome; unset: defaults"),
        ]
        | None
    ) = None
    prices: Annotated[
        dict[str, dict[str, float]],
        Meta(
            description='USD per million tokens by "provider:model" (input, output, '
            "cache_read, cache_write); overrides the bundled table and $MOOT_HOME/prices.toml"
        ),
    ] = field(default_factory=dict)
    # The protocol sections: every other top-level key, as given (a table), or the protocol's
    # options once resolved (lifecycle/plan.py).
    sections: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        """The top-level keys that are no setting of every run, moved into `sections`; the
        synthesis table's shorthand read."""
        shared = set(_SHARED)
        given = data.pop("sections", None)
        sections = {k: v for k, v in data.items() if k not in shared}
        if given is not None:  # no such key in a config file: reported as unknown, later
            sections["sections"] = given
        found = {k: v for k, v in data.items() if k in shared}
        found["sections"] = sections
        if isinstance(found.get("synthesis"), Mapping):
            found["synthesis"] = SynthesisSettings.prepare(dict(found["synthesis"]))
        return found

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> "RunConfig":
        """The run config of a table (a config file's, a session's recorded one); `Problems`
        listing everything wrong with it."""
        return read(cls, data)

    def section(self, name: str) -> Any:
        """A protocol section as given (a dict, or the options once resolved)."""
        return self.sections.get(name, {})

    def dump(self) -> dict[str, Any]:
        """The config as JSON-ready builtins, the protocol sections at the top level: the
        shape of a config file and of session.json's `config`."""
        found: dict[str, Any] = dump(self)
        found.update(found.pop("sections"))
        return found


_SHARED = tuple(name for name in field_names(RunConfig) if name != "sections")


def synthesis_enabled(settings: SynthesisSettings | None, default: bool) -> bool:
    """Whether a run asks for a chairman's synthesis: the `[synthesis]` table, else `default`
    (the protocol's: on where its own last stage is a chairman, as the council's)."""
    if settings is None or settings.enabled is None:
        return default
    return settings.enabled


def shared_keys() -> tuple[str, ...]:
    """The top-level keys every run has (the others are protocol sections)."""
    return _SHARED


def protocol_default() -> str:
    return str(default_of(RunConfig, "protocol"))


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
