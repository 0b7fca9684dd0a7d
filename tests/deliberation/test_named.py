"""What a claim names that folding loses (deliberation/named.py): labels, complexities and
preferences, and when two claims' names contradict."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest

from moot.deliberation.named import Named, conflict, named, stated


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("We should go with plan A.", {"A"}),
        ("A is safer.", {"A"}),
        ("A queue worker.", set()),  # the article
        ("I think plan B.", {"B"}),  # "I" is no name
        ("Vitamin D", {"D"}),
        ("It is O(n).", set()),  # the O of a bound
        ("Use plan A, not plan B.", {"A", "B"}),
    ],
)
def test_labels_are_capital_letters_that_name_something(text: str, labels: set[str]) -> None:
    assert named(text).labels == labels


def test_complexities_are_read_without_spaces_or_powers_signs() -> None:
    assert named("It is O(n log n), not O(n^2).").complexities == {"O(nlogn)", "O(n2)"}
    assert named("Θ(N²)").complexities == {"Θ(n2)"}


@pytest.mark.parametrize(
    ("text", "proper"),
    [
        ("Store the sessions in Redis.", {"redis"}),  # a capital inside a sentence
        ("Redis stores the sessions.", set()),  # a sentence starts with one
        ("use SQLite or MongoDB", {"sqlite", "mongodb"}),  # a capital inside the word
        ("A LEFT JOIN keeps rows. It works.", {"left", "join"}),
        ("I think so.", set()),
    ],
)
def test_proper_names_are_capitalised_words_not_at_a_sentence_start(
    text: str, proper: set[str]
) -> None:
    assert named(text).proper == proper


@pytest.mark.parametrize(
    ("text", "operators"),
    [
        ("Use === here.", {"==="}),
        ("Use `is`, not `==`.", {"is", "=="}),  # a keyword in code ticks
        ("while n <= 10", {"<="}),
        ("**Use SQLite.** -- it is small - and fast", set()),  # emphasis and dashes
        ("x->y", set()),  # inside a word
    ],
)
def test_operators_stand_alone_or_fill_a_code_span(text: str, operators: set[str]) -> None:
    assert named(text).operators == operators


@pytest.mark.parametrize(
    ("text", "versions"),
    [
        ("Upgrade to version 2.4.1.", {"2.4.1"}),
        ("Use v1.2.", {"1.2"}),
        ("Python 3.10 added it.", {"3.10"}),  # after a name: "3.10" is not "3.1"
        ("The host is 10.0.0.12.", {"10.0.0.12"}),
        ("It costs 3.10 dollars.", set()),  # a decimal
        ("Run it on 3 hosts.", set()),
    ],
)
def test_versions_are_dotted_numbers_read_as_written(text: str, versions: set[str]) -> None:
    assert named(text).versions == versions


@pytest.mark.parametrize(
    ("text", "preferences"),
    [
        ("SQLite is better than Postgres.", {("better", "sqlite", "postgres")}),
        ("SQLite is worse than Postgres.", {("better", "postgres", "sqlite")}),
        ("SQLite is far less reliable than Postgres.", {("more reliable", "postgres", "sqlite")}),
        ("Postgres is faster than SQLite.", {("faster", "postgres", "sqlite")}),
        ("Prefer Postgres over SQLite.", {("over", "postgres", "sqlite")}),
        ("Use SQLite instead of Postgres.", {("over", "sqlite", "postgres")}),
        ("It is better than that.", set()),  # no things named
        ("Lock first, then read.", {("before", "lock", "read")}),
        ("First lock, and then read the row.", {("before", "lock", "read")}),
    ],
)
def test_preferences_are_ordered_pairs(text: str, preferences: set[tuple[str, str, str]]) -> None:
    assert named(text).preferences == preferences


def test_names_that_share_nothing_contradict_and_others_do_not() -> None:
    assert conflict(named("plan A"), named("plan B")) == "A vs B"
    assert conflict(named("O(n)"), named("O(n^2)")) == "O(n) vs O(n2)"
    assert conflict(
        named("SQLite is better than Postgres."), named("Postgres is better than SQLite.")
    ) == ("sqlite better than postgres vs postgres better than sqlite")
    assert conflict(named("Prefer Postgres over SQLite."), named("SQLite over Postgres.")) == (
        "postgres over sqlite vs sqlite over postgres"
    )
    assert conflict(named("Lock first, then read."), named("Read first, then lock.")) == (
        "lock before read vs read before lock"
    )
    assert conflict(named("Python 3.10"), named("Python 3.1")) == "3.10 vs 3.1"
    assert conflict(named("from 2.4.1 to 2.5.0"), named("2.5.0")) is None
    # a name on one side only, names in common, or another comparative: no contradiction
    assert conflict(named("plan A"), named("the plan")) is None
    assert conflict(named("plan A or plan B"), named("plan B")) is None
    assert (
        conflict(named("Postgres is faster than SQLite."), named("SQLite is slower than Postgres."))
        is None
    )
    assert conflict(Named(), Named()) is None


@pytest.mark.parametrize(
    ("text", "comparisons"),
    [
        ("Arrays are faster than linked lists.", [("faster", {"arrays"}, {"linked", "lists"})]),
        (
            "Linked lists iterate faster than arrays.",
            [("faster", {"linked", "lists", "iterate"}, {"arrays"})],
        ),
        ("Lists are faster to iterate than arrays.", [("faster", {"lists"}, {"arrays"})]),
        # "worse" and "less X" turned round, as preferences are
        ("Tabs are worse than spaces.", [("better", {"spaces"}, {"tabs"})]),
        ("C is less safe than Rust.", [("more safe", {"rust"}, {"c"})]),
        # within its clause; no comparison in "other than" or "rather than"
        ("For reads, X is faster than Y; it is simple.", [("faster", {"x"}, {"y"})]),
        ("Anything other than Postgres.", []),
    ],
)
def test_comparisons_are_the_words_of_their_two_sides(
    text: str, comparisons: list[tuple[str, set[str], set[str]]]
) -> None:
    expected = {(how, frozenset(a), frozenset(b)) for how, a, b in comparisons}
    assert named(text).comparisons == expected


@pytest.mark.parametrize(
    ("text", "sequences"),
    [
        ("An index on (user_id, created_at).", {("user_id", "created_at")}),
        ("Call f(a, b).", {("a", "b")}),
        ("Deploy in the order build, test, then release.", {("build", "test", "release")}),
        ("Sort by priority, then age.", {("priority", "age")}),
        ("ORDER BY created_at, id", {("created_at", "id")}),
        # reasons in brackets, or a list in a sentence, have no order to keep
        ("Use Redis (fast, simple).", set()),
        ("We need speed, safety and cost.", set()),
    ],
)
def test_sequences_are_lists_whose_order_is_their_meaning(
    text: str, sequences: set[tuple[str, ...]]
) -> None:
    assert named(text).sequences == sequences


def test_comparisons_and_sequences_turned_round_contradict() -> None:
    assert conflict(
        named("Arrays are faster than linked lists."),
        named("Linked lists iterate faster than arrays."),
    ) == ("arrays faster than linked/lists vs linked/lists faster than arrays")
    assert conflict(named("on (user_id, created_at)"), named("on (created_at, user_id)")) == (
        "(user_id, created_at) vs (created_at, user_id)"
    )
    # the same order, a different comparative, or another list: no contradiction
    assert conflict(named("on (user_id, created_at)"), named("on (user_id, created_at)")) is None
    assert conflict(named("X is faster than Y."), named("Y is slower than X.")) is None
    assert conflict(named("on (a_1, b_1)"), named("on (b_1, c_1)")) is None


@pytest.mark.parametrize(
    "both_ways",
    [
        "SQLite is better than Postgres for small apps; Postgres is better than SQLite for big.",
        "Arrays are faster than lists for reads; lists are faster than arrays for inserts.",
        "Use (a_1, b_1) for reads and (b_1, a_1) for writes.",
    ],
)
def test_an_answer_that_orders_a_pair_both_ways_contradicts_neither_itself_nor_a_half(
    both_ways: str,
) -> None:
    """An answer that gives each order under its own condition: two agents giving it agree,
    and it holds either half of it (it contradicted itself before)."""
    halves = [both_ways.split(";")[0], both_ways.split(" and ")[0]]
    assert conflict(named(both_ways), named(both_ways)) is None
    for half in halves:
        assert conflict(named(both_ways), named(half)) is None
        assert conflict(named(half), named(both_ways)) is None


@pytest.mark.parametrize(
    ("text", "expressions", "variables"),
    [
        ("The loop runs n - 1 times.", {"n-1"}, set()),
        ("It runs n+1 times; i goes to k.", {"n+1"}, {"i", "k"}),
        ("From 0 to n - 1.", {"n-1"}, set()),
        # no expression: a word, a version, a decimal, a range, the article
        ("a-1 rated", set(), set()),
        ("node-1 and x-1.5 and 10-20", set(), set()),
        ("Use a hash map.", set(), set()),
    ],
)
def test_expressions_are_a_letter_plus_or_minus_a_number(
    text: str, expressions: set[str], variables: set[str]
) -> None:
    found = named(text)
    assert (found.expressions, found.variables) == (expressions, variables)


def test_another_count_of_the_same_variable_contradicts() -> None:
    assert conflict(named("runs n - 1 times"), named("runs n times")) == "n-1 vs n"
    assert conflict(named("runs n times"), named("runs n - 1 times")) == "n-1 vs n"
    assert conflict(named("runs n + 1 times"), named("runs n-1 times")) == "n+1 vs n-1"
    # the same count, another variable, or the variable said both ways: no contradiction
    assert conflict(named("runs n - 1 times"), named("runs n-1 times")) is None
    assert conflict(named("runs n - 1 times"), named("runs k times")) is None
    assert conflict(named("n nodes and n - 1 edges"), named("n nodes")) is None


@pytest.mark.parametrize(
    ("text", "equations"),
    [
        ("2+2=4", {("2+2", 4)}),
        ("2 + 2 = 4.", {("2+2", 4)}),
        ("3 × 4 = 12 and 10/4 = 2.5", {("3*4", 12), ("10/4", Fraction(5, 2))}),
        ("2+2=10; 3*4 = 15; 6*7 = 18},", {("2+2", 10), ("3*4", 15), ("6*7", 18)}),
        ("if x == 3", set()),  # a comparison, no arithmetic
        ("2 + 2 == 4", set()),
        ("a = 5", set()),
        ("version 1.2.3=4", set()),
        ("2*3=3+3=6", set()),  # a chain: its middle is no result
        ("4", set()),
    ],
)
def test_equations_are_arithmetic_set_equal_to_a_number(
    text: str, equations: set[tuple[str, Fraction]]
) -> None:
    assert named(text).equations == equations


def test_the_same_arithmetic_with_another_result_contradicts() -> None:
    """An agent's "2+2=4" against "2+2=10; 3*4 = 15; 6*7 = 18},": folded, every number of the
    first is among the second's, and the two were taken to agree."""
    assert conflict(named("2+2=4"), named("2+2=10; 3*4 = 15; 6*7 = 18},")) == "2+2=4 vs 2+2=10"
    assert conflict(named("2+2=10; 3*4 = 15"), named("2 + 2 = 4")) == "2+2=10 vs 2+2=4"
    assert conflict(named("2+2=4"), named("2 + 2 = 4.0")) is None  # the same result
    assert conflict(named("2+2=4"), named("3*4=12")) is None  # other arithmetic


