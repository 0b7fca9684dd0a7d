"""Final answers for `vote`: the extraction ladder and normalisation (grouping is the claims'
relation: tests/deliberation/test_claims.py, tests/protocols/vote/test_vote_finding.py)."""

from __future__ import annotations

import sys
import time
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moot.deliberation.answers import (
    MAX_ANSWER_CHARS,
    extract_answer,
    normalize_answer,
    parse_number,
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
        ("I counted 1,250, more or less", "1,250", "last_number"),
        ("Answer: $42$", "42", "answer_line"),
        ("Answer: between $5 and $6", "between $5 and $6", "answer_line"),
        ("Work.\nFinal answer:\n42", "42", "answer_line"),
        ("Answer: 7\nchecking\nFinal answer:", "7", "answer_line"),  # the last one is empty
        ("\\boxed{5}", "5", "boxed"),
        ("\\boxed{42}", "42", "boxed"),
        ("We get $x^{2}=\\boxed{25}$", "25", "boxed"),
        ("\\boxed{4} then \\boxed{oops", "4", "boxed"),  # the unbalanced box is skipped
        ("<answer>12</answer> Then I wrote <answer> again", "12", "tag"),
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


def test_a_long_boxed_answer_is_found_but_a_box_closing_far_away_is_noise() -> None:
    long = "x" * 1_000
    found = extract_answer(f"\\boxed{{{long}}}")
    assert found is not None and (found.text, found.source) == (long[:MAX_ANSWER_CHARS], "boxed")
    far = extract_answer("\\boxed{" + "x" * 2_100 + "}")
    assert far is not None and far.source == "last_line"


@pytest.mark.parametrize("reply", ["", "   \n\t\n", "***", "$$"])
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
        ["0.75", "3/4", ".75", "$0.75$", "3 / 4"],
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
        ("-7", "7"),
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
    assert normalize_answer("?! ?").key == "text:?! ?"
    assert normalize_answer("9" * 100).kind == "number"  # a hundred digits still are
    # a number and its unit, but not a number and what is said of it
    assert normalize_answer("5 square meters").key == "number:5"
    assert normalize_answer("7 is prime").kind == "text"
    assert normalize_answer("7 Is Prime.").kind == "text"


def test_keys() -> None:
    assert normalize_answer("(b)").key == "choice:B"
    assert normalize_answer("$1,000.50").key == "number:2001/2"
    assert normalize_answer("- 7").key == "number:-7"
    assert normalize_answer("  New-York!  ").key == "text:new york"


def test_parse_number() -> None:
    assert parse_number("$1,000.50") == Fraction(2001, 2)
    assert parse_number("-3/4") == Fraction(-3, 4)
    assert parse_number("50%") == 50
    assert parse_number("Paris") is None
    assert parse_number("B") is None


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


def test_escape_sequences_are_no_part_of_an_answer() -> None:
    assert extract_answer("\x1b[1A") is None  # a cursor move is not the answer "1"
    found = extract_answer("The answer is 42\x1b[1A")
    assert found is not None and found.text == "42"
    titled = extract_answer("Answer: \x1b]0;pwned\x0742")
    assert titled is not None and titled.text == "42"
