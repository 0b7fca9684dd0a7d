"""A Mixture-of-Agents run killed with SIGKILL in its second layer or its aggregator resumes to
the same outcome, and no step that reached the journal is asked again.

Three agents, two layers: a full run asks 7 times (3 + 3 answers, the aggregator). At call
KILL_AT the participant waits until every call made before it is journaled, then kills its own
process (the pattern of tests/protocols/court/test_court_crash.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import crash_runs
from tests.protocols.court.test_court_crash import stable

FULL_RUN = 7
KILL_POINTS = (5, 7)  # a layer 2 answer, the aggregator


PARTICIPANTS = crash_runs.participants(
    "Scripted agents for tests/protocols/moa/test_moa_crash.py.",
    "import asyncio\nimport json\nimport os\nimport signal\nimport time",
    r"""
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
""",
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
    return crash_runs.home(root, PARTICIPANTS, "moa.toml", CONFIG)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("reference")
    ran = crash_runs.reference(root, home(root), TASK, "moa.toml", 0, FULL_RUN)
    # 2 of 3 end on Postgres, persuaded
    assert ran["answer"].strip().endswith("Answer: Postgres")
    assert ran["result"]["finding"]["label"] == "persuasion"
    return ran


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", KILL_POINTS)
def test_kill_in_a_later_layer_or_the_aggregator_then_resume_asks_nothing_twice(
    kill_at: int, tmp_path: Path, reference: dict[str, Any]
) -> None:
    env = home(tmp_path)
    killed = crash_runs.kill(tmp_path, env, TASK, "moa.toml", kill_at)
    assert killed.step.startswith(("r2/propose/", "r2/aggregate/")), killed.step
    result = crash_runs.resume(tmp_path, env, killed, 0, reference)
    assert stable(result["details"]) == stable(reference["result"]["details"])
    assert result["trust"] == reference["result"]["trust"]
