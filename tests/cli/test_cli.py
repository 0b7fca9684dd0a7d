"""The command line: arguments, exit codes, and the commands around a session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moot.cli import main
from moot.types import FailureKind
from tests.scripts import Debate, solution, verdict


def moot(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out, err


def scripted_run(
    capsys: pytest.CaptureFixture[str], debate: Debate, *extra: str
) -> tuple[int, str, str]:
    return moot(capsys, *debate.run_args(), *extra)


@pytest.mark.parametrize(
    "args",
    [
        ["run"],  # missing TASK
        ["run", "x", "--bogus"],
        ["run", "x", "--rounds", "zero"],
        ["run", "x", "--rounds", "0"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_one_not_two(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    code, _, err = moot(capsys, *args)
    assert code == 1
    assert "Error" in err or "error" in err


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = moot(capsys, "--help")
    assert code == 0 and "run" in out and "replay" in out


def test_bad_model_spec_is_named_with_the_fix(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = moot(capsys, "run", "x", "--models", "nonsense")
    assert code == 1
    assert "PROVIDER:MODEL" in err and "local:smollm2" in err


def test_unknown_provider_lists_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = moot(capsys, "run", "x", "--models", "warp:drive")
    assert code == 1 and "unknown model provider 'warp'" in err and "scripted" in err


def test_config_file_problems_are_all_listed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "moot.toml"
    config.write_text(
        "colour = 'blue'\n[arena]\nmax_rounds = 0\n[limits]\nmax_cost = -1\n"
        "[[agents]]\nmodel = 'local:smollm2'\ntemperature = 9\n"
        "[[agents]]\nmodel = 'local:smollm2'\n"
    )
    code, _, err = moot(capsys, "run", "x", "--config", str(config))
    assert code == 1
    for path in ("colour", "arena.max_rounds", "limits.max_cost", "agents.0.temperature"):
        assert path in err
    assert "4 problems" in err


def test_unreadable_config_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = moot(capsys, "run", "x", "--config", str(tmp_path / "missing.toml"))
    assert code == 1 and "cannot read config file" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("agents: [unclosed\n")
    code, _, err = moot(capsys, "run", "x", "--config", str(bad))
    assert code == 1 and "cannot be parsed" in err


def test_yaml_and_json_configs_work(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    debate = Debate()
    specs = debate.specs()
    (tmp_path / "c.json").write_text(json.dumps({"agents": [{"model": s} for s in specs]}))
    (tmp_path / "c.yaml").write_text("agents:\n" + "".join(f"  - model: '{s}'\n" for s in specs))
    for name in ("c.json", "c.yaml"):
        code, out, _ = moot(capsys, "run", "task", "--config", str(tmp_path / name))
        assert code == 0, out


def test_run_then_list_status_show_replay(capsys: pytest.CaptureFixture[str]) -> None:
    # Agents A and B agree (C's answer contradicts B's); the base solution is in the agreed group
    code, out, err = scripted_run(
        capsys, Debate(verdicts=[verdict("CONSENSUS", 9, base="Agent B")])
    )
    assert code == 0
    assert "consensus" in out and "the answer is 42 (agent_b)" in out
    # one plain line per event on a non-terminal, its step said in words, not as its id
    assert "Agent A, the first answers (solve): done in " in err
    assert "r0/solve/agent_a" not in err
    session_id = out.split("Session ", 1)[1].split(":", 1)[0]

    code, out, _ = moot(capsys, "list")
    assert code == 0 and session_id in out and "consensus" in out

    code, out, _ = moot(capsys, "status", session_id[-6:])
    assert code == 0 and "consensus" in out and "Agent A" in out

    code, out, _ = moot(capsys, "show", session_id)
    assert code == 0 and out.startswith("# Arena Report")

    code, out, _ = moot(capsys, "replay", session_id)
    assert code == 0 and "0 model calls" in out and "byte for byte" in out


def test_replay_detects_an_edited_result(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    scripted_run(capsys, Debate())
    result = next(isolated.glob("sessions/*/result.json"))
    result.write_text(result.read_text().replace("the answer is 42", "the answer is 41"))
    code, out, _ = moot(capsys, "replay")
    assert code == 1 and "DIFFERENT" in out


def test_no_consensus_exits_two(capsys: pytest.CaptureFixture[str]) -> None:
    differ = Debate(
        verdicts=[verdict("CONTINUE", 3)],
        answer=lambda alias, step: solution(f"use {alias}'s way"),
    )
    code, out, _ = scripted_run(capsys, differ, "--rounds", "1")
    assert code == 2 and "no consensus" in out


def test_limit_pause_exits_three_and_resume_with_raised_limit_finishes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = scripted_run(capsys, Debate(), "--max-tokens", "1500")
    assert code == 3
    assert "token limit reached" in out and "--max-tokens" in out
    code, out, _ = moot(capsys, "status")
    assert code == 0 and "paused" in out
    code, out, _ = moot(capsys, "resume")
    assert code == 3  # the old limit still holds
    code, out, _ = moot(capsys, "resume", "--max-tokens", "100000")
    assert code == 0 and "consensus" in out
    code, out, _ = moot(capsys, "resume")
    assert code == 0 and "already finished" in out


def test_quiet_prints_only_the_answer(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = scripted_run(
        capsys, Debate(verdicts=[verdict("CONSENSUS", 10, base="B")]), "-q"
    )
    assert code == 0
    assert out.strip().startswith("## PLAN") and "Session" not in out and err == ""


def test_missing_session_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = moot(capsys, "status")
    assert code == 1 and "no sessions under" in err
    scripted_run(capsys, Debate())
    code, _, err = moot(capsys, "show", "nope")
    assert code == 1 and "no session 'nope'" in err


def test_an_arena_of_one_agent_is_a_config_problem(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = moot(capsys, "run", "x", "--models", "scripted:@one")
    assert (
        code == 1
        and "--models: the arena needs 2 or more agents (1 given); "
        "a model given twice is two agents"
        in err
    )


def test_bare_moot_prints_help_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = moot(capsys)
    assert code == 0 and "Commands:" in out and "run" in out


def test_a_misspelt_command_is_named_among_all_of_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`batch` and `bench` are loaded only when asked for, yet listed and suggested like the
    rest."""
    with pytest.raises(SystemExit) as exited:
        main(["bacth"])
    assert exited.value.code == 1
    said = capsys.readouterr().err
    assert "No such command 'bacth'" in said and "'batch'" in said
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    listed = capsys.readouterr().out
    assert "  batch  " in listed and "  bench  " in listed and "  run  " in listed


