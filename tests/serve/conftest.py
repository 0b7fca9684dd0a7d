"""`served`: `moot serve` as a subprocess on a free loopback port, for the tests that need a
real server (a browser, a kill)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOUND = 90.0


class Served:
    """A running `moot serve`: the URL it printed, its sessions folder and its process."""

    def __init__(self, url: str, sessions: Path, process: subprocess.Popen[bytes]) -> None:
        self.url = url
        self.sessions = sessions
        self.process = process

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    @property
    def base(self) -> str:
        return self.url.split("/?", 1)[0]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """`moot serve` on a free loopback port, its agents' replies each 0.6 s apart."""
    home = tmp_path / "home"
    env = {
        **os.environ,
        "MOOT_HOME": str(home),
        "PYTHONPATH": str(ROOT / "src"),
        "MOOT_TEST_AGENT_DELAY": "0.6",
    }
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "moot.cli", "serve"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + BOUND
        while not (
            found := re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", log_path.read_text())
        ):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"moot serve printed no URL: {log_path.read_text()}")
            time.sleep(0.05)
        yield Served(found.group(0), home / "sessions", process)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
