"""A frozen copy of deliberation/substance.py as it stood before its speed-up (issue 23): the
verdict rule the differential test (test_substance_same.py) holds the current code to. Do not
edit; change the rule in src, then update this copy in the same commit if the change is meant.
The rule for directives about the answer was taken out of both into deliberation/directive.py
when it grew (a nested directive, issue 9): the speed-up did not touch it. So was the reading of
numbers that count an answer's parts ("two sections"), which both talk rules share. Its word
lists of talk, its reading of a yes/no question and its later rules are in
substance_reference_rules.py. The stance rule
(deliberation/stance.py) is shared with src like the directive rule; the loop, template-value
and form-talk rules came with it and are mirrored there.
"""

from __future__ import annotations

import enum
import functools
import re
import unicodedata
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from moot.deliberation.directive import GRADE, QUALITY, WORK, directs_the_answer, only_counts
from moot.deliberation.markup import strip_markup
from moot.deliberation.question import asks_for_a_name
from moot.deliberation.stance import takes_a_stance
from tests.deliberation.substance_reference_rules import _ABOUT_ANSWERS as _ABOUT_ANSWERS
from tests.deliberation.substance_reference_rules import (
    _AUXILIARIES,
    _RUN_TOGETHER,
    _ai_talk,
    _asks_yes_or_no,
    _form_talk,
    _is_yes_no_question,
    _loop_start,
    _null_no_answer,
    _numbering,
    _says_neither,
    _template_value,
    _template_values,
)
from tests.deliberation.substance_reference_rules import _META_WORDS as _META_WORDS

__all__ = ["NotSubstantive", "Reason", "check_substance"]
Values = frozenset[tuple[str, ...]]  # the shapes of the prompts' JSON template values

# How much is scanned: a reply's head and tail (an echo starts at the top; an answer after a
# copied preamble shows at the end), and each prompt's head.
REPLY_HEAD = 16_000
REPLY_TAIL = 4_000
PROMPT_CAP = 60_000


class Reason(enum.StrEnum):
    """Why a reply is not a substantive answer."""

    EMPTY = "empty"  # nothing but whitespace
    MARKUP_ONLY = "markup_only"  # nothing but protocol tags, fence ids or punctuation
    TEMPLATE = "template"  # placeholders, schema text, the prompt's field labels and headers
    ECHO = "echo"  # the prompt's instructions or the task, copied back
    REFUSAL = "refusal"  # "I can't help with that", "As an AI language model I cannot"
    REPETITION = "repetition"  # a loop of the same few words, as tiny models fall into
    META = "meta"  # talk about the debate, the instructions or being an AI, not an answer
    CONTROL = "control"  # terminal escape codes or control characters, not text
    INSTRUCTION = "instruction"  # a piece of an instruction: ", no more than 40 words."
    BARE_YES_NO = "bare_yes_no"  # "No." to a question that is not a yes/no question
    NULL = "null"  # "None", "null", "N/A" alone, to a question a null does not answer
    NEITHER_YES_NOR_NO = "neither_yes_nor_no"  # "The number 91." to "... Answer yes or no."


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
# An empty slot: `{{...}}`, `{{ }}`, `[...]`, `<...>` (NFKC folds "…" to "...")
_EMPTY_SLOT = re.compile(r"\{\{[^{}\w\n]{0,20}\}\}|[{\[<(][ \t]*\.{2,}[ \t]*[}\]>)]")
# Terminal control: a CSI or OSC sequence with its ESC, a lone ESC pair, a CSI whose ESC was
# stripped ("[1A[2K", "[0m", "[?25l", "[m" alone: not a bracketed note like "[2b]"), and C0/C1
# control characters other than tab, newline and carriage return.
_CONTROL = re.compile(
    r"\x1b\[[0-?]{0,32}[ -/]{0,4}[@-~]?|\x1b\][^\x07\x1b\n]{0,200}(?:\x07|\x1b\\)?|\x1b[@-_]?"
    r"|\[\??\d{1,4}(?:;\d{1,4}){0,8}[a-z](?!\])|(?<![\w\[])\[[hjkm](?![^\s\x00-\x1f\x7f-\x9f])"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)
