"""`moot mcp`: moot as a Model Context Protocol server (the official SDK, the `mcp` extra).

A face like the CLI and the library: it calls the lifecycle below it.

server.py   the tools (deliberate, list/show/resume/stop a session) and the report resources
runs.py     the runs under way: progress per phase, cancellation that leaves them resumable

`serve()` speaks over stdio (what Claude Code and Cursor start), or streamable HTTP on loopback.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["serve"]


def serve(*, http: bool = False, port: int = 8765, root: Path | None = None) -> None:
    """Serve until the client goes away (stdio) or the process is stopped (HTTP on
    127.0.0.1:`port`, path /mcp)."""
    from moot.mcp.server import build_server

    server = build_server(root)
    if http:
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run("stdio")
