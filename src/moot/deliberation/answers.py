"""Final answers for `vote`, the claims and the bench: extract one from a reply and normalise it.
Grouping answers, and deciding whether two agree, is `claims` (one agreement relation for every
protocol).

Model text is untrusted. Only the last `MAX_REPLY_CHARS` characters of a reply are read (the final
answer sits at the end), every pattern runs in linear time, and an extracted answer is cut to
`MAX_ANSWER_CHARS`.

The extraction ladder, first match wins:
  1. `tag`          the last `<answer>...</answer>` with something inside;
  2. `boxed`        the last `\\boxed{...}` with balanced braces;
  3. `answer_line`  the last line reading "Answer: X" or "Final answer: X" (X may sit on the next
                    line), or containing "the (final) answer is X" (X up to the end of its
                    sentence or clause);
  4. `last_line`    the last non-empty line, when it is a bare number or option letter or holds no
                    number at all;
     `last_number`  otherwise the last number on that line ("So the total is 42 apples." -> 42).

Normalisation gives a key; equal keys are the same answer:
  - numbers: "1,000", "1000.0", "$1000" and "1000 dollars" are one exact fraction ("0.75" and
    "3/4" too; no exponents); a "%" or a unit of one or two words is dropped ("50%" equals "50");
  - options A to J: "B", "(B)", "B)", "[B]", "Option B", "(B) Paris" and "B) Paris" are B
    ("B. Paris" is not: it reads like an initial);
  - anything else: Unicode NFKC, case folded, punctuation removed, spaces collapsed.
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction
from typing import Literal

from msgspec import Struct

from moot.text import clean_text

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_REPLY_CHARS",
    "ExtractedAnswer",
    "NormalizedAnswer",
    "extract_answer",
    "normalize_answer",
    "parse_number",
]

MAX_REPLY_CHARS = 32_000
MAX_ANSWER_CHARS = 500
_MAX_DIGITS = 100  # int() refuses more than 4,300 digits; no real answer needs more than this
_BOXED_TRIES = 8  # unbalanced boxes tried before giving up, so the work stays linear

AnswerSource = Literal["tag", "boxed", "answer_line", "last_line", "last_number"]
AnswerKind = Literal["number", "choice", "text"]


class ExtractedAnswer(Struct, frozen=True):
    text: str
    source: AnswerSource


class NormalizedAnswer(Struct, frozen=True):
    kind: AnswerKind
    key: str


# -- extraction ---------------------------------------------------------------------------------

_TAG_OPEN = re.compile(r"<answer\s*>", re.IGNORECASE)
_TAG_CLOSE = re.compile(r"</answer\s*>", re.IGNORECASE)
_ANSWER_LINE = re.compile(r"[\s*#>_-]*(?:final\s+answer|answer)[\s*_]*[:：](.*)", re.IGNORECASE)
_ANSWER_IS = re.compile(r"\bthe\s+(?:final\s+)?answer\s+is\b[\s*_:：]*", re.IGNORECASE)
# A minus counts only where it cannot be a hyphen ("COVID-19" is 19, "is -3" is -3).
_NUMBER_IN_TEXT = re.compile(r"(?:(?<!\w)[-−])?\d[\d,]*(?:\.\d+)?")
_CLAUSE_END = re.compile(r"[.,;!?](?:\s|$)")
# Every character str.isspace() accepts, plus markdown emphasis, code ticks and quotes: str.strip
# with an explicit set runs in C, where a loop over a hostile run of "*_*_..." would not.
_SPACES = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000"
)
_STRIP = _SPACES + "*_`\"'"


def _strip(text: str) -> str:
    return text.strip(_STRIP)


def _clean(text: str) -> str:
    """Strip markdown emphasis, code ticks, quotes and inline-math dollars around an answer."""
    text = _strip(text)
    if len(text) >= 2 and text[0] == "$" and text[-1] == "$" and text.count("$") == 2:
        text = _strip(text[1:-1])
    return text[:MAX_ANSWER_CHARS]


def _from_tag(text: str) -> str | None:
    closings = list(_TAG_CLOSE.finditer(text))
    if not closings:
        return None
    close = closings[-1]
    openings = [m for m in _TAG_OPEN.finditer(text, 0, close.start())]
    if not openings:
        return None
    return text[openings[-1].end() : close.start()]


def _from_boxed(text: str) -> str | None:
    # The search starts at the end of the text: `None` there would mean the same to rfind.
    end = len(text)  # pragma: no mutate
    for _ in range(_BOXED_TRIES):
        start = text.rfind("\\boxed{", 0, end)
        if start < 0:
            return None
        depth, i = 0, start + len("\\boxed")
        # Scan only as far as an answer can reach: a box that does not close by then is noise.
        limit = min(len(text), i + MAX_ANSWER_CHARS * 4)
        while i < limit:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    return text[start + len("\\boxed{") : i]
            i += 1
        end = start
    return None


def _after_answer_is(line: str) -> str | None:
    """X in "... the answer is X. More text", cut at the end of X's sentence or clause."""
    phrases = list(_ANSWER_IS.finditer(line))
    if not phrases:
        return None
    rest = line[phrases[-1].end() :]
    end = _CLAUSE_END.search(rest)
    return rest if end is None else rest[: end.start()]


