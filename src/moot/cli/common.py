"""What every command shares: the error line, run options (limits, display, tmux), the face of
a run, its exit, terminal-safe printing and the reading of a task."""

from __future__ import annotations

import functools
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from moot import collector

if TYPE_CHECKING:
    from collections.abc import Callable

    from moot.display import Face

__all__ = [
    "PROCESS",
    "QUICK_START",
    "Whole",
    "config_option",
    "display_options",
    "exit_with",
    "fail",
    "input_text",
    "json_option",
    "limit_options",
    "limit_overrides",
    "models_option",
    "quick_start",
    "run_face",
    "say",
    "say_json",
    "task_text",
    "tmux_for",
    "tmux_option",
    "with_tmux",
]


class _Worded(click.ParamType[Any, Any]):
    """A parameter type whose refusal says the problem in words with the fix (`refusal`), in
    place of click's own message."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            pass  # (refused below, outside this handler: click's message is not its cause)
        self.fail(self.refusal(value), param, ctx)

    def refusal(self, value: Any) -> str:
        raise NotImplementedError


class Whole(_Worded, click.IntRange):
    """A whole number within bounds, its problem said in words with the fix: "'abc' is not a
    whole number; give a whole number from 1 to 50", not click's "'abc' is not a valid integer
    range" or "0 is not in the range 1<=x<=50"."""

    name = "whole number"

    def refusal(self, value: Any) -> str:
        try:
            number = int(str(value).strip())
        except ValueError:
            problem = f"{str(value)!r} is not a whole number"
        else:
            low = self.min is not None and number < self.min
            problem = (
                f"{number} is {'less' if low else 'more'} than {self.min if low else self.max}"
            )
        return f"{problem}; give {self.wanted()}"

    def wanted(self) -> str:
        if self.max is None:
            return f"a whole number of {self.min} or more"
        return f"a whole number from {self.min} to {self.max}"


class Positive(_Worded, click.FloatRange):
    """A number above 0 in a unit, its problem said in words with the fix: "-1 is not more
    than 0; give a number of US dollars above 0, such as 2.50", not click's "-1.0 is not in
    the range x>0" or "'abc' is not a valid float range"."""

    name = "number"

    def __init__(self, unit: str, example: str) -> None:
        super().__init__(min=0, min_open=True)
        self.unit, self.example = unit, example

    def refusal(self, value: Any) -> str:
        try:
            float(str(value).strip())
        except ValueError:
            problem = f"{str(value)!r} is not a number"
        else:
            problem = f"{str(value).strip()} is not more than 0"
        return f"{problem}; give a number of {self.unit} above 0, such as {self.example}"


# What --display takes, and what each shows; a run without it shows the live view on a
# terminal and plain lines otherwise
DISPLAYS = {"tmux": "also each CLI agent's output in its own pane of a private tmux server"}


class Display(_Worded, click.Choice[str]):
    """--display: a value it does not take is named with those it does and what each does, and
    what a run shows without it, not click's "'plain' is not 'tmux'."."""

    def __init__(self) -> None:
        super().__init__(list(DISPLAYS))

    def refusal(self, value: Any) -> str:
        takes = "; ".join(f"{name} ({does})" for name, does in DISPLAYS.items())
        return (
            f"{str(value)!r} is not a display; --display takes {takes}. Without --display a "
            "run shows the live view on a terminal and plain lines otherwise (--quiet: only "
            "the answer; --json-logs: one JSON object per event)"
        )


def fail(message: str, code: int = 1) -> NoReturn:
    say(f"moot: error: {message}", err=True)
    sys.exit(code)


def limit_overrides(
    max_cost: float | None, max_tokens: int | None, timeout: float | None
) -> dict[str, Any]:
    pairs = {"max_cost": max_cost, "max_tokens": max_tokens, "timeout": timeout}
    return {key: value for key, value in pairs.items() if value is not None}


def run_face(quiet: bool, json_logs: bool, reveal: bool) -> Face:
    """The display for a run, on stderr: live view on a terminal, else plain lines."""
    from moot.display import face_for

    return face_for(quiet=quiet, json_logs=json_logs, reveal=reveal)


