"""Court configuration: every problem at once, `moot validate`, `moot schema`, paths outside the
working folder, `moot run --protocol court` from a file or from --models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moot.config import RunConfig
from moot.lifecycle.plan import check_config, config_schema
from moot.models.scripted import register_script
from tests.cli.test_cli import moot
from tests.court_scripts import Court, selects, stubborn

PG, LITE = "Use Postgres.", "Use SQLite."

TEN_MISTAKES = """\
protocol = "court"
colour = "blue"

[[agents]]
model = "scripted:@one"
temperature = 3

[[agents]]
model = "nonsense"

[limits]
max_cost = -1

[engine]
concurrency = 0

[court]
max_agent_rounds = 11
consensus_threshold = 0.4
judge_positions_scope = "some"
context_topology = "summary"
max_context_tokens = 500
checkpoint_dir = "/elsewhere/checkpoints"

[[court.judges]]
model = "scripted:@j1"
"""


def test_a_config_with_ten_mistakes_reports_every_one_at_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "court.toml"
    path.write_text(TEN_MISTAKES)
    code, out, _ = moot(capsys, "validate", str(path))
    assert code == 1
    expected = [
        "colour",
        "agents.0.temperature",
        "agents.1.model",
        "limits.max_cost",
        "engine.concurrency",
        "court.max_agent_rounds",
        "court.consensus_threshold",
        "court.judge_positions_scope",
        "court.context_topology",
        "court.max_context_tokens",
        "court.checkpoint_dir",
        "court.judges",
    ]
    paths = [line.strip().split(":")[0] for line in out.splitlines()[1:]]
    assert sorted(paths) == sorted(expected)
    assert f"{len(expected)} problems" in out.splitlines()[0]
    assert "at least 3 judges" in out and "allow_external_paths" in out
    assert "'full_history', 'last_round' or 'last_round_with_self'" in out

    # `moot run` refuses it with the same list
    code, _, err = moot(capsys, "run", "task", "--config", str(path))
    assert code == 1 and f"{len(expected)} problems" in err


def test_a_valid_court_config_says_valid_in_every_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = {
        "protocol": "court",
        "agents": [{"model": "scripted:@one"}, {"model": "scripted:@two", "temperature": 0.2}],
        "court": {"topic": "Which database?", "max_agent_rounds": 3},
    }
    (tmp_path / "c.json").write_text(json.dumps(data))
    (tmp_path / "c.yaml").write_text(
        "protocol: court\nagents:\n  - model: scripted:@one\n  - model: scripted:@two\n"
        "court:\n  judge_panel_enabled: false\n"
    )
    (tmp_path / "c.toml").write_text(
        'protocol = "court"\n[[agents]]\nmodel = "scripted:@one"\n[[agents]]\n'
        'model = "scripted:@two"\n[court]\n[[court.judges]]\nmodel = "scripted:@j1"\n'
        '[[court.judges]]\nmodel = "scripted:@j2"\n[[court.judges]]\nmodel = "scripted:@j3"\n'
    )
    for script in ("one", "two", "j1", "j2", "j3"):  # the test's own, not an earlier test's
        register_script(script, lambda request: "")  # validate never calls it
    for name, judges in (("c.json", 3), ("c.yaml", 0), ("c.toml", 3)):
        code, out, _ = moot(capsys, "validate", str(tmp_path / name))
        assert code == 0, out
        assert "valid (court, 2 agents" in out
        assert (f"{judges} judges" in out) == bool(judges)


def test_schema_prints_the_json_schema_of_run_configs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = moot(capsys, "schema")
    assert code == 0
    schema = json.loads(out)
    assert schema == json.loads(json.dumps(config_schema()))
    court = schema["$defs"]["CourtOptions"]["properties"]
    for name in ("max_agent_rounds", "judge_min_confidence", "deterministic_mode", "judges"):
        assert name in court
    assert court["max_agent_rounds"]["default"] == 4 and court["max_agent_rounds"]["maximum"] == 10


def test_files_outside_the_working_folder_are_refused_unless_allowed(tmp_path: Path) -> None:
    inside = tmp_path / "agent.py"
    inside.write_text("def reply(request):\n    return '{}'\n")
    outside = tmp_path.parent / "outside_agent.py"
    base = {
        "protocol": "court",
        "agents": [{"model": f"scripted:{inside}"}, {"model": f"scripted:{outside}#reply"}],
        "court": {"judge_panel_enabled": False},
    }
    config, problems = check_config(None, base, cwd=tmp_path)
    assert config is None
    assert problems == [
        f"agents.1.model: {str(outside)!r} is outside the working folder {tmp_path.resolve()}; "
        "move it inside, or set court.allow_external_paths = true"
    ]
    relative = {**base, "agents": [{"model": "scripted:agent.py"}, {"model": "scripted:../x.py"}]}
    assert len(check_config(None, relative, cwd=tmp_path)[1]) == 1
    allowed = {**base, "court": {"judge_panel_enabled": False, "allow_external_paths": True}}
    # the path rule alone (start=False): the outside file does not exist, which a run refuses
    assert check_config(None, allowed, cwd=tmp_path, start=False)[1] == []
    assert "outside_agent.py' does not exist" in check_config(None, allowed, cwd=tmp_path)[1][0]
    # other protocols keep their old behaviour
    arena = {**base, "protocol": "arena", "court": {}}
    assert check_config(None, arena, cwd=tmp_path, start=False)[1] == []


def test_run_from_a_config_file_takes_the_topic_from_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    court = Court({"one": stubborn(PG), "two": stubborn(PG), "three": stubborn(LITE)})
    court.specs(court.agents)
    path = tmp_path / "court.toml"
    path.write_text(
        '[[agents]]\nmodel = "scripted:@one"\n[[agents]]\nmodel = "scripted:@two"\n'
        '[[agents]]\nmodel = "scripted:@three"\n'
        '[court]\ntopic = "Which database?"\nconsensus_threshold = 0.66\n'
        "judge_panel_enabled = false\n"
    )
    code, out, _ = moot(capsys, "run", "--protocol", "court", "--config", str(path), "-q")
    assert code == 0 and out.strip() == PG
    system = court.requests[0].messages[0].content
    assert "Topic: Which database?" in system

    code, _, err = moot(capsys, "run", "--config", str(path))  # arena: a task is needed
    assert code == 1 and "the task is empty" in err


def test_run_with_models_gets_judges_from_the_same_models(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def agent_and_judge(text: str):  # type: ignore[no-untyped-def]
        agent, judge = stubborn(text), selects(PG)
        return lambda ask: judge(ask) if ask.step.startswith("j") else agent(ask)

    both = Court(
        {
            "one": agent_and_judge(PG),
            "two": agent_and_judge(LITE),
            "three": agent_and_judge("Use files."),
        }
    )
    args = ["run", "Which database?", "--protocol", "court", "--seed", "3", "--rounds", "2"]
    for spec in both.specs(both.agents):
        args += ["--models", spec]
    code, out, _ = moot(capsys, *args)
    assert code == 2, out  # chosen by the judges, who are the agents' own models
    assert "judge panel selected" in out
    assert "The judges are the agents' own models (scripted:@one, scripted:@three, " in out
    judges = {s.split("/")[-1] for s in both.asked("j1/")}
    assert judges == {"judge_a", "judge_b", "judge_c"}
    assert both.asked("r2/") and not both.asked("r3/")  # --rounds sets maxAgentRounds


def test_checkpoint_dir_plays_moot_home_for_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    court = Court({"one": stubborn(PG), "two": stubborn(PG)})
    config = court.config(checkpoint_dir="ckpt")
    from tests.scripts import start

    run = start("Which database?", config)
    assert run.exit_code == 0
    assert run.folder.resolve().parent == (tmp_path / "ckpt" / "sessions").resolve()
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "ckpt"))
    code, out, _ = moot(capsys, "replay", run.session_id)
    assert code == 0 and "Identical" in out


def test_the_library_refuses_outside_files_too(tmp_path: Path) -> None:
    from moot.errors import ConfigError
    from tests.scripts import start

    outside = tmp_path.parent / "elsewhere_agent.py"
    config = RunConfig.read(
        {
            "protocol": "court",
            "agents": [{"model": "scripted:@one"}, {"model": f"scripted:{outside}"}],
            "court": {"judge_panel_enabled": False},
        }
    )
    with pytest.raises(ConfigError, match=r"agents\.1\.model"):
        start("task", config)


def test_rounds_apply_to_the_protocol_the_config_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`--rounds` with a court config (protocol named in the file, not on the command line)
    sets the court's agent rounds; it used to change the arena's and be ignored."""
    court = Court({"one": stubborn(PG), "two": stubborn(LITE)})
    court.specs(court.agents)
    path = tmp_path / "court.toml"
    path.write_text(
        'protocol = "court"\n[[agents]]\nmodel = "scripted:@one"\n'
        '[[agents]]\nmodel = "scripted:@two"\n'
        '[court]\ntopic = "Which database?"\njudge_panel_enabled = false\n'
    )
    code, _, err = moot(capsys, "run", "--config", str(path), "--rounds", "2")
    assert code == 2, err  # the two stubborn agents deadlock after 2 rounds
    assert sorted({s.split("/")[0] for s in court.steps}) == ["r1", "r2"]
    code, _, err = moot(capsys, "run", "--config", str(path), "--verify", "true")
    assert code == 1 and "the court protocol does not take --verify" in err
