"""A refine run killed with SIGKILL in the middle of a pass resumes to the same outcome and the
same artifacts, and no step that reached the journal is asked again.

Four agents, two judges, k = 2: B wins pass 1, A wins passes 2 and 3. A full run asks 16 times:
the author, then per pass critic, author B, synthesizer and two judges. At call KILL_AT the
participant waits until every call made before it is journaled, then kills its own process (the
pattern of tests/protocols/court/test_court_crash.py)."""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.protocols.court.test_court_crash import PARTICIPANTS as COURT_PARTICIPANTS
from tests.protocols.court.test_court_crash import asked, calls, moot, session
from tests.protocols.tournament.test_tournament_crash import home as tournament_home

FULL_RUN = 16
KILL_POINTS = (9, 10)  # pass 2: the synthesizer, the first judge

_LOG = COURT_PARTICIPANTS[
    COURT_PARTICIPANTS.index("async def _log") : COURT_PARTICIPANTS.index("async def agent")
]
PARTICIPANTS = (
    '"""Scripted refine participants for tests/protocols/refine/test_refine_crash.py."""\n'
    "import asyncio\nimport json\nimport os\nimport re\nimport signal\nimport time\n\n\n"
    + _LOG
    + r"""
BLOCK = re.compile(r"RESPONSE ([XYZ]):\n<quoted [^>]*>\n(.*?)\n</quoted", re.DOTALL)


async def part(request):
    step = request.meta["step"]
    await _log(step)
    head, phase = step.split("/")[:2]
    number = int(head[1:])
    if phase == "author":
        return "Draft zero."
    if phase == "critic":
        return "Problem: no expiry."
    if phase == "revise":
        return f"Revision {number}."
    if phase == "synthesize":
        return f"Merge {number}: a revision."
    names = {}
    for label, text in BLOCK.findall(request.prompt):
        kind = "B" if text.startswith("Revision") and text == f"Revision {number}." else (
            "AB" if text == f"Merge {number}: a revision." else "A")
        names[kind] = label
    order = ["B", "A", "AB"] if number == 1 else ["A", "B", "AB"]
    return json.dumps({"ranking": [names[n] for n in order], "reason": "scripted"})
"""
)

CONFIG = """\
protocol = "refine"
seed = 5

[[agents]]
model = "scripted:participants.py#part"
[[agents]]
model = "scripted:participants.py#part"
[[agents]]
model = "scripted:participants.py#part"
[[agents]]
model = "scripted:participants.py#part"

[refine]
judges = 2
convergence_k = 2
"""
TASK = "How should the service store its sessions?"


def home(root: Path) -> dict[str, str]:
    env = tournament_home(root)  # the same environment; our files replace its own
    (root / "participants.py").write_text(PARTICIPANTS)
    (root / "refine.toml").write_text(CONFIG)
    return env


def artifacts(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text()
        for p in sorted((folder / "refine").rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("reference")
    env = home(root)
    done = moot(root, env, "run", TASK, "--config", "refine.toml", "-q")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Revision 1."
    steps = calls(root)
    assert len(steps) == FULL_RUN and len(set(steps)) == FULL_RUN, steps
    folder = session(root)
    result = json.loads((folder / "result.json").read_text())
    return {
        "answer": done.stdout,
        "history": result["details"]["history"],
        "files": artifacts(folder),
    }


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", KILL_POINTS)
def test_kill_in_the_middle_of_a_pass_then_resume_asks_nothing_twice(
    kill_at: int, tmp_path: Path, reference: dict[str, Any]
) -> None:
    env = home(tmp_path)
    killed = moot(
        tmp_path, {**env, "KILL_AT": str(kill_at)}, "run", TASK, "--config", "refine.toml"
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    folder = session(tmp_path)
    before = calls(tmp_path)
    killed_step = before[kill_at - 1]
    assert killed_step.startswith("r2/"), f"call {kill_at} ({killed_step}) is not in pass 2"
    assert set(asked(folder)) == set(before) - {killed_step}  # only the killed step was lost
    assert not (folder / "refine" / "final_output.md").exists()

    resumed = moot(tmp_path, env, "resume", folder.name, "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == reference["answer"]
    after = calls(tmp_path)[len(before) :]
    twice = [step for step, n in Counter(before + after).items() if n > 1]
    assert twice == [killed_step]  # everything journaled was answered from the journal
    result = json.loads((folder / "result.json").read_text())
    assert result["details"]["history"] == reference["history"]
    assert artifacts(folder) == reference["files"]
