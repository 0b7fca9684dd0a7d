"""Reports of a session: one view (`view.py`) rendered as Markdown and as HTML."""

from __future__ import annotations

from moot.engine.result import Result
from moot.engine.store import SessionFolder, atomic_write
from moot.report.html import html_for
from moot.report.markdown import render_markdown
from moot.report.view import build_view, load_view
from moot.types import Event

__all__ = ["refresh_reports", "write_reports"]


def write_reports(folder: SessionFolder, result: Result, events: list[Event]) -> None:
    """report.md and report.html of a session, both rendered from one view."""
    view = build_view(result, events, folder)
    atomic_write(folder.report_md, render_markdown(view, full=True))
    atomic_write(folder.report_html, html_for(view))


def refresh_reports(folder: SessionFolder) -> None:
    """Render both reports again from the folder (after `moot apply` recorded its change)."""
    view = load_view(folder)
    atomic_write(folder.report_md, render_markdown(view, full=True))
    atomic_write(folder.report_html, html_for(view))
