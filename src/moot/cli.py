"""The `moot` command: parses, calls the library, maps outcomes to exit codes.

Exit codes: 0 consensus, 1 error (bad arguments or config included), 2 no consensus,
3 paused by a limit (resumable), 130 interrupted (resumable).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
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


def _subscribers(quiet: bool) -> list[Any]:
    if quiet:
        return []
    from moot.display.plain import PlainLog

    return [PlainLog()]


def _finish(run: RunResult, quiet: bool) -> NoReturn:
    result = run.result
    if quiet:
        if result.final_answer:
            click.echo(result.final_answer)
        sys.exit(run.exit_code)
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
    if run.message and run.message != result.how:
        click.echo(run.message)
    sys.exit(run.exit_code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="moot")
def cli() -> None:
    """Make several LLMs deliberate until they agree, or show exactly where they do not."""


@cli.command()
@click.argument("task")
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
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Pause when the session has cost this many USD.",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Pause when the session has used this many tokens.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Pause after this many seconds of running time.",
)
@click.option("--seed", type=int, default=None, help="Seed for aliases, order and sampling.")
@click.option(
    "--verify",
    "verify_commands",
    multiple=True,
    metavar="CMD",
    help="Shell command whose result the judge sees (repeatable).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only the final answer.")
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
        overrides["arena.max_rounds"] = rounds
    if verify_commands:
        overrides["arena.verify_commands"] = list(verify_commands)
    if seed is not None:
        overrides["seed"] = seed
    for key, value in _limit_overrides(max_cost, max_tokens, timeout).items():
        overrides[f"limits.{key}"] = value
    config = load_config(config_path, overrides)
    _finish(start(task, config, subscribers=_subscribers(quiet)), quiet)


@cli.command()
@click.argument("session_id", required=False)
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="New cost limit in USD.",
)
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="New token limit.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="New limit on running time in seconds.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only the final answer.")
def resume(
    session_id: str | None,
    max_cost: float | None,
    max_tokens: int | None,
    timeout: float | None,
    quiet: bool,
) -> None:
    """Continue a paused, interrupted or crashed session (default: the latest)."""
    from moot.runner import resume as resume_session

    limits = _limit_overrides(max_cost, max_tokens, timeout)
    _finish(resume_session(session_id, limits=limits, subscribers=_subscribers(quiet)), quiet)


@cli.command()
@click.argument("session_id", required=False)
def status(session_id: str | None) -> None:
    """Where a session is now, also while another process runs it."""
    from moot.engine.state import pid_alive
    from moot.engine.store import find_session

    folder = find_session(session_id)
    state = folder.state()
    if state is None:
        _fail(f"session {folder.id} has no state.json yet; it is starting or was never run")
    shown = state["status"]
    if shown == "running" and not pid_alive(int(state.get("pid", 0))):
        shown = "stopped unexpectedly (crashed or killed); continue with: moot resume " + folder.id
    age = time.time() - float(state.get("updated", time.time()))
    click.echo(f"Session {folder.id}  [{state['protocol']}]  {shown}")
    click.echo(f"Task: {state['task']}")
    click.echo(
        f"Round {state['round']}, phase {state['phase'] or '-'}; "
        f"{state['tokens']:,} tokens, ${state['cost']:.4f}; updated {age:.0f}s ago"
    )
    for alias, agent in state["agents"].items():
        label = "Agent " + alias.rsplit("_", 1)[-1].upper()
        click.echo(
            f"  {label:<9} {agent['status']:<9} {agent['step'] or '':<22} "
            f"{agent['calls']:>3} calls {agent['tokens']:>8,} tokens  {agent['model']}"
        )
    if state.get("message"):
        click.echo(state["message"])


@cli.command(name="list")
def list_() -> None:
    """Sessions under the sessions folder, oldest first."""
    from moot.engine.store import list_sessions, sessions_root

    folders = list_sessions()
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


@cli.command()
@click.argument("session_id", required=False)
def show(session_id: str | None) -> None:
    """The verdict, then what each agent said per round, and usage."""
    from moot.engine.store import find_session

    folder = find_session(session_id)
    if not folder.report_md.exists():
        _fail(f"session {folder.id} has no report yet: see moot status {folder.id}")
    click.echo(folder.report_md.read_text(encoding="utf-8"))


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
