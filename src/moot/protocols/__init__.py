"""Deliberation protocols and their registry.

Each protocol is a folder (`protocols/<name>/`) whose `__init__` exports `PROTOCOL`, a
`ProtocolDefinition`. Adding one touches its folder and one line of `BUILTIN` below; a library user
(or a test) can also `register` a record at run time. Records are imported on first use, so
`moot --help` pays for none of them.

A package can also offer protocols as plugins (moot/plugins/: the `moot.plugins` entry-point
group, or the older `moot.protocols`; name = the protocol's name, value = `module:attribute` of
its definition). moot's own feature pipeline (`moot.pipeline`, seed 004) is offered that way: it
composes the protocols from a floor above this registry, so the registry cannot name it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from moot.errors import ConfigError
from moot.text import closest

if TYPE_CHECKING:  # records import the engine: only when a protocol is used (`moot --help`)
    from moot.protocols.definition import ProtocolDefinition

__all__ = ["BUILTIN", "exists", "get", "names", "register", "unknown_protocol", "unregister"]

# name -> the module exporting PROTOCOL
BUILTIN: dict[str, str] = {
    "arena": "moot.protocols.arena",
    "council": "moot.protocols.council",
    "moa": "moot.protocols.moa",
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


def _offered() -> dict[str, ProtocolDefinition[Any]]:
    """The protocols installed packages offer as plugins (moot/plugins/), by name; one that
    is not a ProtocolDefinition, or takes a name moot has, is skipped with a warning."""
    from moot import plugins

    found = plugins.of_kind("protocol")
    if not found:  # the definition type imports the engine: not when no package offers one
        return {}
    from moot.protocols.definition import ProtocolDefinition

    offered: dict[str, ProtocolDefinition[Any]] = {}
    for plugin in found:
        if not isinstance(plugin.value, ProtocolDefinition):
            plugins.skip(plugin, f"is not a {plugins.CLASSES['protocol']}")
        elif plugin.name in BUILTIN:
            plugins.skip(plugin, f"moot already has a protocol {plugin.name!r}")
        else:
            offered[plugin.name] = plugin.value
    return offered


def exists(name: str) -> bool:
    """Whether `name` is a protocol; installed packages' plugins are imported only for a name
    moot does not have itself (a question's run never pays for them)."""
    return name in BUILTIN or name in _REGISTERED or name in _offered()


def names() -> list[str]:
    return sorted(set(BUILTIN) | set(_REGISTERED) | set(_offered()))


def get(name: str) -> ProtocolDefinition[Any]:
    """The record of protocol `name`; an unknown name is a config error naming the choices."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    module = BUILTIN.get(name)
    if module is not None:
        record: ProtocolDefinition[Any] = importlib.import_module(module).PROTOCOL
    elif name in _offered():
        record = _offered()[name]
    else:
        raise ConfigError(unknown_protocol(name))
    _REGISTERED[name] = record
    return record


def unknown_protocol(name: str) -> str:
    close = closest(name, names())
    hint = f" (did you mean {close!r}?)" if close else ""
    return f"unknown protocol {name!r}{hint}; choose one of: {', '.join(names())}"
