"""The sessions page's rows: every session under the sessions folder, newest first, filtered
and cut to one page. Only what a filter needs is read for every session (session.json for
protocol, model and text; state.json for status); a row's other files are read only for the
rows the page shows."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct

from moot.engine.state import seen_state
from moot.engine.store import SessionFolder, list_sessions, read_json
from moot.lifecycle.listing import session_row

__all__ = ["Filters", "Page", "page_of", "row_of"]

PAGE_SIZE = 50


class Filters(Struct, frozen=True):
    """What the sessions page was asked to show: each filter empty when not given."""

    protocol: str = ""
    status: str = ""
    model: str = ""
    text: str = ""
    page: int = 1

    @property
    def any(self) -> bool:
        return bool(self.protocol or self.status or self.model or self.text)

    def query(self, page: int) -> dict[str, str]:
        """The query string of this filter on page `page` (empty filters left out)."""
        pairs = {"protocol": self.protocol, "status": self.status, "model": self.model}
        pairs |= {"text": self.text, "page": str(page)}
        return {key: value for key, value in pairs.items() if value}


class Page(Struct, frozen=True):
    rows: list[dict[str, Any]]
    number: int
    pages: int
    total: int


def _models(meta: dict[str, Any]) -> list[str]:
    aliases = meta.get("aliases") or {}
    if isinstance(aliases, dict):
        return [str(spec) for spec in aliases.values()]
    return []


def _matches(folder: SessionFolder, filters: Filters) -> bool:
    meta = folder.meta() or {}
    if filters.protocol and str(meta.get("protocol", "")) != filters.protocol:
        return False
    if filters.model and not any(filters.model in m for m in _models(meta)):
        return False
    if filters.text:
        needle = filters.text.lower()
        if needle not in str(meta.get("task", "")).lower() and needle not in folder.id.lower():
            return False
    if filters.status:
        seen = seen_state(folder)
        if (seen.status if seen is not None else "?") != filters.status:
            return False
    return True


def row_of(folder: SessionFolder, now: float | None = None) -> dict[str, Any]:
    """One row: `moot list`'s fields, with models, tokens, cost, label and trust added."""
    now = time.time() if now is None else now
    row = session_row(folder, now, checked=False)
    meta = folder.meta() or {}
    seen = seen_state(folder)
    standing = seen.standing() if seen is not None else None
    result = read_json(folder.result_json) or {}
    finding = result.get("finding") or {}
    row |= {
        "models": _models(meta),
        "tokens": standing.tokens if standing is not None else result.get("tokens"),
        "cost": standing.cost if standing is not None else result.get("cost"),
        "label": str(finding.get("label", "")) if isinstance(finding, dict) else "",
        "trust": str(result.get("trust", "")),
    }
    return row


def page_of(root: Path | None, filters: Filters, size: int = PAGE_SIZE) -> Page:
    """The rows of one page of sessions, newest first."""
    folders: Sequence[SessionFolder] = list_sessions(root)[::-1]
    if filters.any:
        folders = [f for f in folders if _matches(f, filters)]
    pages = max(1, -(-len(folders) // size))
    number = min(max(1, filters.page), pages)
    shown = folders[(number - 1) * size : number * size]
    now = time.time()
    return Page([row_of(f, now) for f in shown], number, pages, len(folders))
