"""An unknown top-level key of a project config, worded with what the user most likely meant:
a close top-level key or protocol, an option of the protocol that runs (`rounds`: `max_rounds`
in the [arena] table), or, for `models` (the user config's key, which the README shows and
users copy), how a project config names its agents: `[[agents]]` tables.

"Did you mean" names a key only when it is close enough to be a typo of it (`CLOSE`): a key
that merely shares a few letters (`models` and `code`) is no suggestion."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from moot import protocols
from moot.config import Problems, problem_lines, shared_keys
from moot.config.reading import field_names
from moot.protocols.definition import ProtocolDefinition

__all__ = ["CLOSE", "near", "option_problems", "unknown_key"]

# difflib's ratio at or above which a name is taken for a typo of another: a letter left out,
# doubled or swapped (`sed`: seed, 0.86; `rounds`: max_rounds, 0.75), but not three shared
# letters (`models`: code, 0.6; `colour`: court, 0.73)
CLOSE = 0.75

USER_MODELS = "models"  # the user config's list of model specs (moot/config/user.py)

_AGENTS_FORM = (
    '[[agents]]\n    model = "local:smollm2"\n    [[agents]]\n    model = "local:smollm2"'
)


def near(name: str, known: Iterable[str]) -> str | None:
    """The known name `name` is a typo of, if one is close enough (`CLOSE`); else None."""
    import difflib  # here: only a mistake needs it, and a run starts without it

    found = difflib.get_close_matches(name, list(known), n=1, cutoff=CLOSE)
    return found[0] if found else None


def unknown_key(name: str, record: ProtocolDefinition[Any] | None = None) -> str:
    """An unknown top-level key, with the closest known one: a top-level key or protocol, else
    an option of the protocol that runs ("rounds": `max_rounds` in [arena]); `models` (or a
    typo of it) is answered with the `[[agents]]` form."""
    if near(name, [USER_MODELS]) is not None:
        return (
            f"{name}: unknown key; a project config names its agents with [[agents]] tables, "
            f"one per agent:\n    {_AGENTS_FORM}\n  (`models = [...]` belongs to the user "
            "config, `moot config` shows where it is)"
        )
    close = near(name, [*shared_keys(), *protocols.names()])
    if close is not None:
        return f"{name}: unknown key; did you mean {close!r}?"
    option = near(name, list(field_names(record.options))) if record is not None else None
    if option is not None and record is not None:
        return f"{name}: unknown key; did you mean {option!r} in the [{record.name}] table?"
    return f"{name}: unknown key"


def option_problems(error: Problems, record: ProtocolDefinition[Any]) -> list[str]:
    """The problems of a protocol's options (`court.max_agent_rounds: ...`), a number out of
    bounds with the bounds the protocol's options model sets: 'the court protocol takes a whole
    number from 1 to 10'."""
    return problem_lines(error, record.name, record.options, f"the {record.name} protocol")
