"""A council killed with SIGKILL during its rankings or its chairman resumes to the same
outcome, and no step that reached the journal is asked again.

Three agents: a full run asks 7 times (3 answers, 3 rankings, the chairman). At call KILL_AT
the participant waits until every call made before it is journaled, then kills its own process
(the pattern of tests/protocols/court/test_court_crash.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import crash_runs
from tests.protocols.court.test_court_crash import stable

FULL_RUN = 7
KILL_POINTS = (5, 7)  # a ranking, the chairman


PARTICIPANTS = crash_runs.participants(
    "Scripted council members for tests/protocols/council/test_council_crash.py.",
    "import asyncio\nimport json\nimport os\nimport re\nimport signal\nimport time",
    r"""
BLOCK = re.compile(r"ANSWER ([P-Z]):\n<quoted [^>]*>\n(.*?)\n</quoted", re.DOTALL)
ANSWERS = {"agent_a": "Use Postgres.\nAnswer: Postgres", "agent_b": "Use SQLite.\nAnswer: SQLite",
           "agent_c": "Use flat files.\nAnswer: flat files"}


async def member(request):
    step, me = request.meta["step"], request.meta["agent"]
    await _log(step)
    if "/answer/" in step:
        return ANSWERS[me]
    if "/chair/" in step:
        return "Postgres is the safe choice for sessions.\nAnswer: Postgres"
    shown = dict(BLOCK.findall(request.prompt))
    order = sorted(shown, key=lambda label: "Postgres" not in shown[label])
    return json.dumps({"reasons": {label: "weighed" for label in shown}, "ranking": order})
""",
)

CONFIG = """\
protocol = "council"
seed = 5

[[agents]]
model = "scripted:participants.py#member"
[[agents]]
model = "scripted:participants.py#member"
[[agents]]
model = "scripted:participants.py#member"
"""
TASK = "How should the service store its sessions?"


def home(root: Path) -> dict[str, str]:
    return crash_runs.home(root, PARTICIPANTS, "council.toml", CONFIG)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("reference")
    ran = crash_runs.reference(root, home(root), TASK, "council.toml", 2, FULL_RUN)
    # three different answers: a synthesis
    assert ran["answer"].strip().endswith("Answer: Postgres")
    return ran


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", KILL_POINTS)
def test_kill_in_the_rankings_or_the_chairman_then_resume_asks_nothing_twice(
    kill_at: int, tmp_path: Path, reference: dict[str, Any]
) -> None:
    env = home(tmp_path)
    killed = crash_runs.kill(tmp_path, env, TASK, "council.toml", kill_at)
    assert killed.step.split("/")[1] in ("rank", "chair"), killed.step
    result = crash_runs.resume(tmp_path, env, killed, 2, reference)
    assert stable(result["details"]) == stable(reference["result"]["details"])
    assert result["trust"] == reference["result"]["trust"]
