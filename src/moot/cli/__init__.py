"""The `moot` command: parses, calls the library, maps outcomes to exit codes.

Exit codes: 0 consensus, 1 error (bad arguments or config included), 2 no consensus,
3 paused by a limit (resumable), 130 interrupted (resumable).
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

import click

if TYPE_CHECKING:
    from collections.abc import Callable

    from moot.api import RunResult
    from moot.display import Face
    from moot.engine.result import Result

__all__ = ["cli", "main"]

DEMO_ROUNDS = 1  # rounds of a run with no --models and no config (the embedded model)


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


def _tmux_option(command: Callable[..., None]) -> Callable[..., None]:
    return click.option(
        "--display",
        "display",
        type=click.Choice(["tmux"]),
        default=None,
        help="tmux: also show each CLI agent's output in its own pane of a private tmux "
        "server (tmux -L moot-SESSION attach).",
    )(command)


def _quick_start(command: Callable[..., None]) -> Callable[..., None]:
    """No garbage collection while the command starts a run (engine/startup.py)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        from moot.engine.startup import paused

        with paused():
            command(*args, **kwargs)

    return wrapper


def _tmux(display: str | None) -> str | None:
    """The tmux executable for --display tmux (missing: an error before anything is made)."""
    if display != "tmux":
        return None
    from moot.display.tmux import require_tmux

    return require_tmux()


def _with_tmux(face: Face, tmux: str | None) -> Face:
    if tmux is None:
        return face
    from moot.display.tmux import TmuxPanes

    return TmuxPanes(face, tmux=tmux)


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


def _say(text: str) -> None:
    """Print text that may hold model output: escape sequences and control characters are
    removed or made visible, so an answer cannot drive the reader's terminal."""
    from moot.text.safe import terminal_safe

    click.echo(terminal_safe(text))


def _shown(face: Face, quiet: bool) -> Callable[[RunResult], None]:
    """What the library calls the moment the outcome is known, before it writes the reports:
    the face's live view ends, and the outcome is printed (and flushed)."""

    def show(run: RunResult) -> None:
        face.outcome(run.result)  # the live view's last frame, or the log's last lines
        face.__exit__(None, None, None)  # the live view stops before the outcome prints
        _show(run, quiet)
        sys.stdout.flush()

    return show


def _show(run: RunResult, quiet: bool) -> None:
    result = run.result
    if quiet:  # the answer alone; with no answer (a deadlock, a pause), the outcome line
        if result.final_answer:
            _say(result.final_answer)
        else:
            _say(f"{result.status_words}: {result.how}")
        return
    click.echo("")
    _say(f"Session {run.session_id}: {result.status_words}: {result.how}")
    if result.trust:
        _say(f"How far to trust it: {result.trust}")
    _finding_lines(result)
    _code_lines(result)
    if result.final_answer:
        click.echo("")
        _say(result.final_answer)
        click.echo("")
    for item in result.disagreements:
        _say(f"  disagreement: {item}")
    cost = "unknown" if result.cost is None else f"${result.cost:.4f}"
    click.echo(f"Tokens {result.tokens:,}, cost {cost}. Report: {run.folder / 'report.md'}")
    click.echo(f"Web page: {run.folder / 'report.html'}")
    if run.message and run.message != result.how:  # (a note after the outcome's how)
        _say(run.message.removeprefix(result.how).strip())


def _finding_lines(result: Result) -> None:
    """moot's finding: its label and reason (unless the outcome line says it already), each
    agent's claim round by round, changes of mind (unless the trust statement names them)
    and the model verdicts that moot's check does not bear out."""
    from moot.text import change_line, claims_table, finding_line, verdict_line
    from moot.types import alias_label

    finding = result.finding
    if finding is None:
        return
    if finding.reason not in result.how:
        _say(f"moot's finding: {finding_line(finding)}")
    table = claims_table(result.claims)
    if table.rows and len(table.rounds) > 1:
        _say("Claims by round (" + ", ".join(str(r) for r in table.rounds) + "):")
        for agent, cells in table.rows:
            _say(f"  {alias_label(agent)}: " + " -> ".join(table.cell(c, 40) for c in cells))
    if "Changes of mind" not in result.trust:
        for change in result.changes:
            _say(f"  changed their mind: {change_line(change)}")
    for verdict in result.verdicts:
        if not verdict.valid or not verdict.upheld:
            _say(f"  model verdict: {verdict_line(verdict)}")


