"""The `moot` command: parses, calls the library, maps outcomes to exit codes.

Exit codes: 0 consensus, 1 error (bad arguments or config included), 2 no consensus,
3 paused by a limit (resumable), 130 interrupted (resumable).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from collections.abc import Callable

    from moot.display import Face
    from moot.runner import RunResult

__all__ = ["cli", "main"]


def _fail(message: str, code: int = 1) -> NoReturn:
    click.echo(f"moot: error: {message}", err=True)
    sys.exit(code)


def _limit_overrides(
    max_cost: float | None, max_tokens: int | None, timeout: float | None
) -> dict[str, Any]:
    pairs = {"max_cost": max_cost, "max_tokens": max_tokens, "timeout": timeout}
    return {key: value for key, value in pairs.items() if value is not None}


def _face(quiet: bool, json_logs: bool, reveal: bool) -> Face:
    """The display for a run, on stderr: live view on a terminal, else plain lines."""
    from moot.display import face_for

    return face_for(quiet=quiet, json_logs=json_logs, reveal=reveal)


def _limit_options(command: Callable[..., None]) -> Callable[..., None]:
    """--max-cost, --max-tokens, --timeout: a run's budgets, or new ones on resume."""
    positive = click.FloatRange(min=0, min_open=True)
    command = click.option(
        "--timeout",
        type=positive,
        default=None,
        help="Pause after this many seconds of running time (on resume: a new limit).",
    )(command)
    command = click.option(
        "--max-tokens",
        type=click.IntRange(min=1),
        default=None,
        help="Pause when the session has used this many tokens (on resume: a new limit).",
    )(command)
    return click.option(
        "--max-cost",
        type=positive,
        default=None,
        help="Pause when the session has cost this many USD (on resume: a new limit).",
    )(command)


def _display_options(command: Callable[..., None]) -> Callable[..., None]:
    command = click.option(
        "--json-logs", is_flag=True, help="One JSON object per event on stderr (for machines)."
    )(command)
    command = click.option(
        "--reveal", is_flag=True, help="Show each agent's model in the live view as it runs."
    )(command)
    return click.option("-q", "--quiet", is_flag=True, help="Print only the final answer.")(command)


def _exit(code: int) -> NoReturn:
    """Exit with `code`. After an interruption a model call may still run in a worker thread
    that cannot be stopped (llama.cpp has no cancel); everything is journaled and written by
    now, so we leave at once instead of waiting for it, or letting it crash at shutdown."""
    if code == 130 and any(
        t.is_alive() and not t.daemon
        for t in threading.enumerate()
        if t is not threading.main_thread()
    ):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _finish(run: RunResult, quiet: bool) -> NoReturn:
    result = run.result
    if quiet:
        if result.final_answer:
            click.echo(result.final_answer)
        _exit(run.exit_code)
    click.echo("")
    click.echo(f"Session {run.session_id}: {result.status.replace('_', ' ')}: {result.how}")
    if result.final_answer:
        click.echo("")
        click.echo(result.final_answer)
        click.echo("")
    for item in result.disagreements:
        click.echo(f"  disagreement: {item}")
    cost = "unknown" if result.cost is None else f"${result.cost:.4f}"
    click.echo(f"Tokens {result.tokens:,}, cost {cost}. Report: {run.folder / 'report.md'}")
    click.echo(f"Web page: {run.folder / 'report.html'}")
    if run.message and run.message != result.how:
        click.echo(run.message)
    _exit(run.exit_code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="moot")
def cli() -> None:
    """Make several LLMs deliberate until they agree, or show exactly where they do not."""


@cli.command()
@click.argument("task", required=False, default="")
@click.option("--protocol", default=None, help="Deliberation protocol (default: arena).")
@click.option(
    "--models",
    "models",
    multiple=True,
    metavar="SPEC",
    help="One agent per use, e.g. --models local:smollm2 --models openai:gpt-5.2.",
)
@click.option("--rounds", type=click.IntRange(1, 50), default=None, help="Maximum rounds.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML, JSON or YAML config file.",
)
@_limit_options
@click.option("--seed", type=int, default=None, help="Seed for aliases, order and sampling.")
@click.option(
    "--verify",
    "verify_commands",
    multiple=True,
    metavar="CMD",
    help="Shell command whose result the judge sees (repeatable).",
)
@_display_options
def run(
    task: str,
    protocol: str | None,
    models: tuple[str, ...],
    rounds: int | None,
    config_path: Path | None,
    max_cost: float | None,
    max_tokens: int | None,
    timeout: float | None,
    seed: int | None,
    verify_commands: tuple[str, ...],
    quiet: bool,
    reveal: bool,
    json_logs: bool,
) -> None:
    """Deliberate on TASK. With no --models and no config: three agents on the embedded model."""
    from moot.config import load_config
    from moot.runner import start

    overrides: dict[str, Any] = {}
    if protocol:
        overrides["protocol"] = protocol
    if models:
        overrides["agents"] = [{"model": spec} for spec in models]
    if rounds is not None:
        overrides["court.max_agent_rounds" if protocol == "court" else "arena.max_rounds"] = rounds
    if verify_commands:
        overrides["arena.verify_commands"] = list(verify_commands)
    if seed is not None:
        overrides["seed"] = seed
    for key, value in _limit_overrides(max_cost, max_tokens, timeout).items():
        overrides[f"limits.{key}"] = value
    config = load_config(config_path, overrides)
    with _face(quiet, json_logs, reveal) as face:
        finished = start(task, config, subscribers=[face])
    _finish(finished, quiet)


