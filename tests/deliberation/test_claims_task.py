"""Claims read with the task at hand: an answer that only repeats the question says nothing of
its own, so it is inside no other answer; picking one of the task's alternatives is an answer."""

from __future__ import annotations

from moot.deliberation.claims import Relation, compare, extract_claim
from moot.deliberation.finding import claim_problem

FRANCE = "What is the capital of France?"
STORE = "Which store for sessions: Postgres or SQLite?"


def relation(a: str, b: str, task: str) -> Relation:
    return compare(extract_claim(a, task), extract_claim(b, task)).relation


def test_an_echo_of_the_question_is_inside_no_other_answer() -> None:
    echo = extract_claim("what the capital of France?,", FRANCE)
    assert echo.repeats_task
    assert relation("what the capital of France?,", "The capital of France is Paris.", FRANCE) is (
        Relation.UNSURE
    )
    # without the task it reads as a shorter form of the other
    assert (
        compare(
            extract_claim("what the capital of France?,"),
            extract_claim("The capital of France is Paris."),
        ).relation
        is Relation.AGREE
    )


def test_picking_one_of_the_tasks_alternatives_is_an_answer() -> None:
    assert not extract_claim("SQLite for sessions", STORE).repeats_task
    assert extract_claim("Store for sessions: Postgres or SQLite.", STORE).repeats_task
    assert relation("SQLite.", "Use SQLite for the sessions.", STORE) is Relation.AGREE
    assert relation("Use SQLite.", "Use Postgres.", STORE) is Relation.CONTRADICT
    assert relation("Paris", "The capital of France is Paris.", FRANCE) is Relation.AGREE


def test_numbers_and_choices_never_repeat_the_task() -> None:
    assert not extract_claim("17 * 24 = 408", "What is 17 * 24?").repeats_task
    assert not extract_claim("B", "Which is right: A or B?").repeats_task
    assert extract_claim("Paris", FRANCE).new == {"paris"}


def test_a_restated_yes_no_question_answers_it() -> None:
    task = "Is it safe to run the migration on Friday?"
    assert not extract_claim("The migration is safe to run on Friday.", task).repeats_task
    assert not extract_claim("It is not safe to run the migration on Friday.", task).repeats_task
    assert (
        relation(
            "The migration is safe to run on Friday.", "It is not safe to run it on Friday.", task
        )
        is Relation.CONTRADICT
    )


def test_a_restated_yes_no_question_about_a_number_answers_it() -> None:
    """ "7 is prime." to "Is 7 a prime number?" was read as the number 7 with the unit "is
    prime", and so as the task's own number back: no answer, and a right answer asked again
    and marked invalid. "7" alone still repeats the question."""
    task = "Is 7 a prime number?"
    for said in ("7 is prime.", "Seven is prime.", "7 is not prime."):
        claim = extract_claim(said, task)
        assert not claim.repeats_task and claim_problem(claim, task) is None, said
    assert claim_problem(extract_claim("7", task), task) is not None


def test_a_wh_question_asked_as_a_request_is_one_too() -> None:
    task = "Tell me what the capital of France is."
    assert extract_claim("Tell the capital of France.", task).repeats_task
    assert not extract_claim("Paris.", task).repeats_task


def test_a_part_of_the_question_repeats_it_unless_the_task_offers_alternatives() -> None:
    """A README run certified 'France' and 'The capital of France is Paris.' as agreeing ('one
    says all the other says'): 'France' only repeats a word of "What is the capital of
    France?", so it is no answer, and it agrees with nothing."""
    for echo in ("France", "The capital.", "Capital: France."):
        assert extract_claim(echo, FRANCE).repeats_task, echo
    assert relation("France", "The capital of France is Paris.", FRANCE) is Relation.UNSURE
    assert not extract_claim("Paris", FRANCE).repeats_task
    # a task that offers alternatives: naming one of them picks it
    for task in (STORE, "What should hold the sessions, Postgres or SQLite?"):
        assert not extract_claim("SQLite", task).repeats_task, task
        assert relation("SQLite", "Use SQLite for the sessions.", task) is Relation.AGREE
    between = "Which is safer to run on Friday: the migration or the rollback?"
    assert not extract_claim("The rollback.", between).repeats_task
