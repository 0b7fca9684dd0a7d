"""The user's own config file: defaults for every run, below a project's config and the flags.

It is `config.toml` in the platform's config folder (~/.config/moot on Linux, ~/Library/
Application Support/moot on macOS, %LOCALAPPDATA%\\moot on Windows), or the file `$MOOT_CONFIG`
names:

    protocol = "court"          # the protocol of a run that names none
    models = ["fast"]           # the agents of a run that names none: specs or aliases
    [limits]                    # a run's budgets (moot.config.Limits)
    max_cost = 2.0
    [aliases]                   # `-m fast` is these agents, one each
    fast = ["openai:gpt-5.4-mini", "anthropic:claude-haiku-4-5"]

Precedence: flags > the project's config file (--config) > this file > built-in defaults.
`moot config` (moot/cli/config.py) shows, edits and sets it; `lifecycle/plan.load_run` applies it.
"""

import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from msgspec import Meta, field

from moot import lazy
from moot.config import (
    DEFAULT_MODEL,
    Limits,
    Problems,
    problem_lines,
    protocol_default,
    read,
    read_config_file,
)
from moot.config.reading import FieldProblem, Strict, dump, field_names
from moot.errors import ConfigError
from moot.files import user_folder
from moot.text import plural
from moot.types import parse_spec

__all__ = [
    "KEYS",
    "TEMPLATE",
    "UserConfig",
    "check_key",
    "effective",
    "load_user_config",
    "parse_user_config",
    "read_user_file",
    "set_key",
    "user_config_path",
    "value_of",
]

# An alias is a bare TOML key, and never a spec (no colon) nor a list (no comma).
_ALIAS = lazy.pattern(r"[A-Za-z0-9_-]+")

# What each error about the file ends with
FIX = "(fix it with `moot config edit`)"

# The keys `moot config get/set` take (and aliases.NAME).
KEYS = ("protocol", "models", *(f"limits.{name}" for name in field_names(Limits)))

TEMPLATE = """\
# moot's user config: defaults for every run. Flags and a project's config file (--config)
# win over it; `moot config` shows what applies, `moot config set KEY VALUE` changes it.

# The protocol of a run that names none (moot run --protocol).
# protocol = "arena"

# The agents of a run that names none: model specs or alias names, one agent each.
# models = ["fast"]

[limits]
# A run's budgets unless its flags or config set them (moot run --max-cost ...).
# max_cost = 1.0        # USD per session
# max_tokens = 200000   # tokens per session
# timeout = 600         # seconds of running time

[aliases]
# moot run -m NAME stands for these models, one agent each.
# fast = ["openai:gpt-5.4-mini", "anthropic:claude-haiku-4-5"]
# smart = "openai:gpt-5.4"
"""


def user_config_path() -> Path:
    """`$MOOT_CONFIG`, else config.toml in the platform's user config folder."""
    given = os.environ.get("MOOT_CONFIG")
    if given:
        return Path(given).expanduser()
    return user_folder("config") / "config.toml"


def _spec_problems(key: str, value: str) -> list[str]:
    try:
        parse_spec(value)
    except ConfigError as exc:
        return [f"{key}: {exc}"]
    return []


# A check of a layer above on a user config's valid settings: its problems, `key: message`
Check = Callable[["UserConfig"], list[str]]