@cli.command()
@click.argument("session_id", required=False)
@_limit_options
@_display_options
def resume(
    session_id: str | None,
    max_cost: float | None,
    max_tokens: int | None,
    timeout: float | None,
    quiet: bool,
    reveal: bool,
    json_logs: bool,
) -> None:
    """Continue a paused, interrupted or crashed session (default: the latest)."""
    from moot.runner import resume as resume_session

    limits = _limit_overrides(max_cost, max_tokens, timeout)
    with _face(quiet, json_logs, reveal) as face:
        finished = resume_session(session_id, limits=limits, subscribers=[face])
    _finish(finished, quiet)


@cli.command()
@click.argument("session_id", required=False)
@click.option("--reveal", is_flag=True, help="Show each agent's model while it runs.")
def status(session_id: str | None, reveal: bool) -> None:
    """Where a session is now, also while another process runs it (reads state.json)."""
    from rich.console import Console

    from moot.display.board import Board
    from moot.display.live import render_board
    from moot.engine.state import pid_alive
    from moot.engine.store import find_session

    folder = find_session(session_id)
    state = folder.state()
    if state is None:
        _fail(f"session {folder.id} has no state.json yet; it is starting or was never run")
    board = Board.from_state(state, folder.meta())
    shown = state["status"]
    if shown == "running" and not pid_alive(int(state.get("pid", 0))):
        shown = "stopped unexpectedly (crashed or killed); continue with: moot resume " + folder.id
        board.ended = "stopped unexpectedly"
    updated = float(state.get("updated", time.time()))
    board.started = float((folder.meta() or {}).get("created", updated))
    now = time.time() if board.ended is None else updated  # an ended session's clock stops
    console = Console(soft_wrap=False, width=max(100, Console().width), highlight=False)
    click.echo(
        f"Session {folder.id}  [{state['protocol']}]  {shown}; "
        f"updated {time.time() - updated:.0f}s ago"
    )
    console.print(render_board(board, now, reveal=reveal))
    if state.get("message") and state["status"] != "running":
        click.echo(state["message"])
    if folder.result_json.exists() and state["status"] != "running":
        click.echo(f"Report: {folder.report_md}  (moot show {folder.id})")


@cli.command(name="list")
def list_() -> None:
    """Sessions under the sessions folder, oldest first."""
    from moot.engine.store import list_sessions, sessions_root, unusable_folders
    from moot.result import folder_result_problem

    folders = list_sessions()
    for folder, why in unusable_folders():  # left by a kill while moot created them
        click.echo(f"note: skipped {folder.path}: not a session ({why})", err=True)
    if not folders:
        click.echo(f"no sessions under {sessions_root()}")
        return
    for folder in folders:
        state = folder.state() or {}
        meta = folder.meta() or {}
        task = str(meta.get("task", "")).replace("\n", " ")
        click.echo(
            f"{folder.id}  {meta.get('protocol', '?'):<7} "
            f"{state.get('status', '?'):<13} {task[:60]}"
        )
        problem = folder_result_problem(folder)  # an edited result.json, or a cut journal
        if problem is not None:
            click.echo(f"  ! {problem}")


@cli.command()
@click.argument("session_id", required=False)
@click.option("--full", is_flag=True, help="Every answer whole, not one summary line each.")
def show(session_id: str | None, full: bool) -> None:
    """The verdict first, then what each agent said per round, scores or votes,
    disagreements, and usage (finished, paused or still running sessions)."""
    from moot.engine.store import find_session
    from moot.report.markdown import render_markdown
    from moot.report.view import load_view

    text = render_markdown(load_view(find_session(session_id)), full=full)
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(text))
    else:
        click.echo(text)


