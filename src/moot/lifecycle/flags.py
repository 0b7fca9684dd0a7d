"""What the command line sets: a protocol's options from its flags (`set_flag`), and a
config's problems in the terms of the flags that set the values: `--models 'foo:bar': unknown
model provider ...` rather than `agents.0.model: ...`, which names a config the user never
wrote (`moot run`, `moot.run`, `moot mcp`).

A problem is a line `dotted.path: message` (config.problem_lines); `FlagTerms` maps the paths a
flag set to how the flag reads, and `reworded` rewrites the lines whose path one of them covers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from moot.protocols.definition import Flag, ProtocolDefinition

__all__ = [
    "RUN_FLAGS",
    "FlagTerms",
    "flag_text",
    "not_taken",
    "reworded",
    "run_flag_terms",
    "set_flag",
]

FlagTerms = dict[str, str]  # a config path -> the flag that set it, as given

# The config path each option of a run sets -> its flag (lifecycle/plan.py: load_run)
RUN_FLAGS: Mapping[str, str] = {
    "protocol": "--protocol",
    "seed": "--seed",
    "limits.max_cost": "--max-cost",
    "limits.max_tokens": "--max-tokens",
    "limits.timeout": "--timeout",
    "cache.store": "--cache",
    "code.repo": "--repo",
    "code.context": "--context",
    "code.verify_commands": "--verify",
    "synthesis.enabled": "--synthesize",
    "synthesis.chairman": "--chairman",
}


def flag_text(flag: str, value: Any) -> str:
    """`--cache 'memcached://x'`; a switch or a list by its name alone."""
    if isinstance(value, bool) or isinstance(value, list | tuple):
        return flag
    return f"{flag} {value!r}"


def run_flag_terms(given: Mapping[str, Any], models: Sequence[str]) -> FlagTerms:
    """The terms of a run's options that were given (`given`: config path -> value) and of its
    `--models`, one agent each: `agents.1` is the second `--models`, `agents` all of them."""
    terms = {path: flag_text(RUN_FLAGS[path], value) for path, value in given.items()}
    if models:
        terms["agents"] = "--models"
        terms.update({f"agents.{i}": flag_text("--models", spec) for i, spec in enumerate(models)})
    return terms


def reworded(problems: Iterable[str], terms: Mapping[str, str]) -> list[str]:
    """Each problem whose path a flag set (that path or one inside it; the longest wins),
    worded by that flag; the others as they are."""
    lines = []
    for line in problems:
        path, colon, message = line.partition(": ")
        covering = [p for p in terms if path == p or path.startswith(p + ".")]
        if colon and covering:
            line = f"{terms[max(covering, key=len)]}: {message}"
        lines.append(line)
    return lines


def set_flag(
    record: ProtocolDefinition[Any], section: dict[str, Any], flag: Flag, value: Any
) -> list[str]:
    """Set the option `--<flag> value` sets; a problem when the protocol does not take it."""
    if not value:
        return []
    option = record.flags.get(flag)
    if option is None:
        return [not_taken(record, flag, f"--{flag}")]
    if isinstance(value, list):
        section[option] = [*section.get(option, []), *value]
    else:
        section[option] = value
    return []


def not_taken(record: ProtocolDefinition[Any], flag: Flag, shown: str) -> str:
    """`--samples: the X protocol does not take --samples; ...` and which protocols do, as
    their definitions say (`flags`): the fix is one of them or leaving the flag out."""
    from moot import protocols
    from moot.errors import ConfigError

    takers = []
    for name in protocols.names():
        try:
            other = protocols.get(name)
        except (ConfigError, ImportError):  # a plugin that cannot load takes nothing
            continue
        if flag in other.flags:
            takers.append(name)
    if not takers:
        fix = "no protocol takes it: leave it out"
    elif len(takers) == 1:
        fix = f"only the {takers[0]} protocol takes it (--protocol {takers[0]}); or leave it out"
    else:
        fix = f"the protocols that take it: {', '.join(takers)} (--protocol NAME); or leave it out"
    return f"{shown}: the {record.name} protocol does not take {shown}; {fix}"
