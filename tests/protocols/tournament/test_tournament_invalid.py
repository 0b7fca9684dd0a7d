"""An invalid position never wins a match. A tryout on the embedded model ("What is the capital
of Spain?") printed "match 1: Agent C beat Agent B (arbiter, converged 100%)" though both sides'
positions only repeated the question, and the winner's position became the final answer.

A side has no valid answer (tournament/finding.no_valid_answer) when its position only repeats
the question or it gave an invalid answer where it had to state its position (the finding then
gives it no final answer); against a side that has one it loses by forfeit, and a match where
neither has one has no winner: the leader keeps its seat, without a win, for the next
challenger, and a final match without a winner leaves the tournament without a champion or a
final answer. Messages name the session's rounds, as the round list and the report do."""

from __future__ import annotations

import json
import re

from moot import api
from moot.protocols.tournament.view import report_sections
from tests.scripts import start
from tests.tournament_scripts import ReaskingTourney as Tourney
from tests.tournament_scripts import moves, steady

TASK = "What is the capital of Spain?"
ECHO = "Spain"  # no echo to the substance check, but it only repeats the question
MADRID = "Madrid is the capital of Spain."
JUNK = "{ newVote }, Confidence: { confidence }, Reasoning: {"


def _alias(run: api.RunResult, name: str) -> str:
    return next(a for a, spec in run.result.aliases.items() if spec == f"scripted:@{name}")


def _label(alias: str) -> str:
    return f"Agent {alias.rsplit('_', 1)[-1].upper()}"


def _matches(run: api.RunResult) -> list[dict[str, object]]:
    return list(run.result.details["bracket"]["matches"])


def test_the_tryout_two_positions_that_repeat_the_question_make_no_winner() -> None:
    """Seeded as given: 'one' and 'two' meet first, both answering 'Spain'; the arbiter would
    pick side A. Then 'one' keeps its seat, without a win, and meets 'three'."""
    t = Tourney({"one": steady(ECHO), "two": steady(ECHO), "three": steady(MADRID)})
    run = start(TASK, t.config(("one", "two", "three"), shuffle=False))
    one, two, three = (_alias(run, n) for n in ("one", "two", "three"))
    first, second = _matches(run)
    assert first["winner"] is None and first["decided_by"] == "no winner"
    assert "neither side holds a valid answer" in str(first["reasons"])
    assert "only repeats the question ('Spain')" in str(first["reasons"])
    assert not [s for s in t.asked("verdict") if s.startswith(("r1/", "r2/"))]  # none to judge
    assert second["sides"] == [one, three]
    assert second["winner"] == three and second["decided_by"] == "forfeit"
    assert run.result.final_answer == MADRID
    assert run.exit_code == 2 and run.result.status == "no_consensus"
    assert f"match 1: no winner between {_label(one)} and {_label(two)}" in run.result.how
    assert "beat" not in run.result.how.split(";")[1]
    left = run.result.details["bracket"]["left"]
    assert left[two].startswith("invalid in round 1: no winner of match 1")
    assert left[one] == "lost match 2"
    # a leader whose last match had no winner states its position afresh
    assert "You won the previous match" not in "".join(t.prompts("positions"))
    (title, text), *_ = report_sections(run.result.details, [])
    assert title == "Bracket" and "no winner, Agent" in text and "| none |" in text


def test_a_final_match_without_a_winner_leaves_no_champion_and_no_final_answer() -> None:
    t = Tourney({"one": steady(ECHO), "two": steady(ECHO)})
    run = start(TASK, t.config(("one", "two")))
    assert run.exit_code == 2 and run.result.status == "no_consensus"
    assert run.result.final_answer == ""
    assert run.result.how.startswith("no winner: 2 models, 1 match")
    assert re.search(r"Agent [A-Z] won", run.result.how + run.result.trust) is None
    assert run.result.trust.count("Nobody won the tournament of 2 models") == 1
    assert run.result.details["bracket"]["champion"] is None
    assert run.result.details["final_from"] is None
    assert not t.asked("verdict")
    assert api.replay(run.session_id).identical is True


def test_a_position_that_repeats_the_question_loses_to_an_answer_whatever_the_arbiter() -> None:
    t = Tourney({"one": steady(ECHO), "two": steady(MADRID)}, winner=lambda request: "A")
    run = start(TASK, t.config(("one", "two"), shuffle=False))
    one, two = _alias(run, "one"), _alias(run, "two")
    (match,) = _matches(run)
    assert match["winner"] == two and match["decided_by"] == "forfeit"
    assert f"{_label(one)} holds no valid answer: its position only repeats" in str(
        match["reasons"]
    )
    assert run.result.final_answer == MADRID and not t.asked("verdict")


def test_a_side_whose_defense_is_invalid_keeps_its_position_for_the_arbiter() -> None:
    """'one' gives junk in its defense (round 3); the debate is judged as it stands (seed
    001), on the positions the sides held: 'one' keeps Madrid, the arbiter picks it (side A),
    and the winner's final answer is the one moot's finding holds. Before, the junk reply made
    'one' a side without any answer, losing by forfeit (and a walkthrough's match lost both
    sides' valid answers that way: tests/protocols/tournament/test_tournament_walkthrough.py)."""
    t = Tourney(
        {"one": moves(MADRID, JUNK, at=2), "two": steady("Barcelona is the capital of Spain.")},
        winner=lambda request: "A",
    )
    run = start(TASK, t.config(("one", "two"), shuffle=False))
    one = _alias(run, "one")
    (match,) = _matches(run)
    assert "round 3 (defense) failed" in str(match["incomplete"])
    assert match["winner"] == one and match["decided_by"] == "arbiter"
    assert run.result.final_answer == MADRID
    assert one not in run.result.details["invalid_agents"]
    assert run.result.details["kept"][one]["3"].startswith("its defense was invalid:")
    assert f"{_label(one)}'s defense in round 3 was invalid" in run.result.trust
    assert run.result.positions[one] == MADRID


def test_messages_name_the_sessions_round_not_the_matchs() -> None:
    """Match 1 converges in round 1; match 2's first challenge is the session's round 3, where
    'three' gives junk: it said 'invalid challenge in round 1'."""
    pg = "Madrid, the seat of the government."
    t = Tourney({"one": steady(pg), "two": steady(pg), "three": moves(MADRID, JUNK, at=1)})
    run = start(TASK, t.config(("one", "two", "three"), shuffle=False))
    first, second = _matches(run)
    assert first["rounds"] == [1] and second["rounds"] == [2, 3]
    reasons = str(second["reasons"])
    assert "gave an invalid challenge in round 3:" in reasons and "round 1" not in reasons
    assert [r["problem"] for r in run.result.details["rounds"] if r["round"] == 3] == [
        second["reasons"][0]  # type: ignore[index]
    ]
    assert "in round 3" in run.result.how and "round 1:" not in run.result.how
    assert json.dumps(run.result.details).count("challenge in round 1") == 0
