"""The verify commands' results are moot's own evidence on a code task, stronger than any
model's pick: a change that fails them never wins over one that passes, agreement on a failing
change is no consensus, a bracket's winner is never labelled a consensus, every trust statement
says how each change fared, and `moot apply` will not apply a failing change unless forced.
Real git repositories, scripted agents."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from moot import api
from moot.engine.store import find_session
from moot.errors import MootError
from moot.lifecycle.code import apply_session
from tests.code import test_code_tasks as base
from tests.scripts import no_sleep

AGENTS = f"""
import re

GOOD = {base.GOOD!r}
WRONG = {base.WRONG!r}
OFF = {base.diff("    return a + b + 1")!r}


def _failing_side(text):
    # the side whose quoted verification failed
    for label, block in re.findall(
        r'from="(Agent [A-Z])(?: verification)?" id="[0-9a-f]+v?">(.*?)</quoted', text, re.S
    ):
        if "[failed" in block:
            return label
    return "Agent A"


def _play(request, diff):
    step = request.meta["step"]
    text = request.messages[-1].content
    if "/arbiter/" in step:  # a tournament's arbiter names the failing change
        return "That one. WINNER: " + _failing_side(text)
    if "/work/" in step or "/solve/" in step:
        return "My fix:\\n```diff\\n" + diff + "```"
    if "/evaluate/" in step:
        return "Strengths: short. Weaknesses: none. Errors: none."
    if "/revise/" in step or "/challenge/" in step:
        return "I keep my change as it is."
    # an arena judge: CONSENSUS, with the failing change as its base solution
    return ("AGREEMENT POINTS: all.\\n<verdict>\\ndecision: CONSENSUS\\n"
            "convergence_score: 9\\nremaining_disagreements: 0\\n"
            f"base_solution: {{_failing_side(text)}}\\nmodifications: none\\n</verdict>")


def good(request):
    return _play(request, GOOD)


def wrong(request):
    return _play(request, WRONG)


def off(request):
    return _play(request, OFF)


def nodiff(request):
    # an answer with no diff, as the embedded model gives: the change cannot be made
    return "I would fix the add function so that it adds."
"""

FIXED = "def add(a, b):\n    return a + b\n"


@pytest.fixture(autouse=True)
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base.git_env.__wrapped__(tmp_path, monkeypatch)  # type: ignore[attr-defined]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return base.repo.__wrapped__(tmp_path)  # type: ignore[attr-defined, no-any-return]


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    path = tmp_path / "verify_agents.py"
    path.write_text(AGENTS)
    return path


def _run(
    agents: Path, repo: Path, names: list[str], protocol: str, **extra: object
) -> api.RunResult:
    specs = [f"scripted:{agents}#{name}" for name in names]
    return api.start(
        base.TASK, base.config(specs, repo, protocol=protocol, **extra), sleep=no_sleep
    )


def _alias(run: api.RunResult, name: str) -> str:
    return next(
        a for a, u in run.result.agents.items() if a.startswith("agent_") and u.model.endswith(name)
    )


def _label(alias: str) -> str:
    return "Agent " + alias.rsplit("_", 1)[-1].upper()


def test_a_tournament_change_that_fails_verify_never_beats_one_that_passes(
    repo: Path, agents: Path
) -> None:
    """The arbiter names the failing change; moot's verify results overrule it."""
    run = _run(agents, repo, ["good", "wrong"], "tournament", tournament={"max_rounds": 1})
    good, wrong = _alias(run, "#good"), _alias(run, "#wrong")
    result = run.result
    (match,) = result.details["bracket"]["matches"]
    assert match["decided_by"] == "verify" and match["winner"] == good
    assert result.details["winner"] == good and "+    return a + b" in result.final_answer
    (verdict,) = result.verdicts
    assert verdict.valid and not verdict.upheld and _label(wrong) in verdict.says
    # a bracket's winner is a choice, never a consensus: every face reads the same status
    assert result.status == "no_consensus" and result.status_words == "no consensus"
    assert run.exit_code == 2 and not result.consensus and "picked_by" not in result.details
    assert result.finding is not None and result.finding.label == "no_consensus"
    assert "a winner, not a consensus" in result.finding.reason
    assert f"{_label(good)}'s 1 of 1 passed" in result.trust
    assert f"{_label(wrong)}'s 0 of 1 passed" in result.trust
    assert "so it did not win" in result.trust
    assert api.replay(run.session_id).identical is True


