"""Does a synthesis keep what the agents' answers agree on? (issue 9: the arena revised three
"Paris" answers into an instruction echo without "Paris".)

Whether answers agree with each other is `deliberation/claims` (`compare`, `group_claims`): the
one agreement relation of every protocol. What is left here is `keeps_agreed_content`, which
refine uses on a synthesis: the words every agent's answer holds (beyond the task's own) must
survive into it, so a synthesis that drops "Paris" from three answers that said "Paris" is
caught. A synthesis that says nearly what an answer says passes at once, unless the two differ
in a number or only one negates (alike in wording, maybe opposite in meaning); one that negates
where no answer does is caught ("should not migrate" from answers saying "should migrate").
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence

from moot.deliberation.markup import strip_markup

__all__ = ["AGREE_AT", "keeps_agreed_content"]

AGREE_AT = 0.85  # at or above: the synthesis says what an answer says

# Long answers are compared on their head: the cost of difflib grows with the product of the
# lengths, and an answer that long is a poor candidate for agreement by wording anyway.
_MAX_CHARS = 20_000
_MAX_WORDS = 400
_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W_]+(?:'[^\W_]+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATIONS = frozenset(
    "not no never none nothing nobody neither nor cannot can't don't doesn't didn't isn't "
    "aren't wasn't weren't won't wouldn't shouldn't mustn't without".split()
)
# Words too common to carry an answer's content.
_FILLER = frozenset(
    "a an the is are was were be been being of to in on at for with by and or but if so as it "
    "its this that these those there here i we you he she they my our your me us do does did "
    "will would should could can may might must has have had than then also just very".split()
)


# A markdown heading's title ("## PLAN", "## OPEN QUESTIONS -") and a list item's number
# ("1.") are structure, not content.
_HEADING = re.compile(r"^([ \t]*#{1,6})[^\n\-:—–]*", re.MULTILINE)
_LIST_ITEM = re.compile(r"^([ \t]*)\d{1,3}[.)][ \t]+", re.MULTILINE)


def _content_words(text: str) -> set[str]:
    text = _LIST_ITEM.sub(r"\1", _HEADING.sub(r"\1", text[:_MAX_CHARS]))
    return set(_words(text)) - _FILLER


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", strip_markup(text[:_MAX_CHARS]))
    return _WORD.findall(folded.replace("’", "'").casefold())


def _score(a: list[str], b: list[str]) -> float:
    # Equal lists (two empty ones too, where the share below would divide by zero) are alike.
    # The score is only compared with AGREE_AT, which 1.0 and any value above it pass alike.
    if a == b:
        return 1.0  # pragma: no mutate
    # One list empty: both measures are 0.
    ordered = difflib.SequenceMatcher(None, a, b).ratio()
    shared = len(set(a) & set(b)) / len(set(a) | set(b))
    return round(min(ordered, shared), 3)


def _negates(words: list[str]) -> bool:
    return any(w in _NEGATIONS or w.endswith("n't") for w in words)


def _conflict(a: list[str], b: list[str]) -> bool:
    """Alike in wording, maybe opposite in meaning: only one negates, or the numbers differ."""
    numbers_a = Counter(w for w in a if _NUMBER.fullmatch(w))
    numbers_b = Counter(w for w in b if _NUMBER.fullmatch(w))
    return _negates(a) != _negates(b) or numbers_a != numbers_b


def keeps_agreed_content(
    synthesis: str, answers: Sequence[str] | Mapping[str, str], *, task: str | None = None
) -> tuple[bool, str]:
    """Whether `synthesis` keeps what the agreeing `answers` have in common, and why not.

    The content every answer holds is its shared words beyond filler, heading titles ("## PLAN")
    and list numbers; those the task does not
    already contain are the point of the answer ("paris" for "What is the capital of France?"),
    so they must all appear in the synthesis (when there are no such words, as in "Use SQLite."
    to "Postgres or SQLite?", all the shared words must). Past five such words a paraphrase may
    drop a few: 80% must appear."""
    texts = list(answers.values()) if isinstance(answers, Mapping) else list(answers)
    if not texts:
        return True, "there are no answers to compare it with"
    mine = _words(synthesis)
    words = [_words(text) for text in texts]
    if any(_score(mine[:_MAX_WORDS], w[:_MAX_WORDS]) >= AGREE_AT for w in words):
        if not any(_conflict(mine[:_MAX_WORDS], w[:_MAX_WORDS]) for w in words):
            return True, "it says what the agents' answers say"
        # The answers' words are all there, but a negation no answer holds turns them around
        # ("should not migrate" from two "should migrate"): the shared words would not see it.
        if _negates(mine[:_MAX_WORDS]) and not any(_negates(w[:_MAX_WORDS]) for w in words):
            return False, "it negates what every agent's answer says"
    shared = set.intersection(*(_content_words(text) for text in texts))
    required = shared - set(_words(task or "")) or shared
    if not required:
        return True, "the answers share no content words to check it against"
    present = required & set(mine)
    missing = sorted(required - present)
    enough = not missing if len(required) <= 5 else len(present) >= 0.8 * len(required)
    if enough:
        return True, f"it keeps what every answer holds ({_list(sorted(present))})"
    return False, f"it leaves out {_list(missing)}, which every agent's answer holds"


def _list(words: list[str], limit: int = 8) -> str:
    shown = ", ".join(f"'{w}'" for w in words[:limit])
    return shown + (f" and {len(words) - limit} more" if len(words) > limit else "")
