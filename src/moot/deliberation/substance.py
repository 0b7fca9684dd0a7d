"""Is a reply a substantive answer to the task? (issue 9: "Consensus is earned")

A court certified `{ newVote }, Confidence: { confidence }, Reasoning: {` as its unanimous
answer; an arena's final answer was its own instructions echoed back. Such replies parse, so the
parsers cannot catch them. `check_substance` masks what is not the model's own answer (protocol
markup and the ids of the prompt's quote fences, template placeholders, also run together into
one word ("youranswer"), JSON-schema text, field labels and headers copied from the prompt, runs
of words copied from the prompt or the task and the list markers that number them, refusals)
and looks at what is left: nothing of substance left means the reply is invalid, with a typed
reason.

Overlap with the prompt is measured on word trigrams: a reply word counts as copied when it sits
in a run of three words that also occurs, in that order, in the prompt. That catches echoes and
near-verbatim paraphrases in linear time, while a short answer built from the task's own words
("Use SQLite." to "Postgres or SQLite?") stays: it shares no three-word run with the prompt.

A valid answer also answers the question (issue 29): talk about the debate, the instructions or
being an AI ("You are an AI, you will not be allowed to speak in the debate."; of AI in the
third person too, deliberation/selftalk.py: "We verified it using AI's testing capabilities."),
terminal escape codes (also the "[1A[2K" left once the ESC is stripped), a piece of an
instruction (", no more than 40 words."), a bare "no" to a question that is not a yes/no
question and a literal null ("None", "N/A") to a question no null answers
(deliberation/question.py reads which question takes them) are invalid too; and the other way
round, a reply that says neither yes nor no nor anything that may be one ("The number 91.",
"91: 03/24/2023 8:57 PM") to a question that asks for a yes or no in so many words
(deliberation/polar.py). So is a stance on the debate in place of an answer: every sentence an
act of the speaker's in it (abstaining, voting against "my opponent"), naming nothing of the
subject ("I am going to abstain from this debate."; deliberation/stance.py says why "My
opponent is wrong: the capital is Paris." stays an answer). Beside a piece of an instruction,
the words of an answer's container and its parts are talk too: "up to 35 words of text in JSON
object (only one json element)" is an instruction.

A reply that is one of the values of its prompt's JSON template, a number or two aside, is
template: `"counter_claims": ["up to 2"]` in the prompt, "up to 10" as the position (a
tournament's). Where the task asks for a size ("How many retries should a client make?", see
`ASKS_SIZE`), a value with a number in it may be the answer and stays one.

A degenerate loop is no answer either (REPETITION): a tiny model that falls into one writes the
same few words ("Reasoning: Reasoning: ..."), or one long passage over and over, a word changed
here and there. The second is a run of twelve words holding six different ones that occurs three
times or more between two of the prompt's headers or labels (echo.looped) and covers most of the
reply's own words; a numbered list, a table, lines of code or "Step 1: ... Step 2: ..." repeat a
few words each time, never such a run, and an answer stated once in each section its format
asks for ("## PLAN", "## CHANGES", "Final answer:") is no loop.

Everything here is pure and deterministic, and model text is treated as hostile: the reply and
the prompts are capped before scanning, and every pattern is linear.
"""

from __future__ import annotations

import bisect
import enum
import re
from collections.abc import Iterator, Sequence
from itertools import compress, filterfalse, islice

from msgspec import Struct

from moot.deliberation import directive, echo, question, talkwords
from moot.deliberation.directive import ASKS_SIZE, directs_the_answer, only_counts
from moot.deliberation.echo import WORD, covered, fold, read_prompts, read_task
from moot.deliberation.markup import strip_markup
from moot.deliberation.polar import says_neither
from moot.deliberation.question import (
    ASKING,
    AUXILIARIES,
    asks_for_a_name,
    asks_yes_or_no,
    is_yes_no_question,
    null_said,
    takes_nulls,
)
from moot.deliberation.selftalk import talks_about_ai
from moot.deliberation.stance import takes_a_stance

__all__ = ["NotSubstantive", "Reason", "check_substance"]

