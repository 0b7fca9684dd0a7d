"""What a reply copies from its prompts: the prompts' word trigrams, read once per prompt, and
which of a reply's words sit in a run of three words that a prompt (or the task) also holds
(deliberation/substance judges such a copy as an echo, issue 9); and moot's own markup in the
prompts, the fences around quoted material, whose ids a model may copy back as its answer; and the
list markers that number a copy ("#1: Is 7 a prime number?"), which are the copy's; the example
values of a JSON template in the prompts (`"counter_claims": ["up to 2"]`), which a reply may copy
with another number ("up to 10"); and a reply that copies itself: one long run of words over and
over (`looped`).

Everything here is linear in the words: a prompt's head (PROMPT_CAP) is read once and kept
(lru_cache: every agent of a round is asked the same system prompt, and a resume checks every
saved answer again), and a reply's trigrams are looked up in one C pass.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from typing import NamedTuple

__all__ = [
    "PROMPT_CAP",
    "WORD",
    "Fences",
    "Reading",
    "Trigrams",
    "clear_caches",
    "covered",
    "example_shape",
    "fence_echoes",
    "fold",
    "looped",
    "numbering",
    "read_prompts",
    "read_task",
]

PROMPT_CAP = 60_000  # how much of each prompt (and of the task) is read
WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
# Quoted material in a prompt is other agents' work, not instructions: an agent that agrees
# with it is not echoing the prompt. Openers name their nonce; the closer repeats it.
_QUOTE_OPEN = re.compile(r'<quoted\b[^>\n]{0,400}?\bid="([^"\n]{1,64})"[^>\n]{0,400}>')
Trigrams = frozenset[tuple[str, str, str]]


class Fences(NamedTuple):
    """moot's own markup in the prompts: the quote fences' ids (nonces moot drew, which no
    model saw before its prompt) and every word of the fences' tags (`quoted`, `from`, `id`,
    the label, the id), folded."""

    ids: frozenset[str]
    words: frozenset[str]


_NO_FENCES = Fences(frozenset(), frozenset())


class Reading(NamedTuple):
    """What the prompts hold, for telling a copy of them from a reply's own words."""

    grams: Trigrams  # the prompts' own word trigrams
    vocabulary: frozenset[str]  # the prompts' own words
    fences: Fences  # the fences around quoted material
    examples: frozenset[tuple[str, ...]] = frozenset()  # its template's values (example_shape)


def fold(text: str) -> str:
    # NFKC folds full-width and ligature look-alikes; casefold lower-cases for comparison
    return unicodedata.normalize("NFKC", text).replace("’", "'").casefold()