@cli.command()
@click.argument("session_id", required=False)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the self-contained HTML report here.",
)
@click.option(
    "--md",
    "md_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the Markdown report here.",
)
def export(session_id: str | None, html_path: Path | None, md_path: Path | None) -> None:
    """Write a session's report anywhere: --html PATH (one file that opens offline) and/or
    --md PATH."""
    from moot.engine.store import find_session
    from moot.report.html import html_for
    from moot.report.markdown import render_markdown
    from moot.report.view import load_view

    if html_path is None and md_path is None:
        _fail("say what to write: --html PATH and/or --md PATH")
    folder = find_session(session_id)
    view = load_view(folder)
    for path, text in ((html_path, html_for(view)), (md_path, render_markdown(view))):
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            except OSError as exc:
                _fail(f"cannot write {path}: {exc.strerror or exc}")
            click.echo(f"wrote {path} (session {folder.id}, {view.status_text.lower()})")


@cli.command()
@click.argument("session_id", required=False)
def replay(session_id: str | None) -> None:
    """Recompute the outcome from the journal alone (no model calls) and compare it with
    result.json."""
    from moot.runner import replay as replay_session

    report = replay_session(session_id)
    result = report.result
    click.echo(
        f"Session {report.session_id}: replayed {report.steps} journaled steps, 0 model calls"
    )
    click.echo(f"Outcome: {result.status.replace('_', ' ')}: {result.how}")
    if report.identical is None:
        click.echo("No result.json stored to compare with.")
        sys.exit(1)
    if report.identical:
        click.echo("Identical to the stored result.json, byte for byte.")
        return
    click.echo(
        "DIFFERENT from the stored result.json: the code that computes the outcome "
        "changed, or result.json was edited."
    )
    sys.exit(1)


@cli.command()
def models() -> None:
    """The model providers, which are installed, and example specs."""
    from moot.models.doctor import provider_lines

    for line in provider_lines():
        click.echo(line)


@cli.command()
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Check the agents of this config file.",
)
@click.option("--models", "specs", multiple=True, metavar="SPEC", help="Check this model spec.")
@click.option("--ping", is_flag=True, help="Also make a one-token call to each model.")
def doctor(config_path: Path | None, specs: tuple[str, ...], ping: bool) -> None:
    """Whether each configured model can run here: SDK, key (never shown), command, ping."""
    from moot.config import load_config
    from moot.models.doctor import check_models

    overrides = {"agents": [{"model": spec} for spec in specs]} if specs else {}
    config = load_config(config_path, overrides)
    agents = list({a.model: a for a in reversed(config.agents)}.values())[::-1]  # each once
    reports = check_models(agents, ping=ping)
    for report in reports:
        click.echo(report.spec)
        for check in report.checks:
            click.echo(f"  {'ok  ' if check.ok else 'FAIL'}  {check.text}")
    bad = sum(1 for r in reports if not r.ok)
    click.echo(f"{len(reports) - bad} of {len(reports)} model(s) ready" if reports else "no models")
    if bad:
        sys.exit(1)


@cli.command()
@click.argument("file", type=click.Path(path_type=Path))
def validate(file: Path) -> None:
    """Check a config file: print every problem with its path (exit 1), or "valid"."""
    from moot.config import check_config

    config, problems = check_config(file)
    if config is None:
        click.echo(f"{file}: {len(problems)} problem(s)")
        for line in problems:
            click.echo(f"  {line}")
        sys.exit(1)
    judges = len(config.court.judge_configs(config.agents)) if config.protocol == "court" else 0
    panel = f", {judges} judge(s)" if judges else ""
    click.echo(f"{file}: valid ({config.protocol}, {len(config.agents)} agent(s){panel})")


@cli.command()
def schema() -> None:
    """Print the JSON Schema of config files."""
    import json

    from moot.config import RunConfig

    click.echo(json.dumps(RunConfig.model_json_schema(), indent=2))


@cli.command()
@click.argument("session_id")
def migrate(session_id: str) -> None:
    """Upgrade a session folder written by an older moot (a backup is kept inside it)."""
    from moot.migrate import migrate as migrate_session

    done = migrate_session(session_id)
    if done.backup is None:
        click.echo(f"Session {done.session_id} is at format version {done.to_version} already.")
        return
    click.echo(
        f"Session {done.session_id}: format version {done.from_version} -> {done.to_version}, "
        f"{done.events} events re-chained; the old files are in {done.backup}"
    )
    if done.replay_identical is False:
        click.echo("Replaying the journal does NOT give the stored result: see moot replay.")
        sys.exit(1)
    click.echo("Replaying the new journal gives the stored result, byte for byte.")


def main(argv: list[str] | None = None) -> None:
    """Entry point: our own error handling, so that usage errors exit with 1, not click's 2."""
    from moot.errors import MootError

    try:
        returned = cli.main(args=argv, prog_name="moot", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(1)
    except MootError as exc:
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    sys.exit(returned if isinstance(returned, int) else 0)
