"""Agreement is noticed when it happens, by the one agreement relation (deliberation/claims),
and a synthesis that drops the agreed content is caught (issue 9: the arena revised three
"Paris" answers into an instruction echo without "Paris")."""

from __future__ import annotations

import time

import pytest

from moot.deliberation.agreement import keeps_agreed_content
from moot.deliberation.claims import Relation, compare, extract_claim, group_claims
from moot.protocols.arena import prompts as arena

FRANCE = "What is the capital of France?"
STORE = "Should a small team use Postgres or SQLite for a session store?"
PARIS = "The capital of France is Paris."


def groups(answers: dict[str, str]) -> tuple[tuple[str, ...], ...]:
    found = group_claims({a: extract_claim(text) for a, text in answers.items()})
    return tuple(g.agents for g in found)


def relation(a: str, b: str) -> Relation:
    return compare(extract_claim(a), extract_claim(b)).relation


def test_three_paris_answers_agree_in_round_0() -> None:
    # what the three agents' round-0 solutions were, as written and as extracted
    answers = {
        "agent_a": PARIS,
        "agent_b": "the capital of France is Paris!",
        "agent_c": "<solution>\nThe  capital of France is PARIS\n</solution>",
    }
    assert groups(answers) == (("agent_a", "agent_b", "agent_c"),)


def test_a_reworded_answer_agrees() -> None:
    answers = {
        "agent_a": PARIS,
        "agent_b": PARIS,
        "agent_c": "The capital city of France is Paris.",
    }
    assert groups(answers) == (("agent_a", "agent_b", "agent_c"),)
    assert relation(PARIS, "Paris is the capital of France.") is Relation.AGREE


def test_paris_and_lyon_do_not_agree() -> None:
    assert groups({"agent_a": "Paris", "agent_b": "Lyon"}) == (("agent_a",), ("agent_b",))


def test_two_against_one_is_grouped_but_not_agreed() -> None:
    found = groups({"agent_a": PARIS, "agent_b": "Lyon.", "agent_c": PARIS})
    assert found == (("agent_a", "agent_c"), ("agent_b",))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # alike in words, opposite in meaning: the wording must not call these agreed
        ("Paris is the capital of France.", "Paris is not the capital of France."),
        ("The answer is 42 in the second edition.", "The answer is 43 in the second edition."),
        (PARIS, "The capital of France is Lyon."),
        ("Use SQLite, not Postgres.", "Use Postgres, not SQLite."),
    ],
)
def test_answers_alike_in_words_but_not_in_meaning_contradict(a: str, b: str) -> None:
    assert relation(a, b) is Relation.CONTRADICT
    assert len(groups({"agent_a": a, "agent_b": b})) == 2


def test_one_answer_is_not_an_agreement() -> None:
    assert groups({"agent_a": PARIS}) == (("agent_a",),)
    assert groups({}) == ()


def test_the_order_answers_are_given_in_does_not_change_the_groups() -> None:
    answers = {
        "agent_c": "Lyon",
        "agent_a": PARIS,
        "agent_b": "The capital city of France is Paris.",
    }
    reordered = dict(reversed(list(answers.items())))
    assert groups(answers) == groups(reordered) == (("agent_a", "agent_b"), ("agent_c",))


def test_long_answers_are_compared_quickly() -> None:
    long = " ".join(f"word{i % 500}" for i in range(200_000))
    started = time.perf_counter()
    groups({f"agent_{c}": long + c for c in "abcdef"})
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


BOOK = "In the second edition of the book, what is the answer on page ten?"
LAUNCH = (
    "Should the team migrate the old session store to Postgres before the big launch next week?"
)


def test_a_synthesis_alike_in_words_but_with_another_number_is_caught() -> None:
    """Nearly the same words (similarity above the bar), but the number differs: the wording
    alone would pass it."""
    answers = ["The answer given in the second edition of the book on page ten is 42."] * 2
    kept, why = keeps_agreed_content(
        "The answer given in the second edition of the book on page ten is 43.", answers, task=BOOK
    )
    assert not kept and why == "it leaves out '42', which every agent's answer holds"


def test_a_synthesis_alike_in_words_that_drops_a_negation_ending_in_nt_is_caught() -> None:
    answers = [
        "The team needn't migrate the old session store to Postgres before the big product "
        "launch next week."
    ]
    kept, why = keeps_agreed_content(
        "The team must migrate the old session store to Postgres before the big product launch "
        "next week.",
        answers * 2,
        task=LAUNCH,
    )
    assert not kept and "'needn't'" in why


MIGRATE = (
    "The team should migrate the old session store to Postgres before the big product launch "
    "next week."
)


