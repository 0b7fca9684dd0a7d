"""A run started from `moot serve` outlives the server: killed (SIGKILL) mid-run, the session
is on disk as the CLI sees it, stopped unexpectedly; stopped (SIGTERM), the server journals its
interruption first. Either way `moot resume` finishes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.serve.conftest import ROOT, Served

AGENTS = Path(__file__).with_name("agents.py")
BOUND = 90.0


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _moot(served: Served, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "MOOT_HOME": str(served.sessions.parent),
        "PYTHONPATH": str(ROOT / "src"),
        "MOOT_TEST_AGENT_DELAY": "0",
    }
    return subprocess.run(
        [sys.executable, "-m", "moot.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND,
    )


def _status(served: Served, sid: str) -> str:
    listed = _moot(served, "list", "--json")
    rows = json.loads(listed.stdout)
    return next((str(r["status"]) for r in rows if r["session_id"] == sid), "?")


@pytest.mark.parametrize(
    ("signum", "left"),
    [(signal.SIGKILL, "stopped unexpectedly"), (signal.SIGTERM, "interrupted")],
)
def test_a_run_survives_the_server_killed_and_resumes_from_the_cli(
    served: Served, signum: int, left: str
) -> None:
    specs = ",".join(f"scripted:{AGENTS}#agent_{n}" for n in ("one", "two", "three"))
    form = urllib.parse.urlencode({"task": "What is 6 times 7?", "models": specs}).encode()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as redirected:
        opener.open(f"{served.base}/runs?token={served.token}", data=form, timeout=BOUND)
    redirected.value.close()
    assert redirected.value.code == 303
    sid = redirected.value.headers["location"].rsplit("/", 1)[1]

    journal = served.sessions / sid / "events.jsonl"
    deadline = time.monotonic() + BOUND
    while b'"kind":"ask"' not in journal.read_bytes():  # one reply recorded, the run going on
        assert time.monotonic() < deadline, "no reply was journaled"
        time.sleep(0.05)
    os.killpg(served.process.pid, signum)
    served.process.wait(timeout=BOUND)

    assert _status(served, sid) == left
    resumed = _moot(served, "resume", sid)
    assert resumed.returncode == 0, resumed.stderr
    assert _status(served, sid) == "consensus"
