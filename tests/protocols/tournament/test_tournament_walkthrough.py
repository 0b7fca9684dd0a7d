"""Defects a new user's walkthrough found on the embedded model (smollm2, default settings).

A. "Is 7 a prime number?": a side's position repeated its `reasons` until the 320-token cap cut
   the JSON off, and the re-ask did the same. The run stopped (exit 1) saying the JSON lacked
   three fields, that "no backup model is left" (none was configured), and `moot resume`
   replayed the same failure. Now the schemas bound what a model can loop on, a reply cut off
   is named as such, and an invalid position forfeits its match: the tournament goes on.
B. Two sides held "Rome"; an invalid challenge reply (its position was ",") erased a side's
   valid position, the match had no winner and the tournament no final answer; the status line
   said each invalid reason three or four times. Now an invalid challenge or defense reply
   keeps the side's earlier position (as the arena keeps an agent's earlier solution)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from moot import api
from moot.types import Completion, FailureKind, Request, Step, Usage, dump
from tests.scripts import start
from tests.tournament_scripts import ReaskingTourney, moves, steady

PRIME = "Is 7 a prime number?"
YES = "Yes, 7 is a prime number: its only divisors are 1 and 7."
YES_TOO = "7 is prime."
CAPITAL = "What is the capital of Italy?"
ROME = "Rome is the capital of Italy, and has been since 1871."
ROME_TOO = "The capital is Rome."
EMPTY = ","  # the walkthrough's challenge reply had this for its position
TOKEN_CAP = 320  # the embedded model's cap on a JSON reply (models/local.py)


def _looping(reason: str) -> str:
    """smollm2's reply: the same reason over and over, until the cap cut the JSON off."""
    head = '{"recommendation": "Yes, 7 is a prime number.", "reasons": ['
    return head + ", ".join([json.dumps(reason)] * 60)[:1100]


class Looping(ReaskingTourney):
    """Sides named in `loop` answer their positions with a reply cut off at the token cap."""

    def __init__(self, stances: dict[str, Any], loop: set[str], **kwargs: Any) -> None:
        super().__init__(stances, **kwargs)
        self.loop = loop

    def script(self, name: str) -> Callable[[Request], Any]:
        reply = super().script(name)

        def answer(request: Request) -> Any:
            phase = Step.parse(request.meta["step"]).phase or ""
            if name in self.loop and phase.endswith("positions"):
                reply(request)  # counted as asked
                usage = Usage(prompt_tokens=300, completion_tokens=TOKEN_CAP)
                return Completion(text=_looping("7 has no divisors but 1 and 7"), usage=usage)
            return reply(request)

        return answer


def _alias(run: api.RunResult, name: str) -> str:
    return next(a for a, spec in run.result.aliases.items() if spec == f"scripted:@{name}")


def _label(alias: str) -> str:
    return f"Agent {alias.rsplit('_', 1)[-1].upper()}"


def _matches(run: api.RunResult) -> list[dict[str, Any]]:
    return list(run.result.details["bracket"]["matches"])


# -- A: a reply cut off at the token limit ---------------------------------------------------------
def test_a_position_cut_off_at_the_token_limit_forfeits_its_match_and_says_so() -> None:
    """Seeded as given: 'two' loops in match 1 (the re-ask too). It loses match 1 by forfeit,
    'one' meets 'three' in match 2, and the tournament ends with a winner, a finding and a
    trust statement; the reason names the cut-off, not the fields it never reached."""
    t = Looping({"one": steady(YES), "two": steady(YES), "three": steady(YES_TOO)}, loop={"two"})
    run = start(PRIME, t.config(("one", "two", "three"), shuffle=False))
    one, two, three = (_alias(run, n) for n in ("one", "two", "three"))
    assert run.exit_code != 1 and run.result.status != "failed", run.message
    assert t.steps[f"r1/match_1_positions/{two}/reask"] == 1
    first, second = _matches(run)
    assert first["winner"] == one and first["decided_by"] == "forfeit" and first["forfeit"] == two
    reasons = " ".join(first["reasons"])
    assert f"{_label(two)} gave an invalid answer in round 1" in reasons
    assert "its reply was cut off at the 320-token limit" in reasons
    assert "Field required" not in json.dumps(dump(run.result))
    assert "no backup model" not in json.dumps(dump(run.result))
    assert run.result.details["rounds"][0]["decision"] == "forfeit"
    assert f"match 1: {_label(one)} beat {_label(two)} (forfeit, before any debate)" in (
        run.result.how
    )
    # no disagreement was measured in a match that ended before any debate
    assert not [d for d in run.result.disagreements if d.startswith("match 1 ")]
    assert second["sides"] == [one, three] and second["winner"] is not None
    assert run.result.final_answer in (YES, YES_TOO)
    assert run.result.finding is not None and run.result.trust
    assert f"{_label(two)} gave an invalid answer" in run.result.trust
    assert "cut off at the 320-token limit" in run.result.trust
    assert two in run.result.details["invalid_agents"]
    assert api.replay(run.session_id).identical is True