def test_numbers_alone_state_their_results_not_the_operands_they_restate() -> None:
    four = frozenset({Fraction(2), Fraction(4)})
    assert stated(named("2 + 2 = 4"), {"": four}) == {4}
    assert stated(named("2, 4"), {"": four}) == four  # no equation: every number
    junk = frozenset(map(Fraction, (2, 3, 4, 6, 7, 10, 15, 18)))
    assert stated(named("2+2=10; 3*4 = 15; 6*7 = 18"), {"": junk}) == {10, 15, 18}


def test_hostile_text_is_read_quickly() -> None:
    texts = [
        "A " * 50_000,
        "x is " * 20_000 + "better than y",
        "O(" * 30_000,
        ("a" * 39 + " over ") * 5_000,
        "x faster than " * 20_000,
        "(a_1, " * 20_000,
        "in the order " + "a b c, " * 20_000,
        "n - 1 " * 20_000,
        "1+" * 30_000 + "=5",
        "1+1=1" + "1" * 50_000,
    ]
    started = time.perf_counter()
    for text in texts:
        named(text)
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize(
    ("text", "hedged"),
    [
        ("It is unknown whether P equals NP.", True),
        ("Nobody knows if the bug is in the parser.", True),
        ("P vs NP is an open problem.", True),
        ("It is not yet proven whether the sort is stable.", True),
        ("The cause is unknown.", False),  # settles what it says
        ("Use SQLite; whether Postgres is needed later is an open question.", False),  # a part
        ("P equals NP.", False),
    ],
)
def test_a_hedge_is_an_answer_that_leaves_the_question_open(text: str, hedged: bool) -> None:
    assert named(text).hedged is hedged


def test_a_hedge_against_an_answer_that_settles_it_contradicts() -> None:
    said = "one leaves the question open, the other settles it"
    assert conflict(named("It is unknown whether P equals NP."), named("P equals NP.")) == said
    assert conflict(named("P equals NP."), named("P vs NP is an open problem.")) == said
    assert (
        conflict(named("It is unknown whether P = NP."), named("P vs NP is open problem.")) is None
    )
