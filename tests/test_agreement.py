"""Agreement is noticed when it happens, and a synthesis that drops the agreed content is caught
(issue 9: the arena revised three "Paris" answers into an instruction echo without "Paris")."""

from __future__ import annotations

import time

import pytest

from moot.deliberation.agreement import (
    check_agreement,
    keeps_agreed_content,
    normalize_answer,
    similarity,
)
from moot.protocols.arena import prompts as arena

FRANCE = "What is the capital of France?"
STORE = "Should a small team use Postgres or SQLite for a session store?"
PARIS = "The capital of France is Paris."


def test_three_paris_answers_agree_in_round_0() -> None:
    # what the three agents' round-0 solutions were, as written and as extracted
    found = check_agreement(
        {
            "agent_a": PARIS,
            "agent_b": "the capital of France is Paris!",
            "agent_c": "<solution>\nThe  capital of France is PARIS\n</solution>",
        }
    )
    assert found.agreed and found.method == "exact" and not found.needs_judge
    assert found.groups == (("agent_a", "agent_b", "agent_c"),)
    assert found.scores == ((1.0, 1.0, 1.0),) * 3


def test_a_reworded_answer_agrees_by_similarity() -> None:
    found = check_agreement(
        {"agent_a": PARIS, "agent_b": PARIS, "agent_c": "The capital city of France is Paris."}
    )
    assert found.agreed and found.method == "similar"
    assert 0.85 <= found.score("agent_a", "agent_c") < 1.0


def test_paris_and_lyon_do_not_agree_and_need_no_judge() -> None:
    found = check_agreement({"agent_a": "Paris", "agent_b": "Lyon"})
    assert not found.agreed and found.method == "none" and not found.needs_judge
    assert found.groups == (("agent_a",), ("agent_b",))
    assert found.score("agent_a", "agent_b") == 0.0


def test_two_against_one_is_grouped_but_not_agreed() -> None:
    found = check_agreement({"agent_a": PARIS, "agent_b": "Lyon.", "agent_c": PARIS})
    assert not found.agreed and not found.needs_judge
    assert found.groups == (("agent_a", "agent_c"), ("agent_b",))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # same words, another order: maybe the same answer
        (PARIS, "Paris is the capital of France."),
        # alike in words, opposite in meaning: a cheap check must not call these agreed
        ("Paris is the capital of France.", "Paris is not the capital of France."),
        ("The answer is 42 in the second edition.", "The answer is 43 in the second edition."),
        (PARIS, "The capital of France is Lyon."),
    ],
)
def test_the_grey_zone_asks_for_a_judge(a: str, b: str) -> None:
    found = check_agreement({"agent_a": a, "agent_b": b})
    assert not found.agreed and found.needs_judge


def test_swapped_options_do_not_agree() -> None:
    assert similarity("Use SQLite, not Postgres.", "Use Postgres, not SQLite.") < 0.85
    assert not check_agreement(
        {"a": "Use SQLite, not Postgres.", "b": "Use Postgres, not SQLite."}
    ).agreed


def test_one_answer_is_not_an_agreement() -> None:
    found = check_agreement({"agent_a": PARIS})
    assert not found.agreed and not found.needs_judge and found.groups == (("agent_a",),)
    assert not check_agreement({}).agreed


def test_normalisation_and_thresholds() -> None:
    assert normalize_answer("<solution>The ＣＡＰＩＴＡＬ’s  answer: 4,5!</solution>") == (
        "the capital's answer 4,5"
    )
    with pytest.raises(ValueError, match="differ_below"):
        check_agreement({"a": "x", "b": "y"}, agree_at=0.4, differ_below=0.6)


def test_the_order_answers_are_given_in_does_not_change_the_result() -> None:
    answers = {
        "agent_c": "Lyon",
        "agent_a": PARIS,
        "agent_b": "The capital city of France is Paris.",
    }
    reordered = dict(reversed(list(answers.items())))
    assert check_agreement(answers) == check_agreement(reordered)


def test_long_answers_are_compared_quickly() -> None:
    long = " ".join(f"word{i % 500}" for i in range(200_000))
    started = time.perf_counter()
    check_agreement({f"agent_{c}": long + c for c in "abcdef"})
    assert time.perf_counter() - started < 10


# -- the synthesis --------------------------------------------------------------------------
def test_a_synthesis_echoing_instructions_without_paris_is_caught() -> None:
    echo = arena.FORMAT.replace("Write your answer in exactly these two sections:", "").strip()
    kept, why = keeps_agreed_content(echo, [PARIS] * 3, task=FRANCE)
    assert not kept
    assert why == "it leaves out 'paris', which every agent's answer holds"


@pytest.mark.parametrize("synthesis", [PARIS, "Paris.", "It is Paris, the largest city too."])
def test_a_synthesis_keeping_paris_passes(synthesis: str) -> None:
    kept, why = keeps_agreed_content(
        synthesis, {"agent_a": PARIS, "agent_b": "Paris", "agent_c": PARIS}, task=FRANCE
    )
    assert kept, why


def test_a_synthesis_naming_the_other_option_is_caught() -> None:
    answers = ["Use SQLite.", "SQLite, clearly.", "Use SQLite for the session store."]
    kept, why = keeps_agreed_content("Use Postgres.", answers, task=STORE)
    assert not kept and "'sqlite'" in why
    assert keeps_agreed_content("SQLite is enough here.", answers, task=STORE)[0]


def test_a_synthesis_dropping_a_negation_or_a_number_is_caught() -> None:
    assert not keeps_agreed_content("Use Postgres.", ["Do not use Postgres."] * 2)[0]
    assert not keeps_agreed_content("The answer is 43.", ["The answer is 42."] * 3)[0]


def test_nothing_shared_means_nothing_to_check() -> None:
    assert keeps_agreed_content("anything", ["Paris", "Lyon"]) == (
        True,
        "the answers share no content words to check it against",
    )
    assert keeps_agreed_content("anything", [])[0]


def test_headings_of_the_answer_format_are_not_content() -> None:
    answers = [
        "## PLAN\n1. Answer directly.\n## CHANGES - Paris is the capital.",
        "## PLAN\n1. Look it up.\n## CHANGES - The capital of France is Paris.",
    ]
    assert keeps_agreed_content("Paris.", answers, task=FRANCE)[0]
    kept, why = keeps_agreed_content("## PLAN\n## CHANGES", answers, task=FRANCE)
    assert not kept and why == "it leaves out 'paris', which every agent's answer holds"
