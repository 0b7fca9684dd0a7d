"""The commands that read a session folder: status, list, show, export, replay, migrate."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from moot.cli.common import Whole, fail, json_option, say, say_json

if TYPE_CHECKING:
    from moot.engine.store import SessionFolder

__all__ = ["export", "list_", "migrate", "replay", "show", "status"]


@click.command()
@click.argument("session_id", required=False)
@click.option("--reveal", is_flag=True, help="Show each agent's model while it runs.")
@json_option
def status(session_id: str | None, reveal: bool, as_json: bool) -> None:
    """Where a session is now, also while another process runs it (reads state.json)."""
    from rich.console import Console

    from moot.display.board import Board
    from moot.display.live import render_board
    from moot.engine.inbox import note_lines, notes_of
    from moot.engine.state import seen_state
    from moot.engine.store import find_session
    from moot.lifecycle.listing import session_row

    folder = find_session(session_id)
    seen = seen_state(folder)
    if seen is None:
        fail(f"session {folder.id} has no state.json yet; it is starting or was never run")
    if as_json:
        say_json(
            {
                **session_row(folder, time.time()),
                "updated": seen.updated,
                "message": seen.state.get("message"),
                "resumable": seen.crashed or seen.status in ("paused", "interrupted", "failed"),
                "notes": [
                    {"id": n.id, "agent": n.agent, "text": n.text, "sent": n.sent, "step": step}
                    for n, step in notes_of(folder)
                ],
            }
        )
        return
    board = Board.from_seen(seen, folder.meta())
    # a terminal's own width (the board narrows below 100 columns); piped, the wide table
    terminal = Console()
    width = terminal.width if terminal.is_terminal else max(100, terminal.width)
    console = Console(soft_wrap=False, width=width, highlight=False)
    say(
        f"Session {folder.id}  [{seen.state['protocol']}]  {seen.status.replace('_', ' ')}"
        + (f"; continue with: moot resume {folder.id}" if seen.crashed else "")
        + f"; updated {time.time() - seen.updated:.0f}s ago"
    )
    console.print(render_board(board, time.time(), reveal=reveal, width=console.width))
    for line in _protocol_lines(folder, str(seen.state.get("protocol", ""))):
        say(line)
    for line in note_lines(folder):  # a person's notes (moot say): delivered or waiting
        say(line)
    if folder.result_json.exists() and seen.status != "running":
        say(f"Report: {folder.report_md}  (moot show {folder.id})")


def _protocol_lines(folder: SessionFolder, protocol: str) -> list[str]:
    """What the session's protocol adds to `moot status` (its definition's
    `presentation.status_lines`), from the journal as it stands (read-only: another process
    may be running the session)."""
    from moot import protocols
    from moot.engine.journal import Journal, key_from_env
    from moot.errors import ConfigError, JournalError

    try:
        hook = protocols.get(protocol).presentation.status_lines
    except ConfigError:  # a protocol this moot no longer has
        return []
    if hook is None:
        return []
    try:
        journal, _ = Journal.open(folder.events, key_from_env(), repair=False)
    except JournalError as exc:
        return [f"note: the journal cannot be read: {exc}"]
    return hook(journal.events)


def _statuses(_: click.Context, __: click.Parameter, given: tuple[str, ...]) -> set[str]:
    """The statuses `--status` names (`no consensus` is no_consensus); a usage error naming
    the valid ones for one that is none."""
    from typing import get_args

    from moot.engine.result import Status
    from moot.engine.state import STOPPED_UNEXPECTEDLY

    known = [*get_args(Status), "running", STOPPED_UNEXPECTEDLY]
    known = [status.replace(" ", "_") for status in known]
    wanted = {status.strip().lower().replace(" ", "_") for status in given}
    wrong = ", ".join(repr(status) for status in sorted(wanted - set(known)))
    if wrong:
        raise click.BadParameter(f"no such status: {wrong}; use one of: {', '.join(known)}")
    return wanted


def _protocol(_: click.Context, __: click.Parameter, given: str | None) -> str | None:
    """The protocol `--protocol` names; a usage error naming the known ones for one that is
    none (as `--status` does), not a listing that matches nothing."""
    from moot import protocols

    if given is None or given in protocols.names():
        return given
    raise click.BadParameter(protocols.unknown_protocol(given))


@click.command(name="list")
@click.option(
    "--protocol",
    "protocol",
    default=None,
    metavar="NAME",
    callback=_protocol,
    help="Only this protocol's.",
)
@click.option(
    "--status",
    "wanted",
    multiple=True,
    metavar="STATUS",
    callback=_statuses,
    help="Only sessions with this status (consensus, no_consensus, paused, failed, running...; "
    "repeatable).",
)
@click.option(
    "--since",
    default=None,
    metavar="WHEN",
    help="Only sessions started since: a date (2026-11-26), or a time ago (90m, 12h, 7d).",
)
@click.option("--limit", type=Whole(min=1), default=None, help="Only the newest N.")
@json_option
def list_(
    protocol: str | None,
    wanted: set[str],
    since: str | None,
    limit: int | None,
    as_json: bool,
) -> None:
    """Sessions under the sessions folder, oldest first."""
    from moot.engine.store import (
        legacy_sessions_root,
        list_sessions,
        readable_root,
        sessions_root,
        unusable_folders,
    )
    from moot.lifecycle.listing import session_checks, session_row
    from moot.models.keys import redact

    old = legacy_sessions_root()
    if old is not None:
        say(
            f"note: {len(list_sessions(old))} sessions of an older moot are in {old}; "
            "`moot move-sessions` moves them to moot's home",
            err=True,
        )
    readable_root()  # a file as moot's home is named, not listed as a home with no session
    after = _since(since) if since is not None else None
    folders = list_sessions()
    for folder, why in unusable_folders():  # left by a kill while moot created them
        say(f"note: skipped {folder.path}: not a session ({why})", err=True)
    now = time.time()
    rows = []
    for folder in folders:
        row = session_row(folder, now, checked=False)
        if protocol is not None and row["protocol"] != protocol:
            continue
        if wanted and str(row["status"]).replace(" ", "_") not in wanted:
            continue
        if after is not None and (row["created"] or 0) < after:
            continue
        rows.append((folder, row))
    if limit is not None:
        rows = rows[-limit:]
    for folder, row in rows:  # what reads the journal, only for the rows shown
        row.update(session_checks(folder))
    if as_json:
        say_json([row for _, row in rows])
        return
    if not rows:
        filtered = protocol or wanted or after is not None
        say(f"no sessions{' that match' if filtered else ''} under {sessions_root()}")
        return
    wide = max(len(str(row["protocol"])) for _, row in rows)  # a tournament's name is long
    for folder, row in rows:
        task = " ".join(redact(str(row["task"])).split())  # an older moot stored it unmasked
        elapsed = "" if row["elapsed"] is None else _duration(row["elapsed"])
        kind = f"{row['protocol']:<{wide}}"
        shown = str(row["status"]).replace("_", " ")  # words, not the JSON's code word
        say(f"{folder.id}  {kind} {shown:<22} {elapsed:>7}  {task[:50]}")
        if trees := row["worktrees"]:
            say(f"  worktrees: {trees} still exist (moot apply / moot clean {folder.id})")
        if row["problem"] is not None:
            say(f"  ! {row['problem']}")


def _since(text: str) -> float:
    """The time `--since` means: a date (YYYY-MM-DD, local midnight) or a span ago (90m,
    12h, 7d)."""
    import datetime
    import re

    span = re.fullmatch(r"\s*(\d+)\s*([smhdw])\s*", text)
    if span:
        seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[span.group(2)]
        return time.time() - int(span.group(1)) * seconds
    try:
        day = datetime.date.fromisoformat(text.strip())
    except ValueError:
        raise click.BadParameter(
            f"{text!r}: give a date (2026-11-26) or a time ago (90m, 12h, 7d)", param_hint="--since"
        ) from None
    return datetime.datetime.combine(day, datetime.time()).timestamp()


def _duration(seconds: float) -> str:
    from moot.display.live import duration

    return duration(seconds)


@click.command()
@click.argument("session_id", required=False)
@click.option("--full", is_flag=True, help="Every answer whole, not one summary line each.")
@click.option(
    "--no-pager",
    is_flag=True,
    help="On a terminal, print it all even when longer than the screen (else MOOT_PAGER, "
    "PAGER or less shows it).",
)
@json_option
def show(session_id: str | None, full: bool, no_pager: bool, as_json: bool) -> None:
    """The verdict first, then what each agent said per round, scores or votes,
    disagreements, and usage (finished, paused or still running sessions)."""
    from moot.engine.store import find_session

    if as_json:
        from moot.lifecycle.listing import outcome_json

        say_json(outcome_json(find_session(session_id)))
        return
    from moot.lifecycle import reports
    from moot.models.keys import redact
    from moot.report.markdown import render_markdown
    from moot.report.view import load_view

    folder = find_session(session_id)
    reports.wait(folder.path)  # a run that just ended may still be writing its reports
    # an older moot stored a pasted key unmasked: masked as it is printed
    text = redact(render_markdown(load_view(folder), full=full))
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        from moot.text.safe import terminal_safe

        console = Console()
        with console.capture() as captured:
            # no hyperlinks: a model's [words](url) shows its address, it hides none behind words
            console.print(Markdown(terminal_safe(text), hyperlinks=False))
        shown = captured.get()
        if not no_pager and shown.count("\n") > console.height:
            from moot.display.pager import page

            page(shown)
        else:
            sys.stdout.write(shown)
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
    from moot.files import file_in_the_way
    from moot.report.html import html_for
    from moot.report.markdown import render_markdown
    from moot.report.view import load_view

    if html_path is None and md_path is None:
        fail("say what to write: --html PATH and/or --md PATH")
    folder = find_session(session_id)
    view = load_view(folder)
    for flag, path, text in (
        ("--html", html_path, html_for(view)),
        ("--md", md_path, render_markdown(view)),
    ):
        if path is not None:
            if (file := file_in_the_way(path.parent)) is not None:
                fail(
                    f"cannot write {path}: {file} is a file, not a folder; give {flag} another path"
                )
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