def test_a_synthesis_saying_what_the_answers_say_passes_at_once() -> None:
    # one word short of the answers, the same number: nearly their words, so it says what they say
    answers = [MIGRATE.replace("big ", ""), MIGRATE.replace("big ", "")]
    assert keeps_agreed_content(MIGRATE, answers, task=LAUNCH) == (
        True,
        "it says what the agents' answers say",
    )
    dated = ["On 3 May the team should migrate the old session store to Postgres."] * 2
    assert keeps_agreed_content(dated[0], dated, task=LAUNCH) == (
        True,
        "it says what the agents' answers say",
    )


@pytest.mark.parametrize(
    "synthesis",
    [
        MIGRATE.replace("should", "should not"),
        MIGRATE.replace("should", "needn't"),
        MIGRATE.replace("should", "needn’t"),
    ],
)
def test_a_synthesis_negating_what_every_answer_says_is_caught(synthesis: str) -> None:
    """Every word of the answers is still there (and "must" is filler), so only the negation the
    synthesis adds shows that it turns them around."""
    answers = [MIGRATE, MIGRATE.replace("should", "must")]
    assert keeps_agreed_content(synthesis, answers, task=LAUNCH) == (
        False,
        "it negates what every agent's answer says",
    )


def test_a_synthesis_dropping_a_negation_with_a_curly_apostrophe_is_caught() -> None:
    answers = [MIGRATE.replace("should", "needn’t")] * 2
    kept, why = keeps_agreed_content(MIGRATE.replace("should", "must"), answers, task=LAUNCH)
    assert (kept, why) == (False, "it leaves out 'needn't', which every agent's answer holds")


def test_a_synthesis_at_the_similarity_bar_says_what_the_answer_says() -> None:
    # 17 words in common, one of the synthesis's own and two of the answer's: similar at 0.85
    shared = "ant bee cat dog elk fox gnu hen ibis jay kite lark mole newt owl pig quail"
    answer = shared + " seal toad"
    assert keeps_agreed_content(shared + " ram", [answer]) == (
        True,
        "it says what the agents' answers say",
    )


def test_a_synthesis_adding_a_word_to_a_short_answer_is_checked_word_by_word() -> None:
    # one word more than five: similar at 5/6 < 0.85, so its words are checked one by one
    answer = "Paris remains France's capital city"
    assert keeps_agreed_content(answer + " today", [answer]) == (
        True,
        "it keeps what every answer holds ('capital', 'city', 'france's', 'paris', 'remains')",
    )


def test_an_empty_synthesis_keeps_nothing() -> None:
    assert keeps_agreed_content("", [PARIS] * 2, task=FRANCE) == (
        False,
        "it leaves out 'paris', which every agent's answer holds",
    )
    assert keeps_agreed_content("anything", []) == (
        True,
        "there are no answers to compare it with",
    )


def test_list_numbers_are_not_content() -> None:
    answers = ["1. Paris\n2. Lyon", "1. Paris\n2. Marseille"]
    assert keeps_agreed_content("Paris.", answers) == (
        True,
        "it keeps what every answer holds ('paris')",
    )


RECIPE = "ant bee cat dog elk fox gnu hen ibis jay"  # ten words every answer holds


def test_up_to_five_shared_words_every_one_must_be_kept() -> None:
    answers = ["ant bee cat dog elk owl", "ant bee cat dog elk pig"]
    assert keeps_agreed_content("ant bee cat dog ram", answers) == (
        False,
        "it leaves out 'elk', which every agent's answer holds",
    )


def test_past_five_shared_words_a_paraphrase_may_drop_a_fifth() -> None:
    six = ["ant bee cat dog elk fox owl", "ant bee cat dog elk fox pig"]
    assert keeps_agreed_content("ant bee cat dog elk ram", six) == (
        True,
        "it keeps what every answer holds ('ant', 'bee', 'cat', 'dog', 'elk')",
    )
    ten = [RECIPE + " owl", RECIPE + " pig"]
    assert keeps_agreed_content("ant bee cat dog elk fox gnu hen ram", ten)[0]  # 8 of 10
    kept, why = keeps_agreed_content("ant bee cat dog elk fox gnu ram", ten)  # 7 of 10
    assert (kept, why) == (
        False,
        "it leaves out 'hen', 'ibis', 'jay', which every agent's answer holds",
    )


def test_a_long_list_of_left_out_words_is_cut_after_eight() -> None:
    eight = [RECIPE.removesuffix(" ibis jay") + " owl", RECIPE.removesuffix(" ibis jay") + " pig"]
    assert keeps_agreed_content("ram", eight) == (
        False,
        "it leaves out 'ant', 'bee', 'cat', 'dog', 'elk', 'fox', 'gnu', 'hen', which every "
        "agent's answer holds",
    )
    ten = [RECIPE + " owl", RECIPE + " pig"]
    assert keeps_agreed_content("ram", ten) == (
        False,
        "it leaves out 'ant', 'bee', 'cat', 'dog', 'elk', 'fox', 'gnu', 'hen' and 2 more, which "
        "every agent's answer holds",
    )
