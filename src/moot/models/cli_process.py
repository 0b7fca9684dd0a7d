"""Run one command for a CLI model: no shell, bounded in every way, and nothing left behind.

The command runs under moot's supervisor (proc_supervisor.py), a small process started in a
new session that owns the command's whole tree: on Linux it is a subreaper, so even daemons
that called setsid or double-forked stay in that tree, and it ends with moot, even when moot
is killed with SIGKILL. The answer is taken when the command itself exits: the supervisor then
kills whatever it left running (a background child holding stdout open, a daemon), so the pipes
close at once instead of when a leftover happens to exit. On timeout, on cancellation (Ctrl-C)
and when stdout passes its cap, moot sends the supervisor SIGTERM: the command gets SIGTERM,
a second's grace, then its whole tree SIGKILL. Should the supervisor not finish in time (or not
run at all: no Python executable to start it with), moot kills the session itself.
Linux's parent-death signal follows the thread that started the supervisor: here always the
event loop's thread, which outlives every call it runs.

stdin and stdout are capped (2 MB in, 10 MB out); stderr keeps its last 64 KB.

A face may watch a CLI agent's output as it comes (`copy_output`, used by `--display tmux`):
the chunks read from the pipes are also written to the file the watcher returns. What moot
captures, parses and journals is the same with or without a watcher.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

from msgspec import Struct

from moot.models.base import call_context
from moot.models.proc_supervisor import GRACE, session_members

__all__ = [
    "MAX_STDIN",
    "MAX_STDOUT",
    "OutputCopy",
    "ProcessResult",
    "copy_output",
    "file_sha256",
    "run_process",
    "tool_version",
]

MAX_STDOUT = 10 * 1024 * 1024
MAX_STDIN = 2 * 1024 * 1024
MAX_STDERR = 64 * 1024
_SUPERVISOR = Path(__file__).with_name("proc_supervisor.py")
_STREAM_LIMIT = 64 * 1024


# (agent alias, step) -> an open binary file the agent's output is copied to, or None
OutputCopy = Callable[[str, str], BinaryIO | None]
_COPIES: list[OutputCopy] = []


def copy_output(watcher: OutputCopy) -> Callable[[], None]:
    """Copy every CLI agent's stdout and stderr, as they come, to the file `watcher` returns
    for its alias and step (run_process closes it). Returns the function that stops it."""
    _COPIES.append(watcher)

    def stop() -> None:
        with contextlib.suppress(ValueError):
            _COPIES.remove(watcher)

    return stop


def _copy_target() -> BinaryIO | None:
    """The file this call's output is copied to: a watcher's, for a model call only (verify
    commands run outside one)."""
    context = call_context()
    if context is None:
        return None
    for watcher in list(_COPIES):
        with contextlib.suppress(OSError):
            target = watcher(context.agent, context.step)
            if target is not None:
                return target
    return None


class ProcessResult(Struct, frozen=True):
    exit_code: int | None  # None: killed by us
    stdout: bytes
    stderr: str
    timed_out: bool = False
    overflow: bool = False
    duration: float = 0.0


class _Sink:
    def __init__(self, cap: int, keep_tail: bool, copy: BinaryIO | None = None) -> None:
        self.cap = cap
        self.keep_tail = keep_tail
        self.data = bytearray()
        self.overflow = False
        self.copy = copy

    def add(self, chunk: bytes) -> None:
        if self.copy is not None:
            try:
                self.copy.write(chunk)
                self.copy.flush()
            except (OSError, ValueError):  # a watcher's file gone: stop copying, not capturing
                self.copy = None
        self.data += chunk
        if len(self.data) > self.cap:
            self.overflow = True
            if self.keep_tail:
                del self.data[: len(self.data) - self.cap]
            else:
                del self.data[self.cap :]


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's own protocol, plus a future set the moment the process exits: Process.wait()
    only returns once every pipe has closed, which a leftover child can delay forever."""

    def __init__(self, exited: asyncio.Future[None], loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=_STREAM_LIMIT, loop=loop)
        self.exited = exited

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


