"""No CLI agent outlives its call: real agents (tests/fakes/leaving_agent.py) that leave children
behind through an open stdout, setsid or a double fork, asked directly and through a real
`moot run` process that exits, is interrupted, or is killed with SIGKILL."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from moot.models.base import create_model
from moot.models.cli_process import run_process
from moot.types import Completion, FailureKind, Message, Request
from tests.fakes.fake_agent import SOLUTION
from tests.fakes.leaving_agent import install

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")

MOOT = str(Path(sys.executable).parent / "moot")
ALL_KINDS = "stdout,setsid,daemon"


def processes_naming(marker: str) -> list[int]:
    """The live (not zombie) processes whose command line holds `marker` (Linux /proc)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


class Agent:
    """One leaving agent under a folder named by a fresh marker, and what it left behind."""

    def __init__(self, root: Path) -> None:
        self.marker = f"marker-{uuid.uuid4().hex}"
        self.path = install(root / self.marker / "agent")
        self.pids_file = root / "pids"

    def started(self) -> list[int]:
        """The pids of the children it started (each wrote its line before sleeping)."""
        if not self.pids_file.exists():
            return []
        return [int(line) for line in self.pids_file.read_text().split()]

    def processes(self) -> list[int]:
        """Live processes whose command line names the marker: agents, children, wrappers."""
        return processes_naming(self.marker)

    def survivors(self, within: float = 5.0) -> list[int]:
        """What is still alive once `within` seconds have passed (sooner if nothing is)."""
        deadline = time.monotonic() + within
        while (left := self.processes()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return left


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Agent]:
    made = Agent(tmp_path)
    monkeypatch.setenv("FAKE_PIDS", str(made.pids_file))
    yield made
    for pid in made.processes():  # never leave a failed test's processes on the machine
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def ask(agent: Agent, timeout: float) -> tuple[Completion, float]:
    model = create_model(f"cli:{agent.path}")
    request = Request(messages=(Message(role="user", content="What is 6 x 7?"),), timeout=timeout)
    started = time.monotonic()
    completion: Completion = asyncio.run(model.complete(request))
    return completion, time.monotonic() - started


def test_an_agent_that_exits_leaving_a_child_on_its_stdout_is_answered_at_its_exit(
    agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LEAVE", "stdout")
    completion, elapsed = ask(agent, timeout=30)
    assert completion.ok, completion.failure
    assert completion.text == SOLUTION
    assert elapsed < 10, "the answer waited for the leftover child, not for the agent"
    assert len(agent.started()) == 1
    assert agent.survivors(within=0.5) == []


@pytest.mark.parametrize("then", ["exit", "hang"])
@pytest.mark.parametrize("leave", ["setsid", "daemon", ALL_KINDS])
def test_children_that_left_the_group_die_with_the_call(
    agent: Agent, monkeypatch: pytest.MonkeyPatch, leave: str, then: str
) -> None:
    monkeypatch.setenv("FAKE_LEAVE", leave)
    monkeypatch.setenv("FAKE_THEN", then)
    completion, elapsed = ask(agent, timeout=3 if then == "hang" else 30)
    if then == "exit":
        assert completion.ok, completion.failure
        assert elapsed < 10  # the call's timeout is 30 s
    else:
        assert completion.failure is not None
        assert completion.failure.kind == FailureKind.TIMEOUT
        assert elapsed < 8
    assert len(agent.started()) == len(leave.split(","))
    assert agent.survivors(within=0.5) == []


def test_a_cancelled_call_takes_its_tree_with_it(
    agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LEAVE", ALL_KINDS)
    monkeypatch.setenv("FAKE_THEN", "hang")

    async def cancel_when_started() -> None:
        call = asyncio.create_task(
            run_process([str(agent.path)], stdin=b"hi", timeout=60, cwd=None)
        )
        while len(agent.started()) < 3:
            await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(asyncio.wait_for(cancel_when_started(), 20))
    assert agent.survivors(within=0.5) == []


def test_a_missing_executable_is_an_os_error() -> None:
    with pytest.raises(FileNotFoundError):
        asyncio.run(run_process(["/nonexistent/agent"], stdin=None, timeout=5))


# -- a real `moot run` process -------------------------------------------------------------------
def start_run(agent: Agent, tmp_path: Path, then: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "MOOT_HOME": str(tmp_path / "home"),
        "FAKE_LEAVE": ALL_KINDS,
        "FAKE_THEN": then,
    }
    models = [arg for _ in range(3) for arg in ("--models", f"cli:{agent.path}")]
    return subprocess.Popen(
        [MOOT, "run", "What is 6 x 7?", *models, "-q"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_children(agent: Agent, moot: subprocess.Popen[str], count: int) -> None:
    deadline = time.monotonic() + 60
    while len(agent.started()) < count:
        assert moot.poll() is None, moot.communicate()
        assert time.monotonic() < deadline, "the agents never started their children"
        time.sleep(0.05)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_killing_moot_while_agents_run_leaves_none_of_their_processes(
    agent: Agent, tmp_path: Path, sig: signal.Signals
) -> None:
    moot = start_run(agent, tmp_path, then="hang")
    try:
        wait_for_children(agent, moot, count=9)  # three agents, three children each
        assert len(agent.processes()) >= 12
        moot.send_signal(sig)
        moot.communicate(timeout=30)
    finally:
        if moot.poll() is None:
            moot.kill()
            moot.communicate()
    assert agent.survivors(within=10) == []


def test_a_moot_run_whose_agents_leave_children_exits_with_none_left(
    agent: Agent, tmp_path: Path
) -> None:
    moot = start_run(agent, tmp_path, then="exit")
    try:
        out, err = moot.communicate(timeout=120)
    finally:
        if moot.poll() is None:
            moot.kill()
            moot.communicate()
    assert moot.returncode == 0, err
    assert "42" in out
    assert len(agent.started()) >= 9  # at least one round of three agents
    assert agent.survivors(within=2) == []
