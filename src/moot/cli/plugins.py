"""`moot plugins`: what the installed packages offer moot (moot/plugins.py), and whether each
loaded."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from moot.cli.common import json_option, say, say_json

if TYPE_CHECKING:
    from moot.plugins import Plugin

__all__ = ["checked", "plugin_lines", "plugins"]


def checked() -> list[Plugin]:
    """Every plugin found, each loaded and offered to the layer that owns its kind (which
    refuses a name moot already has or an object of the wrong class)."""
    from moot import plugins as found
    from moot import protocols
    from moot.models.base import providers
    from moot.pipeline.gates import plugins as gates

    providers()
    protocols.names()
    gates()
    return list(found.found())


def plugin_lines() -> list[str]:
    """One line per plugin: name, kind, distribution and version, loaded or why not."""
    lines = []
    for plugin in checked():
        source = f"{plugin.distribution} {plugin.version}".strip() or plugin.target
        state = "loaded" if plugin.loaded else f"skipped: {plugin.problem}"
        lines.append(f"{plugin.name:<14} {plugin.kind or '?':<9} {source:<24} {state}")
    return lines


@click.command()
@json_option
def plugins(as_json: bool) -> None:
    """The providers, protocols, QA gates and judges installed packages offer (entry points
    `moot.plugins`): kind, package and version, loaded or why not."""
    if as_json:
        say_json([p.describe() for p in checked()])
        return
    lines = plugin_lines()
    for line in lines:
        say(line, keys=True)
    if not lines:
        say("no plugins installed")