def _code_lines(result: Any) -> None:
    """A code task's agents: status, diff stats, verification and cost, one line each."""
    for row in result.code_changes():
        usage = result.agents.get(row.name)
        cost = "cost unknown" if usage is None or usage.cost is None else f"${usage.cost:.4f}"
        why = f" ({row.problem})" if row.problem else ""
        verified = f"verify {row.verified}" if row.checks else row.verified
        click.echo(f"  {row.name}: {row.status}{why}; {row.stats}; {verified}; {cost}")


class ProtocolName(click.ParamType[str, Any]):
    """A registered protocol's name; the choices are read from the registry when shown."""

    name = "protocol"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        from moot import protocols

        return "[" + "|".join(protocols.names()) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from moot import protocols

        if value in protocols.names():
            return str(value)
        self.fail(protocols.unknown_protocol(str(value)), param, ctx)


def _task(task: str, task_file: Path | None) -> str:
    """The task from the argument, `-` or a pipe (stdin), or --task-file."""
    if task_file is not None:
        if task and task != "-":
            raise click.UsageError("give the task as an argument or with --task-file, not both")
        return _read_text(task_file.read_bytes, str(task_file))
    if task == "-":
        return _read_text(sys.stdin.buffer.read, "standard input")
    if not task and not sys.stdin.isatty():  # a pipe; a closed or unreadable stdin is no task
        try:
            data = sys.stdin.buffer.read()
        except OSError:
            return ""
        return _decode(data, "standard input")  # bad UTF-8 is an error, not "no task"
    return task


def _read_text(read: Callable[[], bytes], source: str) -> str:
    try:
        data = read()
    except OSError as exc:
        raise click.UsageError(f"cannot read the task from {source}: {exc.strerror}") from None
    return _decode(data, source)


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.UsageError(
            f"the task in {source} is not valid UTF-8 (byte {exc.start}); save it as UTF-8"
        ) from None


def _input_text(path: Path | None) -> str | None:
    if path is None:
        return None
    text = _read_text(path.read_bytes, str(path))
    if not text.strip():
        raise click.UsageError(
            f"--input {path} is empty; give a file holding the text to start from"
        )
    return text


def _preset(preset: str, protocol: str | None) -> dict[str, str]:
    """The overrides of `--preset NAME`: the protocol whose record has that preset (it must be
    --protocol's, when given) and the option the preset sets."""
    from moot import protocols

    owners = [protocols.get(name) for name in protocols.names()]
    owner = next((r for r in owners if preset in r.presets and r.preset_option), None)
    if owner is None:
        known = ", ".join(p for r in owners for p in r.presets)
        raise click.UsageError(f"--preset {preset}: no protocol has that preset ({known})")
    if protocol is not None and protocol != owner.name:
        raise click.UsageError(
            f"--preset is a {owner.name} preset, not one of --protocol {protocol}"
        )
    return {"protocol": owner.name, f"{owner.name}.{owner.preset_option}": preset}


def _takes_rounds(protocol: str | None) -> bool:
    """Whether the protocol that runs (the config's default without --protocol) has rounds."""
    from moot import protocols
    from moot.config import RunConfig

    name = protocol or str(RunConfig.model_fields["protocol"].default)
    return protocols.get(name).rounds_option is not None


def _projection_gate(plan: Any, task: str, dry_run: bool) -> None:
    """--dry-run prints the projection and exits 0; a projection above the session's max_cost
    asks for confirmation on a terminal and refuses otherwise (exit 1)."""
    limit = plan.config.limits.max_cost
    if not dry_run and limit is None:
        return
    from moot.lifecycle.projection import estimate, render

    projected = estimate(plan, task)
    if dry_run:
        if projected is None:
            click.echo(f"The {plan.record.name} protocol gives no projection; nothing was run.")
        else:
            click.echo(render(projected))
        sys.exit(0)
    if projected is None or limit is None or projected.cost[1] <= limit:
        return
    message = (
        f"the projected worst case costs ${projected.cost[1]:.4f}, more than --max-cost ${limit:g}"
    )
    if sys.stdin.isatty() and sys.stderr.isatty():
        click.echo(render(projected), err=True)
        if click.confirm(f"{message.capitalize()}. Run anyway?", default=False, err=True):
            return
        _fail("not run: the projected cost is above --max-cost")
    _fail(
        f"{message}; not run. Raise --max-cost, lower the caps (--rounds, --samples), or see "
        "the projection with --dry-run"
    )


