"""Reports of a session: one view (`view.py`) rendered as Markdown and as HTML."""

from __future__ import annotations

from moot.engine.result import Result
from moot.engine.store import SessionFolder, atomic_write
from moot.report.html import html_for
from moot.report.markdown import render_markdown
from moot.report.view import SessionView, build_view, load_view
from moot.types import Event

__all__ = ["refresh_reports", "write_reports"]


def write_reports(folder: SessionFolder, result: Result, events: list[Event]) -> None:
    """report.md and report.html of a session, both rendered from one view. Written whole
    (a reader sees the old file or the new one) but not fsync'd: they are rendered from the
    journal, which is, and `moot export` renders them again."""
    _write(folder, build_view(result, events, folder))


def refresh_reports(folder: SessionFolder) -> None:
    """Render both reports again from the folder (after `moot apply` recorded its change)."""
    _write(folder, load_view(folder))


def _write(folder: SessionFolder, view: SessionView) -> None:
    atomic_write(folder.report_md, render_markdown(view, full=True), durable=False)
    atomic_write(folder.report_html, html_for(view), durable=False)
