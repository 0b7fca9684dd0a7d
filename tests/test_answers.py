"""Final answers for `vote`: extraction ladder, normalisation, grouping and the majority."""

from __future__ import annotations

import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moot.deliberation.answers import (
    MAX_ANSWER_CHARS,
    extract_answer,
    normalize_answer,
    tally,
    tally_replies,
)

# -- extraction ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "answer", "source"),
    [
        ("Working... 12 * 3 = 36\n<answer> 36 </answer>\nDone.", "36", "tag"),
        ("<ANSWER>first</ANSWER> then <answer>second</answer>", "second", "tag"),
        ("We get $\\boxed{\\frac{1}{2}}$ in the end.", "\\frac{1}{2}", "boxed"),
        ("\\boxed{3} was wrong, so \\boxed{4}", "4", "boxed"),
        ("Reasoning.\nAnswer: 42\nHope this helps!", "42", "answer_line"),
        ("**Final Answer:** (B)", "(B)", "answer_line"),
        ("Final answer:\n\n  1,000  \n", "1,000", "answer_line"),
        ("Final Answer: The final answer is 17. I hope it is correct.", "17", "answer_line"),
        ("Adding up, the answer is Paris, as expected.", "Paris", "answer_line"),
        ("Step one.\nStep two.\n\n-12\n\n", "-12", "last_line"),
        ("Thinking.\nSo the total is 1,250 apples.", "1,250", "last_number"),
        ("Some thoughts\nParis", "Paris", "last_line"),
        ("The variant is COVID-19", "19", "last_number"),
        ("it drops to -3", "-3", "last_number"),
    ],
)
def test_the_ladder(reply: str, answer: str, source: str) -> None:
    found = extract_answer(reply)
    assert found is not None
    assert (found.text, found.source) == (answer, source)


def test_ladder_precedence_tag_over_box_over_line() -> None:
    reply = "Answer: 1\n\\boxed{2}\n<answer>3</answer>"
    assert extract_answer(reply) == extract_answer("<answer>3</answer>")
    assert extract_answer("Answer: 1\n\\boxed{2}\nthe end").text == "2"  # type: ignore[union-attr]


def test_empty_tag_and_unbalanced_box_fall_through() -> None:
    found = extract_answer("<answer>  </answer>\n\\boxed{oops\nAnswer: 9")
    assert found is not None and (found.text, found.source) == ("9", "answer_line")


@pytest.mark.parametrize("reply", ["", "   \n\t\n", "***"])
def test_nothing_to_extract(reply: str) -> None:
    assert extract_answer(reply) is None


def test_hostile_input_stays_fast_and_bounded() -> None:
    payloads = [
        "a" * 2_000_000,
        "\\boxed{" * 200_000,
        "<answer>" * 200_000 + "x",
        "Answer:" + " " * 500_000,
        "1," * 500_000,
        "the answer is " * 100_000,
        "9" * 10_000,
        "- " * 300_000 + "$",
        "a" + " " * 1_000_000 + "b",
        "*_" * 500_000,
        "the " + " " * 500_000 + "answer",
    ]
    start = time.perf_counter()
    for payload in payloads:
        found = extract_answer(payload)
        assert found is None or len(found.text) <= MAX_ANSWER_CHARS
        normalize_answer(payload)
    assert time.perf_counter() - start < 5.0


def test_every_unicode_space_is_stripped() -> None:
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    for space in spaces:
        assert normalize_answer(f"{space}**42**{space}").key == "number:42", repr(space)
        found = extract_answer(f"Answer:{space}B{space}")
        assert found is not None and found.text == "B", repr(space)


def test_only_the_tail_is_read() -> None:
    reply = "Answer: early\n" + "filler line\n" * 10_000 + "done"
    assert extract_answer(reply).text == "done"  # type: ignore[union-attr]


# -- normalisation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "forms",
    [
        ["1,000", "1000", "1000.0", "$1000", "$1,000.00", "1000 dollars", "**1000**", "\\$1{,}000"],
        ["0.75", "3/4", ".75", "$0.75$"],
        ["-7", "−7", "- 7"],
        ["50%", "50", "50\\%"],
        ["(B)", "B)", "B", "[B]", "Option B", "(b)", "B) Paris", "(B) Paris is right", "B."],
        ["Paris", "paris", " PARIS. ", "Paris!", "'Paris'"],
        ["New  York", "new york", "New-York"],
    ],
)
def test_equal_forms_share_a_key(forms: list[str]) -> None:
    keys = {normalize_answer(form).key for form in forms}
    assert len(keys) == 1, {form: normalize_answer(form).key for form in forms}


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("1000", "100"),
        ("1,5", "15"),  # not a thousands separator: text, and not the number 15
        ("B", "C"),
        ("B. Paris", "B"),  # an initial, not an option
        ("3", "C"),
        ("1/0", "1"),
        ("Paris", "Rome"),
    ],
)
def test_different_answers_differ(one: str, other: str) -> None:
    assert normalize_answer(one).key != normalize_answer(other).key


def test_kinds() -> None:
    assert normalize_answer("1,000").kind == "number"
    assert normalize_answer("(C)").kind == "choice"
    assert normalize_answer("a red fox").kind == "text"
    assert normalize_answer("9" * 5_000).kind == "text"  # too long to be a number we parse
    assert normalize_answer("?!").key == "text:?!"  # punctuation only: kept, not emptied


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_integer_spellings_agree(n: int) -> None:
    plain = normalize_answer(str(n)).key
    assert normalize_answer(f"{n:,}").key == plain
    assert normalize_answer(f"{n}.0").key == plain
    assert normalize_answer(f"{n:,}.00 dollars").key == plain
    assert normalize_answer(str(n + 1)).key != plain