# a character every control match starts with: one class, so ordinary text is scanned fast
_CONTROL_HINT = re.compile(r"[\[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# A piece of an instruction: a length limit ("no more than 40 words", "in at most 3 sentences")
# or a request about the form of the answer ("answer in one sentence"). A piece that names the
# task's own unit, or answers a task about a size, is an answer ("At most 280 characters.").
# Searched from the unit back: a unit word is rare, so the scan is fast.
_UNIT = re.compile(
    r"\b(?:words?|sentences?|characters?|chars|lines?|paragraphs?|tokens?|bullets?|points?)\b"
)
# what must stand right before the unit, matched on a bounded window that ends at it
_BEFORE_UNIT = re.compile(
    r"(?:\b(?:(?:in|with|using|within)\s+)?(?:no\s+more\s+than|not\s+more\s+than|"
    r"no\s+longer\s+than|at\s+most|at\s+least|fewer\s+than|less\s+than|up\s+to|under|"
    r"maximum(?:\s+of)?|max)\s+(?:\d{1,5}|one|two|three|four|five|ten|twenty|fifty|"
    r"a\s+hundred)\s+(?:bullet\s+)?"
    r"|\b(?:answer|respond|reply|write)\s+(?:in|with)\s+(?:one|a\s+single|a\s+short|\d{1,5})\s+"
    r")\Z"
)
_WINDOW = 48
# a task that asks for a size or a count ("How long can a post be?")
_ASKS_SIZE = frozenset("long many much length limit limits maximum minimum size".split())
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
    r"|i\s+must\s+(?:decline|refuse)|i\s+refuse|i\s+(?:abstain|decline)"
    r"|i\s+(?:do\s+not|don't)\s+(?:have\s+(?:access|the\s+ability|personal|opinions)|"
    r"feel\s+comfortable)"
    r"|as\s+an\s+ai(?:\s+language)?(?:\s+model|\s+assistant)?"
    r"|(?:i'm|i\s+am)\s+(?:so\s+|very\s+|truly\s+)?sorry|i\s+apologi[sz]e|^\s*sorry"
    r")\b[^.,;:!?\n]*",
    re.IGNORECASE | re.MULTILINE,
)
# `Reasoning:` or `"confidence":`, and the value after it up to the next field
# (the value is a lookahead, so a label inside another's value is still seen: JSON nests)
# (a name starts a word: inside one the scan fails at once instead of trying 40 characters)
_LABEL = re.compile(r'(?<![\w-])"?([a-z][\w-]{0,40})"?[ \t]*:(?=([^,;\n]{0,400}))')
# `## PLAN` or `## CHANGES -` on a line of its own: a header whose words all come from the prompt
_HEADER = re.compile(r"^[ \t]*#{1,6}[ \t]*([a-z][a-z ]{0,40}?)[ \t]*[-:]?[ \t]*$", re.M)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
# Quoted material in a prompt is other agents' work, not instructions: an agent that agrees
# with it is not echoing the prompt. Openers name their nonce; the closer repeats it.
_QUOTE_OPEN = re.compile(r'<quoted\b[^>\n]{0,400}?\bid="([^"\n]{1,64})"[^>\n]{0,400}>')
# Words too common to make an answer on their own.
_FILLER = frozenset(
    "a an the is are was were be been of to in on at for with by and or but if so as it its "
    "this that these those i we you he she they my our your me us mine ours yours".split()
)


