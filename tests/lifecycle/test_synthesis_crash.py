"""A vote with `--synthesize` killed with SIGKILL as its chairman is asked resumes to the same
outcome, and no step that reached the journal is asked again (the pattern of
tests/protocols/council/test_council_crash.py)."""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.protocols.court.test_court_crash import PARTICIPANTS as COURT_PARTICIPANTS
from tests.protocols.court.test_court_crash import asked, calls, moot, session, stable
from tests.protocols.tournament.test_tournament_crash import home as tournament_home

FULL_RUN = 4  # three answers, the chairman
KILL_AT = 4

_LOG = COURT_PARTICIPANTS[
    COURT_PARTICIPANTS.index("async def _log") : COURT_PARTICIPANTS.index("async def agent")
]
PARTICIPANTS = (
    '"""Scripted voters for tests/lifecycle/test_synthesis_crash.py."""\n'
    "import asyncio\nimport json\nimport os\nimport signal\nimport time\n\n\n"
    + _LOG
    + r"""
ANSWERS = {"agent_a": "Answer: 30 seconds", "agent_b": "Answer: 30 seconds",
           "agent_c": "Answer: 60 seconds"}


async def member(request):
    step, me = request.meta["step"], request.meta["agent"]
    await _log(step)
    if step.startswith("synthesis/"):
        return "30 seconds, and log the requests that hit it.\nAnswer: 30 seconds"
    return ANSWERS[me]
"""
)

CONFIG = """\
protocol = "vote"
seed = 5

[synthesis]
enabled = true

[[agents]]
model = "scripted:participants.py#member"
[[agents]]
model = "scripted:participants.py#member"
[[agents]]
model = "scripted:participants.py#member"
"""
TASK = "How many seconds should the request timeout be?"


def home(root: Path) -> dict[str, str]:
    env = tournament_home(root)  # the same environment; our files replace its own
    (root / "participants.py").write_text(PARTICIPANTS)
    (root / "vote.toml").write_text(CONFIG)
    return env


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("reference")
    env = home(root)
    done = moot(root, env, "run", TASK, "--config", "vote.toml", "-q")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("Answer: 30 seconds")
    steps = calls(root)
    assert len(steps) == FULL_RUN and len(set(steps)) == FULL_RUN, steps
    result = json.loads((session(root) / "result.json").read_text())
    assert result["synthesis"]["accepted"] is True
    return {"answer": done.stdout, "result": result}


@pytest.mark.slow
def test_kill_as_the_chairman_is_asked_then_resume_asks_nothing_twice(
    tmp_path: Path, reference: dict[str, Any]
) -> None:
    env = home(tmp_path)
    killed = moot(tmp_path, {**env, "KILL_AT": str(KILL_AT)}, "run", TASK, "--config", "vote.toml")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    folder = session(tmp_path)
    before = calls(tmp_path)
    killed_step = before[KILL_AT - 1]
    assert killed_step.startswith("synthesis/chair/"), killed_step
    assert set(asked(folder)) == set(before) - {killed_step}  # only the chairman was lost
    assert not (folder / "result.json").exists()

    resumed = moot(tmp_path, env, "resume", folder.name, "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == reference["answer"]
    after = calls(tmp_path)[len(before) :]
    twice = [step for step, n in Counter(before + after).items() if n > 1]
    assert twice == [killed_step]  # the answers were read from the journal
    result = json.loads((folder / "result.json").read_text())
    assert stable(result["synthesis"]) == stable(reference["result"]["synthesis"])
    assert result["trust"] == reference["result"]["trust"]