class _Commands(click.Group):
    """The CLI's group, with `batch` and `bench` imported only when one of them is asked for or
    listed: their module (and the bench suites it names) is not on a `moot run`'s path."""

    _LAZY: ClassVar[dict[str, str]] = {"batch": "moot.cli.batch", "bench": "moot.cli.batch"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = self._LAZY.get(cmd_name)
        if module is not None and cmd_name not in self.commands:
            command = getattr(importlib.import_module(module), cmd_name)
            self.add_command(command)
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:  # suggest among the lazy ones too
            raise click.exceptions.NoSuchCommand(
                exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx
            ) from None


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"]},
    invoke_without_command=True,
)
@click.version_option(package_name="moot")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Make several LLMs deliberate until they agree, or show exactly where they do not."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@cli.command()
@click.argument("task", required=False, default="")
@click.option(
    "--task-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Read the task from this file (UTF-8). TASK '-' or a pipe reads standard input.",
)
@click.option(
    "--protocol", type=ProtocolName(), default=None, help="Deliberation protocol (default: arena)."
)
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
@click.option(
    "--no-shuffle",
    is_flag=True,
    help="Keep the models in the order given where the protocol would shuffle them.",
)
@click.option(
    "--samples",
    type=click.IntRange(1, 100),
    default=None,
    help="Answers asked of every agent, for protocols that sample (vote).",
)
@click.option(
    "--input",
    "input_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A text to start from, for protocols that refine one (refine).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the projected calls, tokens and cost range, then exit without running.",
)
@click.option(
    "--cache",
    "cache",
    is_flag=False,
    flag_value="sqlite",
    default=None,
    metavar="[SPEC]",
    help="Answer requests seen before from a cache: sqlite (default), sqlite:PATH or "
    "redis://HOST:PORT/DB. Put it after TASK, or write --cache=SPEC.",
)
@click.option(
    "--repo",
    "repo",
    is_flag=False,
    flag_value=".",
    default=None,
    metavar="[PATH]",
    help="A code task in this git repository (default: the current one): each agent works in "
    "its own worktree. Put it after TASK, or write --repo=PATH.",
)
@click.option(
    "--context",
    "context",
    multiple=True,
    metavar="GLOB",
    help="With --repo: files API models see whole (repeatable); none: a file listing.",
)
@click.option(
    "--pick",
    "pick",
    type=click.Choice(["human", "judge", "none"]),
    default=None,
    help="With --protocol pick: who picks the winner (default: you, on the terminal).",
)
@click.option(
    "--preset",
    metavar="NAME",
    default=None,
    help="A refine preset (implies --protocol refine): impl is the implementation tournament "
    "of a code task (with --repo); impl-defaults and plan-defaults set its defaults for a text.",
)
@_tmux_option
@_display_options
@_quick_start
def run(
    task: str,
    task_file: Path | None,
    protocol: str | None,
    models: tuple[str, ...],
    rounds: int | None,
    config_path: Path | None,
    max_cost: float | None,
    max_tokens: int | None,
    timeout: float | None,
    seed: int | None,
    verify_commands: tuple[str, ...],
    no_shuffle: bool,
    samples: int | None,
    input_file: Path | None,
    dry_run: bool,
    cache: str | None,
    repo: str | None,
    context: tuple[str, ...],
    pick: str | None,
    preset: str | None,
    display: str | None,
    quiet: bool,
    reveal: bool,
    json_logs: bool,
) -> None:
    """Deliberate on TASK. With no --models and no config: three agents on the embedded model."""
    from moot.api import start
    from moot.lifecycle.plan import load_config

    task = _task(task, task_file)
    tmux = _tmux(display)

    overrides: dict[str, Any] = {}
    if protocol:
        overrides["protocol"] = protocol
    if models:
        overrides["agents"] = [{"model": spec} for spec in models]
    if seed is not None:
        overrides["seed"] = seed
    for key, value in _limit_overrides(max_cost, max_tokens, timeout).items():
        overrides[f"limits.{key}"] = value
    if cache is not None:
        overrides["cache.store"] = cache
    if preset is not None:
        overrides.update(_preset(preset, protocol))
    if context and repo is None:
        raise click.UsageError("--context needs --repo: it chooses files of the repository")
    if repo is not None:  # a code task: --verify runs in every worktree
        overrides["code.repo"] = str(Path(repo).expanduser().resolve())
        if context:
            overrides["code.context"] = list(context)
        if verify_commands:
            overrides["code.verify_commands"] = list(verify_commands)
            verify_commands = ()
    if rounds is None and not models and config_path is None and _takes_rounds(protocol):
        # The embedded default is a demonstration: one round shows every phase and a judged
        # outcome in about a minute on two cores (benchmarks/default_run.py measures it).
        rounds = DEMO_ROUNDS
    plan = load_config(
        config_path,
        overrides,
        rounds=rounds,
        verify=list(verify_commands),
        no_shuffle=no_shuffle,
        samples=samples,
        input_text=_input_text(input_file),
        pick=pick,
    )
    _projection_gate(plan, task, dry_run)
    with _with_tmux(_face(quiet, json_logs, reveal), tmux) as face:
        finished = start(
            task,
            plan,
            subscribers=[face],
            chooser=_chooser(face),
            on_outcome=_shown(face, quiet),
        )
    _exit(finished.exit_code)


