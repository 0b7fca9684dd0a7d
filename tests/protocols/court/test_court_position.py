"""A position is held to the arena's test of a solution (court/position.py), journaled under the
key the court's substance check always used."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import pytest

from moot.engine.session import Session
from moot.protocols.arena.run import _why as arena_why
from moot.protocols.court.position import position_problem, why_no_answer
from moot.protocols.substantive import no_answer

TASK = "Is 7 a prime number?"
ASKED = ["You are an agent in a court.", "Propose your position."]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("6", "its answer is a bare number to a yes/no question ('6')"),
        ("Is 7 a prime number?", "it only repeats the prompt"),
        (
            "Seven has exactly two divisors, one and itself.\nFinal answer: { newVote }",
            "its final answer is no answer: it only repeats the prompt's template",
        ),
        ("Yes: its only divisors are 1 and 7.", None),
        ("Final answer: no", None),
    ],
)
def test_a_position_is_held_to_the_arenas_test(text: str, why: str | None) -> None:
    problem = why_no_answer(text, ASKED, TASK)
    assert (problem is None) == (why is None), problem
    if why is not None:
        assert problem is not None and problem.startswith(why)
    # the arena refuses the same solutions (its plan format aside)
    assert (arena_why(text, ASKED, TASK) is None) == (why is None)


@pytest.mark.parametrize(
    "text", ["[The new Position Text]", "newPositionText", "{position}", "Your new position."]
)
def test_a_position_that_only_names_its_field_is_none(text: str) -> None:
    """The embedded model's court position "[The new Position Text]" was a valid agent."""
    problem = why_no_answer(text, ASKED, TASK)
    assert problem is not None and problem.startswith("it only names the field"), problem


def test_a_position_about_positions_is_still_one() -> None:
    assert (
        why_no_answer("Position: 7 is prime, its only divisors being 1 and 7.", ASKED, TASK) is None
    )


class _Checks:
    """What a session's journaled check is asked: the rule and the texts its key is made of."""

    def __init__(self) -> None:
        self.keys: list[tuple[str, tuple[str, ...]]] = []

    def checked(self, rule: str, texts: Sequence[str], check: Callable[[], str | None]) -> Any:
        self.keys.append((rule, tuple(texts)))
        return check()


def test_the_verdict_is_journaled_under_the_key_of_the_courts_earlier_check() -> None:
    """An older session's journaled verdict is read back on resume and replay: the run acts as
    it acted, even where the court now judges the position otherwise."""
    checks = _Checks()
    s = cast(Session, checks)
    assert position_problem(s, "6", ASKED, TASK) is not None
    no_answer(s, "court_position", "6", ASKED, TASK)
    assert checks.keys[0] == checks.keys[1]
