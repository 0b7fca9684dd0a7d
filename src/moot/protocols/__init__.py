"""Deliberation protocols and their registry.

Each protocol is a folder (`protocols/<name>/`) whose `__init__` exports `PROTOCOL`, a
`ProtocolDefinition`. Adding one touches its folder and one line of `BUILTIN` below; a library user
(or a test) can also `register` a record at run time. Records are imported on first use, so
`moot --help` pays for none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from moot.errors import ConfigError
from moot.text import closest

if TYPE_CHECKING:  # records import the engine: only when a protocol is used (`moot --help`)
    from moot.protocols.definition import ProtocolDefinition

__all__ = ["BUILTIN", "get", "names", "register", "unknown_protocol", "unregister"]

# name -> the module exporting PROTOCOL
BUILTIN: dict[str, str] = {
    "arena": "moot.protocols.arena",
    "court": "moot.protocols.court",
    "refine": "moot.protocols.refine",
    "pick": "moot.protocols.pick",
    "tournament": "moot.protocols.tournament",
    "vote": "moot.protocols.vote",
}

_REGISTERED: dict[str, ProtocolDefinition[Any]] = {}


def register(record: ProtocolDefinition[Any]) -> None:
    """Make a protocol available by its name (`--protocol NAME`, `protocol = "NAME"`)."""
    _REGISTERED[record.name] = record


def unregister(name: str) -> None:
    _REGISTERED.pop(name, None)


def names() -> list[str]:
    return sorted(set(BUILTIN) | set(_REGISTERED))


def get(name: str) -> ProtocolDefinition[Any]:
    """The record of protocol `name`; an unknown name is a config error naming the choices."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    module = BUILTIN.get(name)
    if module is None:
        raise ConfigError(unknown_protocol(name))
    record: ProtocolDefinition[Any] = importlib.import_module(module).PROTOCOL
    _REGISTERED[name] = record
    return record


def unknown_protocol(name: str) -> str:
    close = closest(name, names())
    hint = f" (did you mean {close!r}?)" if close else ""
    return f"unknown protocol {name!r}{hint}; choose one of: {', '.join(names())}"