# How much is scanned: a reply's head and tail (an echo starts at the top; an answer after a
# copied preamble shows at the end), and each prompt's head (echo.PROMPT_CAP).
REPLY_HEAD = 16_000
REPLY_TAIL = 4_000


class Reason(enum.StrEnum):
    """Why a reply is not a substantive answer."""

    EMPTY = "empty"  # nothing but whitespace
    MARKUP_ONLY = "markup_only"  # nothing but protocol tags, fence ids or punctuation
    TEMPLATE = "template"  # placeholders, schema text, the prompt's field labels and headers
    ECHO = "echo"  # the prompt's instructions or the task, copied back
    REFUSAL = "refusal"  # "I can't help with that", "As an AI language model I cannot"
    REPETITION = (
        "repetition"  # a loop of the same few words or one passage, as tiny models fall into
    )
    META = "meta"  # talk about the debate, the instructions or being an AI, not an answer
    CONTROL = "control"  # terminal escape codes or control characters, not text
    INSTRUCTION = "instruction"  # a piece of an instruction: ", no more than 40 words."
    BARE_YES_NO = "bare_yes_no"  # "No." to a question that is not a yes/no question
    NULL = "null"  # "None", "N/A", "True" alone, to a question such a value does not answer
    # "The number 91." to "Is 91 a prime number? Answer yes or no."
    NEITHER_YES_NOR_NO = "neither_yes_nor_no"


class NotSubstantive(Struct, frozen=True):
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
# A placeholder run together into one word: "youranswer", "your_answer_here", "answerhere",
# "YOUR_ANSWER", "definitive_response" (folded): an answer noun, whose or which answer it is and
# nothing else. One more part makes it a name ("my_answer_key"), a word beside it the answer.
_SLOT_NOUN = (
    r"(?:answers?|responses?|reply|solutions?|positions?|reasoning|explanations?|votes?|stance|"
    r"opinion)"
)
_RUN_TOGETHER = re.compile(
    r"(?<!\w)(?:(?:(?:your|my|our|the|insert|enter|put|write|add|final|definitive|correct|"
    r"best|right|true|actual|real|complete|full|short|brief|detailed|revised|updated|improved|"
    r"proposed|new)[_-]?){1,3}"
    + _SLOT_NOUN
    + r"(?:[_-]?(?:here|text))?|"
    + _SLOT_NOUN
    + r"[_-]?(?:here|text))(?!\w)"
)
_SLOT_HINTS = tuple(
    "answer respon repl solution position reason explan vote stance opinion".split()
)
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


_YES_NO = frozenset("yes no yeah yep yup yea nope nah".split())
# the words a numbered copy of a question may open with (and the task's first word, of its head)
_OPENS = AUXILIARIES | frozenset("how what which who whom whose why when where whether".split())
_OPENING = 200
# words that may stand around a bare yes/no without making it an answer: "Absolutely not."
_INTENSIFIERS = frozenset(
    "absolutely definitely certainly surely sure indeed course not really".split()
)
_YES_NO_AROUND = _YES_NO | _INTENSIFIERS


def _scan(reply: str) -> str:
    if len(reply) <= REPLY_HEAD + REPLY_TAIL:
        return reply
    return reply[:REPLY_HEAD] + "\n" + reply[-REPLY_TAIL:]


# What every match of a pattern holds (one of these strings or matches of these cheaper
# patterns): a reply without any is not scanned. Each regex costs a pass over the reply's
# characters, and most replies hold no label, header, refusal or limit at all. (The refusals'
# letters are matched ignoring case; in folded text only "ı" is also an "i" then.)
_NEEDS: dict[re.Pattern[str], tuple[str | re.Pattern[str], ...]] = {
    _EMPTY_SLOT: ("{{", ".."),
    _PLACEHOLDER: ("{",),
    _FILL_IN: ("<", "[", "("),
    _RUN_TOGETHER: _SLOT_HINTS,
    _SCHEMA: ('"',),
    _LABEL: (":",),
    _HEADER: ("#",),
    # (one literal each, which the regex engine finds fast)
    _REFUSAL: (re.compile(r"i\s"), re.compile(r"ı\s"), re.compile(r"as\s"), "sorry"),
    _UNIT: ("word", "sentence", "char", "line", "paragraph", "token", "bullet", "point"),
}