def _from_answer_line(lines: list[str]) -> str | None:
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        marker = _ANSWER_LINE.match(line)
        if marker is not None:
            rest = marker.group(1)
            # "Final Answer: The final answer is 42." says 42.
            rest = _after_answer_is(rest) or rest
            if _clean(rest):
                return rest
            following = next((x for x in lines[index + 1 :] if _clean(x)), None)
            if following is not None:
                return following
            continue
        phrase = _after_answer_is(line)
        if phrase is not None and _clean(phrase):
            return phrase
    return None


def extract_answer(reply: str) -> ExtractedAnswer | None:
    """The final answer of a reply by the ladder in the module docstring; None when it is empty.
    Escape sequences and control characters are no part of an answer (`\x1b[1A` is not "1")."""
    text = clean_text(reply[-MAX_REPLY_CHARS:])
    found = _from_tag(text)
    if found is not None and _clean(found):
        return ExtractedAnswer(_clean(found), "tag")
    found = _from_boxed(text)
    if found is not None and _clean(found):
        return ExtractedAnswer(_clean(found), "boxed")
    lines = text.splitlines()
    found = _from_answer_line(lines)
    if found is not None and _clean(found):
        return ExtractedAnswer(_clean(found), "answer_line")
    last = next((_clean(x) for x in reversed(lines) if _clean(x)), None)
    if last is None:
        return None
    if normalize_answer(last).kind != "text":
        return ExtractedAnswer(last, "last_line")
    numbers = _NUMBER_IN_TEXT.findall(last)
    if numbers:
        return ExtractedAnswer(numbers[-1].rstrip(","), "last_number")
    return ExtractedAnswer(last, "last_line")


# -- normalisation ------------------------------------------------------------------------------

_CHOICE_BARE = re.compile(r"(?:(?:option|choice)\s*)?[(\[]?([A-J])[)\]]?[.:]?", re.IGNORECASE)
_CHOICE_WITH_TEXT = re.compile(r"[(\[]?([A-J])[)\]]\s+\S.*", re.DOTALL)
# a number and up to two words of its unit ("42 apples", "5 square meters"); a verb is no
# unit: "7 is prime" says something of 7 (to "Is 7 a prime number?", it answers)
_NUMBER = re.compile(
    r"(?P<sign>[-+]?)\s*(?:[$€£¥]\s*)?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+|\d+\s*/\s*\d+)"
    r"\s*(?:%|(?!(?i:is|are|was|were|isn|aren|wasn|weren|has|have|does|do|can|will|equals)\b)"
    r"[A-Za-z]+(?:\s+[A-Za-z]+)?)?\.?"
)
_LATEX = (("\\$", "$"), ("\\%", "%"), ("{,}", ","), ("\\!", ""), ("\\,", ""), ("−", "-"))


def _number_key(text: str) -> str | None:
    match = _NUMBER.fullmatch(text)
    if match is None:
        return None
    digits = match.group("num").replace(",", "").replace(" ", "")
    if sum(c.isdigit() for c in digits) > _MAX_DIGITS:
        return None
    try:
        value = Fraction(digits)
    except ZeroDivisionError:  # "1/0" is text, not a number
        return None
    if match.group("sign") == "-":
        value = -value
    return str(value)  # "3", "-7/2": exact, so 0.75 and 3/4 share a key


def parse_number(text: str) -> Fraction | None:
    """The exact value of an answer that normalises to a number ("$1,000.50" -> 2001/2), else
    None."""
    norm = normalize_answer(text)
    return Fraction(norm.key.removeprefix("number:")) if norm.kind == "number" else None


# ASCII's punctuation (Unicode category P), each to a space: most answers are ASCII, and
# str.translate reads them in C rather than character by character in Python
_ASCII_PUNCTUATION = str.maketrans(
    {chr(c): " " for c in range(128) if unicodedata.category(chr(c)).startswith("P")}
)


def _fold_text(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii():
        words = folded.translate(_ASCII_PUNCTUATION).split()
    else:
        words = "".join(
            " " if unicodedata.category(c).startswith("P") else c for c in folded
        ).split()
    # An answer made only of punctuation keeps its characters rather than vanishing.
    return " ".join(words) or " ".join(folded.split())


def normalize_answer(text: str) -> NormalizedAnswer:
    """The kind and grouping key of an extracted answer (rules in the module docstring)."""
    cleaned = _clean(text)
    for old, new in _LATEX:
        cleaned = cleaned.replace(old, new)
    cleaned = cleaned.strip()
    choice = _CHOICE_BARE.fullmatch(cleaned) or _CHOICE_WITH_TEXT.fullmatch(cleaned)
    if choice is not None:
        return NormalizedAnswer("choice", "choice:" + choice.group(1).upper())
    number = _number_key(cleaned)
    if number is not None:
        return NormalizedAnswer("number", "number:" + number)
    return NormalizedAnswer("text", "text:" + _fold_text(cleaned))
