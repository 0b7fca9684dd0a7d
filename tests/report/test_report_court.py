"""The faces on a real court session: the same view, report and live board serve a protocol
that votes (agent rounds r<N>/..., judge rounds j<N>/...) instead of scoring."""

from __future__ import annotations

import pytest

from moot.cli import main
from moot.display.board import Board
from moot.display.plain import format_event
from moot.engine.store import SessionFolder
from moot.report.view import load_view
from moot.types import Event
from tests.court_scripts import Court, selects, stubborn
from tests.scripts import start

PG, LITE, FILES = "Use PostgreSQL.", "Use SQLite.", "Use flat files."


def test_a_court_settled_by_its_judges(capsys: pytest.CaptureFixture[str]) -> None:
    court = Court(
        {"one": stubborn(PG), "two": stubborn(LITE), "three": stubborn(FILES)},
        {"j1": selects(PG, 0.9), "j2": selects(PG, 0.8), "j3": selects(LITE, 0.95)},
    )
    seen: list[Event] = []
    run = start("Which database?", court.config(max_agent_rounds=2), subscribers=[seen.append])
    assert run.exit_code == 2  # chosen by the judges: the agents did not agree

    board = Board()
    for event in seen:
        board.apply(event)
    assert board.rounds_done == 2 and board.ended == "no_consensus"
    assert board.latest is not None and board.latest.stage == "judges"
    assert sum(board.latest.votes.values()) == 3  # two for one position, one for another
    lines = [format_event(e) for e in seen if e.kind == "round_result"]
    assert lines[1] == "round 2: votes yes 1, no 2, abstain 0, failed 0, 3 needed"
    assert lines[2] is not None and lines[2].startswith("judge round 1: votes ")

    view = load_view(SessionFolder(run.folder))
    assert [r.title for r in view.rounds] == ["Round 1", "Round 2", "Judge round 1"]
    assert view.chart_kind == "tally" and [r.round for r in view.chart_results] == [1, 2]
    code, out, _ = moot(capsys, "show", run.session_id)
    assert code == 0 and "## Final Answer\n\n> Use PostgreSQL." in out
    assert "## Votes by Round" in out and "## Judge Votes by Round" in out
    assert "- **Judge A**" in out
    page = (run.folder / "report.html").read_text()
    # round 1 proposes and votes on nothing; round 2 counts yes, no, abstain and failed
    assert page.count('class="bar"') == 4


def moot(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out, err