def _drop_quoted(prompt: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The prompt's text outside quoted material, in the pieces between the quotes, and the
    quotes' fences: each one's id and its tags (the opener, and the closer if the prompt holds
    it)."""
    out: list[str] = []
    fences: list[tuple[str, str]] = []
    pos = 0
    # a prompt quotes a handful of texts; the bound keeps this linear (mutation testing: any
    # other bound above a handful is the same, so its mutants are equivalent)
    for _ in range(200):  # pragma: no mutate
        opening = _QUOTE_OPEN.search(prompt, pos)
        if opening is None:
            break
        out.append(prompt[pos : opening.start()])
        closing = f'</quoted id="{opening.group(1)}">'
        # the closer names the opener's nonce, which occurs once, after it: where the search
        # starts and which way it goes cannot matter (equivalent mutants)
        end = prompt.find(closing, opening.end())  # pragma: no mutate
        # no closer: the prompt was cut (capped) inside the quote, and the rest is quoted too
        pos = len(prompt) if end == -1 else end + len(closing)
        fences.append((opening.group(1), opening.group() + (closing if end != -1 else "")))
    out.append(prompt[pos:])
    return out, fences


def _trigrams(words: Sequence[str]) -> Iterator[tuple[str, str, str]]:
    """Every run of three words, in order (one C pass)."""
    return zip(words, words[1:], words[2:], strict=False)


@functools.lru_cache(maxsize=32)
def read_prompts(prompts: tuple[str, ...], task: str | None) -> Reading:
    """The prompts' own word trigrams (quoted material and the task taken out: no trigram
    spans the hole), their vocabulary and their quote fences. Every agent of a round is asked
    the same prompts, and a resume checks every saved answer again: the prompts are read once,
    not once per reply (and a system prompt that every ask of a session shares, once per
    session)."""
    folded_task = fold(task).strip() if task else ""
    return _joined([_prompt_reading(prompt, folded_task) for prompt in prompts])


def _joined(readings: Sequence[Reading]) -> Reading:
    """What the readings hold between them."""
    fences = Fences(
        frozenset().union(*(r.fences.ids for r in readings)),
        frozenset().union(*(r.fences.words for r in readings)),
    )
    return Reading(
        frozenset().union(*(r.grams for r in readings)),
        frozenset().union(*(r.vocabulary for r in readings)),
        fences,
        frozenset().union(*(r.examples for r in readings)),
    )


# A value of a JSON template in a prompt: a quoted string after a key's colon, an array's
# bracket, a comma or an alternative's bar, that is no key itself (`"counter_claims": ["up to
# 2"]`, `"reasons": ["up to 3, one short sentence each"]`); its pieces between commas and
# colons are values too ("up to 3"). Bounded and single-line: one linear pass per prompt.
_EXAMPLE = re.compile(r'[:\[,|][ \t]*"([^"\n]{1,80})"(?![ \t]*:)')
_EXAMPLE_PIECE = re.compile(r"[^,;:]+")
EXAMPLE_WORDS = 12  # a template's value is short: a longer reply is never one
# numbers, which a copy of a value may change ("up to 2" -> "up to 10")
_NUMBERS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve twenty hundred".split()
)


def example_shape(words: Sequence[str]) -> tuple[str, ...]:
    """The words of a (folded) value with each run of numbers (digits or number words) as one
    "#": "up to 2" and "up to 10" are both ("up", "to", "#"), "two or three" ("#", "or", "#")."""
    shape: list[str] = []
    for word in words:
        if word.isdigit() or word in _NUMBERS:
            if shape and shape[-1] == "#":
                continue
            word = "#"
        shape.append(word)
    return tuple(shape)


def _examples(folded: str) -> Iterator[tuple[str, ...]]:
    """The shapes of the template values in a (folded) prompt of two words or more: a single
    word ("A" of `"A" | "B"`, "yes") may well be the answer itself."""
    for value in _EXAMPLE.finditer(folded):
        for piece in [value.group(1), *_EXAMPLE_PIECE.findall(value.group(1))]:
            words = WORD.findall(piece)
            if 2 <= len(words) <= EXAMPLE_WORDS:
                yield example_shape(words)


@functools.lru_cache(maxsize=64)
def _prompt_reading(prompt: str, folded_task: str) -> Reading:
    """`read_prompts` of one prompt: the trigrams within each piece of it between quotes and
    the task (zip: one C pass over its words), its words, and its fences' ids and words."""
    pieces, fences = _drop_quoted(prompt[:PROMPT_CAP])
    ids = frozenset(w for fence_id, _ in fences for w in WORD.findall(fold(fence_id)))
    tags = frozenset(w for _, tag in fences for w in WORD.findall(fold(tag)))
    own = Reading(frozenset(), frozenset(), Fences(ids, tags))  # the prompt's own fences
    return _joined([*(_piece_reading(piece, folded_task) for piece in pieces), own])


@functools.lru_cache(maxsize=256)
def _piece_reading(piece: str, folded_task: str) -> Reading:
    """`_prompt_reading` of one piece between quotes (its fences empty). The agents of a phase
    are asked one template around different quotes: its pieces are read once for all of them,
    not once per agent's prompt."""
    grams: set[tuple[str, str, str]] = set()
    vocabulary: set[str] = set()
    examples: set[tuple[str, ...]] = set()
    text = fold(piece)
    for part in text.split(folded_task) if folded_task else [text]:
        words = WORD.findall(part)
        grams.update(_trigrams(words))
        vocabulary.update(words)
        examples.update(_examples(part))
    return Reading(frozenset(grams), frozenset(vocabulary), _NO_FENCES, frozenset(examples))


@functools.lru_cache(maxsize=8)
def read_task(task: str) -> tuple[frozenset[str], Trigrams]:
    """The task's words (of its head) and its word trigrams, read once per task."""
    tokens = WORD.findall(fold(task))
    return frozenset(WORD.findall(fold(task[:PROMPT_CAP]))), frozenset(_trigrams(tokens))


def covered(reply_words: Sequence[str], grams: AbstractSet[tuple[str, str, str]]) -> int:
    """Which words sit in a run of three that `grams` holds: byte i of the result (little
    endian) is 1 for word i, else 0. The trigrams are looked up in one C pass (map over zip),
    and a hit at i covers i, i + 1 and i + 2 by shifting the bytes: no loop per word."""
    hits = bytes(map(grams.__contains__, _trigrams(reply_words)))
    first = int.from_bytes(hits, "little")
    return first | first << 8 | first << 16


# A reply that copies itself: a run of LOOP_RUN words that occurs LOOP_TIMES times or more and
# holds LOOP_DISTINCT different words or more: a passage, not a list marker, a table row or a
# line of code that repeats a few words ("Step 1: ...", "| yes | no |", "assert f(1) == 1").
LOOP_RUN = 12
LOOP_TIMES = 3
LOOP_DISTINCT = 6