def test_protocol_choices_are_listed_and_misspellings_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = moot(capsys, "run", "--help")
    assert code == 0 and "[arena|council|court" in out
    # a tryout found the README's default of 3 rounds and the demo's 1 nowhere in --help
    assert "(arena: 3), or 1 for the demo" in " ".join(out.split())
    code, _, err = moot(capsys, "run", "x", "--protocol", "cort")
    assert code == 1 and "did you mean 'court'" in err


def test_validate_names_an_unknown_provider_like_any_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "moot.toml"
    path.write_text(
        "[[agents]]\nmodel = 'openia:gpt-5'\n[[agents]]\nmodel = 'local:smollm2'\n"
        "[arena]\nmax_round = 2\n"
    )
    code, out, _ = moot(capsys, "validate", str(path))
    assert code == 1 and "2 problems" in out
    assert "agents.0.model: unknown model provider 'openia'" in out
    assert "did you mean 'openai'" in out
    assert "arena.max_round: unknown key; did you mean 'max_rounds'?" in out


def test_a_protocol_option_at_the_top_level_is_pointed_to_its_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # a tryout wrote `rounds = 2` at the top of a config and read only "rounds: unknown key"
    path = tmp_path / "moot.toml"
    path.write_text("rounds = 2\nfoo = 1\n")
    code, out, _ = moot(capsys, "validate", str(path))
    assert code == 1 and "2 problems" in out
    assert "rounds: unknown key; did you mean 'max_rounds' in the [arena] table?" in out
    assert "foo: unknown key\n" in out + "\n"


