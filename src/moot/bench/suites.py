"""Question suites for `moot bench`: built-in ones generated in code, reasoning-gym's
(`gym:DATASET`, `moot.bench.gym`) and a user's JSONL file.

A question's scorer judges the answer extracted from a reply (`moot.deliberation.answers`):
  - `exact`    equal after answer normalisation ("1,000" = "1000", "(B)" = "B", "Paris" = "paris"),
               or the same claim by moot's agreement relation (`deliberation.claims`: "The
               capital is Paris." is "Paris"; "not safe" is never "safe");
  - `numeric`  both are numbers within `tolerance` (absolute) or `relative_tolerance`;
  - `regex`    the question's `answer` is a regular expression that must match the whole extracted
               answer (the user's own pattern: write it without nested repeats);
  - `dataset`  the question's own `judge` (a reasoning-gym dataset's scorer); not for JSONL lines.

A user's suite is a JSONL file, one question per line:
    {"question": "What is 2+3*4?", "answer": 14, "scorer": "numeric"}
with optional `id`, `scorer`, `tolerance`, `relative_tolerance` and `metadata` (kept, not read).
Blank lines are skipped; anything else wrong stops the load with the line number.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, get_args

from msgspec import Struct

from moot.bench.gym import GYM_PREFIX, gym_suite
from moot.config import read_lines
from moot.deliberation.answers import normalize_answer, parse_number
from moot.deliberation.claims import Relation, compare, extract_claim
from moot.errors import ConfigError
from moot.text import plural

__all__ = [
    "BUILTIN_SUITES",
    "Judge",
    "Question",
    "ScorerName",
    "Suite",
    "arithmetic_suite",
    "load_suite",
    "score_exact",
    "score_numeric",
    "score_regex",
    "suite_for",
]

ScorerName = Literal["exact", "numeric", "regex"]
SCORERS: tuple[str, ...] = get_args(ScorerName)  # a JSONL suite's choice
Judge = Callable[[str | None], bool]
_FIELDS = ("id", "question", "answer", "scorer", "tolerance", "relative_tolerance", "metadata")


def score_exact(answer: str | None, expected: str) -> bool:
    """True when the answer equals the expected one after normalisation, or claims the same
    by moot's agreement relation (nothing contradicts, and the wording confirms it)."""
    if answer is None or not answer.strip():
        return False
    if normalize_answer(answer).key == normalize_answer(expected).key:
        return True
    return compare(extract_claim(answer), extract_claim(expected)).relation is Relation.AGREE


def score_numeric(
    answer: str | None, expected: str, tolerance: float = 0.0, relative_tolerance: float = 0.0
) -> bool:
    """True when both are numbers and within either tolerance (both 0: exactly equal)."""
    got = None if answer is None else parse_number(answer)
    want = parse_number(expected)
    if got is None or want is None:
        return False
    if got == want:
        return True
    return math.isclose(float(got), float(want), rel_tol=relative_tolerance, abs_tol=tolerance)


def score_regex(answer: str | None, pattern: str) -> bool:
    """True when the pattern matches the whole answer (surrounding spaces ignored)."""
    return answer is not None and re.fullmatch(pattern, answer.strip()) is not None


def _asked(question: Question) -> tuple[object, ...]:
    return (
        question.id,
        question.question,
        question.answer,
        question.scorer,
        question.tolerance,
        question.relative_tolerance,
    )


class Question(Struct, frozen=True):
    id: str
    question: str
    answer: str
    scorer: ScorerName | Literal["dataset"] = "exact"
    tolerance: float = 0.0
    relative_tolerance: float = 0.0
    metadata: Any = None
    judge: Judge | None = None  # scorer "dataset"

    def __post_init__(self) -> None:
        if (self.scorer == "dataset") != (self.judge is not None):
            raise ValueError("a question has a judge exactly when its scorer is 'dataset'")

    def __eq__(self, other: object) -> bool:
        """The same question whatever its metadata and judge (a suite made again holds new
        judge objects for the same entries)."""
        if not isinstance(other, Question):
            return NotImplemented
        return _asked(self) == _asked(other)

    def __hash__(self) -> int:
        return hash(_asked(self))

    def score(self, answer: str | None) -> bool:
        """Is `answer` (as extracted from a reply; None when none was found) right?"""
        if self.judge is not None:
            return self.judge(answer)
        if self.scorer == "numeric":
            return score_numeric(answer, self.answer, self.tolerance, self.relative_tolerance)
        if self.scorer == "regex":
            return score_regex(answer, self.answer)
        return score_exact(answer, self.answer)


class Suite(Struct, frozen=True):
    name: str
    questions: tuple[Question, ...]

    def take(self, n: int | None) -> Suite:
        """The first `n` questions (all when n is None)."""
        return self if n is None else Suite(self.name, self.questions[:n])


def arithmetic_suite(n: int = 100, seed: int = 0) -> Suite:
    """Du et al. (2023)'s arithmetic task: a+b*c+d-e*f with six integers from 0 to 29, in their
    words, with the exact answer. The same n and seed give the same questions."""
    if n < 1:
        raise ConfigError(f"the arithmetic suite needs at least one question, got --n {n}")
    rng = random.Random(seed)
    questions = []
    for index in range(n):
        a, b, c, d, e, f = (rng.randint(0, 29) for _ in range(6))
        questions.append(
            Question(
                id=f"arithmetic-{seed}-{index}",
                question=(
                    f"What is the result of {a}+{b}*{c}+{d}-{e}*{f}? "
                    "Make sure to state your answer at the end of the response."
                ),
                answer=str(a + b * c + d - e * f),
                scorer="numeric",
            )
        )
    return Suite("arithmetic", tuple(questions))


