"""A non-answer that a new user's walkthrough on the embedded model saw certified or accepted:
a court's consensus on a passage looped four times that abstains from the debate, and a
tournament's positions that were its own prompt's template values ("up to 10") or a piece of its
instructions ("up to 35 words of text in JSON object"). Each is invalid with a typed reason; the
real answers beside them (repeated structure, an opponent named beside the answer, a size that
answers a task about sizes) stay answers."""

from __future__ import annotations

import time

import pytest

from moot.deliberation import substance
from moot.deliberation.substance import NotSubstantive, Reason, check_substance
from moot.protocols.arena import prompts as arena
from moot.protocols.court import prompts as court

FRANCE = "What is the capital of France?"
STORE = "Should a small team use Postgres or SQLite for a session store?"
WATER = "Is water wet? Answer yes or no."
RETRIES = "How many retries should a client make?"

# The agreed position of the court run (session 20261128-064946-222f6d, Agent C's, adopted by
# Agent B), as its journal holds it: one sentence looped four times, "can" once, "could" after.
LOOP = (
    "'*Abstrakt''}: I am going to abstain from this debate by voting against my opponent's "
    "choice of a certain position name based only upon the fact of his age being 19 and not on "
    "any other factor. I will vote against him in order to see whether he is still prepared to "
    "stand up for himself or not, after all he has been proven wrong so many times already when "
    "he claimed that there was no way we can prove our point by only one person's opinion based "
    "upon his age being 19 and having a choice about something."
    + (
        " I will vote against him again in order to see whether he is still prepared to stand up "
        "for himself or not, after all he has been proven wrong so many times already when he "
        "claimed that there was no way we could prove our point by only one person's opinion "
        "based upon his age being 19 and having a choice about something."
    )
    * 3
)
# Agent B's position of the same run: the opening sentence alone, no loop
ABSTAIN = (
    "I am going to abstain from this debate by voting against my opponent's choice of a certain "
    "position name based only upon the fact that there was no way we could prove his point."
)
# The challenge prompt of the tournament run (session 20261128-070059-ffe045), as it was asked:
# its JSON template's values are "two or three", "up to 2" and "up to 1".
CHALLENGE = """\
Match 1, round 1 (challenge). Your opponent's current position:
<quoted from="Agent B" id="8da40559087c">
You're right, I'm not sure about the answer.
</quoted id="8da40559087c">

Provide a BRUTALLY HONEST review. You must:
1. Identify 2 or 3 weaknesses or gaps ("weaknesses")
2. Challenge questionable claims ("counter_claims")
3. Propose superior alternatives if they exist ("alternatives")
4. Acknowledge any strong points, but do not be a yes-man ("strong_points")

Remember: agreement without substance scores poorly. Then give your own recommendation as it \
stands now in "position" (unchanged, or moved by theirs if it convinced you) and your confidence.

Return ONLY a JSON object:
{"weaknesses": ["two or three"], "counter_claims": ["up to 2"], "alternatives": ["up to 1"], \
"strong_points": ["up to 1"], "position": "<your own recommendation now, at most 300 \
characters>", "confidence": <0.0-1.0>}"""
SYSTEM = "You are Agent A, one side of a debate tournament about the task below.\n\n{task}"


@pytest.fixture(autouse=True)
def _prompts_read_afresh() -> None:
    substance._clear_caches()


def _court_propose(task: str) -> list[str]:
    system = court.AGENT_SYSTEM.format(
        label="Agent C", n=3, topic=task, question="", role="", format=court.AGENT_FORMAT
    )
    return [system, court.PROPOSE.format(round=1, rounds=2, history="")]


def _challenge(task: str) -> list[str]:
    return [SYSTEM.format(task=task), CHALLENGE]


def _invalid(reply: str, prompts: list[str], task: str | None) -> NotSubstantive:
    problem = check_substance(reply, prompts, task=task)
    assert problem is not None, f"{reply!r} passed as substantive"
    return problem


def _valid(reply: str, prompts: list[str], task: str | None) -> None:
    problem = check_substance(reply, prompts, task=task)
    assert problem is None, f"{reply!r} was judged no answer: {problem}"


# -- a passage over and over ------------------------------------------------------------------


@pytest.mark.parametrize("task", [FRANCE, STORE, None])
def test_the_courts_looped_consensus_is_a_loop(task: str | None) -> None:
    for prompts in (_court_propose(task or FRANCE), []):
        problem = _invalid(LOOP, prompts, task)
        assert problem.reason is Reason.REPETITION
        assert "one passage over and over" in str(problem)


