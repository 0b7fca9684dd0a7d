"""`moot cache stats` and `moot cache clear`: the response cache of `moot run --cache`."""

from __future__ import annotations

import click

from moot.cli.common import say

__all__ = ["cache"]


@click.group()
def cache() -> None:
    """The response cache that `moot run --cache` uses."""


@cache.command(name="stats")
@click.argument("spec", required=False)
def cache_stats(spec: str | None) -> None:
    """Entries, hits and misses of a cache store (SPEC as for --cache; default sqlite)."""
    from moot.engine.cache import store_stats

    stats = store_stats(spec)
    size = "" if stats.size_bytes is None else f", {stats.size_bytes:,} bytes"
    expired = f" ({stats.expired} expired)" if stats.expired else ""
    say(
        f"{stats.store}: {stats.entries} entries{expired}, {stats.hits} hits, "
        f"{stats.misses} misses{size}"
    )


@cache.command(name="clear")
@click.argument("spec", required=False)
def cache_clear(spec: str | None) -> None:
    """Remove every entry of a cache store (SPEC as for --cache; default sqlite)."""
    from moot.engine.cache import clear_store

    location, removed = clear_store(spec)
    say(f"{location}: removed {removed} entries")
