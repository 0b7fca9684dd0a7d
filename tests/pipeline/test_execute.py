"""The feature pipeline's execute phase end to end, on a real git repository with scripted
roles: tasks through gates, review, tests and commits on a branch of their own; a blocked task
and its dependant, then `moot resume` completing the plan."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moot import api
from moot.config import RunConfig
from tests.code import test_code_tasks as base
from tests.pipeline import scripts
from tests.scripts import no_sleep


def config(tmp_path: Path, repo: Path, script: str, **pipeline: Any) -> RunConfig:
    roles = scripts.write_script(tmp_path)
    section = {
        "phase": "execute",
        "plan": scripts.plan_json(),
        "gates": scripts.gates(tmp_path),
        "impl_tournament": {"enabled": False},
        "lessons": False,
        **pipeline,
    }
    return RunConfig.read(
        {
            "protocol": "pipeline",
            "agents": [{"model": f"scripted:{roles}#{script}"}],
            "seed": 5,
            "code": {"repo": str(repo)},
            "pipeline": section,
        }
    )


def asked(tmp_path: Path) -> list[str]:
    log = tmp_path / "agents.log"
    return [json.loads(line)["step"] for line in log.read_text().splitlines()]


def commits(repo: Path, branch: str) -> list[str]:
    return base.sh(repo, "log", "--format=%s", f"main..{branch}").splitlines()[::-1]


def _tests_pass_on(repo: Path, branch: str, tmp_path: Path) -> bool:
    checkout = tmp_path / "checkout"
    base.sh(repo, "worktree", "add", "-q", "--detach", str(checkout), branch)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=checkout,
        capture_output=True,
    )
    return done.returncode == 0


def test_two_tasks_through_a_failed_gate_and_a_review_end_as_two_passing_commits(
    tmp_path: Path, repo: Path
) -> None:
    before = base.state(repo)
    head = base.sh(repo, "rev-parse", "HEAD")
    cfg = config(tmp_path, repo, "happy")
    run = api.start("Add subtract and multiply", cfg, sleep=no_sleep)
    assert run.exit_code == 0, run.message
    bounded(cfg, "Add subtract and multiply", run.folder)
    tasks = run.result.details["pipeline"]["tasks"]
    assert [(t["id"], t["state"]) for t in tasks] == [("T1", "complete"), ("T2", "complete")]
    path = [(p["from"], p["to"]) for p in tasks[0]["path"]]
    # the syntax gate sent T1 back once, the reviewer once
    assert ("coded", "in_progress") in path and ("auto_gated", "in_progress") in path
    assert path[-2:] == [("tested", "tournamented"), ("tournamented", "complete")]
    branch = run.result.details["pipeline"]["branch"]
    assert commits(repo, branch) == ["T1: Add subtract(a, b)", "T2: Add multiply(a, b)"]
    assert _tests_pass_on(repo, branch, tmp_path)
    shown = base.sh(repo, "show", f"{branch}:sub.py")
    assert '"""a minus b"""' in shown  # the reviewer's change made it
    # the user's branch, HEAD and working tree are untouched; one branch more
    after = base.state(repo)
    had = before.pop("branches")
    added = [b for b in after.pop("branches") if b not in had]
    assert after == before and base.sh(repo, "rev-parse", "HEAD") == head
    assert [b.split()[0] for b in added] == [f"refs/heads/{branch}"]
    assert base.sh(repo, "branch", "--show-current").strip() == "main"
    # one model plays every role: the reviewer reviews its own model's change, said once
    events = [json.loads(x) for x in (run.folder / "events.jsonl").read_text().splitlines()]
    warned = [e["data"]["message"] for e in events if e["kind"] == "warning"]
    assert len(warned) == 1 and warned[0].startswith("the reviewer is the developer's model")
    # the developer's retry saw the gate's output; each step was asked once
    steps = asked(tmp_path)
    assert len(steps) == len(set(steps))
    log = [json.loads(x) for x in (tmp_path / "agents.log").read_text().splitlines()]
    retry = next(e for e in log if e["step"] == "t1/develop/developer_a/2")
    assert "the syntax gate failed" in retry["prompt"] and "sub.py" in retry["prompt"]
    review = next(e for e in log if e["step"] == "t1/develop/developer_a/3")
    assert "no docstring" in review["prompt"]
    evidence = run.folder / "evidence"
    for name in (
        "T1-developer.json",
        "T1-gates.json",
        "T1-review.json",
        "T1-test.json",
        "T1.patch",
    ):
        assert (evidence / name).is_file(), name
    # `moot apply` brings the branch's cumulative change into the user's working tree
    from moot.engine.store import find_session
    from moot.lifecycle.code import apply_session

    apply_session(find_session(run.session_id))
    assert (repo / "mul.py").is_file() and '"""a minus b"""' in (repo / "sub.py").read_text()
    gates = json.loads((evidence / "T1-gates.json").read_text())
    assert gates[0]["results"][0]["gate"] == "syntax" and not gates[0]["results"][0]["passed"]


def test_a_blocked_task_blocks_its_dependant_and_resume_completes_the_plan(
    tmp_path: Path, repo: Path
) -> None:
    cfg = config(tmp_path, repo, "stuck", qa_retry_limit=1)
    run = api.start("Add subtract and multiply", cfg, sleep=no_sleep)
    assert run.exit_code == 3, run.message  # paused: waiting for the user
    assert run.message is not None and "T1" in run.message and "moot resume" in run.message
    # no limit stopped it, no task was completed, and the person is told what to do
    assert "No task was completed, so no branch was made" in run.message
    assert "on branch" not in run.message
    assert f"copy {run.folder / 'plan.json'}, edit T1" in run.message
    assert "moot execute COPY" in run.message and str(run.folder / "evidence") in run.message
    assert 'the sounding board said: "The syntax error persists; stop."' in run.message
    report = (run.folder / "report.md").read_text()
    assert "**Status:** Paused, waiting for you (resumable)" in report
    assert "Paused by a limit" not in report
    first = asked(tmp_path)
    assert "t1/sound/sounding_board_a/1" in first
    assert not any(s.startswith("t2/") for s in first)  # T2 depends on T1: never started
    (tmp_path / "agents.log.fixed").write_text("")  # the user fixes the cause
    again = api.resume(run.session_id, sleep=no_sleep)
    assert again.exit_code == 0, again.message
    tasks = again.result.details["pipeline"]["tasks"]
    assert [(t["id"], t["state"]) for t in tasks] == [("T1", "complete"), ("T2", "complete")]
    steps = asked(tmp_path)
    assert steps[: len(first)] == first and len(steps) == len(set(steps))  # nothing re-asked
    assert "t1/develop/developer_a/3" in steps  # a new attempt, after the two of the first run
    bounded(cfg, "Add subtract and multiply", run.folder)
    branch = again.result.details["pipeline"]["branch"]
    assert commits(repo, branch) == ["T1: Add subtract(a, b)", "T2: Add multiply(a, b)"]
    assert _tests_pass_on(repo, branch, tmp_path)


def bounded(cfg: RunConfig, task: str, folder: Path) -> None:
    """The projection made before the run bounds the calls the run made (its tournaments'
    sessions included)."""
    from moot.lifecycle.plan import resolve
    from moot.lifecycle.projection import estimate

    projected = estimate(resolve(cfg), task)
    assert projected is not None
    fewest, most = projected.calls
    assert fewest <= _asks(folder) <= most, (fewest, _asks(folder), most)


def _asks(folder: Path) -> int:
    """Model calls journaled in a session and in its tournaments' sessions."""
    count = 0
    for events in [folder / "events.jsonl", *folder.glob("tournaments/*/events.jsonl")]:
        count += sum(1 for line in events.read_text().splitlines() if '"kind":"ask"' in line)
    return count


