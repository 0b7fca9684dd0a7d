"""`moot mcp`: serve moot to MCP clients (Claude Code, Cursor, any MCP host)."""

from __future__ import annotations

import importlib.util

import click

from moot.cli.common import Whole, fail

__all__ = ["mcp"]


@click.command()
@click.option(
    "--http", is_flag=True, help="Streamable HTTP on 127.0.0.1 (path /mcp) instead of stdio."
)
@click.option("--port", type=Whole(1, 65535), default=8765, show_default=True, help="With --http.")
def mcp(http: bool, port: int) -> None:
    """Serve moot over the Model Context Protocol: stdio for an MCP client to start
    (`claude mcp add moot -- moot mcp`), or streamable HTTP on loopback with --http. Tools:
    deliberate, list_sessions, show_session, resume_session, stop_session; each session's
    report is the resource moot://sessions/ID/report.md."""
    if importlib.util.find_spec("mcp") is None:
        from moot.text.install import extra_install_hint

        fail(f"moot mcp needs the MCP SDK: {extra_install_hint('mcp')}")
    from moot.mcp import serve

    serve(http=http, port=port)