def _chooser(face: Face) -> Any:
    """A human choice on the terminal (a code task's pick), with the live view paused."""
    from moot.engine.session import read_choice

    async def choose(prompt: str, options: Any) -> str | None:
        with face.paused():
            return await read_choice(prompt, options)

    return choose


@cli.command()
@click.argument("session_id", required=False)
@_limit_options
@_tmux_option
@_display_options
@_quick_start
def resume(
    session_id: str | None,
    max_cost: float | None,
    max_tokens: int | None,
    timeout: float | None,
    display: str | None,
    quiet: bool,
    reveal: bool,
    json_logs: bool,
) -> None:
    """Continue a paused, interrupted or crashed session (default: the latest)."""
    from moot.api import resume as resume_session

    limits = _limit_overrides(max_cost, max_tokens, timeout)
    tmux = _tmux(display)
    with _with_tmux(_face(quiet, json_logs, reveal), tmux) as face:
        finished = resume_session(
            session_id,
            limits=limits,
            subscribers=[face],
            chooser=_chooser(face),
            on_outcome=_shown(face, quiet),
        )
    _exit(finished.exit_code)


@cli.command()
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
        _fail(f"session {folder.id} has no state.json yet; it is starting or was never run")
    board = Board.from_state(seen.state, folder.meta())
    board.ended = None if seen.status == "running" else seen.status
    if seen.crashed:
        board.ended_at = seen.updated  # its clock stopped when it did
    # a terminal's own width (the board narrows below 100 columns); piped, the wide table
    terminal = Console()
    width = terminal.width if terminal.is_terminal else max(100, terminal.width)
    console = Console(soft_wrap=False, width=width, highlight=False)
    click.echo(
        f"Session {folder.id}  [{seen.state['protocol']}]  {seen.status}"
        + (f"; continue with: moot resume {folder.id}" if seen.crashed else "")
        + f"; updated {time.time() - seen.updated:.0f}s ago"
    )
    console.print(render_board(board, time.time(), reveal=reveal, width=console.width))
    if seen.state.get("message") and seen.status != "running":
        _say(seen.state["message"])
    if folder.result_json.exists() and seen.status != "running":
        click.echo(f"Report: {folder.report_md}  (moot show {folder.id})")