def test_a_failure_with_no_backup_configured_does_not_say_none_is_left() -> None:
    t = ReaskingTourney(
        {"one": steady(YES), "two": steady(YES)},
        fail={("two", "positions")},
        fail_kind=FailureKind.AUTH,
    )
    run = start(PRIME, t.config(("one", "two")))
    assert run.exit_code == 1 and run.message is not None
    assert "no backup model is left" not in run.message
    assert "no backup model is configured" in run.message
    assert "add one under [tournament] backups" in run.message
    # what a resume would do: replay the recorded failure, unless it asks again
    assert f"moot resume {run.session_id} --retry-failed" in run.message


def test_a_failure_after_every_backup_was_used_says_none_is_left() -> None:
    t = ReaskingTourney(
        {"one": steady(YES), "two": steady(YES), "spare": steady(YES)},
        fail={("two", "positions"), ("spare", "positions")},
        fail_kind=FailureKind.AUTH,
    )
    run = start(PRIME, t.config(("one", "two"), backups=["spare"]))
    assert run.exit_code == 1 and run.message is not None
    assert "no backup model is left" in run.message


# -- B: an invalid challenge reply -----------------------------------------------------------------
def test_an_invalid_challenge_keeps_the_sides_earlier_position() -> None:
    """'two' held Rome; its first challenge (round 2) has "," for its position. It loses the
    match by default (seed 001), and its position stays Rome: both sides end on Rome."""
    t = ReaskingTourney(
        {"one": steady(ROME), "two": moves(ROME_TOO, EMPTY, at=1)}, overall=lambda request: 40
    )
    run = start(CAPITAL, t.config(("one", "two"), shuffle=False))
    one, two = _alias(run, "one"), _alias(run, "two")
    (match,) = _matches(run)
    assert match["winner"] == one and match["decided_by"] == "forfeit"
    assert match["final_positions"][two]["recommendation"] == ROME_TOO
    assert run.result.final_answer == ROME
    assert run.result.finding is not None
    assert set(run.result.finding.agreed) == {one, two}
    assert two not in run.result.details["invalid_agents"]
    assert f"{_label(two)}'s challenge in round 2 was invalid" in run.result.trust
    assert "its earlier position stands" in run.result.trust
    kept = [c for c in run.result.claims if c.agent == two and c.round == 2]
    assert kept and kept[0].kept.startswith("its challenge was invalid")


def test_invalid_challenges_from_both_sides_are_judged_on_the_positions_they_held() -> None:
    """Both sides' first challenge has "," for its position: the match had no winner and the
    tournament no final answer. Seed 001 judges a later failure on the current positions."""
    t = ReaskingTourney(
        {"one": moves(ROME, EMPTY, at=1), "two": moves(ROME_TOO, EMPTY, at=1)},
        overall=lambda request: 40,
    )
    run = start(CAPITAL, t.config(("one", "two"), shuffle=False))
    one, two = _alias(run, "one"), _alias(run, "two")
    (match,) = _matches(run)
    assert "both sides failed in round 2" in str(match["incomplete"])
    assert match["decided_by"] == "arbiter" and match["winner"] == one  # the arbiter says "A"
    assert "The debate is incomplete" in t.prompts("verdict")[0]
    assert run.result.final_answer == ROME
    assert "won the tournament" in run.result.how
    assert not run.result.details["invalid_agents"]
    assert run.result.finding is not None and set(run.result.finding.agreed) == {one, two}


def test_the_status_line_says_each_invalid_reason_once() -> None:
    """Both sides' positions are junk in round 1: a match without a winner, whose reasons the
    line said three or four times over."""
    t = ReaskingTourney({"one": steady(EMPTY), "two": steady("-")})
    run = start(CAPITAL, t.config(("one", "two"), shuffle=False))
    one, two = _alias(run, "one"), _alias(run, "two")
    assert run.exit_code == 2 and run.result.final_answer == ""
    for alias in (one, two):
        reason = run.result.details["invalid_agents"][alias]
        assert run.result.how.count(reason) == 1, run.result.how
        assert run.result.trust.count(reason) == 1, run.result.trust
