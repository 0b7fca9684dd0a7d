"""The MCP server: moot's tools and session resources over the official SDK's `MCPServer`.

Tools: deliberate (start a session and return its outcome with the trust statement),
list_sessions, show_session, resume_session, stop_session, say (a note to one agent).
Resources: `moot://sessions` (the list) and `moot://sessions/{session_id}/report.md` (a
session's report as Markdown). A bad argument is a tool error whose text names the problem
(moot's own message); the server goes on.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError

from moot.engine.inbox import post
from moot.engine.store import find_session, list_sessions
from moot.errors import MootError
from moot.lifecycle.listing import outcome_json, session_row
from moot.mcp.runs import Report, Runs, masked
from moot.version import __version__

__all__ = ["build_server"]

P = ParamSpec("P")
T = TypeVar("T")

INSTRUCTIONS = """moot makes several LLMs deliberate until they agree, or shows exactly where
they do not. `deliberate` runs a session and returns its outcome; read `trust` first (how far to
trust it). Long runs report one progress notification per phase; cancelling the call stops the
session, which `resume_session` continues (recorded answers cost nothing again)."""


def _reporter(ctx: Context) -> Report:
    async def report(progress: float, message: str) -> None:
        await ctx.report_progress(progress, None, message)

    return report


def _told(call: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """moot's own errors (a bad argument, an unknown session) as tool errors that say so."""

    async def told(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await call(*args, **kwargs)
        except MootError as exc:
            raise ToolError(str(exc)) from None

    return told


def build_server(root: Path | None = None) -> MCPServer:
    """The server, its sessions under `root` (None: moot's home, as for every command)."""
    server: MCPServer = MCPServer("moot", version=__version__, instructions=INSTRUCTIONS)
    runs = Runs(root)

    @server.tool()
    async def deliberate(
        task: str,
        ctx: Context,
        protocol: str | None = None,
        models: list[str] | None = None,
        config: str | None = None,
        rounds: int | None = None,
        seed: int | None = None,
        max_cost: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        synthesize: bool | None = None,
        chairman: str | None = None,
    ) -> dict[str, Any]:
        """Make several models deliberate on `task` and return the outcome: its status, the
        final answer, and `trust` (how far to trust it, in plain words). `models`: one agent per
        model spec (provider:model, e.g. openai:gpt-5.4); without models or `config` (a config
        file's path), three agents on the embedded model. `protocol`: arena (default), court,
        refine, tournament... Limits: `max_cost` (USD), `max_tokens`, `timeout` (seconds); a
        run paused by one is continued by resume_session with a higher limit. `synthesize`: a
        chairman (`chairman`, a model spec; else the picked answer's model) rewrites the final
        answer from what the others said should change; moot keeps it only where it keeps the
        agreed answer."""
        return await _told(runs.start)(
            task,
            _reporter(ctx),
            protocol=protocol,
            models=models or (),
            config=config,
            rounds=rounds,
            seed=seed,
            max_cost=max_cost,
            max_tokens=max_tokens,
            timeout=timeout,
            synthesize=synthesize,
            chairman=chairman,
        )

    @server.tool(name="list_sessions")
    async def listed(
        status: str | None = None, protocol: str | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Sessions, oldest first, as `moot list --json` gives them: filter by `status`
        (finished, paused, interrupted, failed, running...), `protocol`, or the newest `limit`."""
        if limit is not None and limit < 1:
            raise ToolError(f"limit: {limit} is not a positive number")
        now = time.time()
        rows = [session_row(folder, now) for folder in list_sessions(root)]
        rows = [
            row
            for row in rows
            if (status is None or str(row["status"]) == status)
            and (protocol is None or row["protocol"] == protocol)
        ]
        return list(masked(rows[-limit:] if limit is not None else rows))

    @server.tool()
    async def show_session(session_id: str | None = None) -> dict[str, Any]:
        """One session's outcome as `moot show --json` gives it (default: the latest session);
        its report as Markdown is the resource moot://sessions/{session_id}/report.md."""

        async def show() -> dict[str, Any]:
            return dict(masked(outcome_json(find_session(session_id, root))))

        return await _told(show)()

    @server.tool()
    async def resume_session(
        ctx: Context,
        session_id: str | None = None,
        max_cost: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Continue a paused or interrupted session (default: the latest) and return its
        outcome; the limits given raise its budgets. Recorded answers are not asked again."""
        return await _told(runs.resume)(
            session_id,
            _reporter(ctx),
            max_cost=max_cost,
            max_tokens=max_tokens,
            timeout=timeout,
        )

    @server.tool()
    async def stop_session(session_id: str | None = None) -> dict[str, Any]:
        """Stop a running session (default: the latest); resume_session continues it."""
        return await _told(runs.stop)(session_id)

    @server.tool()
    async def say(agent: str, text: str, session_id: str | None = None) -> dict[str, Any]:
        """Send a note to one agent of a running, paused or interrupted session (default: the
        latest), as `moot say` does: it is journaled and added to that agent's next prompt
        only. `agent`: its alias, label or letter ('agent_b', 'Agent B', 'B')."""

        async def send() -> dict[str, Any]:
            folder = find_session(session_id, root)
            note = post(folder, agent, text)
            return {"session_id": folder.id, "agent": note.agent, "note_id": note.id}

        return await _told(send)()

    @server.resource("moot://sessions", name="sessions", mime_type="application/json")
    def sessions() -> list[dict[str, Any]]:
        """Every session, as list_sessions gives them."""
        now = time.time()
        return list(masked([session_row(folder, now) for folder in list_sessions(root)]))

    @server.resource(
        "moot://sessions/{session_id}/report.md", name="report", mime_type="text/markdown"
    )
    def report(session_id: str) -> str:
        """A session's report as Markdown, as `moot show` prints it."""
        from moot.models.keys import redact
        from moot.report.markdown import render_markdown
        from moot.report.view import load_view

        try:
            return redact(render_markdown(load_view(find_session(session_id, root))))
        except MootError as exc:
            raise ResourceError(str(exc)) from None

    return server
