"""The `moot` command: parses, calls the library, maps outcomes to exit codes.

Exit codes: 0 consensus, 1 error (bad arguments or config included), 2 no consensus,
3 paused by a limit or waiting for you (resumable), 130 interrupted (resumable).

One module per command group, each imported only when one of its commands is asked for or
listed (`_Commands._LAZY`): run.py (run, resume), sessions.py (status, list, show, export,
replay, migrate), code.py (apply, clean, stop), doctor.py (models, doctor, validate, schema),
cache.py, batch.py (batch, bench), pipeline.py (plan, execute, lessons), home.py
(move-sessions), mcp.py (the MCP server), config.py (the user config), serve.py (the web view),
stats.py (per model over every session), ask.py (a follow-up), notes.py (say: a note to
an agent), plugins.py; what they share is in
common.py, what a run prints at its end in outcome.py.
"""

from __future__ import annotations

import atexit
import importlib
import os
import sys
import threading
from typing import ClassVar, NoReturn

import click

from moot import collector
from moot.cli.common import PROCESS, QUICK_START, fail, say

__all__ = ["cli", "main"]


class _Commands(click.Group):
    """The CLI's group, whose commands are imported by name when one of them is asked for or
    listed: a `moot run` does not load the other commands' modules (nor the bench suites that
    batch.py names)."""

    _LAZY: ClassVar[dict[str, str]] = {
        "run": "moot.cli.run:run",
        "plan": "moot.cli.pipeline:plan",
        "execute": "moot.cli.pipeline:execute",
        "lessons": "moot.cli.pipeline:lessons",
        "resume": "moot.cli.run:resume",
        "status": "moot.cli.sessions:status",
        "list": "moot.cli.sessions:list_",
        "apply": "moot.cli.code:apply_",
        "clean": "moot.cli.code:clean",
        "stop": "moot.cli.code:stop",
        "show": "moot.cli.sessions:show",
        "export": "moot.cli.sessions:export",
        "replay": "moot.cli.sessions:replay",
        "models": "moot.cli.doctor:models",
        "doctor": "moot.cli.doctor:doctor",
        "validate": "moot.cli.doctor:validate",
        "schema": "moot.cli.doctor:schema",
        "migrate": "moot.cli.sessions:migrate",
        "move-sessions": "moot.cli.home:move_sessions",
        "cache": "moot.cli.cache:cache",
        "config": "moot.cli.config:config",
        "batch": "moot.cli.batch:batch",
        "bench": "moot.cli.batch:bench",
        "mcp": "moot.cli.mcp:mcp",
        "serve": "moot.cli.serve:serve",
        "stats": "moot.cli.stats:stats",
        "ask": "moot.cli.ask:ask",
        "say": "moot.cli.notes:say_note",
        "init": "moot.cli.init:init",
        "plugins": "moot.cli.plugins:plugins",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = self._LAZY.get(cmd_name)
        if where is not None and cmd_name not in self.commands:
            module, _, name = where.partition(":")
            self.add_command(getattr(importlib.import_module(module), name), cmd_name)
        command = super().get_command(ctx, cmd_name)
        if not getattr(command and command.callback, QUICK_START, False):
            collector.collect_again()  # the entry point's pause is for starting a run only
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:  # suggest among the lazy ones too
            raise click.exceptions.NoSuchCommand(
                exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx
            ) from None


EXIT_CODES = """Exit codes: 0 consensus (or a change chosen), 1 error (bad arguments or config
included), 2 no consensus, 3 paused by a limit, an outage or waiting for you (moot resume),
130 interrupted (moot resume)."""

_EPILOG = f"""\b
Examples:
  moot run "What color is the sky on a clear day?"   three agents on the embedded model
  moot run "Which database?" -m openai:gpt-5.4 -m anthropic:claude-sonnet-4-6
  moot run "Which database?" --protocol court --dry-run     the worst-case cost, nothing run
  moot show --json | jq .status                        the last session's outcome
  moot resume                                          continue the last session

{EXIT_CODES}

Docs: README.md and docs/architecture.md of the moot package."""


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"]},
    invoke_without_command=True,
    epilog=_EPILOG,
)
@click.version_option(package_name="moot")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Make several LLMs deliberate until they agree, or show exactly where they do not."""
    if ctx.invoked_subcommand is None:
        say(ctx.get_help())


def main(argv: list[str] | None = None) -> None:
    """Entry point: our own error handling, so that usage errors exit with 1, not click's 2.
    With no `argv` (the process's own command line) the process leaves quickly (`_leave`)."""
    PROCESS.whole = argv is None
    if not PROCESS.whole:
        _main(argv)
    try:
        _main(None)
    except SystemExit as exc:
        _leave(exc)


def _leave(exc: SystemExit) -> NoReturn:
    """Exit without the interpreter's teardown of every module (issue 23: 30-60 ms after the
    outcome line): exit handlers run and the output is flushed, as in a normal exit. Only with
    no other thread still working, whose end a normal exit would wait for (an idle worker of a
    closed event loop's executor ends at once)."""
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join(timeout=0.1)
            if thread.is_alive():
                raise exc
    code = exc.code
    if isinstance(code, str):  # sys.exit("message"): printed, exit 1
        sys.stderr.write(code + "\n")
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else (0 if code is None else 1))


def _main(argv: list[str] | None) -> NoReturn:
    from moot.errors import MootError

    try:
        returned = cli.main(args=argv, prog_name="moot", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        say("interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        _hint_quotes(exc).show()
        sys.exit(1)
    except MootError as exc:
        fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        say("interrupted", err=True)
        sys.exit(130)
    sys.exit(returned if isinstance(returned, int) else 0)


def _hint_quotes(exc: click.ClickException) -> click.ClickException:
    """`moot run What is 2 + 2?`: click says only "Got unexpected extra arguments (is 2 + 2?)";
    the fix is the task in quotes, shown as the command would be typed."""
    import re
    import shlex

    ctx = getattr(exc, "ctx", None)
    task = ctx.params.get("task") if ctx is not None else None
    extra = re.fullmatch(r"Got unexpected extra arguments? \((.*)\)", exc.message, re.DOTALL)
    if ctx is not None and isinstance(task, str) and task and extra:
        whole = f"{task} {extra.group(1)}"
        # in double quotes where the shell reads nothing in them ("What's 2 + 2?")
        quoted = f'"{whole}"' if not set(whole) & set('"$`\\!') else shlex.quote(whole)
        return click.UsageError(
            f"{exc.message}. The task is one argument: put it in quotes, as in "
            f"{ctx.command_path} {quoted}",
            ctx,
        )
    return exc
