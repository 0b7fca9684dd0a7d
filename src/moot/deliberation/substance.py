"""Is a reply a substantive answer to the task? (issue 9: "Consensus is earned")

A court certified `{ newVote }, Confidence: { confidence }, Reasoning: {` as its unanimous
answer; an arena's final answer was its own instructions echoed back. Such replies parse, so the
parsers cannot catch them. `check_substance` masks what is not the model's own answer (protocol
markup, template placeholders, JSON-schema text, field labels and headers copied from the prompt,
runs of words copied from the prompt or the task, refusals) and looks at what is left: nothing of
substance left means the reply is invalid, with a typed reason.

Overlap with the prompt is measured on word trigrams: a reply word counts as copied when it sits
in a run of three words that also occurs, in that order, in the prompt. That catches echoes and
near-verbatim paraphrases in linear time, while a short answer built from the task's own words
("Use SQLite." to "Postgres or SQLite?") stays: it shares no three-word run with the prompt.

Everything here is pure and deterministic, and model text is treated as hostile: the reply and
the prompts are capped before scanning, and every pattern is linear.
"""

from __future__ import annotations

import enum
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from moot.deliberation.markup import strip_markup

__all__ = ["NotSubstantive", "Reason", "check_substance"]

# How much is scanned: a reply's head and tail (an echo starts at the top; an answer after a
# copied preamble shows at the end), and each prompt's head.
REPLY_HEAD = 16_000
REPLY_TAIL = 4_000
PROMPT_CAP = 60_000


class Reason(enum.StrEnum):
    """Why a reply is not a substantive answer."""

    EMPTY = "empty"  # nothing but whitespace
    MARKUP_ONLY = "markup_only"  # nothing but protocol tags or punctuation
    TEMPLATE = "template"  # placeholders, schema text, the prompt's field labels and headers
    ECHO = "echo"  # the prompt's instructions or the task, copied back
    REFUSAL = "refusal"  # "I can't help with that", "As an AI language model I cannot"
    REPETITION = "repetition"  # a loop of the same few words, as tiny models fall into


@dataclass(frozen=True)
class NotSubstantive:
    """The reason a reply is invalid, typed (`reason`) and in words (`detail`), for the record
    and the report: `str(x)` reads "it only repeats the prompt's template ('{ newVote }')"."""

    reason: Reason
    detail: str

    def __str__(self) -> str:
        return self.detail


# -- what gets masked -------------------------------------------------------------------------
# `{ newVote }`, `{confidence}`, `{{task}}`: a brace pair around one short identifier-like name.
_PLACEHOLDER = re.compile(r"\{\{?[ \t]*[A-Za-z_][\w.\- ]{0,40}?[ \t]*\}?\}")
# `<your answer here>`, `[insert reasoning]`, `<answer here>`, `(your position here)`
_FILL_IN = re.compile(
    r"[<\[(][ \t]*(?:(?:your|insert|put|add|write)\b[^<>\[\]()\n]{0,60}"
    r"|[^<>\[\]()\n]{0,60}\bhere)[ \t]*[>\])]",
    re.IGNORECASE,
)
# JSON-schema keywords as keys, and type names as values: `"type": "object"`
_SCHEMA = re.compile(
    r'"(?:\$schema|\$ref|type|properties|required|additionalProperties|minLength|maxLength|'
    r"minimum|maximum|enum|anyOf|oneOf|allOf|items|const|pattern|title|description|"
    r'minItems|maxItems)"\s*:|"(?:object|string|number|integer|boolean|null|array)"'
)
# A refusal clause, up to the next clause boundary: "I can't help with that" is masked, the
# answer after "I cannot browse, but" is not. First person only: "we cannot provide a
# guarantee" or "I don't support X" are opinions, not refusals.
_REFUSAL = re.compile(
    r"\b(?:i(?:\s+really)?\s+(?:can(?:no|')t|cannot|can\s+not|won't|will\s+not|"
    r"am\s+(?:not\s+able|unable)|'m\s+(?:not\s+able|unable)|am\s+not\s+allowed|"
    r"'m\s+not\s+allowed)\s+(?:to\s+)?(?:help|assist|provide|answer|comply|fulfil+|complete|"
    r"engage|generate|respond|give|browse|access|do\s+that)"
    r"|i\s+must\s+(?:decline|refuse)|i\s+refuse"
    r"|i\s+(?:do\s+not|don't)\s+(?:have\s+(?:access|the\s+ability|personal|opinions)|"
    r"feel\s+comfortable)"
    r"|as\s+an\s+ai(?:\s+language)?(?:\s+model|\s+assistant)?"
    r"|(?:i'm|i\s+am)\s+(?:so\s+|very\s+|truly\s+)?sorry|i\s+apologi[sz]e|^\s*sorry"
    r")\b[^.,;:!?\n]*",
    re.IGNORECASE | re.MULTILINE,
)
# `Reasoning:` or `"confidence":`, and the value after it up to the next field
# (the value is a lookahead, so a label inside another's value is still seen: JSON nests)
_LABEL = re.compile(r'"?([a-z][\w-]{0,40})"?[ \t]*:(?=([^,;\n]{0,400}))')
# `## PLAN` or `## CHANGES -` on a line of its own: a header whose words all come from the prompt
_HEADER = re.compile(r"^[ \t]*#{1,6}[ \t]*([a-z][a-z ]{0,40}?)[ \t]*[-:]?[ \t]*$", re.M)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
# Quoted material in a prompt is other agents' work, not instructions: an agent that agrees
# with it is not echoing the prompt. Openers name their nonce; the closer repeats it.
_QUOTE_OPEN = re.compile(r'<quoted\b[^>\n]{0,400}?\bid="([^"\n]{1,64})"[^>\n]{0,400}>')
# Words too common to make an answer on their own.
_FILLER = frozenset(
    "a an the is are was were be been of to in on at for with by and or but if so as it its "
    "this that these those i we you he she they my our your me us".split()
)