def test_a_tournament_where_every_change_fails_says_so_and_is_no_consensus(
    repo: Path, agents: Path
) -> None:
    run = _run(agents, repo, ["wrong", "off"], "tournament", tournament={"max_rounds": 1})
    result = run.result
    assert run.exit_code == 2 and result.status == "no_consensus"
    assert result.finding is not None
    assert "every change fails its verify commands" in result.finding.reason
    assert "0 of 1 passed" in result.trust


def test_arena_agreement_on_a_failing_change_is_no_consensus(repo: Path, agents: Path) -> None:
    run = _run(agents, repo, ["wrong", "wrong"], "arena", arena={"max_rounds": 1})
    result = run.result
    assert run.exit_code == 2 and result.status == "no_consensus" and not result.consensus
    assert result.finding is not None
    assert result.finding.reason == "no consensus: the agreed change fails its verify commands"
    assert "the agreed change fails its verify commands" in result.how
    assert "Agent A's 0 of 1 passed; Agent B's 0 of 1 passed" in result.trust
    assert "so no consensus is claimed" in result.trust
    assert api.replay(run.session_id).identical is True


def test_arena_without_consensus_takes_the_passing_change_over_the_judges_base(
    repo: Path, agents: Path
) -> None:
    run = _run(agents, repo, ["wrong", "good"], "arena", arena={"max_rounds": 1})
    good, wrong = _alias(run, "#good"), _alias(run, "#wrong")
    result = run.result
    assert result.details["verdict"]["base_solution"] == wrong  # the judge named the failing one
    assert result.details["winner"] == good and "+    return a + b" in result.final_answer
    assert f"its change passes the verify commands and {_label(wrong)}'s fails them" in (
        result.trust
    )
    assert f"{_label(good)}'s 1 of 1 passed" in result.trust
    assert f"{_label(wrong)}'s 0 of 1 passed" in result.trust


def test_apply_refuses_a_failing_change_unless_forced(repo: Path, agents: Path) -> None:
    run = _run(agents, repo, ["wrong", "good"], "arena", arena={"max_rounds": 1})
    wrong = _alias(run, "#wrong")
    folder = find_session(run.session_id)
    before = base.state(repo)
    with pytest.raises(MootError) as refused:
        apply_session(folder, _label(wrong), keep=True)
    message = str(refused.value)
    assert f"{_label(wrong)}'s change failed its verify commands (0 of 1 passed)" in message
    assert "--force" in message
    assert base.state(repo) == before
    done = apply_session(folder, _label(wrong), force=True)
    assert done.alias == wrong and "a * b" in (repo / "calc.py").read_text()


def test_apply_takes_the_letter_and_says_merged_only_after_edits(repo: Path, agents: Path) -> None:
    run = _run(agents, repo, ["wrong", "good"], "arena", arena={"max_rounds": 1})
    good = _alias(run, "#good")
    letter = good.rsplit("_", 1)[-1].upper()
    (repo / "notes.txt").write_text("an unrelated file, not an edit of a changed file\n")
    args = [base.MOOT, "apply", run.session_id, "--agent", letter]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"applied {_label(good)}'s change" in done.stdout
    assert "merged" not in done.stdout
    assert (repo / "calc.py").read_text() == FIXED


def test_a_tournament_whose_contestants_agree_on_a_failing_change_is_no_consensus(
    repo: Path, agents: Path
) -> None:
    run = _run(agents, repo, ["wrong", "wrong"], "tournament", tournament={"max_rounds": 1})
    result = run.result
    assert run.exit_code == 2 and result.status == "no_consensus"
    assert result.finding is not None and result.finding.reason.startswith(
        "no consensus: the agreed change fails its verify commands (2 of 2"
    )


def test_an_arena_where_no_agent_makes_a_change_is_no_consensus_not_a_failure(
    repo: Path, agents: Path
) -> None:
    """Answers that hold no diff are no answers, as on a question (exit 2), not failed calls
    (exit 1): a walkthrough's arena ended "failed" for the same answers a question run calls
    "no consensus"."""
    run = _run(agents, repo, ["nodiff", "nodiff"], "arena", arena={"max_rounds": 1})
    assert run.exit_code == 2, run.message
    assert run.result.status == "no_consensus"
    assert "no agent gave a valid answer" in run.result.how
    assert "did not apply" in run.result.trust or "no unified diff" in run.result.trust