BUILTIN_SUITES = {"arithmetic": arithmetic_suite}


def _tolerance(data: Mapping[str, Any], key: str, default: float, where: str) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ConfigError(f"{where}: {key!r} must be a number >= 0, got {value!r}")
    return float(value)


def _question(
    data: Any, where: str, number: int, scorer: ScorerName, tolerance: float, relative: float
) -> Question:
    if not isinstance(data, dict):
        raise ConfigError(
            f'{where}: expected a JSON object like {{"question": ..., "answer": ...}}'
        )
    unknown = sorted(set(data) - set(_FIELDS))
    if unknown:
        fields = "an unknown field" if len(unknown) == 1 else "unknown fields"
        raise ConfigError(f"{where}: {fields} {unknown}; allowed: {', '.join(_FIELDS)}")
    text = data.get("question")
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{where}: 'question' must be a non-empty string")
    if "answer" not in data:
        raise ConfigError(f"{where}: no 'answer' field (the expected answer the scorer checks)")
    answer = data["answer"]
    if isinstance(answer, bool) or not isinstance(answer, str | int | float):
        raise ConfigError(f"{where}: 'answer' must be a string or a number, got {answer!r}")
    if isinstance(answer, float):
        answer = format(Decimal(repr(answer)), "f")  # 1e+20 as digits, which scorers read
    answer = str(answer)
    chosen = data.get("scorer", scorer)
    if chosen not in SCORERS:
        raise ConfigError(f"{where}: unknown scorer {chosen!r}; use one of {', '.join(SCORERS)}")
    if chosen == "numeric" and parse_number(answer) is None:
        raise ConfigError(f"{where}: the numeric scorer needs a number as 'answer', got {answer!r}")
    if chosen == "regex":
        try:
            re.compile(answer)
        except re.error as error:
            raise ConfigError(
                f"{where}: 'answer' is not a valid regular expression: {error}"
            ) from None
    identifier = data.get("id", f"line-{number}")
    if isinstance(identifier, bool) or not isinstance(identifier, str | int):
        raise ConfigError(f"{where}: 'id' must be a string or an integer, got {identifier!r}")
    return Question(
        id=str(identifier),
        question=text,
        answer=answer,
        scorer=chosen,
        tolerance=_tolerance(data, "tolerance", tolerance, where),
        relative_tolerance=_tolerance(data, "relative_tolerance", relative, where),
        metadata=data.get("metadata"),
    )


def load_suite(
    path: str | Path,
    scorer: ScorerName = "exact",
    tolerance: float = 0.0,
    relative_tolerance: float = 0.0,
) -> Suite:
    """A user's JSONL suite; `scorer` and the tolerances apply to lines that do not set their own.

    Raises ConfigError naming the file and line of the first problem."""
    path = Path(path)
    if scorer not in SCORERS:
        raise ConfigError(f"unknown scorer {scorer!r}; use one of {', '.join(SCORERS)}")
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for number, where, line in read_lines(path, "suite file"):
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            raise ConfigError(
                f"{where}: not valid JSON ({error.msg} at column {error.colno})"
            ) from None
        except (ValueError, RecursionError) as error:  # a 5,000-digit integer, deep nesting
            reason = str(error) or "nested too deeply"
            raise ConfigError(f"{where}: not usable JSON ({reason})") from None
        question = _question(data, where, number, scorer, tolerance, relative_tolerance)
        if question.id in seen:
            raise ConfigError(
                f"{where}: id {question.id!r} is already used on line {seen[question.id]}"
            )
        seen[question.id] = number
        questions.append(question)
    if not questions:
        raise ConfigError(f"suite file {path} holds no questions (one JSON object per line)")
    return Suite(path.stem, tuple(questions))


def suite_for(spec: str, n: int | None = None, seed: int = 0) -> Suite:
    """`--suite SPEC`: a built-in suite's name or `gym:DATASET` (n questions from the seed, 100 by
    default) or the path of a JSONL file (its first n questions, all by default)."""
    if spec in BUILTIN_SUITES:
        return BUILTIN_SUITES[spec](100 if n is None else n, seed)
    if spec.startswith(GYM_PREFIX):
        return gym_suite(spec.removeprefix(GYM_PREFIX), 100 if n is None else n, seed)
    if spec.endswith(".jsonl") or Path(spec).is_file():
        suite = load_suite(spec)
        if n is not None and n > len(suite.questions):  # a smaller sample than asked for
            raise ConfigError(
                f"suite file {spec} has {plural(len(suite.questions), 'question')}; --n {n} asks "
                "for more: "
                f"give --n {len(suite.questions)} or fewer, or leave --n out to run them all"
            )
        return suite.take(n)
    raise ConfigError(
        f"unknown suite {spec!r}: use one of {', '.join(BUILTIN_SUITES)}, {GYM_PREFIX}DATASET or "
        "the path of a .jsonl file with 'question' and 'answer' on each line"
    )