def _fold(text: str) -> str:
    # NFKC folds full-width and ligature look-alikes; casefold lower-cases for comparison
    return unicodedata.normalize("NFKC", text).replace("’", "'").casefold()


def _scan(reply: str) -> str:
    if len(reply) <= REPLY_HEAD + REPLY_TAIL:
        return reply
    return reply[:REPLY_HEAD] + "\n" + reply[-REPLY_TAIL:]


def _drop_quoted(prompt: str) -> str:
    out: list[str] = []
    pos = 0
    for _ in range(200):  # a prompt quotes a handful of texts; the bound keeps this linear
        opening = _QUOTE_OPEN.search(prompt, pos)
        if opening is None:
            break
        out.append(prompt[pos : opening.start()])
        closing = f'</quoted id="{opening.group(1)}">'
        end = prompt.find(closing, opening.end())
        pos = opening.end() if end == -1 else end + len(closing)
    out.append(prompt[pos:])
    return "\n".join(out)


def _trigrams(words: Sequence[str | None]) -> set[tuple[str, str, str]]:
    return {
        (a, b, c)
        for a, b, c in zip(words, words[1:], words[2:], strict=False)
        if a is not None and b is not None and c is not None
    }


def _instructions(prompts: Iterable[str], task: str | None) -> tuple[list[str | None], set[str]]:
    """The prompts' own words (quoted material and the task taken out, a `None` where they
    were so no trigram spans the hole) and their vocabulary."""
    folded_task = _fold(task).strip() if task else ""
    words: list[str | None] = []
    for prompt in prompts:
        text = _fold(_drop_quoted(prompt[:PROMPT_CAP]))
        parts = text.split(folded_task) if folded_task else [text]
        for part in parts:
            words.extend(m.group() for m in _WORD.finditer(part))
            words.append(None)
    return words, {w for w in words if w is not None}


def _covered(reply_words: Sequence[str], grams: set[tuple[str, str, str]]) -> list[bool]:
    covered = [False] * len(reply_words)
    for i in range(len(reply_words) - 2):
        if (reply_words[i], reply_words[i + 1], reply_words[i + 2]) in grams:
            covered[i] = covered[i + 1] = covered[i + 2] = True
    return covered


_DETAIL = {
    Reason.TEMPLATE: "it only repeats the prompt's template",
    Reason.ECHO: "it only repeats the prompt (its instructions or the task)",
    Reason.REFUSAL: "it refuses to answer",
}


def _sample(text: str) -> str:
    """A short, printable sample of the offending text, for the detail line."""
    flat = " ".join(text.split())
    flat = "".join(ch if ch.isprintable() else "?" for ch in flat)
    return repr(flat[:60] + ("..." if len(flat) > 60 else ""))


# A reply of at most this many words of its own is judged as a fragment too (below).
_FRAGMENT = 3
# Short answers a prompt may well spell out itself ("answer yes or no").
_ANSWER_WORDS = frozenset("yes no true false none".split())


def _fragment(text: str, content: Sequence[str], vocabulary: set[str]) -> NotSubstantive | None:
    """A few words of the model's own can still be junk a tiny model writes: a piece of the
    template (`SOLUTION}`, `{{exampleurl)}}`: doubled or unbalanced braces around a word) or a
    field name or two from the instructions ("Solution analysis"). A short real answer uses
    balanced braces if any (`{"answer": "Paris"}`) and words the instructions do not."""
    stray = text.count("{") != text.count("}") or "{{" in text or "}}" in text
    if stray:
        return NotSubstantive(Reason.TEMPLATE, f"it is a fragment of a template ({_sample(text)})")
    named = [w for w in content if w not in _ANSWER_WORDS and not w.isdigit()]
    if named and len(named) == len(content) and all(w in vocabulary for w in named):
        # (`vocabulary` holds the instructions' words, the task's taken out)
        return NotSubstantive(
            Reason.ECHO, f"it only repeats words of the instructions ({_sample(text)})"
        )
    return None