# Talk about the deliberation instead of an answer. A reply is META when it names the debate, the
# instructions, its own answer or being an AI (an anchor below) and every word of its own is a
# word of such talk (`_META_WORDS`, the task's words taken out): "As per the instructions, I will
# now give my position." One word of anything else ("My answer is Paris.") makes it an answer.
# An answer named by which one it is only points at one ("See my earlier answer.", "My answer
# stands."): the words that say which, or that it stands, are such talk too ("The original
# answer, 42, is right." gives one). Up to two words may say which, here and in the talk rule's
# anchor ("your original answer" is talk to the answerer, below).
_WHICH = r"(?:[\w'-]{1,24}\s+){0,2}?"
_META_ANCHOR = re.compile(
    r"\b(?:(?:you|i|we)\s+(?:are|am)\s+(?:(?:just|only|not)\s+)?(?:an?\s+)?"
    r"(?:ai|assistant|language\s+model|chatbot|bot)"
    r"|(?:you're|i'm)\s+(?:(?:just|only|not)\s+)?(?:an?\s+)?(?:ai|assistant|language\s+model|chatbot)"
    r"|as\s+an?\s+(?:ai|assistant|language\s+model|chatbot)"
    # (with up to two words between: "a challenging task", "this tricky question")
    r"|(?:the|this|these|your|my|our|a|an)\s+(?:[\w'-]{1,24}\s+){0,2}?"
    r"(?:instructions?|prompt|rules|debate|discussion|"
    r"deliberation|court|arena|tournament|vote|round|format|template|task|question)"
    r"|(?:my|our|the)\s+" + _WHICH + r"(?:answer|position|response|reply|stance|opinion|view|"
    r"vote|solution)s?"
    r"|per\s+(?:the\s+)?instructions?|as\s+instructed)\b"
)
# Talk about how to answer instead of an answer (issue 29): "Your solution requires specific
# conditions for editing; you must provide a clear list of requirements." Such a reply names the
# answer itself as what it is about (`_ABOUT_THE_ANSWER`: "your solution", "the answer should",
# "provide a detailed explanation") and every word of its own is talk about answers: the words
# of talk above, and the parts, qualities and verbs of an answer (both lists in
# substance_reference_rules.py). Advice about the subject names
# the subject ("Your service should use SQLite.", "Make sure the migration runs in a
# transaction."): one domain noun, number, name or word of the task makes it an answer, and
# advice to the answerer that does not name the answer ("Include examples.") is no such talk.
_ANSWER_NOUNS = (
    r"(?:solution|answer|response|reply|reasoning|explanation|justification|rationale|"
    r"submission|proposal|approach)s?"
)
_ABOUT_THE_ANSWER = re.compile(
    # the answerer's (or the speaker's) own answer: "your solution", "my reasoning"
    r"\b(?:your|my|our)\s+" + _WHICH + _ANSWER_NOUNS + r"\b"
    # what an answer should do: "the solution should", "each answer must", "an answer needs"
    r"|\b(?:the|this|that|each|every|an?)\s+(?:[\w'-]{1,24}\s+){0,2}?"
    + _ANSWER_NOUNS
    + r"\s+(?:should|must|needs?|requires?|has\s+to|have\s+to|ought|lacks?|is\s+missing)\b"
    # a request for one: "provide a more detailed explanation", "give your reasoning"
    r"|\b(?:provide|give|include|add|write|offer|present|show)\s+(?:[\w'-]{1,24}\s+){0,4}?"
    + _ANSWER_NOUNS
    + r"\b"
    # what the task asks of an answer: "this task requires clarity"
    r"|\b(?:the|this|that|your|my|our)\s+(?:[\w'-]{1,24}\s+){0,2}?"
    r"(?:task|question|problem|challenge|exercise)\s+(?:requires?|needs?|demands?|involves?|"
    r"calls\s+for|asks\s+for)\b"
)
# and the words a description of an answer grades it, its work or how it reads with
# (`directive.GRADE`, `directive.WORK`, `directive.QUALITY`): "This task requires careful
# planning and attention to detail."
_ANSWER_TALK = _META_WORDS | _ABOUT_ANSWERS | GRADE | WORK | QUALITY
# (the directive rule is shared with src: `moot.deliberation.directive`, changed since)
_DIRECTIVE_TALK = _META_WORDS | _ABOUT_ANSWERS | _FILLER
_YES_NO = frozenset("yes no yeah yep yup yea nope nah".split())
# words that may stand around a bare yes/no without making it an answer: "Absolutely not."
_INTENSIFIERS = frozenset(
    "absolutely definitely certainly surely sure indeed course not really".split()
)
# a question's words that say nothing of its subject ("How do I make ...?", "Should we use ...?")
_ASKING = frozenset("how what which who whom whose why when where make use sure please".split())


