"""`moot cache stats` and `moot cache clear`: the response cache of `moot run --cache`."""

from __future__ import annotations

from typing import Any

import click

__all__ = ["cache"]


@click.group()
def cache() -> None:
    """The response cache that `moot run --cache` uses."""


def _cache_store(spec: str | None) -> Any:
    from moot.engine.cache import open_cache

    return open_cache(spec)


@cache.command(name="stats")
@click.argument("spec", required=False)
def cache_stats(spec: str | None) -> None:
    """Entries, hits and misses of a cache store (SPEC as for --cache; default sqlite)."""
    import asyncio

    async def read() -> Any:
        store = _cache_store(spec)
        try:
            return await store.stats()
        finally:
            await store.close()

    stats = asyncio.run(read())
    size = "" if stats.size_bytes is None else f", {stats.size_bytes:,} bytes"
    expired = f" ({stats.expired} expired)" if stats.expired else ""
    click.echo(
        f"{stats.store}: {stats.entries} entries{expired}, {stats.hits} hits, "
        f"{stats.misses} misses{size}"
    )


@cache.command(name="clear")
@click.argument("spec", required=False)
def cache_clear(spec: str | None) -> None:
    """Remove every entry of a cache store (SPEC as for --cache; default sqlite)."""
    import asyncio

    async def clear() -> tuple[str, int]:
        store = _cache_store(spec)
        try:
            return store.location, await store.clear()
        finally:
            await store.close()

    location, removed = asyncio.run(clear())
    click.echo(f"{location}: removed {removed} entries")
