"""A tournament killed with SIGKILL in the middle of its second match resumes to the same
outcome, and no step that reached the journal is asked again.

Three sides that never move and an arbiter that scores them 40: each match runs its 3 rounds
after round 0 and asks 10 times (2 positions, 1 convergence check, since positions that do not
move are not checked again, 2 challenges, 2 defenses, 2 challenges, the verdict): 20 in all.
At call KILL_AT the participant waits until every call made before it is journaled, then kills
its own process (the pattern of tests/protocols/court/test_court_crash.py)."""

from __future__ import annotations

import json
import os
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from moot import api as runner
from tests.protocols.court.test_court_crash import PARTICIPANTS as COURT_PARTICIPANTS
from tests.protocols.court.test_court_crash import asked, calls, moot, session, stable

FULL_RUN = 20
KILL_POINTS = (14, 17)  # match 2: its first challenge round, its defense round

# The court's logging-and-killing helper, then the tournament's sides and arbiter.
_LOG = COURT_PARTICIPANTS[
    COURT_PARTICIPANTS.index("async def _log") : COURT_PARTICIPANTS.index("async def agent")
]
PARTICIPANTS = (
    '"""Scripted tournament participants for '
    'tests/protocols/tournament/test_tournament_crash.py."""\n'
    "import asyncio\nimport json\nimport os\nimport signal\nimport time\n\n"
    'TEXTS = {"agent_a": "Store sessions in PostgreSQL with an index on expiry.",\n'
    '         "agent_b": "Keep sessions in Redis with a TTL per key, no database at all.",\n'
    '         "agent_c": "Put sessions in DynamoDB, partitioned by user, with native expiry."}\n'
    "\n\n"
    + _LOG
    + r"""
async def side(request):
    step, me = request.meta["step"], request.meta["agent"]
    await _log(step)
    kind = step.split("/")[1].rsplit("_", 1)[-1]
    if kind == "convergence":
        return json.dumps({"overall_convergence": 40, "core_recommendation": 40,
                           "reasoning_alignment": 40, "tradeoff_alignment": 40,
                           "implementation_alignment": 40, "key_disagreements": ["the store"]})
    if kind == "verdict":
        return json.dumps({"winner": "A", "reasons": ["more complete"],
                           "fundamental_disagreement": "which store",
                           "why_no_convergence": "different priorities"})
    text = TEXTS[me]
    if kind == "positions":
        return json.dumps({"recommendation": text, "reasons": ["measured"], "confidence": 0.7,
                           "confidence_factors": ["benchmarks"], "uncertainty_points": ["growth"]})
    if kind == "challenge":
        return json.dumps({"weaknesses": ["backups", "cost"], "counter_claims": [],
                           "alternatives": [], "strong_points": ["clear"], "position": text,
                           "confidence": 0.7})
    return json.dumps({"defense": ["measured"], "concessions": [], "position": text,
                       "position_changed": False, "what_changed": "", "confidence": 0.7})
"""
)

CONFIG = """\
protocol = "tournament"
seed = 5

[[agents]]
model = "scripted:participants.py#side"
[[agents]]
model = "scripted:participants.py#side"
[[agents]]
model = "scripted:participants.py#side"
"""
TASK = "How should the service store its sessions?"


def home(root: Path) -> dict[str, str]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "participants.py").write_text(PARTICIPANTS)
    (root / "tournament.toml").write_text(CONFIG)
    env = {k: v for k, v in os.environ.items() if k not in ("KILL_AT", "MOOT_JOURNAL_KEY")}
    return {**env, "MOOT_HOME": str(root / "home"), "MOOT_TEST_CALLS": str(root / "calls.log")}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("reference")
    env = home(root)
    done = moot(root, env, "run", TASK, "--config", "tournament.toml", "-q")
    assert done.returncode == 2, done.stderr  # the final match did not converge
    steps = calls(root)
    assert len(steps) == FULL_RUN and len(set(steps)) == FULL_RUN, steps
    result = json.loads((session(root) / "result.json").read_text())
    assert len(result["details"]["bracket"]["matches"]) == 2
    return {"result": result, "steps": sorted(steps), "answer": done.stdout}


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", KILL_POINTS)
def test_kill_in_the_second_match_then_resume_asks_nothing_twice(
    kill_at: int, tmp_path: Path, reference: dict[str, Any]
) -> None:
    env = home(tmp_path)
    killed = moot(
        tmp_path, {**env, "KILL_AT": str(kill_at)}, "run", TASK, "--config", "tournament.toml"
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    folder = session(tmp_path)
    before = calls(tmp_path)
    journaled = asked(folder)
    killed_step = before[kill_at - 1]
    assert "/match_2_" in killed_step, f"call {kill_at} ({killed_step}) is not in match 2"
    assert set(journaled) == set(before) - {killed_step}  # only the killed step was lost

    resumed = moot(tmp_path, env, "resume", folder.name, "-q")
    assert resumed.returncode == 2, resumed.stderr
    assert resumed.stdout == reference["answer"]

    after = calls(tmp_path)[len(before) :]
    assert not set(after) & set(journaled), "a journaled step was asked again"
    counts = Counter(calls(tmp_path))
    assert counts[killed_step] == 2
    assert all(n == 1 for step, n in counts.items() if step != killed_step), counts
    assert sorted(asked(folder)) == reference["steps"]
    result = json.loads((folder / "result.json").read_text())
    assert stable(result) == stable(reference["result"])
    assert runner.replay(folder.name, root=folder.parent).identical is True
