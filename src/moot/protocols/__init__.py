"""Deliberation protocols and their registry.

Each protocol is a folder (`protocols/<name>/`) whose `__init__` exports `PROTOCOL`, a
`ProtocolDefinition`. Adding one touches its folder and one line of `BUILTIN` below; a library user
(or a test) can also `register` a record at run time. Records are imported on first use, so
`moot --help` pays for none of them.

A package can also offer protocols through the `moot.protocols` entry-point group (name = the
protocol's name, value = `module:attribute` of its definition). moot's own feature pipeline
(`moot.pipeline`, seed 004) is offered that way: it composes the protocols from a floor above
this registry, so the registry cannot name it.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any

from moot.errors import ConfigError
from moot.text import closest

if TYPE_CHECKING:  # records import the engine: only when a protocol is used (`moot --help`)
    from moot.protocols.definition import ProtocolDefinition

__all__ = ["BUILTIN", "get", "names", "register", "unknown_protocol", "unregister"]

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


ENTRY_POINTS = "moot.protocols"  # the entry-point group of protocols other packages offer


@cache
def _offered() -> dict[str, str]:
    """Protocol name -> `module:attribute`, from the installed packages' entry points (read
    once; a name moot already has is not replaced)."""
    from importlib.metadata import entry_points

    return {e.name: e.value for e in entry_points(group=ENTRY_POINTS) if e.name not in BUILTIN}


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
        record = _load_offered(name, _offered()[name])
    else:
        raise ConfigError(unknown_protocol(name))
    _REGISTERED[name] = record
    return record


def _load_offered(name: str, target: str) -> ProtocolDefinition[Any]:
    """The definition an entry point names; one that cannot be loaded is a config error that
    names the package's entry point (moot's own protocols still work)."""
    from moot.protocols.definition import ProtocolDefinition

    module, _, attribute = target.partition(":")
    try:
        record = getattr(importlib.import_module(module), attribute or "PROTOCOL")
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"the protocol {name!r} offered by an installed package ({ENTRY_POINTS} entry point "
            f"{target!r}) cannot be loaded: {exc}; reinstall or remove that package"
        ) from exc
    if not isinstance(record, ProtocolDefinition) or record.name != name:
        raise ConfigError(
            f"the {ENTRY_POINTS} entry point {name!r} ({target!r}) is not a protocol definition "
            f"named {name!r}; fix or remove the package that offers it"
        )
    return record


def unknown_protocol(name: str) -> str:
    close = closest(name, names())
    hint = f" (did you mean {close!r}?)" if close else ""
    return f"unknown protocol {name!r}{hint}; choose one of: {', '.join(names())}"
