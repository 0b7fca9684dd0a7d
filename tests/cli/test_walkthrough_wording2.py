"""The second new-user walkthrough's wording: click's "'abc' is not a valid integer range" for
--rounds, a flag refused without naming the protocols that take it, Ctrl-C before any answer
saying "the answers so far are kept", and `moot show` of a running session printing a label."""

from __future__ import annotations

import asyncio
import json
import shlex
from pathlib import Path

import pytest

from moot import protocols
from moot.cli import main
from moot.engine.journal import Journal
from moot.engine.store import SessionFolder
from moot.models.scripted import register_script
from moot.protocols.definition import Flag
from moot.report.markdown import render_markdown
from moot.report.view import build_view
from moot.types import Request
from tests.cli.test_cli import moot
from tests.scripts import Debate, start

TWO = ("--models", "scripted:@x", "--models", "scripted:@y")


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--rounds", "abc", "'abc' is not a whole number; give a whole number from 1 to 50"),
        ("--rounds", "0", "0 is less than 1; give a whole number from 1 to 50"),
        ("--rounds", "99", "99 is more than 50; give a whole number from 1 to 50"),
        ("--samples", "x", "'x' is not a whole number; give a whole number from 1 to 100"),
        ("--max-tokens", "-5", "-5 is less than 1; give a whole number of 1 or more"),
        ("--max-cost", "-1", "-1 is not more than 0; give a number of US dollars above 0, such"),
        ("--max-cost", "0", "0 is not more than 0; give a number of US dollars above 0, such"),
        ("--max-cost", "abc", "'abc' is not a number; give a number of US dollars above 0, such"),
        ("--timeout", "-3.5", "-3.5 is not more than 0; give a number of seconds above 0, such"),
    ],
)
def test_a_bad_number_says_what_the_flag_takes(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, said: str
) -> None:
    code, _, err = moot(capsys, "run", "q", *TWO, "--dry-run", flag, value)
    assert code == 1
    assert f"'{flag}': {said}" in err, err
    assert "integer range" not in err and "<=x<=" not in err
    assert "float range" not in err and "x>0" not in err


@pytest.mark.parametrize(
    ("words", "shown"),
    [
        (["What", "is", "2", "+", "2?"], '"What is 2 + 2?"'),
        (["What's", "up"], '"What\'s up"'),
        (["cost", "$5", "now"], "'cost $5 now'"),
    ],
)
def test_a_task_of_several_words_unquoted_is_shown_in_quotes(
    capsys: pytest.CaptureFixture[str], words: list[str], shown: str
) -> None:
    """click's "Got unexpected extra arguments" names no fix; the command as it would be typed
    does, in quotes a shell reads the task from as one argument."""
    code, _, err = moot(capsys, "run", *words, *TWO, "--dry-run")
    assert code == 1
    assert f"The task is one argument: put it in quotes, as in moot run {shown}" in err, err
    assert shlex.split(shown) == [" ".join(words)]


def test_an_extra_argument_to_a_command_without_a_task_gets_no_quotes_hint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = moot(capsys, "status", "a", "b")
    assert code == 1
    assert "unexpected extra argument" in err and "quotes" not in err


@pytest.mark.parametrize("flag", [Flag.SAMPLES, Flag.LAYERS, Flag.VERIFY])
def test_a_flag_the_protocol_does_not_take_names_those_that_do(
    capsys: pytest.CaptureFixture[str], flag: Flag
) -> None:
    """The protocols that take it, as their definitions say, and how to pick one."""
    takers = [n for n in protocols.names() if flag in protocols.get(n).flags]
    refusing = next(n for n in protocols.names() if flag not in protocols.get(n).flags)
    value = "true" if flag is Flag.VERIFY else "2"
    code, _, err = moot(
        capsys, "run", "q", *TWO, "--dry-run", "--protocol", refusing, f"--{flag}", value
    )
    assert code == 1
    line = next(x for x in err.splitlines() if x.strip().startswith(f"--{flag}:"))
    assert f"the {refusing} protocol does not take --{flag}; " in line
    assert takers and all(name in line.split("; ", 1)[1] for name in takers), line
    assert "--protocol" in line and "leave it out" in line


def test_ctrl_c_before_any_answer_says_none_had_arrived(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Interrupted 8 s into a run, before any answer: "the answers so far are kept" was
    untrue. (A call raising CancelledError is what Ctrl-C does to a call in flight.)"""

    async def cancelled(request: Request) -> str:
        raise asyncio.CancelledError

    register_script("cancelled", cancelled)
    code, out, err = moot(capsys, "run", "q", *(["--models", "scripted:@cancelled"] * 2))
    assert code == 130, (out, err)
    session = json.loads(next(Path("moot-home", "sessions").glob("*/result.json")).read_text())
    said = f"no answer had arrived; start it again with: moot resume {session['session_id']}"
    assert session["how"] == said
    assert said in out + err and "answers so far" not in out + err


def test_show_of_a_running_session_says_it_runs_and_where(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    """`moot show` while the run went on printed "Consensus: No", a label it had not reached."""
    debate = Debate()
    answer = debate.script("one")
    shown: list[int] = []

    async def show_while_evaluating(request: Request) -> str:
        if "/evaluate/" in request.meta["step"] and not shown:
            shown.append(0)
            await asyncio.sleep(0.4)  # state.json catches up (WRITE_INTERVAL)
            folder = next(isolated.glob("sessions/*/events.jsonl")).parent
            try:
                main(["show", folder.name])
            except SystemExit as exit_info:
                shown[0] = int(exit_info.code or 0)
        return answer(request)

    register_script("show_while_evaluating", show_while_evaluating)
    config = debate.config()
    for agent in config.agents:
        agent.model = "scripted:@show_while_evaluating"
    run = start("What is 6 times 7?", config)
    assert run.exit_code == 0 and shown == [0]
    out = capsys.readouterr().out
    assert "**Status:** Still running: now in round 1 (evaluate)" in out, out
    assert "**Consensus:** not decided yet" in out
    assert "**Consensus:** No" not in out


def test_a_session_that_stopped_unexpectedly_gets_no_label(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    """Its journal ends without an outcome (a killed process): no "Consensus: No" either."""
    code, _, _ = moot(capsys, *Debate().run_args(), "--rounds", "1")
    assert code == 0
    folder = SessionFolder(next(isolated.glob("sessions/*/events.jsonl")).parent)
    journal, _ = Journal.open(folder.events, None, repair=False)
    cut = [e for e in journal.events if e.kind not in ("finished", "stopped", "failed")]
    text = render_markdown(build_view(None, cut, folder))
    assert "**Status:** Incomplete (running, or stopped unexpectedly)" in text, text
    assert "**Consensus:** not decided yet" in text and "**Consensus:** No" not in text