def _one_model_each(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> Any:
    """Each --models value is one PROVIDER:MODEL spec or an alias of the user config (its
    specs, one agent each): a comma-separated list is refused with the flags it meant, and a
    bare model name with the spec it most likely means."""
    from moot.models.pricing import suggest_spec

    specs: list[str] = []
    for value in values:
        parts = [part.strip() for part in value.split(",")]
        if len(parts) > 1 and all(parts) and "#" not in value:
            fix = " ".join(f"--models {part}" for part in parts)
            raise click.BadParameter(f"{value!r} names {len(parts)} models; one per use: {fix}")
        if ":" not in value:
            from moot.lifecycle.specs import user_config

            aliases = user_config().aliases
            if value.strip() in aliases:
                specs += aliases[value.strip()]
                continue
            guess = suggest_spec(value)
            hint = f"; did you mean --models {guess}?" if guess else ""
            raise click.BadParameter(
                f"{value!r} is not PROVIDER:MODEL (for example local:smollm2) nor an alias of "
                f"your config (moot config); `moot models` lists the providers{hint}"
            )
        specs.append(value)
    return tuple(specs)


def models_option(help: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """-m/--models SPEC, repeatable (the parameter `models`): one agent per use."""
    return click.option(
        "-m",
        "--models",
        "models",
        multiple=True,
        metavar="SPEC",
        callback=_one_model_each,
        help=help,
    )


def task_file_option(help: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """--task-file FILE (the parameter `task_file`): the task read from a file (`task_text`)."""
    return click.option(
        "--task-file",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        default=None,
        help=help,
    )


def context_option(help: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """--context GLOB, repeatable (the parameter `context`): a code task's files that API
    models see whole."""
    return click.option("--context", multiple=True, metavar="GLOB", help=help)


def json_option(command: Callable[..., None]) -> Callable[..., None]:
    """--json (the parameter `as_json`): one JSON document on stdout instead of text."""
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Print JSON on stdout instead of text (README: Machine-readable output).",
    )(command)


def say_json(data: Any) -> None:
    """`data` as JSON on stdout: ASCII only, so no model text can reach the terminal as an
    escape sequence or a bidirectional override (each is a \\u escape), and anything shaped
    like an API key masked (a session an older moot stored unmasked)."""
    import json

    from moot.models.keys import redact

    click.echo(redact(json.dumps(data, ensure_ascii=True, indent=2, default=str)))


def config_option(
    help: str = "Config file.",
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """--config PATH (the parameter `config_path`): the config file a command reads."""
    return click.option(
        "--config", "config_path", type=click.Path(path_type=Path), default=None, help=help
    )


def limit_options(command: Callable[..., None]) -> Callable[..., None]:
    """--max-cost, --max-tokens, --timeout: a run's budgets, or new ones on resume."""
    command = click.option(
        "--timeout",
        type=Positive("seconds", "600"),
        default=None,
        help="Pause after this many seconds of running time (on resume: a new limit).",
    )(command)
    command = click.option(
        "--max-tokens",
        type=Whole(min=1),
        default=None,
        help="Pause when the session has used this many tokens (on resume: a new limit).",
    )(command)
    return click.option(
        "--max-cost",
        type=Positive("US dollars", "2.50"),
        default=None,
        help="Pause when the session has cost this many USD (on resume: a new limit).",
    )(command)


def display_options(command: Callable[..., None]) -> Callable[..., None]:
    command = click.option(
        "--json-logs", is_flag=True, help="One JSON object per event on stderr (for machines)."
    )(command)
    command = click.option(
        "--reveal", is_flag=True, help="Show each agent's model in the live view as it runs."
    )(command)
    return click.option("-q", "--quiet", is_flag=True, help="Print only the final answer.")(command)


def tmux_option(command: Callable[..., None]) -> Callable[..., None]:
    return click.option(
        "--display",
        "display",
        type=Display(),
        default=None,
        help="tmux: also show each CLI agent's output in its own pane of a private tmux "
        "server (tmux -L moot-SESSION attach).",
    )(command)


def quick_start(command: Callable[..., None]) -> Callable[..., None]:
    """No garbage collection while the command starts a run (moot/collector.py): the pause
    the entry point began goes on, or one begins; the engine ends it once its loop first waits."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        with collector.paused():
            command(*args, **kwargs)

    setattr(wrapper, QUICK_START, True)
    return wrapper


# Marks a command whose start-up keeps the collector paused (cli/__init__.py reads it).
QUICK_START = "moot_quick_start"


def tmux_for(display: str | None) -> str | None:
    """The tmux executable for --display tmux (missing: an error before anything is made)."""
    if display != "tmux":
        return None
    from moot.display.tmux import require_tmux

    return require_tmux()


def with_tmux(face: Face, tmux: str | None) -> Face:
    if tmux is None:
        return face
    from moot.display.tmux import TmuxPanes

    return TmuxPanes(face, tmux=tmux)


class _Process:
    """Whether this CLI call is the whole process (`moot ...` from a shell: `main()` with no
    arguments), which exits once the command ends. Then a run leaves its reports to a detached
    writer (lifecycle/reports.py) and exits at once; a caller in its own process (a test, a
    program embedding the CLI) finds them written when the call returns."""

    whole = False


PROCESS = _Process()


def exit_with(code: int) -> NoReturn:
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


def say(text: str, *, err: bool = False, keys: bool = False) -> None:
    """Print a line for the reader (on stderr with `err`): the one way a command prints.

    Any line may quote a model, another program (a CLI tool's `--version`), a session folder or
    the task, so every line goes through `terminal_safe`: escape sequences (CSI, OSC with its
    clipboard writes, hyperlinks and titles, DCS, their 8-bit forms) are removed, and other
    control characters, C1 controls and bidirectional overrides and isolates are shown as
    visible escapes; newlines and tabs stay. Text that holds none of them prints unchanged.
    With `keys`, for the output of a program moot does not control, anything shaped like an
    API key is masked too (after the escapes are gone, so none can split a key in two).

    Two outputs are drawn by rich instead and made safe before it sees them: the board of
    `moot status` (display.live.render_board cleans every piece of model text it shows) and
    `moot show` on a terminal (the Markdown is cleaned here by `terminal_safe` and rendered
    without hyperlinks). The faces of a run write to stderr on their own and clean each line
    (display.plain and display.batch with `moot.text.clean_text`, the live view with
    `terminal_safe`)."""
    from moot.text.safe import terminal_safe

    text = terminal_safe(text)
    if keys:
        from moot.models.keys import redact

        text = redact(text)
    click.echo(text, err=err)


def task_text(task: str, task_file: Path | None) -> str:
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


def input_text(path: Path | None) -> str | None:
    if path is None:
        return None
    text = _read_text(path.read_bytes, str(path))
    if not text.strip():
        raise click.UsageError(
            f"--input {path} is empty; give a file holding the text to start from"
        )
    return text