def looped(words: Sequence[str], breaks: Sequence[int] = ()) -> int:
    """Which words sit in a run of LOOP_RUN words that `words` repeats LOOP_TIMES times or more
    within one of its sections, as `covered` gives them (byte i is 1 for word i). `breaks` are
    the (sorted) words that end a section, the prompt's own headers and labels: an answer that
    states itself once under each ("## PLAN 1. X ## CHANGES X Final answer: X", as the arena's
    format asks) does not loop. A copy with a word changed here and there ("we can prove" once,
    "we could prove" after) is still one: every word but the changed one sits in a run that does
    not hold it."""
    hits = 0
    start = 0
    for end in [*breaks, len(words)]:
        if end - start >= LOOP_RUN + LOOP_TIMES - 1:
            hits |= _looped(words[start:end]) << 8 * start
        start = end + 1
    return hits


def _looped(words: Sequence[str]) -> int:
    """`looped` of one section: its runs counted in one C pass (Counter over zip); only the few
    that repeat are looked at word by word. Its trigrams are counted first, which is cheaper: a
    run repeats only where each of its trigrams does, and in most replies none does."""
    seen = Counter(_trigrams(words))
    if max(seen.values()) < LOOP_TIMES:
        return 0
    repeats = bytes(map(LOOP_TIMES.__le__, map(seen.__getitem__, _trigrams(words))))
    if b"\x01" * (LOOP_RUN - 2) not in repeats:
        return 0
    runs = list(zip(*(words[k:] for k in range(LOOP_RUN)), strict=False))
    repeated = {
        run
        for run, times in Counter(runs).items()
        if times >= LOOP_TIMES and len(set(run)) >= LOOP_DISTINCT
    }
    if not repeated:
        return 0
    first = int.from_bytes(bytes(map(repeated.__contains__, runs)), "little")
    hits = 0
    for k in range(LOOP_RUN):
        hits |= first << 8 * k
    return hits


def fence_echoes(folded: str, fences: Fences) -> Iterator[tuple[int, int]]:
    """Where the (folded) reply copies a fence of its prompts: each run of the fences' words
    that holds one of their ids, as a span of `folded` ("539817c2d0b6", `id="539817c2d0b6"`,
    "quoted from Agent B, id 539817c2d0b6"). An id is a nonce no model saw before its prompt:
    a reply word that is one is moot's markup, not the model's own. The fence's other words
    count only beside an id ("Agent B" alone may name the answer). One pass over the words,
    and none at all when no id occurs in the reply."""
    # (a shortcut: without it the same spans come out, so its mutants are equivalent)
    if not any(fence_id in folded for fence_id in fences.ids):  # pragma: no mutate
        return
    start = end = -1  # the current run of fence words, and whether it holds an id
    holds_id = False
    for word in WORD.finditer(folded):
        if word.group() not in fences.words:
            if holds_id:
                yield start, end
            start, holds_id = -1, False
            continue
        if start == -1:
            start = word.start()
        end = word.end()
        holds_id = holds_id or word.group() in fences.ids
    if holds_id:
        yield start, end


# A list marker: "#1", "#1:", "(1)", "[1]", "1)", "1:", "Q1:", "Question 1:", and "1." where
# a line starts ("4. What is 2+2?" within a line may be the answer "4" and the task again)
_MARKER = re.compile(
    r"(?:(?<![\w.#])(?:(?:q|question|task|item|step|part)\s?)?"
    r"(?:#\s?\d{1,3}[.):]?|\(\d{1,3}\)|\[\d{1,3}\]|\d{1,3}[):])|^[ \t]*\d{1,3}\.)(?=\s)",
    re.MULTILINE,
)
_DIGIT = re.compile(r"\d")


def numbering(folded: str, copied: bytes | bytearray, opens: AbstractSet[str]) -> list[int]:
    """Which words of the (folded) reply number a copy: those of each list marker whose next
    word is copied (`copied`: byte i is 1 when word i sits in a run the prompts or the task
    hold) and opens the copy as the task or a question opens (`opens`). "Is 7 a prime number?
    #1: Is 7 a prime number?" is the task twice, "1" included; a number before words of the
    reply's own ("#1: Yes, 7 is prime.") or before a piece of the task from its middle ("#12
    fixed the login crash" to "Which issue fixed the login crash?") stays its own. One pass over
    the words and the markers, and none when nothing is copied or numbered."""
    # (a shortcut: without it the same words come out, so its mutants are equivalent)
    if 1 not in copied or not _DIGIT.search(folded):  # pragma: no mutate
        return []
    markers = _MARKER.finditer(folded)
    marker = next(markers, None)
    found: list[int] = []
    inside: list[int] = []  # the words of the current marker
    for i, word in enumerate(WORD.finditer(folded)):
        while marker is not None and word.start() >= marker.end():
            # the first word after the marker: the marker numbers a copy if this is copied
            if copied[i] and word.group() in opens:
                found.extend(inside)
            inside = []
            marker = next(markers, None)
        if marker is None:
            break
        if word.start() >= marker.start():
            inside.append(i)
    return found


def clear_caches() -> None:
    """Forget every reading of prompts and tasks (for tests that must read afresh)."""
    read_prompts.cache_clear()
    _prompt_reading.cache_clear()
    _piece_reading.cache_clear()
    read_task.cache_clear()