def check_substance(
    reply: str, prompts: str | Sequence[str] = (), *, task: str | None = None
) -> NotSubstantive | None:
    """None if `reply` is a substantive answer, else why not.

    `reply` is the text that would count: the extracted solution or position, or the whole reply
    when nothing is extracted. `prompts` are the system and user texts that produced it (not
    earlier assistant turns: an agent keeping its own solution is not an echo); quoted material
    in them is ignored. `task`, when given, is taken out of the prompts, so an answer that
    reuses the task's words ("Use SQLite.") is never an echo, while a reply that only repeats
    the task is one."""
    if isinstance(prompts, str):
        prompts = [prompts]
    if not reply.strip():
        return NotSubstantive(Reason.EMPTY, "it is empty")
    scanned = _scan(reply)
    text = strip_markup(scanned)
    if not _WORD.search(text):
        if text != scanned.strip():
            return NotSubstantive(Reason.MARKUP_ONLY, "it holds only protocol markup")
        return NotSubstantive(Reason.MARKUP_ONLY, f"it holds no words ({_sample(text)})")

    prompt_words, vocabulary = _instructions(prompts, task)
    folded = _fold(text)
    # per character, what masked it (None: the model's own text); spans are fixed by position
    # in `folded`, which NFKC can make a little longer or shorter than `text`, so all matching
    # below runs on `folded`
    mask: list[Reason | None] = [None] * len(folded)

    def cover(start: int, end: int, why: Reason) -> None:
        for i in range(start, end):
            if mask[i] is None:
                mask[i] = why

    for pattern in (_PLACEHOLDER, _FILL_IN, _SCHEMA):
        for m in pattern.finditer(folded):
            cover(m.start(), m.end(), Reason.TEMPLATE)
    for m in _LABEL.finditer(folded):
        # a label the prompt uses, or one whose value holds no word of the model's own
        # (`Reasoning: {`), is template; the value itself is judged on its own
        name = m.group(1)
        value = list(_WORD.finditer(folded, m.start(2), m.end(2)))
        empty = all(mask[i] is not None for w in value for i in range(w.start(), w.end()))
        if name in vocabulary or name.replace("-", "") in vocabulary or empty:
            cover(m.start(), m.start(2), Reason.TEMPLATE)
    for m in _HEADER.finditer(folded):
        header = m.group(1).split()
        if header and all(w in vocabulary for w in header):
            cover(m.start(), m.end(), Reason.TEMPLATE)
    for m in _REFUSAL.finditer(folded):
        cover(m.start(), m.end(), Reason.REFUSAL)

    words = list(_WORD.finditer(folded))
    tokens = [m.group() for m in words]
    from_prompt = _covered(tokens, _trigrams(prompt_words))
    task_words = [m.group() for m in _WORD.finditer(_fold(task))] if task else []
    from_task = _covered(tokens, _trigrams(task_words))
    for m, copied, restated in zip(words, from_prompt, from_task, strict=True):
        if copied or restated:
            cover(m.start(), m.end(), Reason.ECHO)

    # what is left: words no mask touches
    own = [m.group() for m in words if all(mask[i] is None for i in range(m.start(), m.end()))]
    content = [w for w in own if w not in _FILLER]
    if len(content) >= 20 and len(set(content)) <= 3:
        sample = " ".join(content[:8])
        return NotSubstantive(Reason.REPETITION, f"it repeats the same few words ('{sample} ...')")
    # invalid: nothing of its own left, or a long copy of the prompt with a stray word or two
    # ("... each with its reason. Okay."); restating the task before a short answer is fine
    # ("Postgres or SQLite for a session store? SQLite."), so the task's words do not count
    beyond_task = len(tokens) - sum(from_task)
    if content and len(content) <= _FRAGMENT:
        # without the task at hand its words are part of the instructions: only braces tell
        fragment = _fragment(text, content, vocabulary if task else set())
        if fragment is not None:
            return fragment
    if content and not (len(own) * 10 < beyond_task and len(content) <= _FRAGMENT):
        return None
    counts: dict[Reason, int] = {}
    for why in mask:
        if why is not None:
            counts[why] = counts.get(why, 0) + 1
    if not counts:  # only filler words of its own: "it is"
        return NotSubstantive(Reason.ECHO, f"it says nothing of substance ({_sample(text)})")
    main = max(counts, key=lambda why: (counts[why], why == Reason.REFUSAL))
    # the first run of text masked for that reason, in the reply's own spelling if folding
    # kept the positions
    start = mask.index(main)
    end = start
    while end < len(mask) and (
        mask[end] == main or (mask[end] is None and not folded[end].isalnum())
    ):
        end += 1
    source = text if len(text) == len(folded) else folded
    return NotSubstantive(main, f"{_DETAIL[main]} ({_sample(source[start:end])})")
