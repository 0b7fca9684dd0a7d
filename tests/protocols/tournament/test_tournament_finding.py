"""The tournament's label is moot's finding (issue 29): a match converges only between positions
that do not contradict, whatever the arbiter scores; the outcome is a consensus only when more
than half of all the contestants that started end on positions that agree, the bracket's winner
among them; the arbiter's scores and choices are evidence; a side that takes up the other's
position changed its mind after the other's challenge."""

from __future__ import annotations

import json

import pytest

from moot import api
from moot.types import Request, alias_label
from tests.cli.test_cli import moot
from tests.scripts import start
from tests.tournament_scripts import Tourney, moves, steady

SUM = "What is 17 * 23?"
RIGHT = "The answer is 391."
WRONG = "The answer is 381."
TASK = "How should the service store its sessions?"
PG = "Store sessions in PostgreSQL with a sessions table and an index on expiry."
REDIS = "Keep sessions in Redis with a TTL per key, no database at all."
DYNAMO = "Put sessions in DynamoDB, partitioned by user, with its native expiry feature."


def _alias(run: api.RunResult, name: str) -> str:
    return next(a for a, spec in run.result.aliases.items() if spec == f"scripted:@{name}")


def test_an_arbiter_that_always_scores_100_cannot_make_391_and_381_converge(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """'The answer is 391.' against '... 381.', an arbiter scoring 100 every time: this was a
    converged final match, consensus, exit 0."""
    t = Tourney({"one": steady(RIGHT), "two": steady(WRONG)}, overall=lambda request: 100)
    run = start(SUM, t.config(("one", "two"), max_rounds=2))
    assert run.exit_code == 2 and run.result.status == "no_consensus"
    assert not run.result.consensus
    (match,) = run.result.details["bracket"]["matches"]
    assert not match["converged"] and match["convergence"] == [100.0, 100.0, 100.0]
    rounds = run.result.details["rounds"]
    assert all(r["contradiction"] == "391 vs 381" and not r["converged"] for r in rounds)
    assert rounds[0]["problem"] == "the positions contradict: 391 vs 381"
    assert len(t.asked("convergence")) == 1  # the same pair is scored once
    # the report says the arbiter called it converged, but the positions still differ
    arbiter = alias_label(match["arbiter"])
    called = f"{arbiter}, as arbiter, called the positions converged (100/100), but they still "
    assert f"{called}differ: 391 vs 381" in run.result.trust
    (disagreement,) = run.result.disagreements
    assert "called the positions converged (100/100)" in disagreement
    assert "391 vs 381" in disagreement
    finding = run.result.finding
    assert finding is not None and finding.label == "no_consensus"
    assert "391" in finding.reason and "381" in finding.reason
    assert "called the positions of" in finding.reason  # the arbiter's claim, named
    scores = [v for v in run.result.verdicts if v.claims_agreement]
    assert scores and all(v.role == "arbiter" and not v.upheld for v in scores)
    assert "moot's check does not bear it out" in run.result.trust
    code, shown, _ = moot(capsys, "show", run.session_id)
    assert code == 0 and "391 vs 381" in shown
    assert api.replay(run.session_id).identical


def test_the_label_needs_more_than_half_of_all_that_started_not_a_converged_final() -> None:
    """Four contestants; the final match converges structurally, yet only two of the four end
    on that position: this was consensus, exit 0."""
    t = Tourney(
        {"one": steady(PG), "two": steady(REDIS), "three": steady(DYNAMO), "four": steady(PG)},
        overall=lambda request: 30,
    )
    run = start(TASK, t.config(("one", "two", "three", "four"), shuffle=False, max_rounds=1))
    assert run.exit_code == 2 and run.result.status == "no_consensus"
    last = run.result.details["bracket"]["matches"][-1]
    assert last["converged"] and last["deciding_layer"] == "structural"
    finding = run.result.finding
    assert finding is not None and finding.label == "no_consensus"
    pair = (_alias(run, "one"), _alias(run, "four"))
    assert finding.started == 4 and finding.groups[0][1] == pair
    assert "the final answers differ" in finding.reason
    assert "no consensus: the final answers differ" in run.result.how
    assert run.result.final_answer == PG  # the bracket's winner's position, all the same


def test_a_majority_the_winner_is_not_part_of_is_no_consensus_on_its_answer() -> None:
    """Two contestants agree and the third wins the bracket by the arbiter's choice: the final
    answer is the winner's, which the majority does not hold."""
    t = Tourney(
        {"one": steady(PG), "two": steady(PG), "three": steady(DYNAMO)},
        overall=lambda request: 30,
        winner=lambda request: "B" if "arbiter of match 2 " in request.prompt else "A",
    )
    run = start(TASK, t.config(("one", "two", "three"), shuffle=False, max_rounds=1))
    three = _alias(run, "three")
    assert run.result.details["bracket"]["champion"] == three
    assert run.exit_code == 2 and run.result.final_answer == DYNAMO
    finding = run.result.finding
    assert finding is not None and finding.label == "no_consensus"
    assert f"the bracket's winner, {alias_label(three)}, holds another position" in finding.reason


def test_a_side_that_takes_up_the_others_position_changed_its_mind_after_its_challenge() -> None:
    t = Tourney({"one": steady(PG), "two": moves(REDIS, PG, at=1)})
    run = start(TASK, t.config(("one", "two")))
    assert run.exit_code == 0 and run.result.status == "consensus"
    one, two = _alias(run, "one"), _alias(run, "two")
    (change,) = run.result.changes
    assert (change.agent, change.round, change.toward, change.critics) == (two, 2, (one,), (one,))
    assert change.before == REDIS and change.after == PG
    finding = run.result.finding
    assert finding is not None and finding.label == "persuasion"  # one held it at first
    assert finding.independent == 1 and set(finding.agreed) == {one, two}
    assert "converged by persuasion: 2 of 2 contestants' final positions agree" in run.result.how
    moved = f"Changes of mind: {alias_label(two)} moved from 'Keep sessions in Redis"
    assert moved in run.result.trust
    assert f"in round 2 after {alias_label(one)}'s critique" in run.result.trust
    claims = {(c.agent, c.round): c.claim for c in run.result.claims}
    assert claims[(two, 0)] == REDIS and claims[(two, 2)] == PG
    stored = json.loads((run.folder / "result.json").read_text())
    assert stored["changes"][0]["agent"] == two and stored["finding"]["label"] == "persuasion"


def test_agreement_from_the_first_positions_is_a_consensus() -> None:
    t = Tourney({"one": steady(PG), "two": steady(PG), "three": steady(PG)})
    run = start(TASK, t.config(("one", "two", "three"), shuffle=False))
    assert run.exit_code == 0 and run.result.consensus
    finding = run.result.finding
    assert finding is not None and finding.label == "consensus"
    assert finding.independent == 3 and len(finding.agreed) == 3
    assert "consensus: 3 of 3 contestants' final positions agree" in run.result.how
    assert not run.result.changes


def test_an_arbiter_whose_scores_contradict_each_other_is_an_invalid_verdict() -> None:
    """100/100, 'the same', with the disagreements it lists: the match does not converge on it,
    and nothing else says the two positions agree."""

    def listed(request: Request, score: int) -> list[str]:
        return ["Postgres against Redis", "a database against none"]

    t = Tourney(
        {"one": steady(PG), "two": steady(REDIS)}, overall=lambda r: 100, disagreements=listed
    )
    run = start(TASK, t.config(("one", "two"), max_rounds=1))
    assert run.exit_code == 2 and not run.result.consensus
    (match,) = run.result.details["bracket"]["matches"]
    assert not match["converged"]
    assert "the arbiter's verdict is invalid" in run.result.details["rounds"][0]["problem"]
    invalid = [v for v in run.result.verdicts if not v.valid]
    assert invalid and "100/100, the same, yet listed 2 disagreements" in invalid[0].problem
    assert "verdict was invalid" in run.result.trust


FAST = "Sessions belong in a fast store that expires them by itself."
FILES = "Write each session to a file under /var/lib/app, one file per user."
OWN_PG = "Use Postgres for the sessions."
REWORDED = "Postgres, because sessions need durable storage."


def test_a_side_that_drops_its_position_for_an_unrelated_one_is_a_change_of_mind() -> None:
    """A walkthrough's trust text named only Agent A's move in round 2, though Agent B moved too
    (from "You're right, I'm not sure about the..." to "up to 35 words..."): the two claims of B
    neither agree nor contradict, and B did not take up A's position, so no rule saw a move. A
    position replaced by one that keeps none of its words is a move; a rewording that keeps its
    point is not."""
    t = Tourney({"one": moves(OWN_PG, REWORDED, at=1), "two": moves(FAST, FILES, at=1)})
    run = start(TASK, t.config(("one", "two"), max_rounds=2))
    one, two = _alias(run, "one"), _alias(run, "two")
    changes = {c.agent: c for c in run.result.changes}
    assert set(changes) == {two}, run.result.changes
    change = changes[two]
    assert (change.round, change.before, change.after) == (2, FAST, FILES)
    assert change.critics == (one,) and change.toward == ()
    moved = f"{alias_label(two)} moved from 'Sessions belong in a fast store"
    assert moved in run.result.trust and f"after {alias_label(one)}'s critique" in run.result.trust
    assert f"{alias_label(one)} moved" not in run.result.trust
