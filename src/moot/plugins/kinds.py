"""The kinds of plugin, each known by its class's `plugin_kind`: a provider (a
moot.models.base.ProviderInfo), a protocol (a moot.protocols.definition.ProtocolDefinition),
and the two whose classes are here, a QA gate (GatePlugin) and a judge (JudgePlugin)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

from msgspec import Struct

__all__ = ["CLASSES", "KINDS", "Check", "GatePlugin", "JudgePlugin", "Offered"]

KINDS = ("provider", "protocol", "gate", "judge")
# What a plugin of each kind is, for the messages that say what was expected.
CLASSES: dict[str, str] = {
    "provider": "moot.models.base.ProviderInfo",
    "protocol": "moot.protocols.definition.ProtocolDefinition",
    "gate": "moot.plugins.GatePlugin",
    "judge": "moot.plugins.JudgePlugin",
}


@runtime_checkable
class Offered(Protocol):
    """What an entry point of `moot.plugins` names: an object whose class says its kind."""

    plugin_kind: ClassVar[str]

    @property
    def name(self) -> str: ...


Check = Callable[[Path, str], tuple[bool, str]]


class GatePlugin(Struct, frozen=True):
    """A QA gate of the feature pipeline (`moot execute`): `check(worktree, patch)` answers
    (passed, output) for one task's change; it runs after the tests, before the secret scan,
    and its verdict is journaled (a resume does not run it again)."""

    plugin_kind: ClassVar[str] = "gate"
    name: str
    check: Check
    summary: str = ""


class JudgePlugin(Struct, frozen=True):
    """A provider of judge models: `NAME:MODEL` specs for the judge seats of a config
    (court.judges, pick.judge, ...), listed by `moot models` as a judge; a config that seats
    one as an agent is refused (it judges, it does not debate). Its factory at
    `module.attribute` is called as any provider's, `(Spec, ModelSettings) -> Model`, and is
    imported only when one of its models is made."""

    plugin_kind: ClassVar[str] = "judge"
    name: str
    module: str
    attribute: str
    summary: str = ""
    example: str = ""
