"""The second new-user walkthrough's wording: click's "'abc' is not a valid integer range" for
--rounds, a flag refused without naming the protocols that take it, Ctrl-C before any answer
saying "the answers so far are kept", and `moot show` of a running session printing a label."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from moot import protocols
from moot.models.scripted import register_script
from moot.protocols.definition import Flag
from moot.types import Request
from tests.cli.test_cli import moot

TWO = ("--models", "scripted:@x", "--models", "scripted:@y")


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--rounds", "abc", "'abc' is not a whole number; give a whole number from 1 to 50"),
        ("--rounds", "0", "0 is less than 1; give a whole number from 1 to 50"),
        ("--rounds", "99", "99 is more than 50; give a whole number from 1 to 50"),
        ("--samples", "x", "'x' is not a whole number; give a whole number from 1 to 100"),
        ("--max-tokens", "-5", "-5 is less than 1; give a whole number of 1 or more"),
    ],
)
def test_a_bad_number_says_what_the_flag_takes(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, said: str
) -> None:
    code, _, err = moot(capsys, "run", "q", *TWO, "--dry-run", flag, value)
    assert code == 1
    assert f"'{flag}': {said}" in err, err
    assert "integer range" not in err and "<=x<=" not in err


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
