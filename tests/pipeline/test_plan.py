"""The feature pipeline's plan phase with scripted roles on a real repository: explorer, domain
expert and architect; the critic's gate (APPROVED, NEEDS_REVISION back to the architect, bounded,
REJECTED with reasons); the plan tournament as a refine session of its own; the approved plan
as a file; and `moot execute` journaling the user's edit of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from moot import api
from moot.cli import cli
from moot.config import RunConfig
from moot.pipeline.document import parse_plan
from tests.pipeline import scripts
from tests.pipeline.test_execute import asked, bounded, commits
from tests.scripts import no_sleep

FEATURE = "Add subtract(a, b) and multiply(a, b), each with a pytest test"


def plan_config(tmp_path: Path, repo: Path, **pipeline: Any) -> RunConfig:
    roles = scripts.write_script(tmp_path)
    section = {"phase": "plan", "plan_tournament": {"enabled": False}, "lessons": False, **pipeline}
    return RunConfig.read(
        {
            "protocol": "pipeline",
            "agents": [{"model": f"scripted:{roles}#planner"}],
            "seed": 7,
            "code": {"repo": str(repo)},
            "pipeline": section,
        }
    )


def test_a_revision_then_approval_writes_the_plan_file(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATE", "revise")
    cfg = plan_config(tmp_path, repo)
    run = api.start(FEATURE, cfg, sleep=no_sleep)
    assert run.exit_code == 0, run.message
    bounded(cfg, FEATURE, run.folder)
    assert run.result.finding is not None and run.result.finding.label == "chosen"
    assert run.result.status_words == "chosen"  # an approved plan is no consensus of models
    events = [json.loads(x) for x in (run.folder / "events.jsonl").read_text().splitlines()]
    warned = [e["data"]["message"] for e in events if e["kind"] == "warning"]
    assert [w.split(" (")[0] for w in warned] == ["the critic is the architect's model"]
    gates = run.result.details["pipeline"]["gates"]
    assert [g["verdict"] for g in gates] == ["NEEDS_REVISION", "APPROVED"]
    assert asked(tmp_path) == [
        "p0/explore/explorer_a",
        "p0/expert/domain_expert_a",
        "p0/draft/architect_a",
        "p1/gate/critic_a",
        "p1/revise/architect_a",
        "p2/gate/critic_a",
    ]
    plan = parse_plan((run.folder / "plan.json").read_text())
    assert [t.id for t in plan.order()] == ["T1", "T2"]
    assert (run.folder / "plan.md").read_text().startswith("# Subtract and multiply")
    assert f"moot execute {run.session_id}" in run.result.how


@pytest.mark.parametrize(
    ("gate", "label", "said"),
    [("reject", "REJECTED", "rejected the plan"), ("forged", "NEEDS_REVISION", "did not approve")],
)
def test_a_rejection_or_an_unapproved_plan_ends_without_a_plan_file(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, gate: str, label: str, said: str
) -> None:
    monkeypatch.setenv("GATE", gate)  # "forged": an APPROVED line above the last verdict
    run = api.start(FEATURE, plan_config(tmp_path, repo, gate_revisions=1), sleep=no_sleep)
    assert run.exit_code == 2
    assert not (run.folder / "plan.json").exists()
    assert said in run.result.how
    assert run.result.details["pipeline"]["gates"][-1]["verdict"] == label


def test_the_plan_tournament_is_a_refine_session_whose_winner_becomes_the_plan(
    tmp_path: Path, repo: Path
) -> None:
    tournament = {"enabled": True, "judges": 1, "convergence_k": 1, "max_passes": 2}
    run = api.start(
        FEATURE, plan_config(tmp_path, repo, plan_tournament=tournament), sleep=no_sleep
    )
    assert run.exit_code == 0, run.message
    played = run.result.details["pipeline"]["gates"][0]["played"]
    child = run.folder / "tournaments" / played["session"]
    assert json.loads((child / "result.json").read_text())["protocol"] == "refine"
    plan = parse_plan((run.folder / "plan.json").read_text())
    assert "subtract(-1, -1) == 0" in plan.tasks[0].acceptance  # the tournament's revision won
    # the critic at the gate saw the refined plan
    log = [json.loads(x) for x in (tmp_path / "agents.log").read_text().splitlines()]
    gate = next(e for e in log if e["step"] == "p1/gate/critic_a")
    assert "subtract(-1, -1)" in gate["prompt"]


def test_plan_then_an_edited_plan_executes_and_the_edit_is_journaled(
    tmp_path: Path, repo: Path
) -> None:
    roles = scripts.write_script(tmp_path)
    config = tmp_path / "moot.toml"
    gates = scripts.gates(tmp_path)
    config.write_text(
        f'[[agents]]\nmodel = "scripted:{roles}#happy"\n\n[pipeline]\nlessons = false\n'
        "[pipeline.plan_tournament]\nenabled = false\n[pipeline.gates]\n"
        + "".join(f"{k} = {json.dumps(v)}\n" for k, v in gates.items())
    )
    runner = CliRunner()
    dry = runner.invoke(
        cli, ["plan", FEATURE, "--repo", str(repo), "--config", str(config), "--dry-run"]
    )
    assert dry.exit_code == 0, dry.output
    assert "architect" in dry.output
    planned = runner.invoke(
        cli, ["plan", FEATURE, "--repo", str(repo), "--config", str(config), "--quiet"]
    )
    assert planned.exit_code == 0, planned.output
    session = next(p for p in (tmp_path / "moot-home" / "sessions").iterdir())
    plan = json.loads((session / "plan.json").read_text())
    plan["tasks"][1]["title"] = "Add multiply(a, b)"  # the user's edit (T2's title)
    plan["tasks"][1]["description"] += " Keep it tiny."
    (session / "plan.json").write_text(json.dumps(plan, indent=2))
    done = runner.invoke(
        cli, ["execute", session.name, "--config", str(config), "--no-impl-tournament", "--quiet"]
    )
    assert done.exit_code == 0, done.output
    executed = sorted(p for p in (tmp_path / "moot-home" / "sessions").iterdir() if p != session)[
        -1
    ]
    events = [json.loads(x) for x in (executed / "events.jsonl").read_text().splitlines()]
    change = next(e for e in events if e.get("step") == "t0/user_change")
    assert "+" in change["data"]["diff"] and "Keep it tiny." in change["data"]["diff"]
    branch = f"moot-plan/{executed.name}"
    assert commits(repo, branch) == ["T1: Add subtract(a, b)", "T2: Add multiply(a, b)"]
    # with no PLAN, execute takes the newest plan session, not the newer execute session
    from moot.cli.pipeline import _latest_plan

    assert _latest_plan().id == session.name


def test_execute_with_no_plan_session_says_how_to_make_one(tmp_path: Path, repo: Path) -> None:
    result = CliRunner().invoke(cli, ["execute", "--repo", str(repo)])
    assert result.exit_code == 1 and "no plan session yet" in result.output


def test_execute_refuses_an_invalid_plan_file_naming_the_problem(
    tmp_path: Path, repo: Path
) -> None:
    bad = json.loads(scripts.plan_json())
    bad["tasks"][0]["depends_on"] = ["T2"]  # T1 <-> T2: a cycle
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(bad))
    result = CliRunner().invoke(cli, ["execute", str(path), "--repo", str(repo)])
    assert result.exit_code == 1
    assert "circle" in result.output and "T1 -> T2 -> T1" in result.output


def test_lessons_of_an_execute_are_offered_to_the_next_plan_and_can_be_rejected(
    tmp_path: Path, repo: Path
) -> None:
    from tests.pipeline.test_execute import config

    done = api.start(
        FEATURE, config(tmp_path, repo, "happy", task="T1", lessons=True), sleep=no_sleep
    )
    assert done.exit_code == 0
    runner = CliRunner()
    listed = runner.invoke(cli, ["lessons", "--repo", str(repo)])
    assert listed.exit_code == 0
    assert "syntax gate failed on a first try" in listed.output
    assert "review: The function has no docstring." in listed.output
    planned = api.start(FEATURE, plan_config(tmp_path, repo, lessons=True), sleep=no_sleep)
    assert planned.exit_code == 0
    log = [json.loads(x) for x in (tmp_path / "agents.log").read_text().splitlines()]
    draft = next(e for e in log if e["step"] == "p0/draft/architect_a")
    assert "Lessons learnt in this repository" in draft["prompt"]
    assert "no docstring" in draft["prompt"]
    number = next(line.split(".")[0] for line in listed.output.splitlines() if "docstring" in line)
    rejected = runner.invoke(cli, ["lessons", "--repo", str(repo), "--reject", number])
    assert rejected.exit_code == 0 and "no docstring" in rejected.output
    after = runner.invoke(cli, ["lessons", "--repo", str(repo)])
    assert "docstring" not in after.output and "syntax gate" in after.output
    bad = runner.invoke(cli, ["lessons", "--repo", str(repo), "--reject", "9"])
    assert bad.exit_code == 1 and "no lesson 9" in bad.output


def test_execute_prints_the_projection_before_it_runs_and_dry_run_stops_there(
    tmp_path: Path, repo: Path
) -> None:
    roles = scripts.write_script(tmp_path)
    plan = tmp_path / "plan.json"
    plan.write_text(scripts.plan_json())
    # the gates run in this interpreter: a bare `python3` need not have pytest
    config = tmp_path / "moot.toml"
    config.write_text(
        f'[[agents]]\nmodel = "scripted:{roles}#happy"\n\n[pipeline.gates]\n'
        + "".join(f"{k} = {json.dumps(v)}\n" for k, v in scripts.gates(tmp_path).items())
    )
    args = ["execute", str(plan), "--repo", str(repo), "--config", str(config)]
    dry = CliRunner().invoke(cli, [*args, "--dry-run"])
    assert dry.exit_code == 0 and "Projected worst case" in dry.output
    assert "(nothing was run)" in dry.output
    assert not (tmp_path / "moot-home" / "sessions").exists()  # nothing ran
    (tmp_path / "agents.log.fixed").write_text("")
    ran = CliRunner().invoke(cli, [*args, "--no-impl-tournament"])
    assert ran.exit_code == 0, ran.output
    assert ran.output.index("Projected worst case") < ran.output.index("moot-plan/")
    assert "(before it runs)" in ran.output and ": chosen: 2 tasks committed" in ran.output


def test_a_cli_explorer_reads_a_worktree_of_the_repository_with_its_read_only_arguments(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from tests.fakes.fake_agent import install

    bin_dir = install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "calls.jsonl"))
    cfg = plan_config(tmp_path, repo, roles={"explorer": {"model": "cli:claude"}})
    run = api.start(FEATURE, cfg, sleep=no_sleep)
    assert run.exit_code == 0, run.message
    [call] = [json.loads(x) for x in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert call["argv"] == ["-p", "--output-format", "json", "--permission-mode", "dontAsk"]
    assert Path(call["cwd"]).name == "explore" and Path(call["cwd"]) != repo
    assert not Path(call["cwd"]).exists()  # pruned once read
