"""Do the agents' answers already agree? A cheap, deterministic check first (issue 9: "Agreement
is noticed when it happens"), a judge only when it cannot tell.

Answers are normalised (markup out, Unicode folded, case and punctuation dropped), compared for
an exact match, then scored for similarity: the lower of two measures, so that both must be
high for a match. Word order counts (difflib's ratio over the word sequences) and so does the
vocabulary (Jaccard over the word sets): "use SQLite, not Postgres" and "use Postgres, not
SQLite" share every word but not their order, and score low. Two cheap guards send a pair that
looks alike but may mean the opposite to a judge instead: one answer negates and the other
does not, or their numbers differ.

`keeps_agreed_content` applies the same idea to a synthesis: the words every agent's answer
holds (beyond the task's own) must survive into it, so a synthesis that drops "Paris" from three
answers that said "Paris" is caught.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from moot.deliberation.markup import strip_markup

__all__ = [
    "AGREE_AT",
    "DIFFER_BELOW",
    "Agreement",
    "check_agreement",
    "keeps_agreed_content",
    "normalize_answer",
    "similarity",
]

AGREE_AT = 0.85  # at or above: the two answers say the same thing
DIFFER_BELOW = 0.5  # below: they clearly differ; in between, a judge decides

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


def normalize_answer(text: str) -> str:
    """The answer's words, lower case, single-spaced: markup, punctuation, case and Unicode
    look-alikes do not make two answers different."""
    return " ".join(_words(text))


def similarity(a: str, b: str) -> float:
    """From 0.0 (nothing alike) to 1.0 (the same words in the same order), rounded to 3 places
    so that a journal replays to the same groups."""
    return _score(_words(a)[:_MAX_WORDS], _words(b)[:_MAX_WORDS])


def _score(a: list[str], b: list[str]) -> float:
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    ordered = difflib.SequenceMatcher(None, a, b).ratio()
    shared = len(set(a) & set(b)) / len(set(a) | set(b))
    return round(min(ordered, shared), 3)


def _conflict(a: list[str], b: list[str]) -> bool:
    """Alike in wording, maybe opposite in meaning: only one negates, or the numbers differ."""
    negated_a = any(w in _NEGATIONS or w.endswith("n't") for w in a)
    negated_b = any(w in _NEGATIONS or w.endswith("n't") for w in b)
    numbers_a = Counter(w for w in a if _NUMBER.fullmatch(w))
    numbers_b = Counter(w for w in b if _NUMBER.fullmatch(w))
    return negated_a != negated_b or numbers_a != numbers_b


@dataclass(frozen=True)
class Agreement:
    """How far the answers agree.

    `agents` orders the rows and columns of `scores` (sorted). `groups` are the agents whose
    answers all match pairwise, largest first; `agreed` means one group holds every agent (and
    there are at least two). `needs_judge` means the check cannot tell: no agreement, yet no
    pair clearly differs (every score at least `differ_below`, or a pair alike in words but
    possibly opposite in meaning)."""

    agreed: bool
    method: Literal["exact", "similar", "none"]
    agents: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...]
    scores: tuple[tuple[float, ...], ...]
    needs_judge: bool

    def score(self, a: str, b: str) -> float:
        """The similarity of agent `a`'s answer to agent `b`'s."""
        return self.scores[self.agents.index(a)][self.agents.index(b)]


def check_agreement(
    answers: Mapping[str, str], *, agree_at: float = AGREE_AT, differ_below: float = DIFFER_BELOW
) -> Agreement:
    """Compare every pair of `answers` (agent -> answer text) and group those that match."""
    if not 0.0 <= differ_below <= agree_at <= 1.0:
        raise ValueError(
            f"need 0 <= differ_below ({differ_below}) <= agree_at ({agree_at}) <= 1; "
            "lower differ_below or raise agree_at"
        )
    agents = tuple(sorted(answers))
    words = [_words(answers[a])[:_MAX_WORDS] for a in agents]
    n = len(agents)
    scores = [[1.0] * n for _ in range(n)]
    match = [[True] * n for _ in range(n)]
    unsure = False
    for i in range(n):
        for j in range(i + 1, n):
            score = _score(words[i], words[j])
            scores[i][j] = scores[j][i] = score
            conflict = score >= agree_at and _conflict(words[i], words[j])
            match[i][j] = match[j][i] = score >= agree_at and not conflict
            unsure = unsure or conflict
    # an agent joins the first group whose every member it matches (complete linkage: no chain
    # of near-matches pulls two different answers into one group)
    groups: list[list[int]] = []
    for i in range(n):
        for group in groups:
            if all(match[i][j] for j in group):
                group.append(i)
                break
        else:
            groups.append([i])
    groups.sort(key=lambda g: (-len(g), g[0]))
    agreed = n >= 2 and len(groups) == 1
    exact = agreed and all(w == words[0] for w in words)
    pairs = [scores[i][j] for i in range(n) for j in range(i + 1, n)]
    needs_judge = not agreed and n >= 2 and (all(s >= differ_below for s in pairs) or unsure)
    return Agreement(
        agreed=agreed,
        method="exact" if exact else "similar" if agreed else "none",
        agents=agents,
        groups=tuple(tuple(agents[i] for i in g) for g in groups),
        scores=tuple(tuple(row) for row in scores),
        needs_judge=needs_judge,
    )


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
