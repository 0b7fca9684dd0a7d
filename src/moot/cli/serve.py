"""`moot serve`: a local web view of every session; runs started, watched, stopped, resumed."""

from __future__ import annotations

import importlib.util

import click

from moot.cli.common import Whole, fail

__all__ = ["serve"]


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=Whole(0, 65535), default=0, help="Port (default: a free one).")
@click.option(
    "--no-token",
    is_flag=True,
    help="Ask no token (loopback only: every local user and page could then use it).",
)
def serve(host: str, port: int, no_token: bool) -> None:
    """Serve a web view of every session on this machine: the sessions (filtered, live), each
    session's report as it runs, and a form to start, stop and resume runs. Prints the URL to
    open; it carries a random token (as Jupyter's does), and requests without it are refused."""
    if any(importlib.util.find_spec(name) is None for name in ("uvicorn", "sse_starlette")):
        from moot.text.install import extra_install_hint

        fail(f"moot serve needs its web server: {extra_install_hint('serve')}")
    from moot.errors import ConfigError
    from moot.serve.server import bind, new_token, run, url_of

    token = None if no_token else new_token()
    try:
        sock = bind(host, port, token)
    except ConfigError as exc:
        fail(str(exc))
    click.echo(f"moot serve: open {url_of(sock, token)}  (Ctrl-C stops)")
    run(sock, token)
