"""A vote with `--synthesize` killed with SIGKILL as its chairman is asked resumes to the same
outcome, and no step that reached the journal is asked again (the pattern of
tests/protocols/council/test_council_crash.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import crash_runs
from tests.protocols.court.test_court_crash import stable

FULL_RUN = 4  # three answers, the chairman
KILL_AT = 4


PARTICIPANTS = crash_runs.participants(
    "Scripted voters for tests/lifecycle/test_synthesis_crash.py.",
    "import asyncio\nimport json\nimport os\nimport signal\nimport time",
    r"""
ANSWERS = {"agent_a": "Answer: 30 seconds", "agent_b": "Answer: 30 seconds",
           "agent_c": "Answer: 60 seconds"}


async def member(request):
    step, me = request.meta["step"], request.meta["agent"]
    await _log(step)
    if step.startswith("synthesis/"):
        return "30 seconds, and log the requests that hit it.\nAnswer: 30 seconds"
    return ANSWERS[me]
""",
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
    return crash_runs.home(root, PARTICIPANTS, "vote.toml", CONFIG)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("reference")
    ran = crash_runs.reference(root, home(root), TASK, "vote.toml", 0, FULL_RUN)
    assert ran["answer"].strip().endswith("Answer: 30 seconds")
    assert ran["result"]["synthesis"]["accepted"] is True
    return ran


@pytest.mark.slow
def test_kill_as_the_chairman_is_asked_then_resume_asks_nothing_twice(
    tmp_path: Path, reference: dict[str, Any]
) -> None:
    env = home(tmp_path)
    killed = crash_runs.kill(tmp_path, env, TASK, "vote.toml", KILL_AT)
    assert killed.step.startswith("synthesis/chair/"), killed.step
    result = crash_runs.resume(tmp_path, env, killed, 0, reference)
    assert stable(result["synthesis"]) == stable(reference["result"]["synthesis"])
    assert result["trust"] == reference["result"]["trust"]