@given(st.text(max_size=300))
def test_any_text_normalises_and_extracts_without_error(text: str) -> None:
    norm = normalize_answer(text)
    assert norm.key.startswith(f"{norm.kind}:")
    found = extract_answer(text)
    assert found is None or found.text.strip()


# -- tally ----------------------------------------------------------------------------------------


def test_a_clear_majority() -> None:
    outcome = tally(["1,000", "1000", "$1000.00", "999", None])
    assert outcome.winner == "1,000"  # the first member, as extracted
    assert outcome.share == pytest.approx(3 / 5)
    assert outcome.total == 5 and outcome.answered == 4
    assert outcome.distribution == {"1,000": 3, "999": 1}
    assert outcome.consensus and not outcome.tie and outcome.tied == ()
    assert outcome.groups[0].members == (0, 1, 2)


def test_a_tie_goes_to_the_earliest_first_occurrence_and_is_reported() -> None:
    outcome = tally(["(C)", "B", "C", "b)"])
    assert outcome.winner == "(C)"
    assert outcome.tie and outcome.tied == ("(C)", "B")
    assert not outcome.consensus  # a 50/50 split is no consensus even at threshold 0.5
    assert outcome.as_dict()["tiebreak"] == "earliest first occurrence"
    assert tally(["B", "(C)", "C", "b)"]).winner == "B"


def test_missing_answers_count_against_the_share() -> None:
    outcome = tally(["7", None, None, "", "  "])
    assert outcome.winner == "7" and outcome.share == pytest.approx(0.2)
    assert outcome.answered == 1 and not outcome.consensus
    nobody = tally([None, None])
    assert nobody.winner is None and nobody.share == 0 and not nobody.consensus
    assert nobody.groups == () and tally([]).total == 0


def test_consensus_threshold() -> None:
    answers = ["4", "4", "4", "5", "6"]
    assert tally(answers, consensus_threshold=0.6).consensus
    assert not tally(answers, consensus_threshold=0.61).consensus
    with pytest.raises(ValueError, match="consensus_threshold"):
        tally(answers, consensus_threshold=0)
    with pytest.raises(ValueError, match=r"0\.\.100"):
        tally(answers, similarity_threshold=101)


def _word_overlap(a: str, b: str) -> float:
    left, right = set(a.lower().split()), set(b.lower().split())
    return 100 * len(left & right) / len(left | right)


def test_free_text_grouped_by_the_injected_similarity() -> None:
    answers = [
        "the cat sat on the mat",
        "The capital is Paris",
        "a cat sat on the mat",
        "the cat sat on a mat",
        "capital is Paris",
    ]
    plain = tally(answers)
    assert len(plain.groups) == 5 and plain.tie
    grouped = tally(answers, similarity=_word_overlap, similarity_threshold=60)
    assert grouped.winner == "the cat sat on the mat"
    assert grouped.distribution == {"the cat sat on the mat": 3, "The capital is Paris": 2}
    assert grouped.consensus


def test_similarity_never_merges_numbers_or_options() -> None:
    calls: list[tuple[str, str]] = []

    def everything_alike(a: str, b: str) -> float:
        calls.append((a, b))
        return 100.0

    outcome = tally(["12", "13", "(A)", "(B)", "foo", "bar"], similarity=everything_alike)
    assert [(g.answer, g.members) for g in outcome.groups] == [
        ("foo", (4, 5)),
        ("12", (0,)),
        ("13", (1,)),
        ("(A)", (2,)),
        ("(B)", (3,)),
    ]
    assert calls == [("foo", "bar")]


def test_tally_replies_extracts_first() -> None:
    replies = [
        "Let me think. 6*7 = 42.\nAnswer: 42",
        "I get \\boxed{42}",
        "<answer>41</answer>",
        None,
        "So the result is 42.0 in total.",
    ]
    outcome = tally_replies(replies)
    assert outcome.winner == "42" and outcome.distribution == {"42": 3, "41": 1}
    assert outcome.share == pytest.approx(0.6) and outcome.consensus


@given(st.lists(st.sampled_from(["1", "2", "3", "(A)", "x", None]), max_size=12), st.data())
def test_tally_invariants(answers: list[str | None], data: st.DataObject) -> None:
    outcome = tally(answers)
    counts = [g.count for g in outcome.groups]
    assert counts == sorted(counts, reverse=True)
    assert sum(counts) == outcome.answered == sum(a is not None for a in answers)
    if outcome.groups:
        assert outcome.share == counts[0] / len(answers)
        assert outcome.tie == (counts.count(counts[0]) > 1)
        # The winner is the tied group whose first member came earliest.
        top = [g for g in outcome.groups if g.count == counts[0]]
        assert outcome.winner == min(top, key=lambda g: g.members[0]).answer
    # Any order gives the same counts per answer.
    shuffled = data.draw(st.permutations(answers))
    assert sorted(g.count for g in tally(shuffled).groups) == sorted(counts)


def test_escape_sequences_are_no_part_of_an_answer() -> None:
    assert extract_answer("\x1b[1A") is None  # a cursor move is not the answer "1"
    found = extract_answer("The answer is 42\x1b[1A")
    assert found is not None and found.text == "42"
    titled = extract_answer("Answer: \x1b]0;pwned\x0742")
    assert titled is not None and titled.text == "42"
