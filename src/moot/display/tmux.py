"""`--display tmux`: each CLI agent's output, live, in its own pane of a private tmux server.

moot starts the server (`tmux -L moot-<session>`, a socket of its own: the user's tmux
sessions are never touched) when the session opens, with one pane per CLI agent, and kills it
when the run ends. The agent still runs under moot's process supervisor with its output
captured exactly as without tmux (models/cli_process.py); the chunks are also copied to a log
file per agent, which the agent's pane follows with `tail`. Watch with
`tmux -L moot-<session> attach`.

A moot killed with SIGKILL cannot kill the server, so every pane's `tail` is stopped by a
loop that watches the moot process, and tmux exits with its last pane: nothing is left
running. tmux leaves its socket file behind when its server ends: moot removes it after
`kill-server`, and `moot doctor --prune` removes those of servers that are gone
(`stale_sockets`).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from moot.display.face import Face
from moot.errors import ConfigError
from moot.models.cli_process import copy_output
from moot.types import Event, EventKind, alias_label

__all__ = [
    "INSTALL_HINT",
    "TmuxPanes",
    "remove_stale_sockets",
    "require_tmux",
    "socket_dir",
    "socket_name",
    "stale_sockets",
]

INSTALL_HINT = "install it (apt-get install tmux, dnf install tmux or brew install tmux)"


def require_tmux() -> str:
    """The tmux executable, or `ConfigError` naming the install command."""
    found = shutil.which("tmux")
    if found is None:
        raise ConfigError(f"--display tmux needs tmux, which is not installed: {INSTALL_HINT}")
    return found


def socket_name(session_id: str) -> str:
    return f"moot-{session_id}"


def socket_dir() -> Path:
    """Where tmux puts the sockets of `-L NAME` servers: `$TMUX_TMPDIR/tmux-<uid>`."""
    return Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"


def _server_gone(path: Path) -> bool:
    """True when nothing listens on the socket any more (a connection is refused)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except ConnectionRefusedError:
        return True
    except OSError:  # not a socket, no permission: not ours to judge
        return False
    finally:
        probe.close()
    return False


def stale_sockets() -> list[Path]:
    """moot's tmux sockets (`moot-*`) whose server is gone: a moot killed before it could
    remove its own."""
    folder = socket_dir()
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(socket_name("*")) if p.is_socket() and _server_gone(p))


def remove_stale_sockets() -> list[Path]:
    """Remove `stale_sockets()`; returns those removed."""
    removed = []
    for path in stale_sockets():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed


class TmuxPanes(Face):
    """Wraps the run's usual face (live view or plain lines) and adds the tmux panes."""

    def __init__(self, inner: Face, *, tmux: str | None = None) -> None:
        self.inner = inner
        self.tmux = tmux or require_tmux()
        self.socket: str | None = None
        self.socket_path: Path | None = None
        self.logs: dict[str, Path] = {}
        self._folder: Path | None = None
        self._stop_copy: Any = None

    # -- the face ---------------------------------------------------------------------------
    def __call__(self, event: Event) -> None:
        if event.kind == EventKind.OPENED and self.socket is None:
            try:
                self._open(event.data)
            except (OSError, subprocess.SubprocessError) as exc:  # the run goes on without it
                print(f"moot: tmux display not started: {exc}", file=sys.stderr)
                self._close()
        self.inner(event)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        with self.inner.paused():
            yield

    def open(self) -> None:
        self.inner.open()

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self._close()

    # -- the server -------------------------------------------------------------------------
    def _run(self, *args: str) -> str:
        assert self.socket is not None
        done = subprocess.run(
            [self.tmux, "-L", self.socket, *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if done.returncode != 0:
            raise OSError(f"tmux {args[0]}: {done.stderr.strip() or done.returncode}")
        return done.stdout

    def _open(self, data: dict[str, Any]) -> None:
        meta = data.get("meta") or {}
        session = str(data.get("session_id") or meta.get("session_id"))
        aliases = {str(a): str(spec) for a, spec in (meta.get("aliases") or {}).items()}
        agents = sorted(a for a, spec in aliases.items() if spec.startswith("cli:"))
        if not agents:
            print("moot: --display tmux: no CLI agent in this session, no panes", file=sys.stderr)
            return
        self._folder = Path(tempfile.mkdtemp(prefix=f"moot-tmux-{session}-"))
        self.socket = socket_name(session)
        pid = os.getpid()
        for index, alias in enumerate(agents):
            log = self._folder / f"{alias}.log"
            log.write_bytes(f"{alias_label(alias)} ({aliases[alias]})\n".encode())
            self.logs[alias] = log
            # the tail ends with moot, and tmux with its last pane: a killed moot leaves no
            # server behind
            follow = (  # POSIX sh and tail: no --pid, which BSD tail lacks
                f"tail -n +1 -F {shlex.quote(str(log))} & t=$!; "
                f"while kill -0 {pid} 2>/dev/null; do sleep 1; done; kill $t"
            )
            if index == 0:
                self._run(
                    "-f",
                    "/dev/null",
                    "new-session",
                    "-d",
                    "-s",
                    "moot",
                    "-x",
                    "200",
                    "-y",
                    "50",
                    "sh",
                    "-c",
                    follow,
                )
                self._run("set-option", "-t", "moot", "status-left", f"moot {session} ")
                where = self._run("display-message", "-p", "#{socket_path}").strip()
                self.socket_path = Path(where) if where else None
            else:
                self._run("split-window", "-d", "-t", "moot", "sh", "-c", follow)
                self._run("select-layout", "-t", "moot", "tiled")
            pane = self._run("list-panes", "-t", "moot", "-F", "#{pane_id}").split()[-1]
            self._run("select-pane", "-t", pane, "-T", alias_label(alias))
        self._stop_copy = copy_output(self._copy)
        print(f"moot: CLI agents' output in tmux: tmux -L {self.socket} attach", file=sys.stderr)

    def _copy(self, alias: str, step: str) -> BinaryIO | None:
        log = self.logs.get(alias)
        if log is None:
            return None
        handle = log.open("ab")
        handle.write(f"\n--- {step} ---\n".encode())
        handle.flush()
        return handle

    def _close(self) -> None:
        if self._stop_copy is not None:
            self._stop_copy()
            self._stop_copy = None
        if self.socket is not None:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                self._run("kill-server")
            self.socket = None
        if self.socket_path is not None:
            # tmux leaves the socket file of a server it killed; only ours, and only once no
            # server answers on it
            for _ in range(50):  # the server closes its socket as it exits, just after
                if not self.socket_path.is_socket() or _server_gone(self.socket_path):
                    self.socket_path.unlink(missing_ok=True)
                    break
                time.sleep(0.02)
            self.socket_path = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
