"""A Mixture-of-Agents run killed with SIGKILL in its second layer or its aggregator resumes to
the same outcome, and no step that reached the journal is asked again.

Three agents, two layers: a full run asks 7 times (3 + 3 answers, the aggregator). At call
KILL_AT the participant waits until every call made before it is journaled, then kills its own
process (the pattern of tests/protocols/court/test_court_crash.py)."""

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

FULL_RUN = 7
KILL_POINTS = (5, 7)  # a layer 2 answer, the aggregator

_LOG = COURT_PARTICIPANTS[
    COURT_PARTICIPANTS.index("async def _log") : COURT_PARTICIPANTS.index("async def agent")
]
PARTICIPANTS = (
    '"""Scripted agents for tests/protocols/moa/test_moa_crash.py."""\n'
    "import asyncio\nimport json\nimport os\nimport signal\nimport time\n\n\n"
    + _LOG
    + r"""
FIRST = {"agent_a": "Use Postgres.\nAnswer: Postgres", "agent_b": "Use SQLite.\nAnswer: SQLite",
         "agent_c": "Use flat files.\nAnswer: flat files"}
SECOND = {"agent_a": "Postgres, having read the others.\nAnswer: Postgres",
          "agent_b": "Postgres after all.\nAnswer: Postgres",
          "agent_c": "Still flat files.\nAnswer: flat files"}


async def agent(request):
    step, me = request.meta["step"], request.meta["agent"]
    await _log(step)
    if "/aggregate/" in step:
        return "Postgres is the safe choice for sessions.\nAnswer: Postgres"
    return (FIRST if step.startswith("r1/") else SECOND)[me]
"""
)

CONFIG = """\
protocol = "moa"
seed = 5

[moa]
layers = 2

[[agents]]
model = "scripted:participants.py#agent"
[[agents]]
model = "scripted:participants.py#agent"
[[agents]]
model = "scripted:participants.py#agent"
"""
TASK = "How should the service store its sessions?"


def home(root: Path) -> dict[str, str]:
    env = tournament_home(root)  # the same environment; our files replace its own
    (root / "participants.py").write_text(PARTICIPANTS)
    (root / "moa.toml").write_text(CONFIG)
    return env


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("reference")
    env = home(root)
    done = moot(root, env, "run", TASK, "--config", "moa.toml", "-q")
    assert done.returncode == 0, done.stderr  # 2 of 3 end on Postgres, persuaded
    assert done.stdout.strip().endswith("Answer: Postgres")
    steps = calls(root)
    assert len(steps) == FULL_RUN and len(set(steps)) == FULL_RUN, steps
    result = json.loads((session(root) / "result.json").read_text())
    assert result["finding"]["label"] == "persuasion"
    return {"answer": done.stdout, "result": result}


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", KILL_POINTS)
def test_kill_in_a_later_layer_or_the_aggregator_then_resume_asks_nothing_twice(
    kill_at: int, tmp_path: Path, reference: dict[str, Any]
) -> None:
    env = home(tmp_path)
    killed = moot(tmp_path, {**env, "KILL_AT": str(kill_at)}, "run", TASK, "--config", "moa.toml")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    folder = session(tmp_path)
    before = calls(tmp_path)
    killed_step = before[kill_at - 1]
    assert killed_step.startswith(("r2/propose/", "r2/aggregate/")), killed_step
    assert set(asked(folder)) == set(before) - {killed_step}  # only the killed step was lost
    assert not (folder / "result.json").exists()

    resumed = moot(tmp_path, env, "resume", folder.name, "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == reference["answer"]
    after = calls(tmp_path)[len(before) :]
    twice = [step for step, n in Counter(before + after).items() if n > 1]
    assert twice == [killed_step]  # everything journaled was answered from the journal
    result = json.loads((folder / "result.json").read_text())
    assert stable(result["details"]) == stable(reference["result"]["details"])
    assert result["trust"] == reference["result"]["trust"]