def _finditer(pattern: re.Pattern[str], folded: str) -> Iterator[re.Match[str]]:
    """`pattern.finditer(folded)`, or nothing at once when `folded` lacks what it needs."""
    for hint in _NEEDS[pattern]:
        if hint in folded if isinstance(hint, str) else hint.search(folded) is not None:
            return pattern.finditer(folded)
    return iter(())


def _clear_caches() -> None:
    """Forget every reading of prompts and tasks (for tests that must read afresh)."""
    echo.clear_caches()
    question.clear_caches()


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
    shown = "".join(ch if ch.isprintable() else "?" for ch in flat[:60])
    return repr(shown + ("..." if len(flat) > 60 else ""))


_FLIP = bytes.maketrans(b"\x00\x01", b"\x01\x00")
_MASKED = re.compile(rb"[^\x00]+")  # a run of masked characters
# a stretch of the mask that holds one reason's code or nothing, per code; a run of nothing
_STRETCH = {
    code: re.compile(b"[\x00" + re.escape(bytes([code])) + b"]*") for code in _CODE.values()
}
_UNMASKED = re.compile(rb"\x00+")
_ALNUM = re.compile(r"[^\W_]")  # what str.isalnum holds (SRE's Unicode word, less "_")


def _run_end(mask: bytearray, folded: str, start: int, code: int) -> int:
    """Where the run of text masked for `code` from `start` ends: it goes on through `code`
    and through unmasked characters that are not alphanumeric (the spaces and punctuation
    between masked words), and stops at anything else. Found per run of unmasked characters,
    by regex, not per character."""
    stretch = _STRETCH[code].match(mask, start)
    end = stretch.end() if stretch is not None else start
    for gap in _UNMASKED.finditer(mask, start, end):
        alnum = _ALNUM.search(folded, gap.start(), gap.end())
        if alnum is not None:
            return alnum.start()
    return end


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
    a stance in it, or only a yes or no (around such talk) to a question a yes or no does not
    answer; INSTRUCTION when such talk is all there is around a piece of an instruction ("Under
    100 words, please.", "up to 35 words of text in JSON object")."""
    task_words = read_task(task)[0] if task else frozenset[str]()
    # (set operations, in C: every word of its own is talk, and none is the task's)
    all_talk = talkwords.META_WORDS.issuperset(content) and task_words.isdisjoint(content)
    # (beside an instruction, the words of an answer's container, unless the task has them)
    form = talkwords.FORM_TALK if task_words.isdisjoint(talkwords.FORM_TALK) else frozenset()
    form_talk = task_words.isdisjoint(content) and all(
        w in talkwords.META_WORDS or w in form or w.isdigit() for w in content
    )
    if (all_talk or form_talk) and instructed:
        return NotSubstantive(
            Reason.INSTRUCTION, f"{_DETAIL[Reason.INSTRUCTION]} ({_sample(text)})"
        )
    # (or talk about AI in the third person, in words of what models are and do: `selftalk`)
    if (all_talk and talkwords.META_ANCHOR.search(folded) is not None) or talks_about_ai(
        folded, content, talkwords.ANSWER_TALK, task_words
    ):
        return NotSubstantive(
            Reason.META,
            "it talks about the debate, the instructions or being an AI instead of answering "
            f"({_sample(text)})",
        )
    # the task's words make an answer, but not its auxiliaries and question words: "should"
    # to "Should a small team use Postgres?" is no answer ("The solution should ...")
    asked = task_words - AUXILIARIES - ASKING
    if takes_a_stance(
        text[:REPLY_TAIL],
        asked - talkwords.FILLER,
        numbers_name=not (task and asks_for_a_name(task)),
    ):
        return NotSubstantive(
            Reason.META,
            f"it takes a stance on the debate (abstaining, voting) instead of answering "
            f"({_sample(text)})",
        )
    # (the answer may be named in words copied from the prompt, as when a re-ask quotes the
    # reply back, but a word of its own must be about answers or the work they take: "Okay."
    # after a copy of "Write your answer in ..." is an echo)
    if (
        asked.isdisjoint(content)
        and only_counts(
            list(filterfalse(talkwords.ANSWER_TALK.__contains__, content)), folded, asked
        )
        and any(w in talkwords.ABOUT_ANSWERS or w in directive.WORK for w in content)
        and talkwords.ABOUT_THE_ANSWER.search(folded) is not None
    ) or directs_the_answer(text[:REPLY_TAIL], asked - talkwords.FILLER, talkwords.DIRECTIVE_TALK):
        return NotSubstantive(
            Reason.META, f"it says how to answer instead of answering ({_sample(text)})"
        )
    said = list(filter(_YES_NO.__contains__, content))
    rest = list(filterfalse(_YES_NO_AROUND.__contains__, content))
    if not said and not rest and "not" in content:
        said = ["no"]  # "Absolutely not.", "Certainly not."
    if said and all(w in talkwords.META_WORDS and w not in asked for w in rest):
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
    folded = fold(text)
    if not WORD.search(text):
        if _EMPTY_SLOT.search(folded):
            return NotSubstantive(Reason.TEMPLATE, f"it is a placeholder ({_sample(text)})")
        if _CONTROL.search(folded):
            return NotSubstantive(Reason.CONTROL, f"{_DETAIL[Reason.CONTROL]} ({_sample(text)})")
        if text != scanned.strip():
            return NotSubstantive(Reason.MARKUP_ONLY, "it holds only protocol markup")
        return NotSubstantive(Reason.MARKUP_ONLY, f"it holds no words ({_sample(text)})")

    grams, vocabulary, fences, examples = read_prompts(prompts, task)
    task_words, task_grams = read_task(task) if task else (frozenset(), frozenset())
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
    # moot's own markup copied back: the id of a fence around quoted material in the prompt
    for start, end in echo.fence_echoes(folded, fences):
        cover(start, end, Reason.MARKUP_ONLY)
    for pattern in (_EMPTY_SLOT, _PLACEHOLDER, _FILL_IN, _RUN_TOGETHER, _SCHEMA):
        for m in _finditer(pattern, folded):
            cover(m.start(), m.end(), Reason.TEMPLATE)
    for m in _finditer(_LABEL, folded):
        # a label the prompt uses, or one whose value holds no word of the model's own
        # (`Reasoning: {`), is template; the value itself is judged on its own
        name = m.group(1)
        value = WORD.finditer(folded, m.start(2), m.end(2))
        empty = all(mask.count(0, w.start(), w.end()) == 0 for w in value)
        if name in vocabulary or name.replace("-", "") in vocabulary or empty:
            cover(m.start(), m.start(2), Reason.TEMPLATE)
    for m in _finditer(_HEADER, folded):
        header = m.group(1).split()
        if header and all(w in vocabulary for w in header):
            cover(m.start(), m.end(), Reason.TEMPLATE)
    for m in _finditer(_REFUSAL, folded):
        cover(m.start(), m.end(), Reason.REFUSAL)
    for m in _finditer(_UNIT, folded):
        # "at most 280 characters" answers "How long can a post be, in characters?"
        unit = m.group()
        if {unit, unit.removesuffix("s"), unit + "s"} & task_words or ASKS_SIZE & task_words:
            continue
        before = _BEFORE_UNIT.search(folded, max(0, m.start() - _WINDOW), m.start())
        if before is not None:
            cover(before.start(), m.end(), Reason.INSTRUCTION)

    # what is left: words no mask touches (no word is looked at character by character: the
    # echo is found per trigram, and the words a masked run touches per run, by bisection)
    tokens = WORD.findall(folded)
    from_task = covered(tokens, task_grams)
    echoed = bytearray((covered(tokens, grams) | from_task).to_bytes(len(tokens), "little"))
    # the numbers of a numbered copy are the copy's: "Is 7 a prime number? #1: Is 7 a prime ..."
    first = WORD.search(fold(task[:_OPENING])) if task else None
    opens = _OPENS if first is None else _OPENS | {first.group()}
    for i in echo.numbering(folded, echoed, opens):
        echoed[i] = 1
    kept = bytearray(echoed.translate(_FLIP))  # 1 for a word no echo covers
    # the words' spans, found only as far as a masked run or an echoed word needs them
    spans: list[tuple[int, int]] = []
    breaks: list[int] = []  # the words a masked run touches: they end a section (`echo.looped`)
    found = map(re.Match.span, WORD.finditer(folded))
    for run in _MASKED.finditer(mask):
        while not spans or spans[-1][0] < run.end():  # every word that starts before its end
            span = next(found, None)
            if span is None:
                break
            spans.append(span)
        # the words that touch a masked run: the last to start at or before it, if it reaches
        # into it, and those that start inside it (words are ordered and do not overlap)
        i = bisect.bisect_right(spans, (run.start(), len(mask))) - 1
        if i < 0 or spans[i][1] <= run.start():
            i += 1
        while i < len(spans) and spans[i][0] < run.end():
            kept[i] = 0
            if not breaks or breaks[-1] < i:
                breaks.append(i)
            i += 1
    own = list(compress(tokens, kept))
    if 1 in echoed:
        spans.extend(islice(found, max(0, echoed.rfind(1) + 1 - len(spans))))
        for start, end in compress(spans, echoed):
            cover(start, end, Reason.ECHO)
    content = list(filterfalse(talkwords.FILLER.__contains__, own))
    if len(content) >= 20 and len(set(content)) <= 3:
        sample = " ".join(content[:8])
        return NotSubstantive(Reason.REPETITION, f"it repeats the same few words ('{sample} ...')")
    # one passage over and over: most of its own words sit in a run it repeats (`echo.looped`)
    loop = echo.looped(tokens, breaks)
    if loop and (int.from_bytes(kept, "little") & loop).bit_count() * 2 > kept.count(1):
        at = ((loop & -loop).bit_length() - 1) // 8  # the first word of the first run
        sample = " ".join(tokens[at : at + 8])
        return NotSubstantive(
            Reason.REPETITION, f"it repeats one passage over and over ('{sample} ...')"
        )
    # a literal null, perhaps named as the answer ("The answer is None."), answers only some
    # questions (`question.takes_nulls`); without the task it cannot be judged
    null = null_said(list(filterfalse(talkwords.META_WORDS.__contains__, content)), folded)
    if null is not None and task and null not in takes_nulls(task):
        kind = "truth" if null in ("true", "false") else "null"
        return NotSubstantive(Reason.NULL, f"it is a {kind} value, not an answer ({_sample(text)})")
    if content:
        instructed = _CODE[Reason.INSTRUCTION] in mask
        talk = _talk_instead_of_answer(text, folded, content, task, instructed)
        if talk is not None and (
            talk.reason is not Reason.BARE_YES_NO or (task and not is_yes_no_question(task))
        ):
            return talk
    # invalid: nothing of its own left, or a long copy of the prompt with a stray word or two
    # ("... each with its reason. Okay."); restating the task before a short answer is fine
    # ("Postgres or SQLite for a session store? SQLite."), so the task's words do not count
    beyond_task = len(tokens) - from_task.bit_count()
    # a value of the prompt's template, a number or two aside ("up to 10" for `["up to 2"]`);
    # one with a number may answer a task about a size
    if examples and content and len(tokens) <= echo.EXAMPLE_WORDS:
        shape = echo.example_shape(tokens)
        if shape in examples and ("#" not in shape or ASKS_SIZE.isdisjoint(task_words)):
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
        # an answer of its own, unless the task asks for a yes or no and it says neither
        if task and asks_yes_or_no(task) and says_neither(own, folded):
            return NotSubstantive(
                Reason.NEITHER_YES_NOR_NO,
                f"it says neither yes nor no to a question that asks for a yes or no "
                f"({_sample(text)})",
            )
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
    end = _run_end(mask, folded, start, code)
    source = text if len(text) == len(folded) else folded
    return NotSubstantive(main, f"{_DETAIL[main]} ({_sample(source[start:end])})")