def test_the_impl_tournament_runs_in_a_session_of_its_own_and_the_projection_bounds_the_calls(
    tmp_path: Path, repo: Path
) -> None:
    tournament = {"enabled": True, "judges": 1, "convergence_k": 1, "max_passes": 1}
    cfg = config(tmp_path, repo, "happy", impl_tournament=tournament, task="T1")  # T1 only
    run = api.start("Add subtract and multiply", cfg, sleep=no_sleep)
    assert run.exit_code == 0, run.message
    tasks = run.result.details["pipeline"]["tasks"]
    assert [(t["id"], t["state"]) for t in tasks] == [("T1", "complete"), ("T2", "skipped")]
    children = sorted((run.folder / "tournaments").iterdir())
    assert [c.name.removeprefix(run.session_id) for c in children] == ["-impl-t1-1"]
    for child in children:
        result = json.loads((child / "result.json").read_text())
        assert result["protocol"] == "refine" and result["details"]["winner"] == "a"
    # the child is a session of its own: `moot show ID` finds it inside its parent
    from click.testing import CliRunner

    from moot.cli import cli

    shown = CliRunner().invoke(cli, ["show", children[0].name])
    assert shown.exit_code == 0, shown.output
    assert "refine" in shown.output
    kept = json.loads((run.folder / "evidence" / "T1-impl_tournament.json").read_text())
    assert kept[0]["status"] == "consensus"  # A held: B and AB broke the syntax
    branch = run.result.details["pipeline"]["branch"]
    assert commits(repo, branch) == ["T1: Add subtract(a, b)"]
    assert _tests_pass_on(repo, branch, tmp_path)
    bounded(cfg, "Add subtract and multiply", run.folder)