def _specs(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class UserConfig(Strict, dict=True):
    """The user config file's settings (unknown keys refused). Where it was read from and
    which limits it sets are kept beside them (`at`), not as settings."""

    protocol: Annotated[str, Meta(min_length=1)] | None = None
    models: Annotated[list[str], Meta(description="specs or alias names, one agent each")] = field(
        default_factory=list
    )
    limits: Limits = field(default_factory=Limits)
    aliases: Annotated[
        dict[str, Annotated[list[str], Meta(min_length=1)]],
        Meta(description="NAME = spec or [specs]"),
    ] = field(default_factory=dict)

    @property
    def path(self) -> Path | None:
        """The file it was read from."""
        return getattr(self, "_path", None)

    @property
    def limits_set(self) -> frozenset[str]:
        """The limits the file sets (the others are the built-in defaults)."""
        return getattr(self, "_limits_set", frozenset())

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        """A single spec where a list is taken: `models = "fast"`, `fast = "openai:gpt-5.4"`."""
        if isinstance(data.get("models"), str):
            data["models"] = [data["models"]]
        aliases = data.get("aliases")
        if isinstance(aliases, dict):
            data["aliases"] = {k: _specs(v) for k, v in aliases.items()}
        return data

    def __post_init__(self) -> None:
        for name, specs in self.aliases.items():
            if not _ALIAS.fullmatch(name):
                raise FieldProblem(
                    ("aliases", name), f"alias {name!r}: use letters, digits, - and _ only"
                )
            for index, spec in enumerate(specs):
                try:
                    parse_spec(spec)
                except ConfigError as exc:
                    raise FieldProblem(("aliases", name, index), str(exc)) from None

    @classmethod
    def at(
        cls, path: Path, data: Mapping[str, Any] | None = None, check: Check | None = None
    ) -> "UserConfig":
        """The settings of `data` (none: no file), read from `path`; a ConfigError naming
        the file and every wrong key at once. `check`: what a layer above finds wrong with the
        settings (an unknown protocol or provider), run on the keys that are valid here."""
        data = dict(data or {})
        try:
            user = read(cls, data) if data else cls()
            problems = []
        except Problems as exc:
            problems = problem_lines(exc, "", cls)
            wrong = {problem.loc[0] for problem in exc.problems if problem.loc}
            try:  # the other keys, checked on as a valid file's are
                user = read(cls, {k: v for k, v in data.items() if k not in wrong})
            except Problems as more:  # a check across them, which the wrong ones held back
                problems += problem_lines(more, "", cls)
                user = cls()
        limits = data.get("limits")
        # beside the settings (the Struct's __dict__), never read from the file
        setattr(user, "_path", path)  # noqa: B010
        setattr(user, "_limits_set", frozenset(limits) if isinstance(limits, dict) else frozenset())  # noqa: B010
        aliases = data.get("aliases")
        named = set(aliases) if isinstance(aliases, dict) else set()  # a wrong one: said above
        known = ", ".join(user.aliases) or "none"
        for index, name in enumerate(user.models):
            if ":" in name:
                problems += _spec_problems(f"models.{index}", name)
            elif name not in named:
                problems.append(
                    f"models: {name!r} is neither PROVIDER:MODEL nor an alias (aliases: {known})"
                )
        if check is not None:
            problems += check(user)
        if problems:
            raise user.error(problems)
        return user

    def expand(self, names: Sequence[str]) -> list[str]:
        """Each alias among `names` replaced by its specs; anything else kept as it is."""
        return [spec for name in names for spec in self.aliases.get(name.strip(), [name])]

    def run_defaults(self) -> dict[str, Any]:
        """What this file sets for a run, as dotted config keys."""
        found: dict[str, Any] = {}
        if self.protocol is not None:
            found["protocol"] = self.protocol
        if self.models:
            found["agents"] = [{"model": spec} for spec in self.expand(self.models)]
        for key, value in dump(self.limits).items():
            if key in self.limits_set:
                found[f"limits.{key}"] = value
        return found

    def under(self, given: Mapping[str, Any], file: Mapping[str, Any]) -> dict[str, Any]:
        """A run's dotted overrides `given` (its flags), with this file's defaults for what
        neither they nor the project's config file `file` set, and the aliases among the
        given agents' models expanded (one agent per spec)."""
        merged = dict(given)
        if isinstance(merged.get("agents"), list):
            merged["agents"] = [
                {**agent, "model": spec}
                for agent in merged["agents"]
                for spec in self._agent_specs(agent)
            ]
        for dotted, value in self.run_defaults().items():
            if dotted not in merged and not _is_set(file, dotted):
                merged[dotted] = value
        return merged

    def terms(self, given: Mapping[str, Any], merged: Mapping[str, Any]) -> dict[str, str]:
        """How a run's problem with a value it took from this file (a dotted path of `merged`,
        `under`'s result, not in `given`) names it: by this file's key and the file, as
        lifecycle/flags.py's terms name a flag."""
        return {
            dotted: f"{'models' if dotted == 'agents' else dotted} in user config {self.path}"
            for dotted in merged
            if dotted not in given
        }

    def named(self, error: ConfigError) -> ConfigError:
        """`error` with the fix, where one of its problems names this file (`terms`)."""
        if f" in user config {self.path}: " not in str(error):
            return error
        return ConfigError(
            f"{error}\n(fix it with `moot config edit`, or give this run its own value)"
        )

    def _agent_specs(self, agent: Any) -> list[Any]:
        model = agent.get("model") if isinstance(agent, dict) else None
        return self.expand([model]) if isinstance(model, str) else [model]

    def error(self, problems: Sequence[str]) -> ConfigError:
        """A ConfigError naming this file and each problem (`key: message`)."""
        listed = "\n".join(f"  {line}" for line in problems)
        where = f"user config {self.path}" if self.path else "the user config"
        return ConfigError(f"{where} has {plural(len(problems), 'problem')}:\n{listed}\n{FIX}")


def _is_set(data: Mapping[str, Any], dotted: str) -> bool:
    *parents, leaf = dotted.split(".")
    for part in parents:
        inner = data.get(part)
        if not isinstance(inner, Mapping):
            return False
        data = inner
    return leaf in data


def read_user_file(path: Path) -> dict[str, Any] | None:
    """The top-level table of the user config at `path`; None when there is no file. A
    ConfigError naming the file, what is wrong (a parse error's line and column) and the fix
    when it is not a file, cannot be read or does not parse."""
    if not path.exists():
        return None
    if not path.is_file():
        raise ConfigError(
            f"user config {path} is not a file: remove it, or set MOOT_CONFIG to a file's path"
        )
    try:
        return read_config_file(path)
    except ConfigError as exc:
        known = path.suffix.lower() in (".toml", ".json", ".yaml", ".yml")
        raise ConfigError(f"user {exc}\n{FIX}" if known else f"user {exc}") from None


def load_user_config(path: Path | None = None, check: Check | None = None) -> UserConfig:
    """The user config at `path` (default `user_config_path()`); none when there is no file.
    A file that cannot be read or is wrong is a ConfigError naming it and every wrong key
    (`check`: a layer above's checks, `UserConfig.at`)."""
    path = path or user_config_path()
    return UserConfig.at(path, read_user_file(path), check)


def effective(user: UserConfig) -> list[tuple[str, Any, str]]:
    """(key, value, where it comes from) of each setting a run takes from the user config,
    the built-in default where the file sets none."""
    rows: list[tuple[str, Any, str]] = [
        ("protocol", user.protocol or protocol_default(), _source(user.protocol)),
        ("models", user.expand(user.models) or [DEFAULT_MODEL] * 3, _source(user.models)),
    ]
    for key, value in dump(user.limits).items():
        rows.append((f"limits.{key}", value, _source(key in user.limits_set)))
    rows += [(f"aliases.{name}", specs, "user config") for name, specs in user.aliases.items()]
    return rows


def _source(value: Any) -> str:
    return "user config" if value else "built-in"


def check_key(key: str) -> None:
    """A ConfigError unless `key` is one `moot config get/set` takes."""
    table, _, name = key.partition(".")
    if key not in KEYS and not (table == "aliases" and _ALIAS.fullmatch(name)):
        raise ConfigError(
            f"{key!r} is not a key of the user config; use one of: {', '.join(KEYS)}, aliases.NAME"
        )


def value_of(key: str, values: Sequence[str]) -> Any:
    """The TOML value `moot config set KEY VALUE...` means: a list for models and aliases, a
    number for a limit, a string for the protocol. ConfigError for another key."""
    check_key(key)
    table, _, name = key.partition(".")
    if key == "models" or table == "aliases":
        return list(values)
    if len(values) != 1:
        raise ConfigError(f"{key} takes one value ({len(values)} given)")
    if key == "protocol":
        return values[0]
    try:
        number = float(values[0])
    except ValueError:
        raise ConfigError(f"{key}: {values[0]!r} is not a number") from None
    if not math.isfinite(number):
        raise ConfigError(f"{key}: {values[0]!r} is not a finite number")
    return int(number) if number.is_integer() and name == "max_tokens" else number


_HEADER = lazy.pattern(r"\s*\[\s*([A-Za-z0-9_-]+)\s*\]\s*(#.*)?")


def set_key(text: str, key: str, value: Any | None) -> str:
    """`text` (a TOML file) with `key` (`name` or `table.name`) set to `value`, or removed
    when `value` is None; every other line, comments included, as it was."""
    table, _, name = key.rpartition(".")
    lines = text.splitlines()
    start, end = _table_span(lines, table)
    if start < 0 and value is None:
        return text
    if start < 0:  # a table the file does not have yet
        lines += ["", f"[{table}]"]
        start = end = len(lines)
    new = [] if value is None else [f"{name} = {json.dumps(value)}"]
    at = _key_line(lines, start, end, name)
    if at is not None:
        stop = at + 1
        while stop < end and not _parses(lines[at:stop]):  # a value over several lines
            stop += 1
        lines[at:stop] = new
    else:
        while end > start and not lines[end - 1].strip():
            end -= 1
        lines[end:end] = new
    return "\n".join(lines) + "\n"


def _table_span(lines: list[str], table: str) -> tuple[int, int]:
    """The lines [start, end) of `table`'s keys ("": the top level); (-1, -1) if none."""
    start = 0 if table == "" else -1
    for number, line in enumerate(lines):
        header = _HEADER.fullmatch(line)
        if header and start >= 0:
            return start, number
        if header and header.group(1) == table:
            start = number + 1
    return (start, len(lines)) if start >= 0 else (-1, -1)


def _key_line(lines: list[str], start: int, end: int, name: str) -> int | None:
    pattern = re.compile(rf"\s*{re.escape(name)}\s*=")
    return next((n for n in range(start, end) if pattern.match(lines[n])), None)


def _parses(lines: list[str]) -> bool:
    import tomllib

    try:
        tomllib.loads("\n".join(lines))
    except tomllib.TOMLDecodeError:
        return False
    return True


def parse_user_config(path: Path, text: str, check: Check | None = None) -> UserConfig:
    """The settings of `text`, a new content for the user config at `path`: a ConfigError
    naming the problem when it would not parse, or every wrong key (`check`: `UserConfig.at`)."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"the new user config {path} would not parse: {exc}") from None
    return UserConfig.at(path, data, check)
