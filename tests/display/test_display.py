"""Faces while a session runs: the live view, plain lines and JSON logs, as snapshots of a
scripted session whose times are frozen, plus the choice of face and its isolation.

Snapshots live in tests/snapshots/; after an intended change, rewrite them with
MOOT_UPDATE_SNAPSHOTS=1 and read the diff."""

from __future__ import annotations

import io
import json
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace
from rich.console import Console

from moot import api as runner
from moot.display import Face, face_for
from moot.display.board import Board
from moot.display.jsonlog import JsonLog, json_records
from moot.display.live import LiveView, render_board
from moot.display.plain import PlainLog, format_event
from moot.models.scripted import ScriptedFailure
from moot.text.rounds import round_result
from moot.types import Completion, Event, FailureKind, Request, RoundSummary, Usage
from tests.scripts import Debate, no_sleep, solution, start, verdict

SNAPSHOTS = Path(__file__).parent / "snapshots"
T0 = 1_767_268_800.0  # 2026-01-01T12:00:00Z
SESSION = "20260101-120000-5e5510"


def assert_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("MOOT_UPDATE_SNAPSHOTS"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no snapshot {path}; run with MOOT_UPDATE_SNAPSHOTS=1 to write it"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from its snapshot (MOOT_UPDATE_SNAPSHOTS=1 rewrites)"


class FixedDebate(Debate):
    """Replies with fixed usage, cost and latency, so the numbers on screen do not depend on
    prompt lengths; agent `two` hits one rate limit in round 1's evaluate."""

    def __init__(self) -> None:
        super().__init__(verdicts=[verdict("CONTINUE", 6), verdict("CONSENSUS", 9, base="B")])
        self.limited = False

    def script(self, name: str) -> Any:
        text_for = super().script(name)

        def reply(request: Request) -> Completion:
            if name == "two" and request.meta["step"] == "r1/evaluate/agent_b":
                if not self.limited:
                    self.limited = True
                    raise ScriptedFailure(FailureKind.RATE_LIMIT, "slow down")
            text = text_for(request)
            return Completion(
                text=text,
                usage=Usage(prompt_tokens=1000, completion_tokens=250),
                cost=0.0125,
                latency=2.5,
                model=f"scripted:@{name}",
            )

        return reply


class Recorder(Face):
    """Keeps every event the faces see, with times replaced by a fake clock (one second per
    event from T0) and the fixed session id SESSION."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def handle(self, event: Event) -> None:
        data = dict(event.data)
        if event.kind == "opened":
            data["session_id"] = SESSION
            data["meta"] = {**data["meta"], "session_id": SESSION}
        if event.kind == "attempt":
            data["retry_in"] = 1.5  # backoff jitter is random
        if "est_prompt_tokens" in data:
            data["est_prompt_tokens"] = 500  # prompt wording is not this test's business
        ts = T0 + len(self.events)
        self.events.append(replace(event, ts=ts, data=data))


@pytest.fixture
def session_events() -> list[Event]:
    debate = FixedDebate()
    recorder = Recorder()
    config = debate.config(
        engine={"backoff_initial": 0, "backoff_max": 0},
        arena={"verify_commands": ["echo checked"]},
    )
    run = start("What is 6 times 7?", config, subscribers=[recorder])
    assert run.exit_code == 0 and run.result.rounds == 2
    return recorder.events


def _index(events: list[Event], kind: str, step: str | None = None, nth: int = 0) -> int:
    found = [i for i, e in enumerate(events) if e.kind == kind and (step is None or e.step == step)]
    return found[nth]


def _frame(events: list[Event], upto: int, *, reveal: bool = False, width: int = 100) -> str:
    board = Board()
    for event in events[: upto + 1]:
        board.apply(event)
    now = (events[upto].ts or 0.0) + 0.5
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(render_board(board, now, reveal=reveal))
    return console.export_text()


def test_live_view_snapshot(session_events: list[Event]) -> None:
    events = session_events
    frames = {
        "solving: one answer in, two agents thinking": _index(events, "ask", "r0/solve/agent_a"),
        "round 1: Agent B retrying after a rate limit": _index(events, "attempt"),
        "round 1 judged CONTINUE 6/10": _index(events, "round_result"),
        "round 2, models revealed on request (--reveal)": _index(events, "ask_started", nth=12),
        "the end: consensus, models shown": len(events) - 1,
    }
    text = ""
    for title, upto in frames.items():
        reveal = "--reveal" in title
        text += f"=== {title} (after event {upto}: {events[upto].kind}) ===\n"
        text += _frame(events, upto, reveal=reveal) + "\n"
    assert_snapshot("live_view.txt", text)


def test_models_stay_hidden_until_the_end_unless_revealed(session_events: list[Event]) -> None:
    before_end = _index(session_events, "finished") - 1
    assert "scripted:@" not in _frame(session_events, before_end)
    assert "scripted:@" in _frame(session_events, before_end, reveal=True)
    assert "scripted:@" in _frame(session_events, len(session_events) - 1)


def test_live_view_numbers_follow_the_events(session_events: list[Event]) -> None:
    board = Board()
    for event in session_events:
        board.apply(event)
    assert board.ended == "consensus"
    assert board.rounds_done == 2 and board.latest is not None and board.latest.score == 9
    calls = sum(1 for e in session_events if e.kind == "ask")
    assert board.calls == calls and board.tokens == calls * 1250
    assert board.cost == pytest.approx(calls * 0.0125)
    assert board.agents["agent_b"].failures == 0 and board.retries == 1
    # an agent's elapsed time is the time between its asks' start and end events
    row = board.agents["agent_a"]
    assert row.busy == pytest.approx(
        sum(
            e.ts - s.ts
            for s in session_events
            if s.kind == "ask_started" and s.data["agent"] == "agent_a"
            for e in session_events
            if e.kind == "ask" and e.step == s.step
        )
    )


def test_plain_lines_snapshot(session_events: list[Event]) -> None:
    lines = [format_event(e) for e in session_events]
    assert_snapshot("plain.txt", "\n".join(line for line in lines if line) + "\n")


def test_json_logs_snapshot_and_fields(session_events: list[Event]) -> None:
    records = json_records(session_events)
    assert_snapshot("json_logs.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    fields = {
        "ts": str,
        "level": str,
        "sessionId": str,
        "event": str,
    }
    for record in records:
        for key in (
            "ts",
            "level",
            "sessionId",
            "round",
            "agentId",
            "event",
            "latencyMs",
            "tokenUsage",
            "retryCount",
            "error",
        ):
            assert key in record, (key, record)
        for key, kind in fields.items():
            assert isinstance(record[key], kind), (key, record)
        assert record["sessionId"] == SESSION
        assert record["level"] in ("info", "warn", "error")
        assert datetime.fromisoformat(record["ts"]).tzinfo is not None
    responses = [r for r in records if r["event"] == "model_response"]
    assert responses and all(r["latencyMs"] == 2500 for r in responses)
    assert all(
        r["tokenUsage"] == {"prompt": 1000, "completion": 250, "total": 1250, "estimated": False}
        for r in responses
    )
    retried = [r for r in responses if r["retryCount"]]
    assert [(r["agentId"], r["retryCount"]) for r in retried] == [("agent_b", 1)]
    retry = next(r for r in records if r["event"] == "model_retry")
    assert retry["level"] == "warn" and "rate_limit" in retry["error"]
    assert [r["round"] for r in records if r["event"] == "round_start"] == [0, 1, 2]
    scores = [r["convergenceScore"] for r in records if r["event"] == "round_result"]
    assert scores == [6, 9]
    assert records[-1]["event"] == "session_end" and records[-1]["status"] == "consensus"


def test_the_live_view_draws_on_a_terminal_and_prints_round_results_above(
    session_events: list[Event],
) -> None:
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=100, color_system=None)
    with LiveView(console, auto_refresh=False, clock=lambda: T0 + 100) as view:
        for event in session_events:
            view(event)
    out = stream.getvalue()
    assert "round 1: judge Agent" in out and "CONTINUE, convergence score 6/10" in out
    # the line above the table says who and where in words, not the step id r1/evaluate/agent_b
    said = "Agent B, round 1 (evaluate): attempt 1 failed (rate limit); retrying in 1.5s"
    assert said in out and "r1/evaluate/agent_b" not in out
    final = out[out.rindex("moot arena") :]
    assert "Ended: consensus" in final and "scripted:@one" in final


def test_a_consensus_word_below_the_needed_score_is_shown_as_not_taken() -> None:
    """A judge that says CONSENSUS with a score of 4 ends the run with no consensus; the round
    line says why instead of contradicting the next line."""
    differ = Debate(
        verdicts=[verdict("CONSENSUS", 4)],
        answer=lambda alias, step: solution(f"use {alias}'s way"),
    )
    debate, recorder = differ, Recorder()
    run = start("Pick a queue.", debate.config(arena={"max_rounds": 1}), subscribers=[recorder])
    assert run.result.status == "no_consensus"
    lines = [format_event(e) for e in recorder.events]
    said = "\n".join(line for line in lines if line)
    assert "CONSENSUS (not taken: it needs a score of 8), convergence score 4/10" in said
    # an answer of several words is quoted, so its commas and numbers stay apart from the
    # counts (a tryout read "votes 3 1, 4 1, 409 1, 340 1, However, when dealing with 1")
    tally = RoundSummary(round=1, votes={"3": 1, "However, when dealing with": 1}, needed=4)
    assert round_result(tally) == "votes 3 1, 'However, when dealing with' 1, 4 needed"
    passing = RoundSummary(round=1, judge="agent_b", decision="CONSENSUS", score=9, threshold=8)
    assert round_result(passing) == "judge Agent B, CONSENSUS, convergence score 9/10"
    # a problem stands beside what it qualifies ("no valid answer, (3 of 3 answers invalid)")
    invalid = RoundSummary(round=1, decision="no valid answer", problem="3 of 3 answers invalid")
    assert round_result(invalid) == "no valid answer (3 of 3 answers invalid)"
    assert round_result(RoundSummary(round=1, problem="no reply")) == "(no reply)"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_face_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    assert isinstance(face_for(stream=_Tty()), LiveView)
    assert isinstance(face_for(stream=io.StringIO()), PlainLog)
    assert isinstance(face_for(stream=_Tty(), json_logs=True), JsonLog)
    quiet = face_for(stream=_Tty(), quiet=True)
    assert type(quiet) is Face
    monkeypatch.setenv("TERM", "dumb")
    assert isinstance(face_for(stream=_Tty()), PlainLog)
    # rich is told a pipe is a terminal by FORCE_COLOR or TTY_COMPATIBLE=1: moot agrees
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert isinstance(face_for(stream=io.StringIO()), LiveView)
    monkeypatch.delenv("TTY_COMPATIBLE")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert isinstance(face_for(stream=io.StringIO()), LiveView)


def test_a_broken_face_does_not_stop_the_session(capsys: pytest.CaptureFixture[str]) -> None:
    class Broken(Face):
        calls = 0

        def handle(self, event: Event) -> None:
            Broken.calls += 1
            raise ValueError("bad display")

    run = start("task", Debate().config(), subscribers=[Broken()])
    assert run.exit_code == 0
    assert Broken.calls == 1
    err = capsys.readouterr().err
    assert err.count("the display stopped after an error (ValueError: bad display)") == 1


def test_model_text_cannot_drive_the_terminal() -> None:
    event = Event(
        kind="ask",
        step="r0/solve/agent_a",
        data={
            "agent": "agent_a",
            "completion": {"status": "error", "failure": {"kind": "x", "message": "\x1b[2Jgone"}},
        },
    )
    line = format_event(event)
    # the whole sequence goes, not only its ESC (issue 11: no screen clear survives)
    assert line is not None and "\x1b" not in line and "[2J" not in line and "gone" in line


def test_resume_starts_the_board_from_the_journal() -> None:
    config = Debate().config(limits={"max_tokens": 1500})
    first = start("task", config)
    assert first.exit_code == 3
    recorder = Recorder()
    resumed = runner.resume(
        first.session_id, limits={"max_tokens": 10**6}, subscribers=[recorder], sleep=no_sleep
    )
    assert resumed.exit_code == 0
    opened = recorder.events[0]
    assert opened.kind == "opened"
    past_asks = [e for e in opened.data["past"] if e.kind == "ask"]
    assert past_asks, "the journaled asks reach the faces at the start"
    board = Board()
    for event in recorder.events:
        board.apply(event)
    assert board.calls == len(past_asks) + resumed.model_calls
    assert board.tokens == resumed.result.tokens
    line = format_event(opened)
    assert line is not None and f"resuming after {len(past_asks)} journaled step" in line


QUICK_AGENTS = """
import time

def reply(request):
    time.sleep(0.05)
    step = request.meta["step"]
    if "/verify/" in step:
        return ("<verdict>\\ndecision: CONSENSUS\\nconvergence_score: 9\\n"
                "remaining_disagreements: 0\\nbase_solution: Agent A\\nmodifications: none\\n"
                "</verdict>")
    if "/evaluate/" in step:
        return "fine"
    return ("<solution>\\n## PLAN\\n1. the answer is 42\\n</solution>\\n"
            "<analysis>\\nnone\\n</analysis>")
"""


def _moot_on_a_terminal(
    args: list[str], isolated: Path, *, rows: int, columns: int, tty: str
) -> tuple[str, str]:
    """Run moot with `tty` ("stdout" or "stderr") on a pseudo-terminal of the given size and
    the other stream on a pipe: (the terminal's raw text, the pipe's text)."""
    import fcntl
    import pty
    import struct
    import subprocess
    import sys
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, tty: slave}
    child = subprocess.Popen(
        [sys.executable, "-c", "from moot.cli import main; main()", *args],
        stdin=subprocess.DEVNULL,
        stdout=streams["stdout"],
        stderr=streams["stderr"],
        env={**env, "MOOT_HOME": str(isolated), "TERM": "xterm-256color"},
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    out, err = child.communicate(timeout=60)
    piped = (err if tty == "stdout" else out).decode()
    assert child.returncode == 0, piped
    return b"".join(chunks).decode(errors="replace"), piped


def test_a_terminal_gets_the_live_view_on_stderr_and_the_answer_on_stdout(
    tmp_path: Path, isolated: Path
) -> None:
    script = tmp_path / "agents.py"
    script.write_text(QUICK_AGENTS)
    args = ["run", "What is 6 times 7?", "--rounds", "1"]
    for _ in range(3):
        args += ["--models", f"scripted:{script}"]
    raw, stdout = _moot_on_a_terminal(args, isolated, rows=40, columns=110, tty="stderr")
    assert "\x1b[?25l" in raw  # the live display hides the cursor while it draws
    terminal = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    assert "┏" in terminal and "Agent C" in terminal and "Ended: consensus" in terminal
    assert "thinking (~" not in terminal  # no plain lines on a terminal
    assert "the answer is 42" in stdout and "Session " in stdout
    assert "┏" not in stdout and "\x1b" not in stdout


def test_the_live_view_stays_readable_at_80_by_24() -> None:
    """Six participants with long model names, revealed, on an 80x24 terminal: one line per
    agent, every column on screen, nothing wider than the terminal."""
    board = Board(session_id=SESSION, protocol="court", task="Postgres or SQLite? " * 10)
    board.max_rounds = 4
    for alias in ("agent_a", "agent_b", "agent_c", "judge_a", "judge_b", "judge_c"):
        row = board.row(alias)
        row.model, row.status, row.round, row.phase = (
            "openrouter:anthropic/claude-x",
            "queued",
            2,
            "vote",
        )
        row.calls, row.cost = 12, 1.2345
    stream = io.StringIO()
    console = Console(file=stream, width=80, height=24, force_terminal=True, color_system=None)
    console.print(render_board(board, T0, reveal=True, width=80))
    lines = stream.getvalue().rstrip("\n").splitlines()
    assert len(lines) <= 24 and max(len(line.rstrip()) for line in lines) <= 80
    rows = [line for line in lines if "openrouter" in line]
    assert len(rows) == 6 and all("$1.2345" in row and "queued" in row for row in rows)
    assert "Cost" in lines[2] or any(line.rstrip().endswith("Cost") for line in lines)


@pytest.mark.parametrize("width", [100, 110])
def test_an_ended_board_with_long_model_names_keeps_every_column_between_100_and_115(
    width: int,
) -> None:
    """Once a session ends its models are shown; where the wide table with them does not fit
    (100 to about 115 columns) it takes the narrow layout instead of losing its right edge."""
    board = Board(session_id=SESSION, protocol="arena", task="How to count pairs?")
    board.max_rounds = 3
    for alias in ("agent_a", "agent_b", "agent_c"):
        row = board.row(alias)
        row.model, row.status, row.round, row.phase = (
            "openai-compat:http://127.0.0.1:18777/v1#m0",
            "done",
            1,
            "verify",
        )
        row.calls, row.usage = 5, Usage(prompt_tokens=1_000, completion_tokens=400)
        row.cost_known = False
    board.ended = "consensus"
    stream = io.StringIO()
    console = Console(file=stream, width=width, height=24, force_terminal=True, color_system=None)
    console.print(render_board(board, T0, width=width))
    lines = stream.getvalue().rstrip("\n").splitlines()
    assert max(len(line.rstrip()) for line in lines) <= width
    rows = [line for line in lines if "openai-comp" in line]
    assert len(rows) == 3 and all(re.search(r"1,400 [ │]+unknown", row) for row in rows)
    assert any("Cost" in line and "Tokens" in line for line in lines)


def test_status_on_an_80_column_terminal_fits_it(tmp_path: Path, isolated: Path) -> None:
    """`moot status` renders the board at the terminal's width (it used to print 100 columns
    whatever the terminal, which an 80-column one wraps)."""
    start("What is 6 times 7?", Debate().config())
    raw, _ = _moot_on_a_terminal(["status"], isolated, rows=24, columns=80, tty="stdout")
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    lines = shown.replace("\r\n", "\n").rstrip("\n").splitlines()
    board = [line for line in lines if not line.startswith(("Session ", "Report: "))]
    assert max(len(line.rstrip()) for line in board) <= 80, shown
    assert "Agent A" in shown and "Cost" in shown


def test_the_board_prints_no_escape_sequence_from_model_text(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    """A failure message (a CLI agent's stderr, a server's error body) and a vote tally quoting
    answers reach the live view's and `moot status`'s board, and status's closing message:
    their escape sequences are removed there too, as in run and show."""
    from moot.models.scripted import register_script
    from moot.types import RoundSummary
    from tests.cli.test_cli import moot

    hostile = "bad key \x1b]0;PWNED\x07\x1b[2J gone"
    board = Board(session_id=SESSION, protocol="vote", task="Capital? \x1b[2J")
    board.max_rounds = 1
    board.row("agent_a").status = "failed"
    board.latest = RoundSummary(round=1, decision="majority", votes={hostile: 2.0}, needed=2)
    board.ended, board.message = "failed", f"every agent failed ({hostile})"
    stream = io.StringIO()
    console = Console(file=stream, width=120, height=24, force_terminal=True, color_system=None)
    console.print(render_board(board, T0, width=120))
    shown = stream.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown
    assert shown.count("bad key") == 2 and "PWNED" not in shown

    def escfail(request: Request) -> str:
        raise ScriptedFailure(FailureKind.AUTH, hostile)

    register_script("escfail", escfail)
    config = Debate().config()
    config.agents = [replace(a, model="scripted:@escfail") for a in config.agents]
    assert start("Capital of France?", config).exit_code == 1
    capsys.readouterr()
    code, out, _ = moot(capsys, "status")
    assert code == 0 and "bad key" in out
    assert "\x1b" not in out and "\x07" not in out and "PWNED" not in out


def test_a_session_of_one_agent_and_a_batch_of_one_call_say_it_in_the_singular() -> None:
    from moot.batch import BatchSummary, LineResult
    from moot.display.batch import summary_lines
    from moot.types import EventKind

    meta = {"protocol": "refine", "aliases": {"agent_a": "scripted:@x"}}
    opened = Event(kind=EventKind.OPENED, data={"session_id": "s1", "meta": meta})
    assert format_event(opened) == "session s1 (refine): 1 agent (Agent A)"
    ended = [LineResult(0, "Q1", "s1", "consensus", calls=1, tokens=1, cost=None)]
    summary = summary_lines(BatchSummary("b1", ended, 1.0, counts={"consensus": 1}), 1)
    assert "; 1 call, 1 token, " in summary[0], summary