def test_the_loop_detector_blocks_a_developer_asked_the_same_thing_about_the_same_change(
    tmp_path: Path, repo: Path
) -> None:
    # the stuck developer breaks the syntax, then answers without a change: the third request
    # would repeat the second's feedback on the same change
    run = api.start(
        "Add subtract", config(tmp_path, repo, "stuck", qa_retry_limit=5), sleep=no_sleep
    )
    assert run.exit_code == 3
    assert "T1 (loop: the developer would be asked the same thing" in (run.message or "")
    developer = [s for s in asked(tmp_path) if s.startswith("t1/develop/")]
    assert developer == ["t1/develop/developer_a/1", "t1/develop/developer_a/2"]


def test_a_diff_over_the_guardrail_blocks_the_task_at_once(tmp_path: Path, repo: Path) -> None:
    cfg = config(tmp_path, repo, "happy", guardrails={"max_diff_bytes": 20})
    run = api.start("Add subtract", cfg, sleep=no_sleep)
    assert run.exit_code == 3
    assert "over max_diff_bytes 20" in (run.message or "")
    steps = asked(tmp_path)
    assert [s for s in steps if s.startswith("t1/develop/")] == ["t1/develop/developer_a/1"]
    assert "t1/sound/sounding_board_a/1" in steps  # asked once before the task is blocked


def test_replay_of_an_execute_session_gives_its_result_again(tmp_path: Path, repo: Path) -> None:
    # the roles' aliases are not in alphabetical order (developer, test engineer, reviewer):
    # the live result listed them as made, a replay as the journal reads them back
    run = api.start("Add subtract", config(tmp_path, repo, "happy", task="T1"), sleep=no_sleep)
    assert run.exit_code == 0
    report = api.replay(run.session_id)
    assert report.identical, report.changed
    assert report.result.to_json() == (run.folder / "result.json").read_text()


def test_the_calls_guardrail_counts_the_task_s_calls_and_blocks_it(
    tmp_path: Path, repo: Path
) -> None:
    # T1 takes 3 developer calls and 2 reviews; 3 calls at most: blocked after the review
    cfg = config(tmp_path, repo, "happy", guardrails={"max_calls_per_task": 3})
    run = api.start("Add subtract", cfg, sleep=no_sleep)
    assert run.exit_code == 3
    assert "guardrail: 4 model calls, over max_calls_per_task 3" in (run.message or "")


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("tests.pipeline.plugin_gate:licence", "sub.py: no SPDX licence line"),
        ("tests.pipeline.plugin_gate:broken", "RuntimeError: the licence server is down"),
    ],
)
def test_a_gate_plugin_runs_after_the_tests_and_its_failure_goes_back_to_the_developer(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, target: str, says: str
) -> None:
    from moot.pipeline import execution

    monkeypatch.setattr(execution, "plugins", lambda: {"licence": target})
    cfg = config(tmp_path, repo, "happy", task="T1", qa_retry_limit=2)
    run = api.start("Add subtract", cfg, sleep=no_sleep)
    assert run.exit_code == 3  # no change of the script's says SPDX: blocked
    gates = json.loads((run.folder / "evidence" / "T1-gates.json").read_text())
    last = gates[-1]["results"]
    assert [r["gate"] for r in last] == ["syntax", "tests", "licence"]
    assert not last[-1]["passed"] and says in last[-1]["output"]
    log = [json.loads(x) for x in (tmp_path / "agents.log").read_text().splitlines()]
    # the first try broke the syntax; the second failed the plugin, whose output the third got
    retry = next(e for e in log if e["step"] == "t1/develop/developer_a/3")
    assert "the licence gate failed" in retry["prompt"] and says in retry["prompt"]


def test_gate_plugins_are_found_through_their_entry_point_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.metadata as metadata

    from moot import plugins
    from moot.pipeline import gates

    offered = [
        metadata.EntryPoint("licence", "tests.pipeline.plugin_gate:licence", gates.PLUGINS),
        metadata.EntryPoint("tests", "tests.pipeline.plugin_gate:licence", gates.PLUGINS),
    ]
    monkeypatch.setattr(
        metadata, "entry_points", lambda group: offered if group == gates.PLUGINS else []
    )
    monkeypatch.setattr(plugins, "_found", None)  # found again, and forgotten after the test
    assert gates.plugins() == {"licence": "tests.pipeline.plugin_gate:licence"}
    # "tests" is moot's own gate: that plugin is skipped, saying why
    (refused,) = [p for p in plugins.found() if not p.loaded]
    assert refused.name == "tests" and refused.problem == "moot already has a gate 'tests'"


def test_a_quoted_advice_is_cut_at_a_word_and_says_it_was_cut() -> None:
    from moot.pipeline.task import _first_line

    advice = "The developer has added the same change again, " * 6 + "The answer would be TRY"
    shown = _first_line(advice)
    assert len(shown) <= 200 and shown.endswith("…")
    assert shown[:-1] == advice[: len(shown) - 1].rstrip(" ,")
