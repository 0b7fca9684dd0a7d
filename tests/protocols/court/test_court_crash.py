"""A court killed with SIGKILL in the middle of its judge panel resumes to the same verdict, and
no step that reached the journal is asked again.

The scripted participants (a file, so a child process can load it) log every call before they
answer; they are async, so the event loop journals the others while one waits. A full run asks
12 times: 3 proposals, 3 votes (maxAgentRounds 2, nobody moves), then two judge rounds of 3
(split in the first, unanimous in the second: the court's answer is chosen by the judges, exit
2). At call KILL_AT the participant waits until every
other call made so far is journaled, then kills its own process: exactly one step is in flight
at the kill, and it is the only one asked twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from moot import api as runner

MOOT = str(Path(sys.executable).parent / "moot")
FULL_RUN = 12
KILL_POINTS = (8, 11)  # judge round 1, judge round 2
TIMEOUT = 120  # a hang, not a slow machine; the quiesce before a kill waits up to 60 s

PARTICIPANTS = r'''
"""Scripted court participants for tests/protocols/court/test_court_crash.py."""
import asyncio
import hashlib
import json
import os
import re
import signal
import time

TEXTS = {"agent_a": "Use Postgres.", "agent_b": "Use SQLite.", "agent_c": "Use flat files."}


def pid(text):
    normal = re.sub(r"\s+", " ", text.strip()).lower()
    return hashlib.sha256(normal.encode()).hexdigest()[:12]


async def _log(step):
    log = os.environ["MOOT_TEST_CALLS"]
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(step + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    with open(log, encoding="utf-8") as handle:
        calls = handle.read().split()
    if len(calls) == int(os.environ.get("KILL_AT") or 0):
        deadline = time.monotonic() + 60  # generous: a loaded machine is slow
        while time.monotonic() < deadline:  # wait until the others are journaled
            journaled = set()
            for root, _, files in os.walk(os.environ["MOOT_HOME"]):
                if "events.jsonl" in files:
                    with open(os.path.join(root, "events.jsonl"), encoding="utf-8") as events:
                        for line in events:
                            try:
                                event = json.loads(line)
                            except ValueError:
                                continue
                            if event.get("kind") == "ask":
                                journaled.add(event["step"])
            if set(calls) - {step} <= journaled:
                break
            await asyncio.sleep(0.005)
        os.kill(os.getpid(), signal.SIGKILL)


async def agent(request):
    step, me = request.meta["step"], request.meta["agent"]
    await _log(step)
    text = TEXTS[me]
    found = re.search(r'has the id "([0-9a-f]{12})"', request.prompt)
    if found is None:
        return json.dumps({"vote": "abstain", "newPositionText": text, "reasoning": "mine",
                           "confidence": 0.8})
    if found.group(1) == pid(text):
        return json.dumps({"vote": "yes", "targetPositionId": found.group(1),
                           "reasoning": "mine", "confidence": 0.8})
    return json.dumps({"vote": "no", "newPositionText": text, "reasoning": "mine",
                       "confidence": 0.8})


async def judge(request):
    step, me = request.meta["step"], request.meta["agent"]
    await _log(step)
    shown = sorted(set(re.findall(r'<quoted from="position ([0-9a-f]{12})"', request.prompt)))
    if step.startswith("j1/"):  # split: each judge picks another position
        choice = shown["abc".index(me[-1]) % len(shown)]
    else:
        choice = pid("Use Postgres.")
    scores = {p: (90 if p == choice else 30) for p in shown}
    return json.dumps({"selectedPositionId": choice, "scoresByPositionId": scores,
                       "reasoning": "weighed", "confidence": 0.9})
'''

CONFIG = """\
protocol = "court"
seed = 5

[[agents]]
model = "scripted:participants.py#agent"
[[agents]]
model = "scripted:participants.py#agent"
[[agents]]
model = "scripted:participants.py#agent"

[court]
topic = "How should the service store its sessions?"
max_agent_rounds = 2
[[court.judges]]
model = "scripted:participants.py#judge"
[[court.judges]]
model = "scripted:participants.py#judge"
[[court.judges]]
model = "scripted:participants.py#judge"
"""

# `journal`: the head the result was computed from; a crash and resume add events to it
_VOLATILE = {"timestamp", "startedAt", "completedAt", "latencyMs", "id", "session_id", "journal"}


def stable(value: Any) -> Any:
    """A result without what differs between two runs of the same court: times and the id."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def court_home(root: Path) -> dict[str, str]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "participants.py").write_text(PARTICIPANTS)
    (root / "court.toml").write_text(CONFIG)
    env = {k: v for k, v in os.environ.items() if k not in ("KILL_AT", "MOOT_JOURNAL_KEY")}
    return {**env, "MOOT_HOME": str(root / "home"), "MOOT_TEST_CALLS": str(root / "calls.log")}


def moot(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MOOT, *args], env=env, cwd=root, capture_output=True, text=True, timeout=TIMEOUT
    )


def session(root: Path) -> Path:
    (folder,) = (root / "home" / "sessions").iterdir()
    return folder


def calls(root: Path) -> list[str]:
    return (root / "calls.log").read_text().split()


def asked(folder: Path) -> list[str]:
    lines = (folder / "events.jsonl").read_text().splitlines()
    return [e["step"] for e in map(json.loads, lines) if e["kind"] == "ask"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("reference")
    env = court_home(root)
    done = moot(root, env, "run", "--config", "court.toml", "-q")
    assert done.returncode == 2, done.stderr  # chosen by the judges: no consensus (issue 29)
    assert done.stdout.strip() == "Use Postgres."
    steps = calls(root)
    assert len(steps) == FULL_RUN and len(set(steps)) == FULL_RUN, steps
    result = json.loads((session(root) / "result.json").read_text())
    assert [r["roundNumber"] for r in result["details"]["court"]["judgePanel"]["rounds"]] == [1, 2]
    return {"result": result, "steps": sorted(steps)}


@pytest.mark.parametrize("kill_at", KILL_POINTS)
def test_kill_in_the_judge_panel_then_resume_asks_nothing_twice(
    kill_at: int, tmp_path: Path, reference: dict[str, Any]
) -> None:
    env = court_home(tmp_path)
    killed = moot(tmp_path, {**env, "KILL_AT": str(kill_at)}, "run", "--config", "court.toml")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    folder = session(tmp_path)
    before = calls(tmp_path)
    journaled = asked(folder)
    killed_step = before[kill_at - 1]
    assert killed_step.startswith("j"), f"call {kill_at} ({killed_step}) is not a judge's"
    assert set(journaled) == set(before) - {killed_step}  # only the killed step was lost

    resumed = moot(tmp_path, env, "resume", folder.name, "-q")
    assert resumed.returncode == 2, resumed.stderr
    assert resumed.stdout.strip() == "Use Postgres."

    after = calls(tmp_path)[len(before) :]
    assert not set(after) & set(journaled), "a journaled step was asked again"
    counts = Counter(calls(tmp_path))
    assert counts[killed_step] == 2
    assert all(n == 1 for step, n in counts.items() if step != killed_step), counts
    assert sorted(asked(folder)) == reference["steps"]
    result = json.loads((folder / "result.json").read_text())
    assert stable(result) == stable(reference["result"])
    assert runner.replay(folder.name, root=folder.parent).identical is True
