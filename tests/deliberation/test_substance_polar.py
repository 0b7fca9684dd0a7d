"""A reply that says neither yes nor no to a question that asks for a yes or no is no answer
(deliberation/polar.py): a new user's `moot run 'Is 91 a prime number? Answer yes or no.'`
ended in a consensus, exit 0, on "91: 03/24/2023 8:57 PM". Real answers, with a yes or a no or
without, stay answers, and a plain yes/no question is not held to the rule."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from moot.deliberation import polar, substance
from moot.deliberation.question import asks_yes_or_no
from moot.deliberation.substance import Reason, check_substance
from moot.protocols.arena import prompts as arena
from moot.protocols.court import prompts as court

PRIME = "Is 91 a prime number? Answer yes or no."
# the field's answer, and others that name only the number, a date or a time, or talk
NEITHER = [
    "91: 03/24/2023 8:57 PM",
    "The number 91.",
    "91",
    "Ninety-one.",
    "My final answer: 91",
    "**The number 91.**",
    "March 24th, 2023 at 8pm",
    "91 (03/24/2023, 8:57 p.m. UTC)",
    "Let me think.",
]
# answers: a yes or no, a word for one, a negation, a verb that states, a sign that states, or
# a word of its own that may carry one (which moot cannot tell without understanding it)
ANSWERS = [
    "No — 91 = 7 x 13.",
    "91 is not a prime; it is 7*13.",
    "No.",
    "yes",
    "Nope, 91 = 7 * 13",
    "It is not prime.",
    "91 is composite.",
    "Composite.",
    "Prime.",
    "False",
    "True.",
    "Certainly not.",
    "Not prime.",
    "It isn't.",
    "It's 91 = 7 x 13.",
    "7 * 13",
    "91 = 7·13",
    "Divisible by 7 and 13.",
    "The answer is no.",
    "Answer: No",
]


def _solve(task: str) -> list[str]:
    return [arena.SYSTEM.format(n=3), arena.SOLVE.format(task=task, format=arena.FORMAT)]


def _propose(task: str) -> list[str]:
    system = court.AGENT_SYSTEM.format(
        label="Agent A", n=3, topic=task, question="", role="", format=court.AGENT_FORMAT
    )
    return [system, court.PROPOSE.format(round=1, rounds=5, history="")]


@pytest.fixture(autouse=True)
def _read_afresh() -> None:
    substance._clear_caches()


@pytest.mark.parametrize("reply", NEITHER)
@pytest.mark.parametrize("build", [_solve, _propose, lambda task: []])
def test_a_reply_that_says_neither_yes_nor_no_to_a_yes_or_no_question_is_no_answer(
    reply: str, build: Callable[[str], list[str]]
) -> None:
    problem = check_substance(reply, build(PRIME), task=PRIME)
    assert problem is not None, f"{reply!r} passed as an answer to {PRIME!r}"
    assert problem.reason is Reason.NEITHER_YES_NOR_NO, problem
    assert str(problem) == (
        f"it says neither yes nor no to a question that asks for a yes or no ({reply!r})"
    )


@pytest.mark.parametrize("reply", ANSWERS)
@pytest.mark.parametrize("build", [_solve, _propose, lambda task: []])
def test_a_reply_that_takes_a_side_is_an_answer(
    reply: str, build: Callable[[str], list[str]]
) -> None:
    assert check_substance(reply, build(PRIME), task=PRIME) is None, reply


@pytest.mark.parametrize(
    ("task", "asks"),
    [
        (PRIME, True),
        ("Is 91 prime, yes or no?", True),
        ("91 is prime. Yes or no?", True),
        ("91 is prime. Answer with a plain yes or no.", True),
        ("Yes or no: is it safe to deploy on Friday?", True),
        ("Answer 'yes' or 'no': is it safe?", True),
        ("Is it safe to deploy (y/n)?", True),
        ("Is it safe to deploy? (yes/no)", True),
        ("Decide whether to deploy on Friday. Reply YES or NO.", True),
        ("Tell me, yes or no?", True),
        # a plain yes/no question: "At 5 pm." may answer "Can we meet on Friday?"
        ("Is 91 a prime number?", False),
        ("Can we meet on Friday?", False),
        ("Is it safe, or not?", False),
        # alternatives, or a question word: no yes or no answers them, asked for or not
        ("Is Postgres or SQLite better? Answer yes or no.", False),
        ("Which is better, Postgres or SQLite? Answer yes or no.", False),
        ("Should we use Postgres or SQLite, yes or no?", False),
        ("What does 'yes or no' mean in a form?", False),
        # "yes or no" as a subject, not a request
        ("Explain why people answer yes or no so quickly.", False),
        ("What is the capital of France?", False),
    ],
)
def test_which_tasks_ask_for_a_yes_or_no(task: str, asks: bool) -> None:
    assert asks_yes_or_no(task) is asks


@pytest.mark.parametrize(
    ("task", "reply"),
    [
        # a plain yes/no question is not held to the rule
        ("Is 91 a prime number?", "The number 91."),
        ("Can we meet on Friday?", "At 5 pm."),
        ("Will people land on Mars?", "In 2035."),
        # nor is a question that asks something else
        ("How many retries should a client make?", "3"),
        ("When was the release? Say the date.", "03/24/2023"),
    ],
)
def test_a_number_or_a_date_may_answer_a_question_that_does_not_ask_for_yes_or_no(
    task: str, reply: str
) -> None:
    assert check_substance(reply, _solve(task), task=task) is None


@pytest.mark.parametrize(
    ("words", "neither"),
    [
        (["correct"], False),
        (["wrong"], False),
        (["it", "does"], False),
        (["91", "isn't"], False),
        # (words of talk, which alone say no side, and a contraction of no talk)
        (["not", "91"], False),
        (["certainly"], False),
        (["cannot", "91"], False),
        (["it's", "91"], False),
        (["number", "91"], True),
        (["24th", "8pm", "utc"], True),
        (["my", "final", "answer", "91"], True),
        ([], False),
    ],
)
def test_the_words_that_take_a_side(words: list[str], neither: bool) -> None:
    assert polar.says_neither(words, " ".join(words)) is neither


def test_without_the_task_a_reply_cannot_be_said_to_say_neither() -> None:
    for reply in NEITHER[:4]:
        assert check_substance(reply, _solve(PRIME), task=None) is None, reply


def test_other_reasons_come_first() -> None:
    # an echo of the task, a template, a null: each keeps its own reason
    for reply, reason in [
        (PRIME, Reason.ECHO),
        ("{ answer }", Reason.TEMPLATE),
        ("None", Reason.NULL),
    ]:
        problem = check_substance(reply, _solve(PRIME), task=PRIME)
        assert problem is not None and problem.reason is reason, (reply, problem)


def test_hostile_replies_are_judged_quickly() -> None:
    hostile = [
        " ".join(str(i) for i in range(200_000)),
        "91 " * 1_000_000,
        "8:57 PM 03/24/2023 " * 200_000,
        "1" * 1_000_000,
        "=" * 1_000_000,
        "9 *" * 500_000,
        ("x" * 50 + "n't ") * 50_000,
    ]
    start = time.perf_counter()
    for reply in hostile:
        check_substance(reply, _solve(PRIME), task=PRIME)
        polar.says_neither(reply.split(), reply)
    # a long task, with the request for a yes or no at its end
    long_task = "Is it " + "very " * 1_000_000 + "safe? Answer yes or no."
    assert check_substance("The number 91.", [], task=long_task) is None  # (read at its head)
    assert time.perf_counter() - start < 10