def _fold(text: str) -> str:
    # NFKC folds full-width and ligature look-alikes; casefold lower-cases for comparison
    return unicodedata.normalize("NFKC", text).replace("’", "'").casefold()


def _scan(reply: str) -> str:
    if len(reply) <= REPLY_HEAD + REPLY_TAIL:
        return reply
    return reply[:REPLY_HEAD] + "\n" + reply[-REPLY_TAIL:]


def _drop_quoted(prompt: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The prompt's text outside quoted material, in the pieces between the quotes, and each
    quote's id and fence tags (the opener, and the closer if the prompt holds it)."""
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


def _trigrams(words: Sequence[str | None]) -> set[tuple[str, str, str]]:
    # (mutation testing: `strict` of a zip with its own tails, and a trigram with a None kept
    # in, change nothing a reply's trigrams, which never hold None, can find: equivalent)
    return {
        (a, b, c)
        for a, b, c in zip(words, words[1:], words[2:], strict=False)  # pragma: no mutate
        if a is not None and b is not None and c is not None  # pragma: no mutate
    }


@functools.lru_cache(maxsize=32)
def _instructions(
    prompts: tuple[str, ...], task: str | None
) -> tuple[frozenset[tuple[str, str, str]], frozenset[str], frozenset[str], frozenset[str], Values]:
    """The prompts' own word trigrams (quoted material and the task taken out, a `None` where
    they were, so no trigram spans the hole), their vocabulary, and their quote fences' ids and
    the words of the fences' tags. Every agent of a round is asked the same prompts, and a
    resume checks every saved answer again: the prompts are read once, not once per reply."""
    folded_task = _fold(task).strip() if task else ""
    words: list[str | None] = []
    values: set[tuple[str, ...]] = set()
    fence_ids: set[str] = set()
    fence_words: set[str] = set()
    for prompt in prompts:
        pieces, fences = _drop_quoted(prompt[:PROMPT_CAP])
        for piece in pieces:
            text = _fold(piece)
            for part in text.split(folded_task) if folded_task else [text]:
                words.extend(_WORD.findall(part))
                words.append(None)
                values |= _template_values(part)
        for fence_id, tags in fences:
            fence_ids.update(_WORD.findall(_fold(fence_id)))
            fence_words.update(_WORD.findall(_fold(tags)))
    return (
        frozenset(_trigrams(words)),
        frozenset(w for w in words if w is not None),
        frozenset(fence_ids),
        frozenset(fence_words),
        frozenset(values),
    )


def _covered(reply_words: Sequence[str], grams: AbstractSet[tuple[str, str, str]]) -> list[bool]:
    covered = [False] * len(reply_words)
    for i in range(len(reply_words) - 2):
        if (reply_words[i], reply_words[i + 1], reply_words[i + 2]) in grams:
            covered[i] = covered[i + 1] = covered[i + 2] = True
    return covered


_DETAIL = {
    Reason.MARKUP_ONLY: "it holds only protocol markup",
    Reason.TEMPLATE: "it only repeats the prompt's template",
    Reason.ECHO: "it only repeats the prompt (its instructions or the task)",
    Reason.REFUSAL: "it refuses to answer",
    Reason.CONTROL: "it holds only control or escape codes",
    Reason.INSTRUCTION: "it is a piece of an instruction, not an answer",
}
# The mask below holds one byte per character: 0 for the model's own text, else the code of the
# first reason that masked it. Covering a span translates its zeros to the code in one C call.
_CODE = {why: code for code, why in enumerate(Reason, start=1)}
_FILL = {
    why: bytes([code]) + bytes(range(1, 256)) for why, code in _CODE.items()
}  # a translate table: 0 -> code, every other byte to itself


def _sample(text: str) -> str:
    """A short, printable sample of the offending text, for the detail line."""
    flat = " ".join(text.split())
    flat = "".join(ch if ch.isprintable() else "?" for ch in flat)
    return repr(flat[:60] + ("..." if len(flat) > 60 else ""))


# A reply of at most this many words of its own is judged as a fragment too (below).
_FRAGMENT = 3
# Short answers a prompt may well spell out itself ("answer yes or no").
_ANSWER_WORDS = frozenset("yes no true false none".split())


def _fragment(
    text: str, content: Sequence[str], vocabulary: frozenset[str]
) -> NotSubstantive | None:
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


def _talk_instead_of_answer(
    text: str, folded: str, content: Sequence[str], task: str | None, instructed: bool
) -> NotSubstantive | None:
    """META or BARE_YES_NO when the model's own words are only talk about the deliberation, or
    only a yes or no (around such talk) to a question a yes or no does not answer; INSTRUCTION
    when such talk is all there is around a piece of an instruction ("Under 100 words, please.")."""
    task_words = frozenset(_WORD.findall(_fold(task[:PROMPT_CAP]))) if task else frozenset()
    talk = [w for w in content if w in _META_WORDS and w not in task_words]
    if instructed and (len(talk) == len(content) or _form_talk(content, task_words)):
        return NotSubstantive(
            Reason.INSTRUCTION, f"{_DETAIL[Reason.INSTRUCTION]} ({_sample(text)})"
        )
    if (len(talk) == len(content) and _META_ANCHOR.search(folded) is not None) or _ai_talk(
        folded, content, _ANSWER_TALK, task_words
    ):
        return NotSubstantive(
            Reason.META,
            "it talks about the debate, the instructions or being an AI instead of answering "
            f"({_sample(text)})",
        )
    # the task's words make an answer, but not its auxiliaries and question words: "should"
    # to "Should a small team use Postgres?" is no answer ("The solution should ...")
    asked = task_words - _AUXILIARIES - _ASKING
    if takes_a_stance(
        text[:REPLY_TAIL], asked - _FILLER, numbers_name=not (task and asks_for_a_name(task))
    ):
        return NotSubstantive(
            Reason.META,
            "it takes a stance on the debate (abstaining, voting) instead of answering "
            f"({_sample(text)})",
        )
    # (the answer may be named in words copied from the prompt, as when a re-ask quotes the
    # reply back, but a word of its own must be about answers: "Okay." after a copy of "Write
    # your answer in ..." is an echo)
    # (a number that counts the answer's parts is talk too: "in two paragraphs")
    if (
        all(w not in asked for w in content)
        and only_counts([w for w in content if w not in _ANSWER_TALK], folded, asked)
        and any(w in _ABOUT_ANSWERS or w in WORK for w in content)
        and _ABOUT_THE_ANSWER.search(folded) is not None
    ) or directs_the_answer(text[:REPLY_TAIL], asked - _FILLER, _DIRECTIVE_TALK):
        return NotSubstantive(
            Reason.META, f"it says how to answer instead of answering ({_sample(text)})"
        )
    said = [w for w in content if w in _YES_NO]
    rest = [w for w in content if w not in _YES_NO and w not in _INTENSIFIERS]
    if not said and not rest and "not" in content:
        said = ["no"]  # "Absolutely not.", "Certainly not."
    if said and all(w in _META_WORDS and w not in asked for w in rest):
        return NotSubstantive(
            Reason.BARE_YES_NO,
            f"it is a bare {said[0]!r} to a question that is not a yes/no question "
            f"({_sample(text)})",
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
    the task is one; it also tells whether a bare yes or no can answer it."""
    prompts = (prompts,) if isinstance(prompts, str) else tuple(prompts)
    if not reply.strip():
        return NotSubstantive(Reason.EMPTY, "it is empty")
    scanned = _scan(reply)
    text = strip_markup(scanned)
    folded = _fold(text)
    if not _WORD.search(text):
        if _EMPTY_SLOT.search(folded):
            return NotSubstantive(Reason.TEMPLATE, f"it is a placeholder ({_sample(text)})")
        if _CONTROL.search(folded):
            return NotSubstantive(Reason.CONTROL, f"{_DETAIL[Reason.CONTROL]} ({_sample(text)})")
        if text != scanned.strip():
            return NotSubstantive(Reason.MARKUP_ONLY, "it holds only protocol markup")
        return NotSubstantive(Reason.MARKUP_ONLY, f"it holds no words ({_sample(text)})")

    grams, vocabulary, fence_ids, fence_words, values = _instructions(prompts, task)
    task_words = frozenset(_WORD.findall(_fold(task[:PROMPT_CAP]))) if task else frozenset()
    # per character, what masked it (see `_CODE`); spans are fixed by position in `folded`,
    # which NFKC can make a little longer or shorter than `text`, so all matching below runs
    # on `folded`
    mask = bytearray(len(folded))

    def cover(start: int, end: int, why: Reason) -> None:
        mask[start:end] = mask[start:end].translate(_FILL[why])

    def blank(m: re.Match[str]) -> str:
        cover(m.start(), m.end(), Reason.CONTROL)
        return " " * (m.end() - m.start())

    # control codes become blanks of the same length, so their digits and letters ("[2K") are
    # no words and cannot glue onto the words beside them
    if _CONTROL_HINT.search(folded):
        folded = _CONTROL.sub(blank, folded)
    # moot's own markup copied back: a run of the fences' words that holds one of their ids
    fenced = list(_WORD.finditer(folded))
    i = 0
    while i < len(fenced):
        j = i
        while j < len(fenced) and fenced[j].group() in fence_words:
            j += 1
        if any(fenced[k].group() in fence_ids for k in range(i, j)):
            cover(fenced[i].start(), fenced[j - 1].end(), Reason.MARKUP_ONLY)
        i = max(j, i + 1)
    for pattern in (_EMPTY_SLOT, _PLACEHOLDER, _FILL_IN, _RUN_TOGETHER, _SCHEMA):
        for m in pattern.finditer(folded):
            cover(m.start(), m.end(), Reason.TEMPLATE)
    for m in _LABEL.finditer(folded):
        # a label the prompt uses, or one whose value holds no word of the model's own
        # (`Reasoning: {`), is template; the value itself is judged on its own
        name = m.group(1)
        value = _WORD.finditer(folded, m.start(2), m.end(2))
        empty = all(mask.count(0, w.start(), w.end()) == 0 for w in value)
        if name in vocabulary or name.replace("-", "") in vocabulary or empty:
            cover(m.start(), m.start(2), Reason.TEMPLATE)
    for m in _HEADER.finditer(folded):
        header = m.group(1).split()
        if header and all(w in vocabulary for w in header):
            cover(m.start(), m.end(), Reason.TEMPLATE)
    for m in _REFUSAL.finditer(folded):
        cover(m.start(), m.end(), Reason.REFUSAL)
    for m in _UNIT.finditer(folded):
        # "at most 280 characters" answers "How long can a post be, in characters?"
        unit = m.group()
        if {unit, unit.removesuffix("s"), unit + "s"} & task_words or _ASKS_SIZE & task_words:
            continue
        before = _BEFORE_UNIT.search(folded, max(0, m.start() - _WINDOW), m.start())
        if before is not None:
            cover(before.start(), m.end(), Reason.INSTRUCTION)

    words = list(_WORD.finditer(folded))
    tokens = [m.group() for m in words]
    spans = [m.span() for m in words]
    from_prompt = _covered(tokens, grams)
    task_tokens = _WORD.findall(_fold(task)) if task else []
    from_task = _covered(tokens, _trigrams(task_tokens))
    copied = [a or b for a, b in zip(from_prompt, from_task, strict=True)]
    opens = _AUXILIARIES | set("how what which who whom whose why when where whether".split())
    opens |= set(_WORD.findall(_fold(task[:200]))[:1]) if task else set()
    for i in _numbering(folded, spans, copied, opens) if any(copied) else []:
        copied[i] = True
    for i, (start, end) in enumerate(spans):
        if copied[i]:
            cover(start, end, Reason.ECHO)

    # what is left: words no mask touches
    own = [
        tokens[i]
        for i, (start, end) in enumerate(spans)
        if mask.count(0, start, end) == end - start
    ]
    content = [w for w in own if w not in _FILLER]
    if len(content) >= 20 and len(set(content)) <= 3:
        sample = " ".join(content[:8])
        return NotSubstantive(Reason.REPETITION, f"it repeats the same few words ('{sample} ...')")
    loop = _loop_start(tokens, spans, mask, _CODE[Reason.ECHO])
    if loop is not None:
        detail = f"it repeats one passage over and over ('{' '.join(tokens[loop : loop + 8])} ...')"
        return NotSubstantive(Reason.REPETITION, detail)
    said = [w for w in content if w not in _META_WORDS]
    if task and _null_no_answer(said, folded, task, _is_yes_no_question(task)):
        kind = "truth" if said[0] in ("true", "false") else "null"
        return NotSubstantive(Reason.NULL, f"it is a {kind} value, not an answer ({_sample(text)})")
    if content:
        instructed = _CODE[Reason.INSTRUCTION] in mask
        talk = _talk_instead_of_answer(text, folded, content, task, instructed)
        if talk is not None and (
            talk.reason is not Reason.BARE_YES_NO or (task and not _is_yes_no_question(task))
        ):
            return talk
    # invalid: nothing of its own left, or a long copy of the prompt with a stray word or two
    # ("... each with its reason. Okay."); restating the task before a short answer is fine
    # ("Postgres or SQLite for a session store? SQLite."), so the task's words do not count
    beyond_task = len(tokens) - sum(from_task)
    if content and _template_value(tokens, values, task_words, _ASKS_SIZE):
        return NotSubstantive(
            Reason.TEMPLATE, f"it is a value of the prompt's template ({_sample(text)})"
        )
    if content and len(content) <= _FRAGMENT:
        # without the task at hand its words are part of the instructions: only braces tell
        # (a word the task uses is the task's too: "C" to "A, B, C or D?" beside "Agent C")
        fragment = _fragment(text, content, vocabulary - task_words if task else frozenset())
        if fragment is not None:
            return fragment
    if content and not (len(own) * 10 < beyond_task and len(content) <= _FRAGMENT):
        if task and _asks_yes_or_no(task) and _says_neither(own, folded, _FILLER):
            detail = "it says neither yes nor no to a question that asks for a yes or no"
            return NotSubstantive(Reason.NEITHER_YES_NOR_NO, f"{detail} ({_sample(text)})")
        return None
    # the reason that masked the most characters (a tie: a refusal first, then the earliest)
    masked = sorted(
        (why for why in Reason if _CODE[why] in mask), key=lambda why: mask.index(_CODE[why])
    )
    if not masked:  # only filler words of its own: "it is"
        return NotSubstantive(Reason.ECHO, f"it says nothing of substance ({_sample(text)})")
    main = max(masked, key=lambda why: (mask.count(_CODE[why]), why == Reason.REFUSAL))
    # the first run of text masked for that reason, in the reply's own spelling if folding
    # kept the positions
    code = _CODE[main]
    start = mask.index(code)
    end = start
    while end < len(mask) and (mask[end] == code or (mask[end] == 0 and not folded[end].isalnum())):
        end += 1
    source = text if len(text) == len(folded) else folded
    return NotSubstantive(main, f"{_DETAIL[main]} ({_sample(source[start:end])})")
