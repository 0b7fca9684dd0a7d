"""The end of a run as a new user's walkthrough read it: a finished session's status said
"round 0 of 1, solve ... 0/1 rounds done", and moot's finding was printed twice (the log's
`finding:` and the outcome's `moot's finding:`)."""

from __future__ import annotations

import re

import pytest

from tests.cli.test_cli import moot, scripted_run
from tests.scripts import Debate


def _session_id(out: str) -> str:
    return out.split("Session ", 1)[1].split(":", 1)[0]


def test_status_of_a_finished_session_says_it_finished(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A finished demo run's status read "round 0 of 1, solve ... 0/1 rounds done"."""
    code, out, _ = scripted_run(capsys, Debate(), "--rounds", "1")
    assert code == 0
    code, out, _ = moot(capsys, "status", _session_id(out))
    assert code == 0
    header = out.splitlines()[1]
    assert re.search(r"finished in round \d \(\w+\); 1 of at most 1 round done$", header), out
    assert " of 1, " not in header and "/1" not in header


def test_the_finding_is_printed_once_at_the_end_of_a_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The plain log's `finding:` and the outcome's `moot's finding:` said it twice."""
    code, out, err = scripted_run(capsys, Debate(), "--rounds", "1")
    assert code == 0
    said = (out + err).count("final answers agree on")
    assert said == 1, (out, err)


def test_a_session_that_ends_at_the_first_answers_says_so_everywhere(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Round 0 is the first, independent answers: status said "finished in round 0, solve; 0
    rounds done of at most 2", the report "Rounds: 0" and "### Round 0", the outcome "Claims by
    round (0, 1)"."""
    from tests.scripts import start

    run = start(
        "What is the capital of France?",
        Debate(answer=lambda alias, step: "{{title}}").config(arena={"max_rounds": 2}),
    )
    assert run.result.rounds == 0
    code, out, _ = moot(capsys, "status", run.session_id)
    flat = " ".join(out.split())  # the header may wrap at the terminal's width
    assert "finished at the first answers (solve); 0 of at most 2 rounds done Task:" in flat
    assert "round 0" not in out
    code, out, _ = moot(capsys, "show", run.session_id)
    assert code == 0
    assert "**Rounds:** no round after the first answers (of at most 2)" in out
    assert "### First answers" in out and "| Agent | First answers |" in out
    assert "Agent A (first answers): invalid" in out
    assert "Round 0" not in out and "round 0" not in out
    for command in ("list", "status"):  # the JSON's code word, said in words
        code, out, _ = moot(capsys, command, *(() if command == "list" else (run.session_id,)))
        assert code == 0 and "no consensus" in out and "no_consensus" not in out, out
