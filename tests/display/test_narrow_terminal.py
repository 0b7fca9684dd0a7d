"""At 80 columns: different models stay apart in the board, and the outcome printed after a run
breaks between words, not where the terminal's last column falls."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from moot.display.board import Board
from moot.display.live import LiveView, render_board
from moot.display.names import short_models
from moot.display.plain import result_lines
from moot.display.wrap import fit_paragraphs
from moot.types import Usage
from tests.display.test_display import T0, FixedDebate, _moot_on_a_terminal
from tests.scripts import start

LOCAL = "openai-compat:http://127.0.0.1:18777/v1#"


def _ended_board(models: list[str]) -> list[str]:
    board = Board(session_id="20260101-120000-5e5510", protocol="arena", task="Count pairs?")
    board.max_rounds = 3
    for alias, model in zip(("agent_a", "agent_b", "agent_c"), models, strict=True):
        row = board.row(alias)
        row.model, row.status, row.round, row.phase = model, "done", 1, "verify"
        row.calls, row.usage, row.cost = 5, Usage(prompt_tokens=1_000, completion_tokens=400), 0.0
    board.ended = "consensus"
    stream = io.StringIO()
    console = Console(file=stream, width=80, height=24, force_terminal=True, color_system=None)
    console.print(render_board(board, T0, width=80))
    return stream.getvalue().rstrip("\n").splitlines()


def test_models_that_share_a_long_prefix_stay_apart_at_80_columns() -> None:
    lines = _ended_board([LOCAL + "qwen3-8b", LOCAL + "llama3.1-8b", LOCAL + "gemma3-4b"])
    assert max(len(line.rstrip()) for line in lines) <= 80
    rows = {m.group(1): line for line in lines if (m := re.match(r"(Agent [ABC]) ", line))}
    assert set(rows) == {"Agent A", "Agent B", "Agent C"}
    for agent, model in (
        ("Agent A", "qwen3-8b"),
        ("Agent B", "llama3.1-8b"),
        ("Agent C", "gemma3-4b"),
    ):
        assert model in rows[agent], rows[agent]
        assert "$0.0000" in rows[agent]  # the last column whole, not cut to fit


def test_long_models_keep_where_they_differ() -> None:
    models = [
        "openrouter:anthropic/claude-sonnet-4.5",
        "openrouter:openai/gpt-5.2",
        "openai:gpt-4o",
    ]
    short = short_models(models, 13)
    assert all(len(s) <= 13 for s in short) and len(set(short)) == 3
    assert short[2] == "openai:gpt-4o"  # fits: as it is
    assert "gpt-5.2" in short[1]
    hosts = [f"openai-compat:http://gpu-{n}.lab:8000/v1#qwen3" for n in ("a", "b")]
    assert short_models(hosts, 13) == ["…a.lab:8000/…", "…b.lab:8000/…"]  # ends alike too
    same = short_models([LOCAL + "m", LOCAL + "m"], 12)
    assert same[0] == same[1] == LOCAL[:11] + "…"  # one model: nothing to tell apart


def test_paragraphs_break_between_words() -> None:
    text = (
        "Use SQLite for the prototype because a single writer suffices, and move to Postgres "
        "once concurrent writes matter.\n"
        "- a list item long enough that it has to continue on a second line of the terminal\n"
        "```\n" + "x = 1  # " + "code stays whole " * 6 + "\n```"
    )
    fitted = fit_paragraphs(text, 40)
    lines = fitted.split("\n")
    code = next(line for line in lines if line.startswith("x = 1"))
    assert len(code) > 40  # inside a fence: untouched
    prose = [line for line in lines if line is not code and not line.startswith("```")]
    assert all(len(line) <= 40 for line in prose)
    assert fitted.replace("\n", " ").split() == text.replace("\n", " ").split()  # no word cut
    item = lines.index(next(line for line in lines if line.startswith("- a list")))
    assert lines[item + 1].startswith("  ") and not lines[item + 1].startswith("   ")


# 320 characters or more, and no loop: the substance check refuses one clause said over and
# over (deliberation/echo.looped)
LONG_ANSWER = (
    "Choose SQLite while one process writes; it keeps the data in a single file, needs no "
    "server to run, backs up with a plain copy, and handles thousands of reads a second. Move "
    "to Postgres once several services write at the same time, when you need row locks, "
    "replication to a standby, or roles that limit what each client may touch."
)

LONG_ANSWER_AGENTS = f"""
def reply(request):
    step = request.meta["step"]
    if "/verify/" in step:
        return ("<verdict>\\ndecision: CONSENSUS\\nconvergence_score: 9\\n"
                "remaining_disagreements: 0\\nbase_solution: Agent A\\nmodifications: none\\n"
                "</verdict>")
    if "/evaluate/" in step:
        return "fine"
    return ("<solution>\\n" + {LONG_ANSWER!r} + "\\n</solution>\\n"
            "<analysis>\\nnone\\n</analysis>")
"""


def test_the_outcome_on_an_80_column_terminal_breaks_between_words(
    tmp_path: Path, isolated: Path
) -> None:
    script = tmp_path / "agents.py"
    script.write_text(LONG_ANSWER_AGENTS)
    args = ["run", "SQLite or Postgres?", "--rounds", "1"]
    for _ in range(3):
        args += ["--models", f"scripted:{script}"]
    raw, _ = _moot_on_a_terminal(args, isolated, rows=24, columns=80, tty="stdout")
    lines = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw).replace("\r\n", "\n").split("\n")
    # a word longer than the terminal (the report's path under pytest's tmp) stays whole
    assert all(len(line) <= 80 for line in lines if " " in line), lines
    first = next(i for i, line in enumerate(lines) if line.startswith("Choose"))
    answer = lines[first : lines.index("", first)]
    assert len(answer) >= 4, lines  # 320 characters on lines of 80
    assert " ".join(answer).split() == LONG_ANSWER.split()
    assert any(line.startswith("Tokens ") for line in lines)  # the usage line, broken too


def test_the_outcome_of_a_view_that_never_drew_breaks_between_words() -> None:
    """A live view that ended before it drew prints moot's finding itself: broken between
    words at the terminal's width, as the view's last frame shows it."""
    run = start("What is 6 times 7?", FixedDebate().config())
    stream = io.StringIO()
    console = Console(file=stream, width=40, height=24, force_terminal=True, color_system=None)
    LiveView(console).show_outcome(run.result)
    lines = stream.getvalue().splitlines()
    words = " ".join(result_lines(run.result)).split()
    assert len(lines) > len(result_lines(run.result))  # a line longer than 40 was broken
    assert all(len(line) <= 40 for line in lines if " " in line), lines
    assert " ".join(lines).split() == words  # and no word was cut in two