def test_the_task_comes_from_stdin_or_a_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import io

    debate = Debate()
    models = [arg for spec in debate.specs() for arg in ("--models", spec)]

    class Pipe(io.TextIOWrapper):
        def isatty(self) -> bool:
            return False

    monkeypatch.setattr("sys.stdin", Pipe(io.BytesIO(b"What is 6 times 7?\n")))
    code, out, _ = moot(capsys, "run", "-", *models, "-q")
    assert code == 0 and "42" in out
    assert "What is 6 times 7?" in debate.requests[0].prompt

    monkeypatch.setattr("sys.stdin", Pipe(io.BytesIO(b"Piped without a dash?")))
    code, _, _ = moot(capsys, "run", *models, "-q")
    assert code == 0 and "Piped without a dash?" in debate.requests[-1].messages[1].content

    task = tmp_path / "task.md"
    task.write_text("Which is larger, 6*7 or 41?", encoding="utf-8")
    code, _, _ = moot(capsys, "run", "--task-file", str(task), *models, "-q")
    assert code == 0 and "6*7 or 41" in debate.requests[-1].messages[1].content

    task.write_bytes(b"caf\xe9?")
    code, _, err = moot(capsys, "run", "--task-file", str(task), *models)
    assert code == 1 and "not valid UTF-8" in err


def test_a_task_too_large_for_a_context_window_is_refused_before_a_session(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from moot.engine.store import list_sessions

    task = tmp_path / "big.txt"
    task.write_text("word " * 120_000, encoding="utf-8")  # about 150,000 tokens
    models = [arg for spec in Debate().specs() for arg in ("--models", spec)]
    code, _, err = moot(capsys, "run", "--task-file", str(task), *models)
    assert code == 1 and "too large for scripted:" in err and "128,000 tokens" in err
    assert list_sessions() == []


def test_quiet_prints_the_outcome_line_when_there_is_no_answer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from moot.engine.store import list_sessions

    code, out, _ = scripted_run(
        capsys, Debate(fail={"two", "three", "one"}, fail_kind=FailureKind.AUTH), "-q"
    )
    assert code == 1 and out.startswith("failed: every agent failed")
    assert len(list_sessions()) == 1


def test_list_and_status_agree_on_a_killed_session_and_its_elapsed_time(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    import subprocess

    scripted_run(capsys, Debate())
    state_path = next(isolated.glob("sessions/*/state.json"))
    state = json.loads(state_path.read_text())
    dead = subprocess.Popen(["true"])
    dead.wait()
    # as a SIGKILLed run leaves it: still "running", its process gone, 95 s of running time
    state.update(status="running", pid=dead.pid, active_before=60.0, ended_at=None)
    state["run_started"] = state["updated"] - 35.0
    state_path.write_text(json.dumps(state))
    code, listed, _ = moot(capsys, "list")
    assert code == 0 and "stopped unexpectedly" in listed and "1m 35s" in listed
    code, shown, _ = moot(capsys, "status")
    assert code == 0 and "stopped unexpectedly" in shown and "moot resume" in shown
    assert "1m 35s" in shown  # the same clock, stopped when the process died


def test_model_text_cannot_drive_the_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    """An answer carrying a title change, a screen clear and a hidden hyperlink is printed
    inert by run, run -q and show."""
    link = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
    hostile = "\x1b]0;pwned\x07\x1b[2J" + link + " the answer is 42"
    debate = Debate(answer=lambda alias, step: solution(f"{hostile} ({alias})"))
    for extra in ((), ("-q",)):
        code, out, _ = scripted_run(capsys, debate, *extra)
        assert "\x1b" not in out and "\x07" not in out
        assert "the answer is 42" in out
    code, out, _ = moot(capsys, "show", "--full")
    assert code == 0 and "\x1b" not in out and "evil.example" not in out


def test_help_shows_examples_exit_codes_and_where_the_docs_are(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """issue 24: `moot --help` and `moot run --help` had no examples, exit codes or docs."""
    for args in (["--help"], ["run", "--help"]):
        code, out, _ = moot(capsys, *args)
        assert code == 0
        out = " ".join(out.split())  # as read, whatever the terminal's width wrapped
        assert "Examples:" in out and "moot run " in out
        assert "Exit codes: 0 consensus" in out and "3 paused" in out and "130 interrupted" in out
    assert "Docs: README.md" in moot(capsys, "--help")[1]
