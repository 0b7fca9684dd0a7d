"""Run one command for a CLI model: no shell, its own process group, bounded in every way.

The command is spawned from an argument list (never a shell string) in a new session, so it
and everything it starts share one process group. On timeout, on cancellation, when stdout
passes its cap, and after a normal exit (to catch a leftover background child), the whole group
is killed; on timeout the descendants that left the group are found through /proc and killed
too. stdin and stdout are capped (2 MB in, 10 MB out); stderr keeps its last 64 KB.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MAX_STDIN",
    "MAX_STDOUT",
    "ProcessResult",
    "run_process",
    "tool_version",
]

MAX_STDOUT = 10 * 1024 * 1024
MAX_STDIN = 2 * 1024 * 1024
MAX_STDERR = 64 * 1024
_GRACE = 1.0  # seconds between SIGTERM and SIGKILL, and for pipes to drain after an exit


@dataclass(frozen=True)
class ProcessResult:
    exit_code: int | None  # None: killed by us
    stdout: bytes
    stderr: str
    timed_out: bool = False
    overflow: bool = False
    duration: float = 0.0


class _Sink:
    def __init__(self, cap: int, keep_tail: bool) -> None:
        self.cap = cap
        self.keep_tail = keep_tail
        self.data = bytearray()
        self.overflow = False

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > self.cap:
            self.overflow = True
            if self.keep_tail:
                del self.data[: len(self.data) - self.cap]
            else:
                del self.data[self.cap :]


async def run_process(
    argv: list[str],
    *,
    stdin: bytes | None,
    timeout: float,
    max_stdout: int = MAX_STDOUT,
    cwd: str | None = None,
) -> ProcessResult:
    """Run `argv` to its end or its timeout; never raises for what the command does."""
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # its own process group: killable as a whole
        cwd=cwd,
    )
    out, err = _Sink(max_stdout, keep_tail=False), _Sink(MAX_STDERR, keep_tail=True)
    tasks: list[asyncio.Task[None]] = []
    timed_out = False
    try:
        assert proc.stdout is not None and proc.stderr is not None
        tasks = [
            asyncio.create_task(_pump(proc.stdout, out, lambda: _kill_group(proc.pid))),
            asyncio.create_task(_pump(proc.stderr, err, None)),
        ]
        if stdin is not None and proc.stdin is not None:
            tasks.append(asyncio.create_task(_feed(proc.stdin, stdin)))
        try:
            await asyncio.wait_for(_finish(proc, tasks[:2]), timeout)
        except TimeoutError:
            timed_out = True
            await _kill_tree(proc)
    finally:
        _kill_group(proc.pid)  # whatever the command left running dies with the call
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proc.wait(), _GRACE)
        with contextlib.suppress(TimeoutError):  # the pipes reach EOF once their holders died
            await asyncio.wait_for(asyncio.gather(*tasks[:2], return_exceptions=True), _GRACE)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # asyncio has no public close for a process's pipes; left open they leak descriptors.
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()
    code = None if timed_out or out.overflow else proc.returncode
    return ProcessResult(
        exit_code=code,
        stdout=bytes(out.data),
        stderr=err.data.decode("utf-8", "replace"),
        timed_out=timed_out,
        overflow=out.overflow,
        duration=time.perf_counter() - started,
    )


async def _finish(proc: asyncio.subprocess.Process, readers: list[asyncio.Task[None]]) -> None:
    await proc.wait()
    try:  # pipes close when the last holder exits; a leftover child may still hold them
        await asyncio.wait_for(asyncio.gather(*readers), _GRACE)
    except TimeoutError:
        _kill_group(proc.pid)
        await asyncio.gather(*readers, return_exceptions=True)


async def _pump(stream: asyncio.StreamReader, sink: _Sink, on_overflow: object) -> None:
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return
        sink.add(chunk)
        if sink.overflow and callable(on_overflow):
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


def _kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _kill_tree(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM to the group, then SIGKILL to the group and to every descendant found."""
    stray = _descendants(proc.pid)
    _kill_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), _GRACE)
    _kill_group(proc.pid)
    for pid in stray:  # children that started their own session escaped the group
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
            parents[int(entry.parent.name)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found.extend(children)
        frontier.extend(children)
    return found


_VERSIONS: dict[str, str] = {}


async def tool_version(executable: str) -> str:
    """`<executable> --version`, first line, asked once per process and executable."""
    if executable not in _VERSIONS:
        try:
            result = await run_process(
                [executable, "--version"], stdin=None, timeout=15, max_stdout=4096
            )
            text = result.stdout.decode("utf-8", "replace") or result.stderr
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            _VERSIONS[executable] = lines[0][:200] if lines and not result.timed_out else "unknown"
        except OSError:
            _VERSIONS[executable] = "unknown"
    return _VERSIONS[executable]
