"""`moot say ID --agent B "..."`: a person's note to one agent while its session runs (not say.py:
that name would shadow `moot.cli.say`, the print function, once imported)."""

from __future__ import annotations

import click

from moot.cli.common import fail, say

__all__ = ["say_note"]


@click.command()
@click.argument("session_id")
@click.argument("text")
@click.option("--agent", "-a", required=True, help="The agent: B, Agent B or agent_b.")
def say_note(session_id: str, text: str, agent: str) -> None:
    """Send TEXT to one agent of session SESSION_ID (running, paused, or failed with a failed call
    that `moot resume` asks again): it is journaled as a human message and added, marked as
    yours, to that agent's next prompt (on resume, for a session that is not running); the
    answer says when. `moot status` shows whether it has been delivered."""
    from moot.engine.inbox import delivery, post
    from moot.engine.store import find_session
    from moot.errors import MootError

    try:
        folder = find_session(session_id)
        note = post(folder, agent, text)
    except MootError as exc:
        fail(str(exc))
    who = note.agent.replace("_", " ").title()
    when = delivery(folder, note.agent) or "it joins that agent's next prompt"
    say(f"note {note.id} for {who} ({note.agent}) left in session {folder.id}: {when}")
