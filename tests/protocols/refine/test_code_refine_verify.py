"""`refine --preset impl` keeps moot's rule for code tasks: the verify results are moot's own
evidence and come before the judges' Borda count. A revision that fails its verify commands
never replaces an incumbent that passes them, a failing incumbent never holds against a passing
revision, the judges' Borda count decides among the changes that pass as well as the best of
them do, a failing change never converges, and the trust statement says how each change fared.
Real git repositories; scripted agents whose judges put a failing change first."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from moot import api
from tests.code import test_code_tasks as base
from tests.scripts import no_sleep

NEWS = (
    "diff --git a/NEWS.md b/NEWS.md\nnew file mode 100644\n--- /dev/null\n+++ b/NEWS.md\n"
    "@@ -0,0 +1 @@\n+add() returns the sum\n"
)

DIFFS = {
    "GOOD": base.GOOD,  # passes, +1
    "GOOD_NEWS": base.GOOD + NEWS,  # passes, +2
    "WRONG": base.WRONG,  # fails, +1
    "OFF": base.diff("    return a + b + 1"),  # fails, +1
    "WRONG_NEWS": base.WRONG + NEWS,  # fails, +2
}

IMPL = f"""
import json, os, re

DIFFS = {DIFFS!r}


def _diff(name):
    return "```diff\\n" + DIFFS[name] + "```"


def _role(step, role):
    # the diff named for a role in pass 1 (ROLE1), else in later passes (ROLE)
    first = step.startswith("r1/") and os.environ.get(role + "1")
    return first or os.environ[role]


def impl(request):
    step = request.meta["step"]
    text = request.messages[-1].content
    if "/author/" in step:
        return "First try.\\n" + _diff(os.environ["AUTHOR"])
    if "/critic/" in step:
        return "Check add() against its verification."
    if "/revise/" in step:
        return _diff(_role(step, "REVISE"))
    if "/synthesize/" in step:
        return _diff(_role(step, "SYNTH"))
    if "/judge/" in step and os.environ.get("JUDGE") == "junk":
        return "I like them all."
    if "/judge/" in step:
        # a judge that puts failing changes first, then the smaller (or, PREFER=more, the
        # larger) change; the diff's own text breaks a tie, never its label
        blocks = re.findall(r'from="Response ([XYZ])" id="[0-9a-f]+">(.*?)</quoted', text, re.S)
        def key(item):
            label, block = item
            added = sum(1 for line in block.splitlines() if line.startswith("+") and
                        not line.startswith("+++"))
            if os.environ.get("PREFER") == "more":
                added = -added
            return (0 if "[failed" in block else 1, added, block)
        ranking = [label for label, _ in sorted(blocks, key=key)]
        return json.dumps({{"ranking": ranking, "reason": "failing first"}})
    raise RuntimeError("unexpected step " + step)
