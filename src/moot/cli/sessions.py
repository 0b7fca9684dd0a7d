"""The commands that read a session folder: status, list, show, export, replay, migrate."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from moot.cli.common import fail, say

if TYPE_CHECKING:
    from moot.engine.store import SessionFolder

__all__ = ["export", "list_", "migrate", "replay", "show", "status"]


@click.command()
@click.argument("session_id", required=False)
@click.option("--reveal", is_flag=True, help="Show each agent's model while it runs.")
def status(session_id: str | None, reveal: bool) -> None:
    """Where a session is now, also while another process runs it (reads state.json)."""
    from rich.console import Console

    from moot.display.board import Board
    from moot.display.live import render_board
    from moot.engine.state import seen_state
    from moot.engine.store import find_session

    folder = find_session(session_id)
    seen = seen_state(folder)
    if seen is None:
        fail(f"session {folder.id} has no state.json yet; it is starting or was never run")
    board = Board.from_seen(seen, folder.meta())
    # a terminal's own width (the board narrows below 100 columns); piped, the wide table
    terminal = Console()
    width = terminal.width if terminal.is_terminal else max(100, terminal.width)
    console = Console(soft_wrap=False, width=width, highlight=False)
    say(
        f"Session {folder.id}  [{seen.state['protocol']}]  {seen.status}"
        + (f"; continue with: moot resume {folder.id}" if seen.crashed else "")
        + f"; updated {time.time() - seen.updated:.0f}s ago"
    )
    console.print(render_board(board, time.time(), reveal=reveal, width=console.width))
    for line in _protocol_lines(folder, str(seen.state.get("protocol", ""))):
        say(line)
    if seen.state.get("message") and seen.status != "running":
        say(seen.state["message"])
    if folder.result_json.exists() and seen.status != "running":
        say(f"Report: {folder.report_md}  (moot show {folder.id})")


def _protocol_lines(folder: SessionFolder, protocol: str) -> list[str]:
    """What the session's protocol adds to `moot status` (its definition's `status_lines`),
    from the journal as it stands (read-only: another process may be running the session)."""
    from moot import protocols
    from moot.engine.journal import Journal, key_from_env
    from moot.errors import ConfigError, JournalError

    try:
        hook = protocols.get(protocol).status_lines
    except ConfigError:  # a protocol this moot no longer has
        return []
    if hook is None:
        return []
    try:
        journal, _ = Journal.open(folder.events, key_from_env(), repair=False)
    except JournalError as exc:
        return [f"note: the journal cannot be read: {exc}"]
    return hook(journal.events)


@click.command(name="list")
def list_() -> None:
    """Sessions under the sessions folder, oldest first."""
    from moot.engine.seal import folder_result_problem
    from moot.engine.state import seen_state
    from moot.engine.store import list_sessions, sessions_root, unusable_folders

    folders = list_sessions()
    for folder, why in unusable_folders():  # left by a kill while moot created them
        say(f"note: skipped {folder.path}: not a session ({why})", err=True)
    if not folders:
        say(f"no sessions under {sessions_root()}")
        return
    now = time.time()
    for folder in folders:
        seen = seen_state(folder)
        meta = folder.meta() or {}
        task = " ".join(str(meta.get("task", "")).split())
        status, elapsed = "?", ""
        if seen is not None:
            status = seen.status
            elapsed = _duration(seen.standing().elapsed(now))
        say(f"{folder.id}  {meta.get('protocol', '?'):<7} {status:<22} {elapsed:>7}  {task[:50]}")
        from moot.lifecycle.code import live_worktrees

        trees = live_worktrees(folder)
        if trees:
            say(f"  worktrees: {trees} still exist (moot apply / moot clean {folder.id})")
        problem = folder_result_problem(folder)  # an edited result.json, or a cut journal
        if problem is not None:
            say(f"  ! {problem}")


def _duration(seconds: float) -> str:
    from moot.display.live import duration

    return duration(seconds)


@click.command()
@click.argument("session_id", required=False)
@click.option("--full", is_flag=True, help="Every answer whole, not one summary line each.")
def show(session_id: str | None, full: bool) -> None:
    """The verdict first, then what each agent said per round, scores or votes,
    disagreements, and usage (finished, paused or still running sessions)."""
    from moot.engine.store import find_session
    from moot.lifecycle import reports
    from moot.report.markdown import render_markdown
    from moot.report.view import load_view

    folder = find_session(session_id)
    reports.wait(folder.path)  # a run that just ended may still be writing its reports
    text = render_markdown(load_view(folder), full=full)
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        from moot.text.safe import terminal_safe

        # no hyperlinks: a model's [words](url) shows its address, it hides none behind words
        Console().print(Markdown(terminal_safe(text), hyperlinks=False))
    else:
        say(text)


def _report_path(name: str, kind: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """--NAME PATH (the parameter `NAME_path`): where `export` writes the report of that kind."""
    return click.option(
        f"--{name}",
        f"{name}_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help=f"Write the {kind} report here.",
    )


@click.command()
@click.argument("session_id", required=False)
@_report_path("html", "self-contained HTML")
@_report_path("md", "Markdown")
def export(session_id: str | None, html_path: Path | None, md_path: Path | None) -> None:
    """Write a session's report anywhere: --html PATH (one file that opens offline) and/or
    --md PATH."""
    from moot.engine.store import find_session
    from moot.report.html import html_for
    from moot.report.markdown import render_markdown
    from moot.report.view import load_view

    if html_path is None and md_path is None:
        fail("say what to write: --html PATH and/or --md PATH")
    folder = find_session(session_id)
    view = load_view(folder)
    for path, text in ((html_path, html_for(view)), (md_path, render_markdown(view))):
        if path is not None:
            if not path.parent.is_dir():  # a typo in the path must not become new folders
                fail(f"cannot write {path}: the folder {path.parent} does not exist; create it")
            try:
                path.write_text(text, encoding="utf-8")
            except OSError as exc:
                fail(f"cannot write {path}: {exc.strerror or exc}")
            say(f"wrote {path} (session {folder.id}, {view.status_text.lower()})")


@click.command()
@click.argument("session_id", required=False)
def replay(session_id: str | None) -> None:
    """Recompute the outcome from the journal alone (no model calls) and compare it with
    result.json."""
    from moot.api import replay as replay_session

    report = replay_session(session_id)
    result = report.result
    say(f"Session {report.session_id}: replayed {report.steps} journaled steps, 0 model calls")
    say(f"Outcome: {result.status.replace('_', ' ')}: {result.how}")
    if report.identical is None:
        say("No result.json stored to compare with.")
        sys.exit(1)
    if report.identical:
        say("Identical to the stored result.json, byte for byte.")
        return
    if report.changed is not None:  # the journal verifies: a rule changed, not the record
        say(report.changed[0].upper() + report.changed[1:] + ".")
        say(
            "The journal verifies and the stored result.json was computed from it: the "
            "difference is the new rule, not corruption (`moot resume` rewrites result.json)."
        )
        return
    say(
        "DIFFERENT from the stored result.json: the code that computes the outcome "
        "changed, or result.json was edited."
    )
    sys.exit(1)


@click.command()
@click.argument("session_id")
def migrate(session_id: str) -> None:
    """Upgrade a session folder written by an older moot (a backup is kept inside it)."""
    from moot.lifecycle.migrate import migrate as migrate_session

    done = migrate_session(session_id)
    if done.backup is None:
        say(f"Session {done.session_id} is at format version {done.to_version} already.")
        return
    say(
        f"Session {done.session_id}: format version {done.from_version} -> {done.to_version}, "
        f"{done.events} events re-chained; the old files are in {done.backup}"
    )
    if done.replay_identical is False and done.replay_changed is not None:
        say(done.replay_changed[0].upper() + done.replay_changed[1:] + ".")
        say("The journal verifies: the difference is the new rule, not corruption.")
        return
    if done.replay_identical is False:
        say("Replaying the journal does NOT give the stored result: see moot replay.")
        sys.exit(1)
    say("Replaying the new journal gives the stored result, byte for byte.")
