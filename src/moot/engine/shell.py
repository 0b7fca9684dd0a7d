"""Verify commands: run under the CLI agents' process supervisor, killed as a whole tree on
timeout, output capped."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from moot.models.cli_process import run_process

__all__ = ["OUTPUT_CAP", "ShellResult", "run_shell"]

OUTPUT_CAP = 64_000  # characters of stdout and of stderr kept as evidence


class ShellResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

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
    """`command` under `sh -c`, run by the process supervisor the CLI agents use
    (models/cli_process.py), as a code task's verify commands are: its result is taken when the
    shell exits (a background child holding stdout open is killed, not waited for), and on a
    timeout, or if moot dies, the whole tree ends, setsid'd or double-forked children included."""
    done = await run_process(["/bin/sh", "-c", command], stdin=None, timeout=timeout, cwd=cwd)
    out, cut_out = _cap(done.stdout)
    err, cut_err = _cap(done.stderr.encode("utf-8"))
    return ShellResult(
        exit_code=-1 if done.exit_code is None else done.exit_code,
        stdout=out,
        stderr=err,
        seconds=round(done.duration, 3),
        timed_out=done.timed_out,
        truncated=cut_out or cut_err or done.overflow,
    )
