"""Bench suites: the generated arithmetic suite, a user's JSONL suite, and the scorers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from moot.bench.suites import (
    Question,
    arithmetic_suite,
    load_suite,
    score_exact,
    score_numeric,
    score_regex,
    suite_for,
)
from moot.deliberation.answers import extract_answer
from moot.errors import ConfigError


def test_arithmetic_suite_is_seeded_and_its_answers_are_right() -> None:
    suite = arithmetic_suite(50, seed=3)
    assert suite.name == "arithmetic" and len(suite.questions) == 50
    assert suite == arithmetic_suite(50, seed=3)
    assert suite != arithmetic_suite(50, seed=4)
    assert len({q.id for q in suite.questions}) == 50
    for question in suite.questions:
        match = re.fullmatch(
            r"What is the result of (\d+)\+(\d+)\*(\d+)\+(\d+)-(\d+)\*(\d+)\? "
            r"Make sure to state your answer at the end of the response\.",
            question.question,
        )
        assert match is not None, question.question
        a, b, c, d, e, f = (int(x) for x in match.groups())
        assert all(0 <= x <= 29 for x in (a, b, c, d, e, f))
        assert int(question.answer) == a + b * c + d - e * f
        assert question.score(question.answer)
        reply = extract_answer(f"Step by step...\nSo the result is {int(question.answer):,}.")
        assert reply is not None and question.score(reply.text)
        assert not question.score(str(int(question.answer) + 1))
    assert arithmetic_suite(5, seed=3).questions == suite.questions[:5]
    with pytest.raises(ConfigError, match="at least one question"):
        arithmetic_suite(0)


def test_scorers() -> None:
    assert (
        score_exact("1,000", "1000") and score_exact("(B)", "B") and score_exact("PARIS.", "Paris")
    )
    assert not score_exact("Rome", "Paris") and not score_exact(None, "Paris")
    assert score_numeric("$3.14", "3.14159", tolerance=0.01)
    assert not score_numeric("3.14", "3.14159")
    assert score_numeric("1,000,100", "1000000", relative_tolerance=0.001)
    assert score_numeric("3/4", "0.75") and not score_numeric("three", "3")
    assert not score_numeric(None, "3")
    assert score_regex(" 42 ", r"4\d") and not score_regex("421", r"4\d")
    assert not score_regex(None, ".*")


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_load_a_users_suite(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            json.dumps({"question": "Capital of France?", "answer": "Paris"}),
            "",
            json.dumps(
                {
                    "id": "pi",
                    "question": "Pi to 2 places?",
                    "answer": 3.14,
                    "scorer": "numeric",
                    "tolerance": 0.005,
                }
            ),
            json.dumps(
                {
                    "question": "A prime above 40?",
                    "answer": "4[137]",
                    "scorer": "regex",
                    "metadata": {"source": "me"},
                }
            ),
        ],
    )
    suite = load_suite(path)
    assert suite.name == "mine"
    assert [q.id for q in suite.questions] == ["line-1", "pi", "line-4"]
    capital, pi, prime = suite.questions
    assert capital.scorer == "exact" and capital.score("paris") and not capital.score("Lyon")
    assert pi.answer == "3.14" and pi.score("3.141") and not pi.score("3.2")
    assert prime.score("43") and not prime.score("42") and prime.metadata == {"source": "me"}


def test_suite_wide_scorer_applies_where_a_line_sets_none(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            json.dumps({"question": "q1", "answer": "10"}),
            json.dumps({"question": "q2", "answer": "x", "scorer": "exact"}),
        ],
    )
    suite = load_suite(path, scorer="numeric", tolerance=0.5)
    assert [q.scorer for q in suite.questions] == ["numeric", "exact"]
    assert suite.questions[0].score("10.4") and not suite.questions[0].score("10.6")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: not valid JSON"),
        ("[1, 2]", "line 2: expected a JSON object"),
        ('{"answer": "x"}', "line 2: 'question' must be a non-empty string"),
        ('{"question": "q"}', "line 2: no 'answer' field"),
        ('{"question": "q", "answer": null}', "line 2: 'answer' must be a string or a number"),
        ('{"question": "q", "answer": true}', "line 2: 'answer' must be a string or a number"),
        ('{"question": "q", "answer": "x", "scorer": "fuzzy"}', "unknown scorer 'fuzzy'"),
        ('{"question": "q", "answer": "ten", "scorer": "numeric"}', "needs a number as 'answer'"),
        ('{"question": "q", "answer": "(", "scorer": "regex"}', "not a valid regular expression"),
        ('{"question": "q", "answer": "x", "tolerance": -1}', "'tolerance' must be a number >= 0"),
        ('{"question": "q", "answer": "x", "answr": "y"}', r": an unknown field \['answr'\]"),
        ('{"question": "q", "answer": "x", "a": 1, "b": 2}', r": unknown fields \['a', 'b'\]"),
        (
            '{"question": "q", "answer": "x", "id": "line-1"}',
            "id 'line-1' is already used on line 1",
        ),
        ('{"question": "q", "answer": 1' + "0" * 5000 + "}", "line 2: not usable JSON"),
        (
            '{"question": "q", "answer": ' + "[" * 100_000 + "]" * 100_000 + "}",
            "line 2: not usable",
        ),
    ],
)
def test_bad_lines_name_their_line(tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path, [json.dumps({"question": "ok", "answer": "1"}), line])
    with pytest.raises(ConfigError, match=message) as caught:
        load_suite(path)
    assert str(path) in str(caught.value)


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_suite(tmp_path / "missing.jsonl")
    with pytest.raises(ConfigError, match="holds no questions"):
        load_suite(_write(tmp_path, ["", "  "]))
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="as UTF-8"):
        load_suite(binary)
    with pytest.raises(ConfigError, match="unknown scorer"):
        load_suite(binary, scorer="fuzzy")  # type: ignore[arg-type]


def test_suite_for(tmp_path: Path) -> None:
    assert len(suite_for("arithmetic").questions) == 100
    assert suite_for("arithmetic", n=7, seed=2) == arithmetic_suite(7, seed=2)
    path = _write(tmp_path, [json.dumps({"question": f"q{i}", "answer": i}) for i in range(5)])
    assert len(suite_for(str(path), n=3).questions) == 3
    assert len(suite_for(str(path)).questions) == 5
    assert len(suite_for(str(path), n=5).questions) == 5
    # a smaller sample than asked for is not run silently
    with pytest.raises(ConfigError, match=r"has 5 questions; --n 6 asks for more: give --n 5"):
        suite_for(str(path), n=6)
    (tmp_path / "one").mkdir()
    one = _write(tmp_path / "one", [json.dumps({"question": "q", "answer": 1})])
    with pytest.raises(ConfigError, match=r"has 1 question; --n 2 asks for more: give --n 1"):
        suite_for(str(one), n=2)
    with pytest.raises(ConfigError, match="unknown suite 'gsm8k': use one of arithmetic"):
        suite_for("gsm8k")


def test_float_answers_become_digits(tmp_path: Path) -> None:
    path = _write(tmp_path, ['{"question": "q", "answer": 1e20, "scorer": "numeric"}'])
    question = load_suite(path).questions[0]
    assert question.answer == "100000000000000000000"
    assert question.score("100,000,000,000,000,000,000")


def test_question_default_scorer_is_exact() -> None:
    question = Question(id="q", question="Colour of the sky?", answer="Blue")
    assert question.score("blue!") and not question.score("green")
