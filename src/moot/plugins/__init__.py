"""Plugins: what installed packages offer moot through the `moot.plugins` entry points.

Providers, protocols, QA gates and judges:

    [project.entry-points."moot.plugins"]
    echo = "moot_echo:PROVIDER"     # a moot.models.base.ProviderInfo
    echoes = "moot_echo:PROTOCOL"   # a moot.protocols.definition.ProtocolDefinition
    licence = "moot_echo:GATE"      # a moot.plugins.GatePlugin
    strict = "moot_echo:JUDGE"      # a moot.plugins.JudgePlugin

The object an entry point names says its kind by its type (the class attribute `plugin_kind`),
and its `name` is the entry point's. This package finds and imports them once per process, on
first need (never for `moot --help`); the layer that owns a kind takes the plugins of that kind
(models: providers and judges; the protocol registry: protocols; the pipeline: gates) and may
refuse one (`skip`: a name moot already has, an object of the wrong class). A plugin that
cannot be imported, is of no kind, or is refused is skipped with one warning on the `moot`
logger; moot's own providers and protocols keep working.

The older groups are read too: `moot.protocols` (a ProtocolDefinition) and `moot.gates` (a bare
callable `(worktree, patch) -> (passed, output)`, taken as a GatePlugin of that name).

This package sits on a low floor and imports nothing of moot outside it: the kinds' classes
live with their owners and are recognised by `plugin_kind`, checked against the `Offered`
protocol (kinds.py, with the two classes that are plugins' own: GatePlugin, JudgePlugin).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from moot.plugins.kinds import CLASSES, KINDS, GatePlugin, JudgePlugin, Offered

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "CLASSES",
    "GROUP",
    "KINDS",
    "LEGACY",
    "GatePlugin",
    "JudgePlugin",
    "Offered",
    "Plugin",
    "forget",
    "found",
    "of_kind",
    "skip",
]

GROUP = "moot.plugins"
# The groups moot read before `moot.plugins`, each named after the one kind it offers
# (`moot.protocols`, `moot.gates`): group -> kind.
LEGACY: dict[str, str] = {"moot.protocols": "protocol", "moot.gates": "gate"}
_log = logging.getLogger("moot")


class Plugin(Struct):
    """One entry point found: where it comes from, and what loading it gave."""

    name: str
    group: str
    target: str  # `module:attribute`
    distribution: str
    version: str
    kind: str = ""  # "" when it could not be told
    value: Any = None  # the object it names, once loaded
    problem: str = ""  # why it is skipped; "" when it loaded

    @property
    def loaded(self) -> bool:
        return not self.problem

    def describe(self) -> dict[str, Any]:
        """Its row of `moot plugins --json`."""
        return {
            "name": self.name,
            "kind": self.kind or None,
            "group": self.group,
            "target": self.target,
            "distribution": self.distribution or None,
            "version": self.version or None,
            "loaded": self.loaded,
            "problem": self.problem or None,
        }


_found: list[Plugin] | None = None
_lock = threading.RLock()  # reentrant: a plugin's import may itself ask for the providers
_loading = False


def found() -> list[Plugin]:
    """Every plugin of the installed packages, each imported and told its kind (once per
    process: each failure is warned about once)."""
    global _found, _loading
    with _lock:  # batch sessions ask from worker threads: one load, one warning each
        if _found is None:
            if _loading:  # a plugin's import asks (for the providers): none are in yet
                return []
            _loading = True
            try:
                _found = _load_all()
            finally:
                _loading = False
        return _found


def _load_all() -> list[Plugin]:
    plugins = []
    seen: dict[tuple[str, str], Plugin] = {}
    for plugin, entry in _discover():
        plugins.append(plugin)
        _load(plugin, entry)
        if not plugin.loaded:
            continue
        other = seen.setdefault((plugin.kind, plugin.name), plugin)
        if other is not plugin:
            skip(
                plugin,
                f"{other.distribution or other.target} already offers the "
                f"{plugin.kind} {plugin.name!r}",
            )
    return plugins


def of_kind(*kinds: str) -> list[Plugin]:
    """The plugins of these kinds that loaded and were not refused, in the order found."""
    return [p for p in found() if p.loaded and p.kind in kinds]


def skip(plugin: Plugin, why: str) -> None:
    """Refuse a plugin: it is no longer offered, and a warning says why (once)."""
    if plugin.problem:
        return
    plugin.problem = why
    source = f" from {plugin.distribution} {plugin.version}".rstrip() if plugin.distribution else ""
    _log.warning(
        "warning: the plugin %r (%s entry point %s%s) is skipped: %s",
        plugin.name,
        plugin.group,
        plugin.target,
        source,
        why,
    )


def forget() -> None:
    """Find the plugins again on next need (after installing one; tests)."""
    global _found
    _found = None


def _discover() -> list[tuple[Plugin, EntryPoint]]:
    from importlib.metadata import entry_points

    plugins = []
    for group in (GROUP, *LEGACY):
        for entry in entry_points(group=group):
            dist = getattr(entry, "dist", None)
            name = str(dist.metadata["Name"] or "") if dist is not None else ""
            version = str(dist.version or "") if dist is not None else ""
            plugins.append((Plugin(entry.name, group, entry.value, name, version), entry))
    return plugins


def _load(plugin: Plugin, entry: EntryPoint) -> None:
    try:
        value = entry.load()
    except Exception as exc:  # a plugin's own failure: skipped, never moot's crash
        plugin.kind = LEGACY.get(plugin.group, "")
        skip(plugin, f"cannot be loaded: {type(exc).__name__}: {exc}")
        return
    expected = LEGACY.get(plugin.group)
    if expected == "gate" and callable(value) and not isinstance(value, Offered):
        value = GatePlugin(plugin.name, value)  # the old form: a bare callable
    kind = value.plugin_kind if isinstance(value, Offered) else None
    if kind not in KINDS:
        plugin.kind = expected or ""
        wanted = CLASSES[expected] if expected else ", ".join(CLASSES.values())
        skip(plugin, f"is a {type(value).__name__}, not a plugin (one of: {wanted})")
        return
    assert isinstance(value, Offered) and kind is not None
    plugin.kind, plugin.value = kind, value
    if expected is not None and kind != expected:
        skip(plugin, f"is a {kind}; the {plugin.group} group offers a {expected}")
    elif value.name != plugin.name:
        skip(plugin, f"its {kind} is named {value.name!r}, its entry point {plugin.name!r}")
    elif isinstance(value, GatePlugin) and not callable(value.check):
        skip(plugin, "its check is not callable: (worktree, patch) -> (passed, output)")