async def run_process(
    argv: list[str],
    *,
    stdin: bytes | None,
    timeout: float,
    max_stdout: int = MAX_STDOUT,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ProcessResult:
    """Run `argv` to its end or its timeout, in `env` (default: moot's); never raises for what
    the command does.

    Raises OSError (FileNotFoundError, PermissionError) when `argv[0]` cannot be executed."""
    started = time.perf_counter()
    _check_executable(argv[0], cwd)
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[None] = loop.create_future()
    transport, protocol = await loop.subprocess_exec(
        lambda: _Protocol(exited, loop),
        *_supervised(argv),
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # not in moot's group: a Ctrl-C reaches moot, which decides
        cwd=cwd,
        env=env,
    )
    proc = asyncio.subprocess.Process(transport, protocol, loop)
    copy = _copy_target()
    out = _Sink(max_stdout, keep_tail=False, copy=copy)
    err = _Sink(MAX_STDERR, keep_tail=True, copy=copy)
    tasks: list[asyncio.Task[None]] = []
    timed_out = False
    try:
        assert proc.stdout is not None and proc.stderr is not None
        tasks = [
            asyncio.create_task(_pump(proc.stdout, out, lambda: _terminate(proc.pid))),
            asyncio.create_task(_pump(proc.stderr, err, None)),
        ]
        if stdin is not None and proc.stdin is not None:
            tasks.append(asyncio.create_task(_feed(proc.stdin, stdin)))
        try:
            await asyncio.wait_for(asyncio.shield(exited), timeout)
        except TimeoutError:
            timed_out = True
    finally:
        if proc.returncode is None:  # timeout or cancellation: the supervisor ends the tree
            _terminate(proc.pid)
            await _bounded(exited, GRACE + 2)
            if proc.returncode is None:
                _kill_session(proc.pid)
        await _drain(tasks[:2], proc.pid)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        transport.close()  # asyncio has no other way to close a process's pipes
        if copy is not None:
            with contextlib.suppress(OSError):
                copy.close()
    code = None if timed_out or out.overflow else proc.returncode
    return ProcessResult(
        exit_code=code,
        stdout=bytes(out.data),
        stderr=err.data.decode("utf-8", "replace"),
        timed_out=timed_out,
        overflow=out.overflow,
        duration=time.perf_counter() - started,
    )


def _supervised(argv: list[str]) -> list[str]:
    if not sys.executable or not _SUPERVISOR.is_file():
        return argv  # moot alone: its session is killed, a setsid'd child can escape
    # -I -S: the supervisor needs nothing but the standard library; start it fast and isolated
    return [sys.executable, "-I", "-S", str(_SUPERVISOR), str(os.getpid()), "--", *argv]


def _check_executable(command: str, cwd: str | None) -> None:
    """The OSError exec would give, raised here: under the supervisor exec happens later."""
    if os.sep in command:
        path = os.path.join(cwd or ".", command)
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), command)
    elif shutil.which(command) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)


async def _bounded(future: asyncio.Future[None], seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(future), seconds)


async def _drain(readers: list[asyncio.Task[None]], sid: int) -> None:
    """Read the pipes to their end: at once once the tree is gone; a holder outside the
    supervisor's reach (or no supervisor) gets its session killed after a grace period."""
    if not readers:
        return
    _, pending = await asyncio.wait(readers, timeout=GRACE)
    if pending:
        _kill_session(sid)
        await asyncio.wait(pending, timeout=GRACE)


async def _pump(
    stream: asyncio.StreamReader, sink: _Sink, on_overflow: Callable[[], None] | None
) -> None:
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return
        sink.add(chunk)
        if sink.overflow and on_overflow is not None:
            on_overflow()
            return


async def _feed(stream: asyncio.StreamWriter, data: bytes) -> None:
    try:
        stream.write(data)
        await stream.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the command does not read stdin, or exited early: its exit code tells
    finally:
        with contextlib.suppress(Exception):
            stream.close()


def _terminate(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGTERM)


def _kill_session(sid: int) -> None:
    """The fallback: SIGKILL every process left in the session and below it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(sid, signal.SIGKILL)
    for pid in session_members(sid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


_VERSIONS: dict[str, str] = {}


async def tool_version(executable: str) -> str:
    """`<executable> --version`, first line, asked once per process and executable. It runs in
    an empty temporary folder with stdin closed: a tool that ignores `--version` and does its
    whole job finds nothing there to change (the caller's folder may be the user's repository).
    Only for the built-in tools: custom commands are identified by `file_sha256` instead."""
    if executable not in _VERSIONS:
        with tempfile.TemporaryDirectory(prefix="moot-probe-", ignore_cleanup_errors=True) as empty:
            try:
                result = await run_process(
                    [executable, "--version"],
                    stdin=None,
                    timeout=15,
                    max_stdout=4096,
                    cwd=empty,
                )
                text = result.stdout.decode("utf-8", "replace") or result.stderr
                lines = [line.strip() for line in text.splitlines() if line.strip()]
                found = lines[0][:200] if lines and not result.timed_out else "unknown"
                _VERSIONS[executable] = found
            except OSError:
                _VERSIONS[executable] = "unknown"
    return _VERSIONS[executable]


_HASHES: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str) -> str:
    """The sha256 of the file at `path` (symlinks followed), or "unknown" when it cannot be
    read; remembered per path, size and modification time."""
    try:
        info = os.stat(path)
        key = (os.path.realpath(path), info.st_size, info.st_mtime_ns)
        if key not in _HASHES:
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            _HASHES[key] = digest.hexdigest()
        return _HASHES[key]
    except OSError:
        return "unknown"