@cli.command(name="list")
def list_() -> None:
    """Sessions under the sessions folder, oldest first."""
    from moot.engine.seal import folder_result_problem
    from moot.engine.state import seen_state
    from moot.engine.store import list_sessions, sessions_root, unusable_folders
    from moot.engine.tally import Tally

    folders = list_sessions()
    for folder, why in unusable_folders():  # left by a kill while moot created them
        click.echo(f"note: skipped {folder.path}: not a session ({why})", err=True)
    if not folders:
        click.echo(f"no sessions under {sessions_root()}")
        return
    now = time.time()
    for folder in folders:
        seen = seen_state(folder)
        meta = folder.meta() or {}
        task = " ".join(str(meta.get("task", "")).split())
        status, elapsed = "?", ""
        if seen is not None:
            status = seen.status
            tally = Tally.from_snapshot(seen.state)
            if seen.crashed:
                tally.ended_at = seen.updated
            elapsed = _duration(tally.elapsed(now))
        click.echo(
            f"{folder.id}  {meta.get('protocol', '?'):<7} {status:<22} {elapsed:>7}  {task[:50]}"
        )
        from moot.lifecycle.code import live_worktrees

        trees = live_worktrees(folder)
        if trees:
            click.echo(f"  worktrees: {trees} still exist (moot apply / moot clean {folder.id})")
        problem = folder_result_problem(folder)  # an edited result.json, or a cut journal
        if problem is not None:
            click.echo(f"  ! {problem}")


def _duration(seconds: float) -> str:
    from moot.display.live import duration

    return duration(seconds)


@cli.command(name="apply")
@click.argument("session_id")
@click.option("--agent", "agent", default=None, help="Whose change (default: the winner).")
@click.option("--commit", is_flag=True, help="Also commit the change (never done otherwise).")
@click.option("--keep", is_flag=True, help="Keep the worktrees and branches afterwards.")
def apply_(session_id: str, agent: str | None, commit: bool, keep: bool) -> None:
    """Apply a code session's chosen change to your working tree (three-way when your files
    changed since; refused, touching nothing, on a conflict); then clean its worktrees."""
    from moot.engine.store import find_session
    from moot.lifecycle.code import apply_session

    done = apply_session(find_session(session_id), agent, commit=commit, keep=keep)
    how = " (merged with your edits since the session began)" if done.applied.three_way else ""
    click.echo(f"applied {done.alias}'s change: {done.applied.stats}{how}")
    if done.applied.commit:
        click.echo(f"committed as {done.applied.commit[:12]}")
    if done.cleaned is not None:
        click.echo(f"removed {len(done.cleaned.worktrees)} worktree(s) and their branches")


@cli.command()
@click.argument("session_id")
def clean(session_id: str) -> None:
    """Remove a code session's worktrees, branches and baseline ref (its patches stay)."""
    from moot.engine.store import find_session
    from moot.lifecycle.code import clean as clean_session

    done = clean_session(find_session(session_id))
    click.echo(
        f"removed {len(done.worktrees)} worktree(s), {len(done.branches)} branch(es), "
        f"{len(done.refs)} ref(s)"
    )


@cli.command()
@click.argument("session_id", required=False)
def stop(session_id: str | None) -> None:
    """Stop a running session gracefully (answers already in stay; moot resume continues)."""
    from moot.engine.store import find_session
    from moot.lifecycle.code import stop as stop_session

    folder = find_session(session_id)
    pid = stop_session(folder)
    click.echo(
        f"asked session {folder.id} to stop" + (f" (process {pid})" if pid else " when it runs")
    )


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

        from moot.text.safe import terminal_safe

        Console().print(Markdown(terminal_safe(text)))
    else:
        _say(text)


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
            if not path.parent.is_dir():  # a typo in the path must not become new folders
                _fail(f"cannot write {path}: the folder {path.parent} does not exist; create it")
            try:
                path.write_text(text, encoding="utf-8")
            except OSError as exc:
                _fail(f"cannot write {path}: {exc.strerror or exc}")
            click.echo(f"wrote {path} (session {folder.id}, {view.status_text.lower()})")


