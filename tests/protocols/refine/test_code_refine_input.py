"""`refine --preset impl --input DIFF`: the user's diff is change A of the implementation
tournament (seed 004: worktree /a holds the developer's initial diff). No agent writes A or is
credited with it; the critic and the judges see it like any candidate; a diff that does not
apply, or changes nothing, aborts with the fix."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from moot import api
from moot.engine.store import find_session
from moot.lifecycle.code import apply_session, strays
from tests.code import test_code_tasks as base
from tests.protocols.refine.test_code_refine import NEWS, _worktrees
from tests.scripts import no_sleep

GIVEN = f"""
import json, os, re
from pathlib import Path

GOOD = {base.GOOD!r}
WRONG = {base.WRONG!r}
NEWS = {NEWS!r}
LOG = Path(os.environ["AGENT_LOG"])


def given(request):
    # A is the user's: nobody is asked to write it. B is right when REDO=good, else wrong;
    # AB is always wrong. The judge ranks passing changes first, then the smallest.
    step = request.meta["step"]
    text = request.messages[-1].content
    with LOG.open("a") as handle:
        entry = {{"agent": request.meta["agent"], "step": step, "prompt": text}}
        handle.write(json.dumps(entry) + "\\n")
    if "/critic/" in step:
        return "add() may not return the sum."
    if "/revise/" in step:
        return "```diff\\n" + (GOOD if os.environ.get("REDO") == "good" else WRONG) + "```"
    if "/synthesize/" in step:
        return "```diff\\n" + WRONG + NEWS + "```"
    if "/judge/" in step:
        blocks = re.findall(r'from="Response ([XYZ])" id="[0-9a-f]+">(.*?)</quoted', text, re.S)
        def key(item):
            label, block = item
            added = sum(1 for line in block.splitlines() if line.startswith("+") and
                        not line.startswith("+++"))
            return (0 if "[passed]" in block else 1, added, label)
        ranking = [label for label, _ in sorted(blocks, key=key)]
        return json.dumps({{"ranking": ranking, "reason": "passing and small first"}})
    raise RuntimeError("unexpected step " + step)
"""

FIX = "give a diff made against the repository's current state"


@pytest.fixture(autouse=True)
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base.git_env.__wrapped__(tmp_path, monkeypatch)  # type: ignore[attr-defined]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return base.repo.__wrapped__(tmp_path)  # type: ignore[attr-defined, no-any-return]


@pytest.fixture
def agents_file(tmp_path: Path) -> Path:
    path = tmp_path / "given_agents.py"
    path.write_text(GIVEN)
    return path


def _config(agents_file: Path, repo: Path, diff: str, **refine: Any) -> Any:
    specs = [f"scripted:{agents_file}#given"] * 4
    options = {"preset": "impl", "input": diff, **refine}
    return base.config(specs, repo, protocol="refine", refine=options)


def test_the_given_diff_is_a_the_critic_and_judges_see_it_and_it_holds(
    repo: Path, agents_file: Path, tmp_path: Path
) -> None:
    before = base.state(repo)
    run = api.start(base.TASK, _config(agents_file, repo, base.GOOD), sleep=no_sleep)
    assert base.state(repo) == before
    result = run.result
    assert run.exit_code == 0, run.message
    passes = result.details["rounds"]
    assert [p["winner"] for p in passes] == ["A"]  # the user's passing change holds (k = 1)
    roles = passes[0]["roles"]
    assert passes[0]["writers"] == {"A": None, "B": roles["author_b"], "AB": roles["synthesizer"]}
    entries = base.log(tmp_path)
    assert not any("/author/" in e["step"] for e in entries)  # nobody wrote A
    critic = next(e["prompt"] for e in entries if e["step"].startswith("r1/critic/"))
    assert "+    return a + b" in critic and "[passed]" in critic
    judged = next(e["prompt"] for e in entries if e["step"].startswith("r1/judge/"))
    assert judged.count("[passed]") == 1 and judged.count("[failed (exit code 1)]") == 2
    ranking = passes[0]["judges"][0]["ranking"]
    assert ranking[0] == "A" and sorted(ranking) == ["A", "AB", "B"]
    # A is measured and verified like any candidate, credited to no agent
    code = result.details["code"]
    assert code["a"]["agent"] is None and code["a"]["status"] == "completed"
    assert code["a"]["checks"][0]["exit_code"] == 0 and "+    return a + b\n" in code["a"]["patch"]
    assert result.details["winner"] == "a" and result.details["refine"]["final_writer"] is None
    assert "(the user's --input, unchanged)" in result.trust
    assert "final change's verify commands passed 1 of 1" in result.trust
    section = (run.folder / "report.md").read_text().split("## Code Changes", 1)[1]
    assert "| Worktree a | completed | 1 file, +1 -1 | 1/1 passed | **winner** |" in section
    assert _worktrees(repo) == ["a"]
    assert api.replay(run.session_id).identical is True
    assert apply_session(find_session(run.session_id)).alias == "a"
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert _worktrees(repo) == [] and strays(repo) == []


def test_the_given_diff_loses_to_the_redo_guided_by_the_critic(
    repo: Path, agents_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDO", "good")
    config = _config(agents_file, repo, base.WRONG, max_passes=1)
    run = api.start(base.TASK, config, sleep=no_sleep)
    assert [p["winner"] for p in run.result.details["rounds"]] == ["B"]
    critic = next(e["prompt"] for e in base.log(tmp_path) if e["step"].startswith("r1/critic/"))
    assert "+    return a * b" in critic and "[failed (exit code 1)]" in critic
    assert run.result.details["code"]["a"]["checks"][0]["exit_code"] == 1
    assert _worktrees(repo) == ["b1"]  # the user's change lost: its worktree is pruned


@pytest.mark.parametrize(
    ("diff", "problem"),
    [
        (base.STALE, "the --input diff does not apply to the repository (error: "),
        # applies, but leaves every file as it was
        (base.diff("    return a - b"), "the --input diff changes nothing in the repository"),
    ],
    ids=["stale", "no-change"],
)
def test_a_given_diff_that_does_not_apply_or_changes_nothing_aborts_with_the_fix(
    repo: Path, agents_file: Path, tmp_path: Path, diff: str, problem: str
) -> None:
    run = api.start(base.TASK, _config(agents_file, repo, diff), sleep=no_sleep)
    assert run.exit_code == 1
    message = run.message or ""
    assert problem in message and FIX in message
    assert base.log(tmp_path) == []  # no agent was asked anything


def test_input_with_preset_impl_on_the_command_line(
    repo: Path, agents_file: Path, tmp_path: Path
) -> None:
    given = tmp_path / "change.diff"
    given.write_text(base.GOOD)
    args = [base.MOOT, "run", base.TASK, "--preset", "impl", "--repo", str(repo)]
    args += ["--verify", base.VERIFY, "--input", str(given), "--seed", "3"]
    args += ["--models", f"scripted:{agents_file}#given"] * 4
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "not used on a code task" not in done.stderr
    folder = find_session(None)
    result = json.loads(folder.result_json.read_text())
    assert result["details"]["winner"] == "a"
    assert "+    return a + b\n" in result["details"]["code"]["a"]["patch"]
