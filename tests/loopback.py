"""Running a test's HTTP server on loopback for the length of a `with` block."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from socketserver import BaseServer
from typing import TypeVar

__all__ = ["serving"]

S = TypeVar("S", bound=BaseServer)


@contextmanager
def serving(server: S) -> Iterator[S]:
    """`server` answering from a daemon thread; shut down and closed on leaving the block,
    whatever the test did."""
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