@cli.command()
@click.argument("session_id", required=False)
def replay(session_id: str | None) -> None:
    """Recompute the outcome from the journal alone (no model calls) and compare it with
    result.json."""
    from moot.api import replay as replay_session

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
    if report.changed is not None:  # the journal verifies: a rule changed, not the record
        _say(report.changed[0].upper() + report.changed[1:] + ".")
        click.echo(
            "The journal verifies and the stored result.json was computed from it: the "
            "difference is the new rule, not corruption (`moot resume` rewrites result.json)."
        )
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
@click.option(
    "--prune", is_flag=True, help="Remove the stray worktrees (and tmux sockets) it reports."
)
def doctor(config_path: Path | None, specs: tuple[str, ...], ping: bool, prune: bool) -> None:
    """Whether each configured model can run here: SDK, key (never shown), command, ping;
    and moot worktrees left behind (strays) in the repositories moot knows."""
    from moot.lifecycle.code import prune_strays, strays
    from moot.lifecycle.plan import load_config
    from moot.models.doctor import check_models

    found = strays(Path.cwd())
    for root, stray in found:
        click.echo(
            f"stray: session {stray.session} in {root}: {stray.reason}; "
            f"{len(stray.worktrees)} worktree(s), {len(stray.branches)} branch(es)"
        )
    from moot.display.tmux import remove_stale_sockets, socket_dir, stale_sockets

    sockets = stale_sockets()  # of --display tmux servers that a killed moot left
    if sockets and not prune:
        click.echo(
            f"stray: {len(sockets)} tmux socket(s) of moot sessions whose server is gone,"
            f" in {socket_dir()}"
        )
    if prune and sockets:
        click.echo(f"removed {len(remove_stale_sockets())} stale tmux socket(s)")
    if found and prune:
        for root, cleaned in prune_strays(Path.cwd()):
            click.echo(f"pruned {len(cleaned.worktrees)} worktree(s) in {root}")
        return
    if found or sockets:
        click.echo("remove them with: moot doctor --prune")
    if prune:
        return

    if specs:  # models checked on their own: no protocol, so no agent count to meet
        from pydantic import ValidationError

        from moot.config import AgentConfig, problem_lines

        try:
            configured = [AgentConfig(model=spec) for spec in specs]
        except ValidationError as exc:
            _fail("; ".join(problem_lines(exc, "--models")))
    else:
        configured = load_config(config_path).config.agents
    agents = list({a.model: a for a in reversed(configured)}.values())[::-1]  # each once
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
    from moot.errors import ConfigError
    from moot.lifecycle.plan import check_config

    try:
        plan, problems = check_config(file)
    except ConfigError as exc:  # unreadable, not UTF-8, or not parseable: one problem
        plan, problems = None, [str(exc)]
    if plan is None:
        from moot.text import plural

        click.echo(f"{file}: {plural(len(problems), 'problem')}")
        for line in problems:
            click.echo(f"  {line}")
        sys.exit(1)
    roles = plan.record.participants(plan.config, plan.options)
    counts = ", ".join(f"{len(r.members)} {r.prefix}(s)" for r in roles if r.members)
    click.echo(f"{file}: valid ({plan.record.name}, {counts})")


@cli.command()
def schema() -> None:
    """Print the JSON Schema of config files."""
    import json

    from moot.lifecycle.plan import config_schema

    click.echo(json.dumps(config_schema(), indent=2))


@cli.command()
@click.argument("session_id")
def migrate(session_id: str) -> None:
    """Upgrade a session folder written by an older moot (a backup is kept inside it)."""
    from moot.lifecycle.migrate import migrate as migrate_session

    done = migrate_session(session_id)
    if done.backup is None:
        click.echo(f"Session {done.session_id} is at format version {done.to_version} already.")
        return
    click.echo(
        f"Session {done.session_id}: format version {done.from_version} -> {done.to_version}, "
        f"{done.events} events re-chained; the old files are in {done.backup}"
    )
    if done.replay_identical is False and done.replay_changed is not None:
        _say(done.replay_changed[0].upper() + done.replay_changed[1:] + ".")
        click.echo("The journal verifies: the difference is the new rule, not corruption.")
        return
    if done.replay_identical is False:
        click.echo("Replaying the journal does NOT give the stored result: see moot replay.")
        sys.exit(1)
    click.echo("Replaying the new journal gives the stored result, byte for byte.")


@cli.group()
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
