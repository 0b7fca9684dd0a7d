"""The tournament on a code task, against real git repositories: each contestant's change in
its own worktree, matches in which each side reads the other's diff and verification results
(quoted as untrusted text) and may revise, an arbiter that sees both verifications, and the
champion's change applied by `moot apply`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moot import api
from moot.engine.store import find_session
from moot.lifecycle.code import apply_session
from tests.code import test_code_tasks as base
from tests.scripts import no_sleep

FIXED = base.diff("    return a + b", old="    return a * b")  # from the wrong change to the fix
OFF = base.diff("    return a + b + 1")  # applies, fails verification, differs from WRONG

TOURNAMENT = f"""
import json, os, re
from pathlib import Path

GOOD = {base.GOOD!r}
WRONG = {base.WRONG!r}
FIXED = {FIXED!r}
OFF = {OFF!r}
LOG = Path(os.environ["AGENT_LOG"])


def _log(name, request):
    with LOG.open("a") as handle:
        prompt = "\\n".join(m.content for m in request.messages)
        handle.write(json.dumps({{"agent": name, "step": request.meta["step"], "prompt": prompt}}))
        handle.write("\\n")


def _play(name, request, first, revision):
    _log(name, request)
    step = request.meta["step"]
    text = request.messages[-1].content
    if "/arbiter/" in step:
        winner = None
        for label, block in re.findall(
            r'from="(Agent [A-Z]) verification" id="[0-9a-f]+v">(.*?)</quoted', text, re.S
        ):
            if "[passed]" in block:
                winner = label
        return "The passing one. WINNER: " + str(winner)
    if "/work/" in step:
        return "My change:\\n```diff\\n" + first + "```"
    if revision and "+    return a + b" in text:
        taken = "Its change is right where mine multiplies; I take it.\\n"
        return taken + "```diff\\n" + revision + "```"
    return "Its change is wrong. I keep mine as it is."


def good(request):
    return _play("good", request, GOOD, None)


def wrong(request):
    return _play("wrong", request, WRONG, None)


def learner(request):
    return _play("learner", request, WRONG, FIXED)


def off(request):
    return _play("off", request, OFF, None)
