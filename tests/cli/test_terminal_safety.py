"""Model text and other programs' output reach the terminal inert, through every command.

The agents of every session here answer, criticise, judge and arbitrate with text carrying each
family of terminal escapes (CSI, OSC with a clipboard write and a hidden link and a title,
DCS, 8-bit C1 introducers, bidirectional overrides and isolates); a fake CLI tool's
`--version` carries them and a key. No command may pass one of them to stdout or stderr."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from moot.models import cli_process
from moot.models.scripted import register_script
from moot.types import Request, Step
from tests.cli.test_cli import moot
from tests.scripts import Debate, solution, verdict
from tests.tournament_scripts import Tourney, steady

ESCAPES = (
    "\x1b[2J\x1b[H"  # CSI: clear the screen, cursor home
    "\x1b]52;c;cm0gLXJmIH4=\x07"  # OSC 52: write the clipboard
    "\x1b]8;;http://x.example/\x1b\\innocent words\x1b]8;;\x1b\\"  # OSC 8: a hidden link
    "\x1b]0;pwned title\x07"  # OSC 0: the window title
    "\x1bP1$qm\x1b\\"  # DCS
    "\x9b31m\x9d2;c1 title\x9c\x85\x90q\x9c"  # 8-bit CSI, OSC, NEL, DCS (C1 controls)
    "\u202eevil\u202c \u2066isolated\u2069"  # a bidi override and an isolate
)
# What a terminal would obey: ESC and BEL, C1 controls, bidi embeddings/overrides/isolates.
OBEYED = re.compile("[\x07\x1b\x80-\x9f\u202a-\u202e\u2066-\u2069]")


def inert(text: str) -> bool:
    return OBEYED.search(text) is None


def hostile(words: str) -> str:
    return f"{ESCAPES} {words} {ESCAPES}"


def check(capsys: pytest.CaptureFixture[str], *args: str, codes: tuple[int, ...] = (0,)) -> str:
    """Run `moot ARGS`; both streams must be free of anything a terminal obeys."""
    code, out, err = moot(capsys, *args)
    assert code in codes, f"moot {' '.join(args)}: exit {code}\n{out}\n{err}"
    for name, stream in (("stdout", out), ("stderr", err)):
        found = OBEYED.findall(stream)
        assert not found, f"moot {' '.join(args)}: {name} holds {found[:5]!r}"
    return out


def test_every_session_command_prints_a_hostile_arena_inert(
    capsys: pytest.CaptureFixture[str],
) -> None:
    debate = Debate(
        verdicts=[verdict("CONSENSUS", 9, base="Agent B", mods=hostile("none"))],
        answer=lambda alias, step: solution(
            hostile(f"the answer is 42 ({alias})"), disagreements=hostile("one")
        ),
        critique=hostile("Strengths: clear. Weaknesses: none."),
    )
    args = ["run", hostile("What is 6 times 7?"), "--seed", "3"]
    for spec in debate.specs():
        args += ["--models", spec]
    out = check(capsys, *args)
    assert "the answer is 42" in out and "innocent words" in out  # the text stays
    session = out.split("Session ", 1)[1].split(":", 1)[0]
    assert "the answer is 42" in check(capsys, *args, "-q")
    check(capsys, "resume", session)
    check(capsys, "resume", session, "-q")
    assert "the answer is 42" in check(capsys, "show", session)
    assert "the answer is 42" in check(capsys, "show", session, "--full")
    assert "byte for byte" in check(capsys, "replay", session)
    assert session in check(capsys, "status", session)
    check(capsys, "status", session, "--reveal")
    assert session in check(capsys, "list")
    check(capsys, "export", session, "--md", "report.md")


def _with_arbiter_text(reply: Callable[[Request], str]) -> Callable[[Request], str]:
    """The tournament script's reply, with the arbiter's verdict reasons made hostile."""

    def hostile_reply(request: Request) -> str:
        text = reply(request)
        if str(Step.parse(request.meta["step"]).phase).endswith("verdict"):
            data = json.loads(text)
            data["reasons"] = [hostile("its position is more complete")]
            data["fundamental_disagreement"] = hostile("relational versus documents")
            return json.dumps(data)
        return text

    return hostile_reply


def test_a_tournament_arbiter_s_reasons_replay_inert(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The issue's case: `moot replay` printed the arbiter's reasons raw."""
    t = Tourney(
        {"one": steady(hostile("Use PostgreSQL.")), "two": steady(hostile("Use Redis."))},
        overall=lambda request: 10,
        disagreements=lambda request, score: [hostile("which store to use")],
    )
    for name in ("one", "two"):
        register_script(name, _with_arbiter_text(t.script(name)))
    args = ["run", "How should sessions be stored?", "--protocol", "tournament", "--seed", "11"]
    out = check(capsys, *args, "--models", "scripted:@one", "--models", "scripted:@two",
                codes=(0, 2))  # fmt: skip
    assert "its position is more complete" in out
    session = out.split("Session ", 1)[1].split(":", 1)[0]
    replayed = check(capsys, "replay", session)
    assert "its position is more complete" in replayed  # the reasons are shown, inert
    check(capsys, "show", session, "--full")
    check(capsys, "status", session)


def test_doctor_prints_a_cli_tool_s_version_inert_and_without_a_key(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key = "sk-live-ABCDEFGHIJKLMNOPQRSTUV0123456789"
    # the key cut in two by an escape: masking after the escapes are gone still finds it
    version = f"gemini 9.9.9 key {key[:12]}\x1b[0m{key[12:]} {ESCAPES}"
    assert len(version) < 200  # doctor shows the first 200 characters
    tool = tmp_path / "bin" / "gemini"
    tool.parent.mkdir()
    tool.write_text(f"#!/bin/sh\nprintf '%s\\n' {_shell_quote(version)}\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(cli_process, "_VERSIONS", {})
    out = check(capsys, "doctor", "--models", "cli:gemini")
    assert "gemini 9.9.9" in out and "innocent words" in out
    assert key not in out and key[:12] not in out and "[redacted]" in out


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def test_batch_and_bench_print_hostile_sessions_inert(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def agent(request: Request) -> str:
        phase = str(Step.parse(request.meta["step"]).phase)
        if phase == "evaluate":
            return hostile("Strengths: clear.")
        if phase == "verify":
            return verdict("CONSENSUS", 9, mods=hostile("none"))
        if phase.startswith("sample"):
            return hostile("The answer is 42.")
        return solution(hostile("The answer is 42."))

    register_script("hostile", agent)
    models = ("--models", "scripted:@hostile") * 3
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        json.dumps({"id": "Q" + ESCAPES, "task": hostile("what is 6 x 7?")})
        + "\n"
        + json.dumps({"id": "broken", "task": "Q2", "models": ["scripted:@nobody"] * 2})
        + "\n"
    )
    out = check(capsys, "batch", str(tasks), *models, codes=(1,))
    assert "2 of 2 sessions ended" in out
    suite = tmp_path / "suite.jsonl"
    question = {"id": "q" + ESCAPES, "question": hostile("What is 6 x 7?"), "answer": "42"}
    suite.write_text(json.dumps(question) + "\n")
    args = ["bench", "--suite", str(suite), "--protocols", "arena", *models]
    assert "scripted:@hostile" in check(capsys, *args, "--out", str(tmp_path / "out"))
