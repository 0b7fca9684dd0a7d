"""Verify commands of a task without a repository (`engine/shell.py`) run under the process
supervisor the CLI agents use: a command that exits leaving a background child is answered at
its exit, and a child that called setsid neither holds the call past its timeout nor survives it."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path

import pytest

from moot.engine.shell import run_shell
from tests.models.test_cli_processes import processes_naming

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def _survivors(marker: str, within: float = 5.0) -> list[int]:
    deadline = time.monotonic() + within
    while (left := processes_naming(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:  # never leave a failed test's processes on the machine
        os.kill(pid, 9)
    return left


def test_a_command_that_exits_leaving_a_child_is_answered_at_its_exit() -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    started = time.monotonic()
    result = asyncio.run(
        run_shell(f"echo checked; sh -c 'sleep 30; :' {marker} & exit 0", cwd=None, timeout=10)
    )
    assert time.monotonic() - started < 5
    assert (result.exit_code, result.timed_out, result.stdout) == (0, False, "checked\n")
    assert _survivors(marker) == []


def test_a_setsid_child_neither_outlasts_the_timeout_nor_survives_it() -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    started = time.monotonic()
    command = f"echo begun; setsid sh -c 'sleep 30; :' {marker} & sleep 30"
    result = asyncio.run(run_shell(command, cwd=None, timeout=1))
    assert time.monotonic() - started < 6
    assert result.timed_out and result.exit_code != 0
    assert _survivors(marker) == []
