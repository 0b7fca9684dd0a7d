"""The tournament's reports draw its bracket with the agents' names, and say which agent won
each match, never only the side letter its arbiter answered with."""

from __future__ import annotations

import re

import pytest

from moot.engine.store import find_session
from moot.protocols.tournament.view import bracket_lines
from moot.types import alias_label
from tests.cli.test_cli import moot
from tests.protocols.tournament.test_tournament import DYNAMO, PG, REDIS, TASK, UNLOGGED
from tests.scripts import start
from tests.tournament_scripts import Tourney, steady


def test_a_four_agent_tournament_report_has_a_bracket_with_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the arbiter always answers "B": every challenger wins, so side letters and names differ
    t = Tourney(
        {
            "one": steady(PG),
            "two": steady(REDIS),
            "three": steady(DYNAMO),
            "four": steady(UNLOGGED),
        },
        winner=lambda request: "B",
    )
    run = start(TASK, t.config(("one", "two", "three", "four"), shuffle=False))
    bracket = run.result.details["bracket"]
    matches = bracket["matches"]
    assert len(matches) == 3
    seeds = [alias_label(a) for a in bracket["seeding"]]
    champion = alias_label(bracket["champion"])
    assert champion == seeds[3]  # the last challenger won the final

    report = (find_session(run.session_id).path / "report.md").read_text()
    section = report.split("## Bracket", 1)[1].split("\n## ", 1)[0]
    drawn = section.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    # every seed enters on its own line, in order, and the champion closes the bracket
    entering = [line.split(" ─")[0] for line in drawn if line and not line.startswith(" ")]
    assert entering == seeds
    assert drawn[-2].strip() == f"├── {champion} (champion)"
    for m in matches:
        side_a, side_b = (alias_label(s) for s in m["sides"])
        winner, arbiter = alias_label(m["winner"]), alias_label(m["arbiter"])
        row = f"| {m['match']} | {side_a} | {side_b} | {arbiter} | {winner} (side B) |"
        assert row in section, section
    shown_outcome = report.split("## Rounds", 1)[0]
    assert not re.search(r"winner:? \"?[AB]\b", shown_outcome)  # names, never a side letter

    # each verdict is read as the agent its letter stood for, above the arbiter's own reply
    for m in matches:
        said = f"chose side B, {alias_label(m['winner'])}'s position, in match {m['match']}"
        assert f"*{said}: its position is more complete*" in report

    code, out, _ = moot(capsys, "show", run.session_id)
    assert code == 0 and "Bracket" in out and f"{champion} (champion)" in out
    assert "winner: B" not in out  # the summary of each verdict names the agent
    assert f"chose side B, {champion}'s position, in match 3" in out
    html = (find_session(run.session_id).path / "report.html").read_text()
    assert "Bracket" in html and f"{champion} (champion)" in html
    gists = re.findall(r'<span class="gist">([^<]*)</span>', html)
    assert not [g for g in gists if "winner: " in g]
    assert sum("chose side B" in g for g in gists) == 3


def test_the_bracket_joins_each_winner_to_its_next_match() -> None:
    matches = [
        {"sides": ["agent_b", "agent_c"], "winner": "agent_b"},
        {"sides": ["agent_b", "agent_a"], "winner": "agent_a"},
    ]
    assert bracket_lines(matches, "agent_a") == [
        "Agent B ──┐",
        "          ├── Agent B ──┐",
        "Agent C ──┘             │",
        "                        ├── Agent A (champion)",
        "Agent A ────────────────┘",
    ]
