"""`moot ask ID "..."`: a follow-up question to a finished session, as a new linked session."""

from __future__ import annotations

import click

__all__ = ["ask"]


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("session_id")
@click.argument("question")
@click.argument("run_options", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def ask(ctx: click.Context, session_id: str, question: str, run_options: tuple[str, ...]) -> None:
    """Ask QUESTION as a follow-up to session SESSION_ID: a new session whose agents see the
    earlier task, its final answer and remaining disagreements. Any `moot run` option may
    follow (--models, --protocol, --rounds, limits); exit codes are `moot run`'s."""
    from moot.cli.common import fail
    from moot.cli.run import run
    from moot.engine.store import find_session
    from moot.errors import MootError
    from moot.lifecycle.followup import followup_task

    try:
        task = followup_task(find_session(session_id), question)
    except MootError as exc:
        fail(str(exc))
    with run.make_context("run", [task, *run_options], parent=ctx) as sub:
        run.invoke(sub)