PASSAGE = "The capital of France is Paris, a city on the Seine that holds the national government. "

LONG = (
    "Paris is the capital of France: the seat of its government and parliament, a city on the "
    "river Seine with many old bridges, museums and parks that millions visit every year. "
)


@pytest.mark.parametrize(
    ("reply", "looped"),
    [
        # three times is a loop; twice is a passage said again
        (PASSAGE * 3, True),
        (PASSAGE * 2, False),
        # a word changed here and there is still the same passage
        (
            LONG.replace("river", "stream")
            + LONG * 2
            + LONG.replace("museums", "galleries")
            + LONG.replace("seat", "home"),
            True,
        ),
        # the loop must be most of the reply's own words: a long answer around it stands
        (
            PASSAGE * 3
            + " ".join(
                f"Paris has district number {n} with its own mayor and hall." for n in range(9)
            ),
            False,
        ),
    ],
)
def test_a_passage_repeated_three_times_is_a_loop(reply: str, looped: bool) -> None:
    problem = check_substance(reply, [], task=FRANCE)
    assert (problem is not None and problem.reason is Reason.REPETITION) is looped, problem


REPEATED_STRUCTURE = [
    # a numbered list whose items share a run of ten words
    "\n".join(
        f"{n}. Back up the database before you run the migration on {table}."
        for n, table in enumerate(["orders", "billing", "users", "sessions", "audit"], start=1)
    ),
    # steps that open alike
    "Step 1: Stop the writers of the session store and wait for them to drain.\n"
    "Step 2: Stop the readers of the session store and wait for them to drain.\n"
    "Step 3: Copy the session store to SQLite and wait for the copy to finish.\n"
    "Step 4: Start the readers of the session store and wait for them to be ready.",
    # a table whose rows repeat their cells
    "| Store | Transactions | Concurrent writers | Backups |\n"
    "| --- | --- | --- | --- |\n"
    "| Postgres | yes, full ACID | yes, many at once | yes, online |\n"
    "| SQLite | yes, full ACID | no, one at a time | yes, online |\n"
    "| Redis | no, not full ACID | yes, many at once | yes, online |",
    # lines of code that differ in a value
    "```python\n"
    + "\n".join(
        f'session_store.set_option(name="{name}", value={value}, persist=True, reload=False)'
        for name, value in [("timeout", 30), ("pool", 5), ("retries", 3), ("cache", 0)]
    )
    + "\n```",
]


def test_an_answer_stated_once_in_each_section_of_its_format_is_no_loop() -> None:
    # the arena's format asks for a plan, the changes and a final answer: a short answer may
    # well be all three, word for word
    answer = "Keep the exporter idempotent so that a rerun after a crash is harmless."
    reply = (
        f"<solution>\n## PLAN\n1. {answer}\n## CHANGES\n{answer}\nFinal answer: {answer}\n"
        "</solution>\n<analysis>\n## RISKS\nnone\n## DISAGREEMENTS\nNone.\n</analysis>"
    )
    task = "How should we run the nightly export?"
    _valid(reply, _arena_solve(task), task)
    # the same answer looped within one section is a loop
    looped = reply.replace(f"## CHANGES\n{answer}", f"## CHANGES\n{answer} {answer} {answer}")
    assert _invalid(looped, _arena_solve(task), task).reason is Reason.REPETITION


@pytest.mark.parametrize("reply", REPEATED_STRUCTURE)
@pytest.mark.parametrize("task", [STORE, None])
def test_an_answer_with_repeated_structure_is_no_loop(reply: str, task: str | None) -> None:
    _valid(reply, [], task)


# -- a stance on the debate -------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        ABSTAIN,
        # the same opening with the number of the looped one: no number answers FRANCE
        LOOP.split(". I will")[0] + ".",
        # the reasoning Agent C gave beside it
        "I do not support the position of my opponent.",
        "I do not support the position of my opponent. I have voted against him again in order "
        "to see whether he is still prepared to stand up for himself or not.",
        "I will abstain.",
        "We withdraw from this debate.",
    ],
)
@pytest.mark.parametrize("prompts", [True, False])
def test_a_stance_on_the_debate_is_no_answer(reply: str, prompts: bool) -> None:
    problem = _invalid(reply, _court_propose(FRANCE) if prompts else [], FRANCE)
    assert problem.reason is Reason.META
    assert "stance on the debate" in str(problem)


