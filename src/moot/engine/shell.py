"""Verify commands: own process group, killed as a tree on timeout, output capped."""

from __future__ import annotations

import asyncio
import os
import signal
import time

from pydantic import BaseModel, ConfigDict

__all__ = ["OUTPUT_CAP", "ShellResult", "run_shell"]

OUTPUT_CAP = 64_000  # characters of stdout and of stderr kept as evidence


class ShellResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    exit_code: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    truncated: bool = False


def _cap(data: bytes) -> tuple[str, bool]:
    text = data.decode("utf-8", "replace")
    if len(text) <= OUTPUT_CAP:
        return text, False
    half = OUTPUT_CAP // 2
    return text[:half] + "\n[... output cut ...]\n" + text[-half:], True


async def run_shell(command: str, *, cwd: str | None, timeout: float) -> ShellResult:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_shell(
        command,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # its own process group, so a timeout kills the whole tree
    )
    timed_out = False
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        timed_out = True
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        stdout, stderr = await process.communicate()
    except asyncio.CancelledError:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        raise
    out, cut_out = _cap(stdout)
    err, cut_err = _cap(stderr)
    return ShellResult(
        exit_code=process.returncode if process.returncode is not None else -1,
        stdout=out,
        stderr=err,
        seconds=round(time.perf_counter() - started, 3),
        timed_out=timed_out,
        truncated=cut_out or cut_err,
    )