"""


@pytest.fixture(autouse=True)
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base.git_env.__wrapped__(tmp_path, monkeypatch)  # type: ignore[attr-defined]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return base.repo.__wrapped__(tmp_path)  # type: ignore[attr-defined, no-any-return]


@pytest.fixture
def agents_file(tmp_path: Path) -> Path:
    path = tmp_path / "tournament_agents.py"
    path.write_text(TOURNAMENT)
    return path


def _agents(run: api.RunResult) -> dict[str, str]:
    """The contestants: script function name -> alias (the arbiter runs a contestant's model)."""
    return {
        u.model.rsplit("#", 1)[-1]: a
        for a, u in run.result.agents.items()
        if a.startswith("agent_")
    }


def _config(agents_file: Path, repo: Path, names: list[str], **extra: Any) -> Any:
    specs = [f"scripted:{agents_file}#{name}" for name in names]
    return base.config(specs, repo, protocol="tournament", **extra)


def test_the_arbiter_sees_both_diffs_and_verifications_and_the_champion_is_applied(
    repo: Path, agents_file: Path, tmp_path: Path
) -> None:
    before = base.state(repo)
    run = api.start(
        base.TASK,
        _config(agents_file, repo, ["good", "wrong"], tournament={"max_rounds": 2}),
        sleep=no_sleep,
    )
    assert base.state(repo) == before  # nothing touches the user's tree before apply
    aliases = _agents(run)
    entries = base.log(tmp_path)
    # each side read the other's change and its verification, quoted as untrusted text
    challenge = next(
        e["prompt"]
        for e in entries
        if e["step"].endswith(aliases["good"]) and "/challenge/" in e["step"]
    )
    assert "+    return a * b" in challenge and "[failed (exit code 1)]" in challenge
    assert '<quoted from="Agent' in challenge
    # nobody moved in round 1, so the match went to the arbiter after one round
    assert [e["step"].split("/")[0] for e in entries if "/challenge/" in e["step"]] == ["r1", "r1"]
    judged = [e["prompt"] for e in entries if "/arbiter/" in e["step"]]
    assert len(judged) == 1
    assert "[passed]" in judged[0] and "[failed (exit code 1)]" in judged[0]
    assert "+    return a + b" in judged[0] and "+    return a * b" in judged[0]
    result = run.result
    assert result.details["winner"] == aliases["good"]
    assert result.details["bracket"]["matches"][0]["decided_by"] == "arbiter"
    # the bracket's winner is a choice, not a consensus (issue 29): every face reads the status
    assert run.exit_code == 2 and not result.consensus and result.status == "no_consensus"
    assert result.status_words == "no consensus" and "picked_by" not in result.details
    assert result.finding is not None and result.finding.label == "no_consensus"
    assert "a winner, not a consensus" in result.finding.reason
    assert "the final match was decided by the arbiter: " in result.how
    assert "2 agents, 1 match; " in result.how and "in 1 match." in result.trust  # not match(es)
    (verdict,) = result.verdicts
    assert verdict.role == "arbiter" and verdict.valid and "chose" in verdict.says
    code = result.details["code"]
    assert code[aliases["wrong"]]["checks"][0]["exit_code"] == 1
    assert "+    return a + b" in result.final_answer
    assert api.replay(run.session_id).identical is True
    done = apply_session(find_session(run.session_id))
    assert done.alias == aliases["good"]
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_a_side_that_adopts_the_better_change_converges_and_the_bracket_goes_on(
    repo: Path, agents_file: Path, tmp_path: Path
) -> None:
    run = api.start(
        base.TASK,
        _config(
            agents_file,
            repo,
            ["learner", "good", "wrong"],
            tournament={"max_rounds": 3, "shuffle": False},
        ),
        sleep=no_sleep,
    )
    aliases = _agents(run)
    matches = run.result.details["bracket"]["matches"]
    assert len(matches) == 2  # three contestants: two matches
    first = matches[0]
    assert first["sides"] == [aliases["learner"], aliases["good"]]
    # the learner revised its change to the good one: the match converged in round 1
    assert first["converged"] and first["decided_by"] == "converged"
    tree = run.folder / "worktrees" / aliases["learner"]
    assert (tree / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    revise = [
        e for e in base.log(tmp_path) if e["agent"] == "learner" and "/challenge/" in e["step"]
    ]
    assert "Your earlier change is applied" in revise[0]["prompt"]
    code = run.result.details["code"]
    assert code[aliases["learner"]]["checks"][0]["exit_code"] == 0  # verified again after
    second = matches[1]
    assert second["sides"] == [aliases["learner"], aliases["wrong"]]
    assert second["winner"] == aliases["learner"]
    assert run.result.details["winner"] == aliases["learner"]
    # two of the three end with the same change, the champion's: a consensus by moot's check
    finding = run.result.finding
    assert finding is not None and finding.label == "consensus"
    assert set(finding.agreed) == {aliases["learner"], aliases["good"]}
    assert run.exit_code == 0 and run.result.consensus
    (change,) = run.result.changes
    assert (change.agent, change.toward) == (aliases["learner"], (aliases["good"],))


def test_the_tournament_on_a_code_task_from_the_command_line(repo: Path, agents_file: Path) -> None:
    args = [base.MOOT, "run", base.TASK, "--protocol", "tournament", "--verify", base.VERIFY]
    for name in ("good", "wrong"):
        args += ["--models", f"scripted:{agents_file}#{name}"]
    args += ["--repo", str(repo)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr  # a winner, not a consensus
    assert "verify 1/1 passed" in done.stdout and "verify 0/1 passed" in done.stdout


def test_the_report_escapes_patches_and_verify_output() -> None:
    from moot.report.code import code_html, code_markdown, code_rows

    hostile = "+<script>alert(1)</script>\n+```\n"
    details = {
        "winner": "agent_b",
        "code": {
            "agent_a": {
                "status": "failed",
                "problem": "its diff did not apply twice",
                "files": 1,
                "insertions": 2,
                "deletions": 0,
                "checks": [
                    {
                        "command": "make test",
                        "exit_code": 2,
                        "timed_out": False,
                        "tail": "<img src=x onerror=alert(1)>\x1b]0;title\x07",
                        "cut": True,
                    }
                ],
                "patch": hostile,
            },
            "agent_b": {
                "status": "completed",
                "files": 1,
                "insertions": 1,
                "deletions": 1,
                "checks": [],
                "patch": "+ok\n",
            },
        },
    }
    rows = code_rows(details)
    page = code_html(rows, "s1")
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img" not in page and "\x1b" not in page
    assert "failed (exit code 2), output cut to its tail" in page
    text = "\n".join(code_markdown(rows, "s1"))
    assert "````diff\n+<script>alert(1)</script>\n+```\n````" in text  # a longer fence
    assert "| Agent B | completed | 1 file, +1 -1 | not verified | **winner** |" in text
    assert "| Agent A | failed (its diff did not apply twice) | 1 file, +2 -0 | 0/1 passed" in (
        text
    )


def test_a_cli_arbiter_without_a_worktree_runs_in_a_sandbox_not_the_users_tree(
    repo: Path, agents_file: Path, tmp_path: Path
) -> None:
    editor = tmp_path / "bin" / "editor"
    editor.parent.mkdir()
    editor.write_text(base.EDITOR.format(python=sys.executable))
    editor.chmod(0o755)
    cli_agent = {"model": "cli:editor", "options": {"command": str(editor), "output": "text"}}
    before = base.state(repo)
    run = api.start(
        base.TASK,
        base.config(
            [cli_agent, f"scripted:{agents_file}#wrong"],
            repo,
            protocol="tournament",
            tournament={"max_rounds": 1},
        ),
        sleep=no_sleep,
    )
    assert base.state(repo) == before
    # the arbiter runs the first agent's model (the coding CLI) and has no worktree of its own
    cwds = [e["cwd"] for e in base.log(tmp_path) if e["agent"] == "editor"]
    assert str(run.folder / "sandbox") in cwds
    match = run.result.details["bracket"]["matches"][0]
    assert match["decided_by"] == "fallback"  # the CLI's text names no winner
    editor_alias = next(
        a
        for a, u in run.result.agents.items()
        if u.model == "cli:editor" and a.startswith("agent_")
    )
    assert run.result.details["winner"] == editor_alias  # its checks alone passed


def test_an_arbiter_naming_no_side_is_an_invalid_verdict_and_the_fallback_no_consensus(
    repo: Path, agents_file: Path
) -> None:
    """Both changes fail verification: the scripted arbiter answers 'WINNER: None'."""
    run = api.start(
        base.TASK,
        _config(agents_file, repo, ["wrong", "off"], tournament={"max_rounds": 1}),
        sleep=no_sleep,
    )
    result = run.result
    (match,) = result.details["bracket"]["matches"]
    assert run.exit_code == 2 and match["decided_by"] == "fallback"
    assert result.finding is not None and result.finding.label == "no_consensus"
    assert "decided by the fallback" in result.finding.reason
    assert "every change fails its verify commands" in result.finding.reason
    (verdict,) = result.verdicts
    assert not verdict.valid and "named no winner" in verdict.problem
    assert "verdict in match 1 was invalid" in result.trust