@pytest.mark.parametrize(
    ("task", "reply"),
    [
        (FRANCE, "My opponent is wrong: the capital is Paris."),
        (FRANCE, "I vote against my opponent: Paris."),
        (FRANCE, "I disagree with Agent B because Lyon is not the capital."),
        (FRANCE, "I abstain from this debate; Paris."),
        (FRANCE, "I agree with my opponent that it is Paris."),
        (STORE, "I vote for SQLite."),
        (STORE, "We support the proposal to keep sessions in SQLite."),
        (STORE, "I oppose my opponent's position; a small team should use SQLite."),
        # a number answers a question that asks no name
        (RETRIES, "I vote against my opponent's position: 3."),
    ],
)
def test_an_answer_beside_a_stance_is_an_answer(task: str, reply: str) -> None:
    _valid(reply, _court_propose(task), task)
    _valid(reply, [], task)


# -- the prompt's template values and instructions --------------------------------------------


@pytest.mark.parametrize("reply", ["up to 10", "Up to 5.", "3 or 4", "up to 1"])
def test_a_value_of_the_prompts_template_is_no_answer(reply: str) -> None:
    problem = _invalid(reply, _challenge(WATER), WATER)
    assert problem.reason in (Reason.TEMPLATE, Reason.ECHO)
    if reply != "up to 1":  # (that one is also a copy of the prompt: an echo)
        assert problem.reason is Reason.TEMPLATE
        assert "value of the prompt's template" in str(problem)


def test_a_value_of_the_template_may_answer_a_task_about_a_size() -> None:
    _valid("up to 10", _challenge(RETRIES), RETRIES)
    _valid("3 or 4", _challenge(RETRIES), RETRIES)


@pytest.mark.parametrize(
    "reply", ["Yes, water is wet.", "Yes", "up to a point: it wets what it touches", "No."]
)
def test_an_answer_to_the_challenge_is_an_answer(reply: str) -> None:
    _valid(reply, _challenge(WATER), WATER)


def test_a_one_word_value_of_the_template_may_be_the_answer() -> None:
    # the court's format spells out its vote's values: "yes", "no" or "abstain"
    assert '"vote": "yes", "no" or "abstain"' in court.AGENT_FORMAT
    friday = "Is it safe to run the migration on Friday?"
    _valid("No.", _court_propose(friday), friday)
    _valid("yes", _court_propose(friday), friday)


def test_an_instruction_about_the_form_is_no_answer() -> None:
    # Agent B's position in the tournament run
    reply = "up to 35 words of text in JSON object (only one json element)"
    for prompts in (_challenge(WATER), []):
        assert _invalid(reply, prompts, WATER).reason is Reason.INSTRUCTION
    # the form's words answer a task about the form
    _valid(reply, [], "In what format should the service return its result?")
    # and a word of the subject beside the limit is an answer
    _valid("up to 35 words: water is wet", [], WATER)


# -- the arena's final answer (issue 3 of the walkthrough) ------------------------------------


def _arena_solve(task: str) -> list[str]:
    return [arena.SYSTEM.format(n=3), arena.SOLVE.format(task=task, format=arena.FORMAT)]


def test_the_arenas_final_answer_template_echoed_is_no_answer() -> None:
    # the prompt says "Final answer: your answer in a few words."
    assert "Final answer: your answer in a few words." in arena.FORMAT
    for prompts in (_arena_solve(FRANCE), []):
        assert check_substance("Your Answer Is Unanswerable.", prompts, task=FRANCE) is not None
        _valid("Paris", prompts, FRANCE)
        _valid("The capital of France is Paris.", prompts, FRANCE)


# -- hostile input ----------------------------------------------------------------------------


def test_hostile_loops_stances_and_templates_are_judged_quickly() -> None:
    prompt = "Return JSON: {" + ", ".join(f'"k{i}": ["up to {i} of x{i}"]' for i in range(4000))
    hostile = [
        ("a b c d e f g h i j k l " * 2_000, []),
        (" ".join(f"w{i % 997} w{i % 991}" for i in range(5_000)), []),
        ("I vote against him. " * 2_000, []),
        ("I am going to do not will " * 3_000 + "abstain", []),
        ("I: " * 8_000, []),
        ('up to 1, "x": "' * 2_000, [prompt]),
        ("up to 7", [prompt]),
    ]
    for reply, prompts in hostile:
        start = time.perf_counter()
        check_substance(reply, prompts, task=FRANCE)
        assert time.perf_counter() - start < 1.0, reply[:40]
