"""`moot serve` on a socket: bound first (a random port by default), so the URL printed names
the port it really listens on, then served by uvicorn until interrupted."""

from __future__ import annotations

import secrets
import socket
from pathlib import Path

from moot.errors import ConfigError
from moot.serve.access import is_loopback
from moot.serve.app import create_app

__all__ = ["bind", "new_token", "run", "url_of"]


def new_token() -> str:
    return secrets.token_urlsafe(24)


def bind(host: str, port: int, token: str | None) -> socket.socket:
    """A listening socket on `host`:`port` (0: a free port). A host other machines can reach
    is refused without a token: anyone there could read every session and start runs."""
    if token is None and not is_loopback(host):
        raise ConfigError(f"--host {host} is reachable from other machines: it needs a token")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket, token: str | None) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def run(sock: socket.socket, token: str | None, root: Path | None = None) -> None:
    """Serve the app on `sock` until interrupted; runs still going are stopped first (each
    journals its interruption, and `moot resume` continues it)."""
    import uvicorn

    config = uvicorn.Config(
        create_app(root, token), log_level="warning", lifespan="on", timeout_graceful_shutdown=5
    )
    uvicorn.Server(config).run(sockets=[sock])