"""


@pytest.fixture(autouse=True)
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base.git_env.__wrapped__(tmp_path, monkeypatch)  # type: ignore[attr-defined]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return base.repo.__wrapped__(tmp_path)  # type: ignore[attr-defined, no-any-return]


@pytest.fixture
def agents_file(tmp_path: Path) -> Path:
    path = tmp_path / "impl_agents.py"
    path.write_text(IMPL)
    return path


def _run(agents_file: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, **roles: str) -> Any:
    for name, value in roles.items():
        monkeypatch.setenv(name, value)
    specs = [f"scripted:{agents_file}#impl"] * 4
    config = base.config(specs, repo, protocol="refine", refine={"preset": "impl"})
    return api.start(base.TASK, config, sleep=no_sleep)


def test_a_passing_revision_replaces_a_failing_incumbent_the_judges_keep(
    repo: Path, agents_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fails; B and AB pass; the judge ranks A first: verify first, then Borda among B, AB
    run = _run(
        agents_file,
        repo,
        monkeypatch,
        AUTHOR="WRONG",
        REVISE1="GOOD",
        SYNTH1="GOOD_NEWS",
        REVISE="WRONG",
        SYNTH="OFF",
    )
    result = run.result
    first, second = result.details["rounds"][:2]
    assert first["borda"]["winner"] == "A"  # the judges' pick ...
    assert first["winner"] == "B"  # ... overruled: B passes, A fails; B ranks over AB
    assert first["verified"]["among"] == ["B", "AB"]
    # pass 2: B1 is A and passes; B2 and AB2 fail and the judge ranks them first: A holds
    assert second["borda"]["winner"] != "A" and second["winner"] == "A"
    assert result.details["winner"] == "b1"
    assert "+    return a + b" in result.final_answer
    assert run.exit_code == 0 and result.finding.label == "converged"
    # the trust statement says how each change fared and that verify overruled the judges
    assert "Verify commands on each change: Worktree a's 0 of 1 passed" in result.trust
    assert "Worktree b1's 1 of 1 passed" in result.trust
    assert "Worktree b2's 0 of 1 passed" in result.trust
    assert "fails the verify commands" in result.trust
    assert "pass 1" in result.trust and "pass 2" in result.trust
    assert api.replay(run.session_id).identical is True


def test_a_failing_revision_never_replaces_a_passing_incumbent(
    repo: Path, agents_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A passes; B and AB fail; the judge ranks them over A: A holds, and converges
    run = _run(agents_file, repo, monkeypatch, AUTHOR="GOOD", REVISE="WRONG", SYNTH="OFF")
    result = run.result
    (only,) = result.details["rounds"]
    assert only["borda"]["winner"] != "A" and only["winner"] == "A"
    assert only["verified"]["among"] == ["A"]
    assert result.details["winner"] == "a"
    assert run.exit_code == 0 and result.finding.label == "converged"
    assert "Worktree a's 1 of 1 passed" in result.trust


def test_borda_decides_among_the_changes_that_pass(
    repo: Path, agents_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A and B pass, AB fails; the judge ranks AB > B > A: B wins, not AB, and not A
    run = _run(
        agents_file,
        repo,
        monkeypatch,
        PREFER="more",
        AUTHOR="GOOD",
        REVISE1="GOOD_NEWS",
        SYNTH1="WRONG_NEWS",
        REVISE="WRONG",
        SYNTH="OFF",
    )
    first = run.result.details["rounds"][0]
    assert first["borda"]["winner"] == "AB" and first["verified"]["among"] == ["A", "B"]
    assert first["winner"] == "B"
    assert run.result.details["winner"] == "b1"
    assert run.exit_code == 0


def test_a_failing_change_never_converges(
    repo: Path, agents_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every change fails; the judge ranks A first every pass: no convergence, exit 2
    run = _run(agents_file, repo, monkeypatch, AUTHOR="WRONG", REVISE="WRONG_NEWS", SYNTH="OFF")
    result = run.result
    assert [r["winner"] for r in result.details["rounds"]] == ["A", "A", "A"]
    assert [r["streak"] for r in result.details["rounds"]] == [0, 0, 0]
    assert run.exit_code == 2 and not result.consensus
    assert result.status == "no_consensus"
    assert result.finding.label == "no_consensus"
    assert "fails its verify commands" in result.finding.reason
    assert "fails its verify commands" in result.how
    assert "converged" not in result.trust.lower().replace("not converged", "")
    assert "Worktree a's 0 of 1 passed" in result.trust
    assert os.path.basename(result.details["winner"]) == "a"


def test_with_no_valid_ranking_a_passing_revision_still_replaces_a_failing_incumbent(
    repo: Path, agents_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no judge ranks validly (A would stay by default), but A fails and B passes: B wins
    run = _run(
        agents_file,
        repo,
        monkeypatch,
        JUDGE="junk",
        AUTHOR="WRONG",
        REVISE1="GOOD",
        SYNTH1="GOOD_NEWS",
        REVISE="WRONG",
        SYNTH="OFF",
    )
    first = run.result.details["rounds"][0]
    assert first["borda"]["no_valid_ranking"] and first["winner"] == "B"
    assert run.result.details["winner"] == "b1"
    assert "In pass 1 no judge ranked validly, and A (Worktree a) fails" in run.result.trust
    # then B1 holds, but with no valid ranking its win does not count: not converged
    assert run.exit_code == 2 and run.result.finding.label == "no_consensus"
