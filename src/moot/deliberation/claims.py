"""What an answer claims, and when two claims agree: the one agreement relation of every protocol.

An answer reduces to a `Claim`: its explicit final answer where it gives one (`<answer>`, a box,
"Answer: X", "the answer is X"), else the whole text, cut to its head. The claim keeps what can
contradict another: its numbers with their units, the option or yes/no it picks, the content
words it asserts and those it denies ("not safe").

Two claims are compared in a fixed order, contradictions first:

  1. the same normalised answer                           -> agree
  2. different options (B vs C), yes against no            -> contradict
  3. quantities of one unit that differ (30 s vs 300 s)    -> contradict
  4. a word one claim asserts and the other only denies    -> contradict  ("safe" / "not safe")
     the same words with two things turned round, or one
     word for its opposite in the same place (swaps.py)    -> contradict
  5. two short claims that each name something the other
     does not, one or two words each (Paris vs Lyon)       -> contradict
  6. nothing contradicts, and the wording confirms it
     (one short claim's content inside the other's, the
     same numbers, or nearly the same words)               -> agree
     unless a name stands where the other has another
     ("in Redis" / "in Memcached"; swaps.py)               -> contradict
  7. otherwise                                             -> unsure

Similarity (rule 6, or a caller's embeddings or judge) may confirm agreement where nothing
contradicts; it never overrides a contradiction. `group_claims` groups agents whose claims agree
pairwise (complete linkage: no chain of near-matches joins two answers that contradict).

Pure and deterministic; model text is hostile: every claim is capped, every pattern linear.
"""

from __future__ import annotations

import difflib
import enum
import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from fractions import Fraction
from typing import Literal

from msgspec import Struct, field

from moot.deliberation.answers import extract_answer, normalize_answer
from moot.deliberation.markup import strip_markup
from moot.deliberation.named import Named, conflict, named, stated
from moot.deliberation.swaps import narrowed, one_for_another, opposite, renamed, turned_round
from moot.text import clean_text

__all__ = [
    "Claim",
    "ClaimGroup",
    "Comparison",
    "Relation",
    "compare",
    "extract_claim",
    "group_claims",
]

MAX_CLAIM_WORDS = 400  # a long answer is compared on its head
SHORT = 12  # content words: at most this many makes a claim short
_LEAD_IN = 5  # tokens: a label before a yes or no ("TL;DR:") is at most this long
_SUBSTITUTION = 2  # rule 5: each side names at most this many words the other lacks
_SIMILAR = 0.85  # rule 6: word-sequence similarity that confirms agreement
_SHARED = 0.6  # rule 6: share of content words in common that confirms agreement

ClaimKind = Literal["number", "option", "yesno", "statement"]

# Words, numbers (a sign, separators, a percent) and the punctuation that ends a clause (and a
# negation's reach). A number's minus only where it cannot be a hyphen: "n-1" is n and 1,
# "COVID-19" is 19, "is -3" is -3 (`_numeric` tells a number token by its start).
NUMBER = r"(?:(?<!\w)[-−])?\d+(?:[.,]\d+)*(?:/\d+)?%?"
_TOKEN = re.compile(NUMBER + r"|[^\W\d_]+(?:'[^\W\d_]+)*|[.;:!?,]")
_STOPS = frozenset(".;:!?,")
_SENTENCE_ENDS = frozenset(".;!?")
# "None" inside a sentence is Python's value ("it returns None"), not a negation; read as "null"
_NONE_VALUE = re.compile(r"(?<=[\w,;(=] )None\b|`None`")
_LIST_ITEM = re.compile(r"^[ \t]*\d{1,3}[.)][ \t]+", re.MULTILINE)
# ("non-atomic" folds to "non atomic": "non" denies the word it was joined to)
_NEGATIONS = frozenset("not no never none nothing nobody neither nor cannot without non".split())
# advice against a thing denies it: "I recommend against shipping it"
_ADVICE = frozenset(
    "recommend recommends recommended advise advises advised argue argues argued vote votes "
    "voted decide decides decided warn warns warned caution cautions cautioned".split()
)
# Words too common to carry an answer's content ("it's Paris" says Paris).
_FILLER = frozenset(
    "a an the is are was were be been being of to in on at for with by and or but if so as it "
    "its it's this that that's these those there there's here i i'm we you he she they my our "
    "your me us do does did will would should could can may might must has have had than then "
    "also just very answer final think believe say says said yes well sure course indeed "
    "which what who whom whose why how when where because".split()
)
_YES = frozenset({"yes", "yeah", "yep", "correct", "true", "affirmative"})
_NO = frozenset({"no", "nope", "false", "incorrect", "negative"})
# Scale words fold into the number ("2 million" is 2000000); the word after is the unit.
_SCALE = {"thousand": 1_000, "k": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_UNIT_ALIASES = {
    "s": "second", "sec": "second", "secs": "second", "seconds": "second",
    "ms": "millisecond", "milliseconds": "millisecond",
    "min": "minute", "mins": "minute", "minutes": "minute",
    "h": "hour", "hr": "hour", "hrs": "hour", "hours": "hour",
    "%": "percent", "percent": "percent",
}  # fmt: skip
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()
    )
}
# Units of time are compared in seconds: "2 minutes" is "120 seconds".
_SECONDS = {
    "millisecond": Fraction(1, 1000),
    "second": Fraction(1),
    "minute": Fraction(60),
    "hour": Fraction(3600),
    "day": Fraction(86400),
    "week": Fraction(604800),
}
# Words a negation reaches past to the word it denies: "not at all safe", "isn't really safe".
_DEGREE = frozenset(
    "at all really quite entirely completely necessarily always fully totally particularly "
    "going to get become".split()
)


class Relation(enum.StrEnum):
    AGREE = "agree"
    CONTRADICT = "contradict"
    UNSURE = "unsure"


class Comparison(Struct, frozen=True):
    """How two claims relate, and why in words ("408 vs 418")."""

    relation: Relation
    reason: str


class Claim(Struct, frozen=True):
    """What one answer claims.

    `text` is the claim as shown to a reader (the explicit final answer, or the answer's head);
    `key` its normalised form (equal keys are one answer); `quantities` maps a unit ("" for a
    bare number) to the values given in it; `asserted` and `denied` are content words said
    plainly and under a negation; `content` every content word beyond filler."""

    text: str
    kind: ClaimKind
    key: str
    words: tuple[str, ...]
    terms: tuple[str, ...]  # the content words in order, each once
    head: tuple[str, ...]  # those of its first sentence
    content: frozenset[str]
    asserted: frozenset[str]
    denied: frozenset[str]
    quantities: tuple[tuple[str, frozenset[Fraction]], ...]
    choice: str | None = None  # an option letter, or "yes"/"no"
    # what folding loses: names ("plan A"), complexities ("O(n^2)"), preferences (named.py)
    names: Named = field(default_factory=Named)
    # with the task known: the content words the task does not hold, and whether the claim is
    # the task's own content words and nothing else ("what the capital of France?")
    new: frozenset[str] | None = None
    repeats_task: bool = False

    @property
    def short(self) -> bool:
        return len(self.content) <= SHORT

    def values(self) -> dict[str, frozenset[Fraction]]:
        return dict(self.quantities)


def _fold(text: str) -> str:
    folded = unicodedata.normalize("NFKC", strip_markup(clean_text(text)))
    return folded.replace("’", "'").replace("−", "-").casefold()


def _numeric(token: str) -> bool:
    """Whether a token (of `_TOKEN`) is a number: only its first alternative starts with a
    sign or a decimal digit, so the first character tells (a regex per token costs more)."""
    return token[:1].isdecimal() or token[:1] in "-−"


@functools.lru_cache(maxsize=4096)  # a long answer repeats its numbers; Fraction is slow
def _number(token: str) -> Fraction | None:
    digits = token.rstrip("%").replace(",", "")
    if len(digits) > 40:  # "1.2.3" and "1/0" are no number either: Fraction refuses them
        return None
    try:
        return Fraction(digits)
    except (ValueError, ZeroDivisionError):
        return None


def _unit(word: str | None) -> str:
    if word is None or word in _STOPS or _numeric(word):  # "408." has no unit "."
        return ""
    word = _UNIT_ALIASES.get(word, word)
    if word in _FILLER or word in _NEGATIONS:
        return ""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _terms(words: Sequence[str], kind: ClaimKind) -> tuple[str, ...]:
    """The content words in order, each once: no filler, negation, degree word or number."""
    return tuple(
        dict.fromkeys(
            w
            for w in words
            if w not in _FILLER
            and w not in _NEGATIONS
            and w not in _DEGREE
            and not w.endswith("n't")
            and not _numeric(w)
            and (kind != "yesno" or w not in _YES | _NO)
        )
    )


def _read(tokens: list[str]) -> tuple[dict[str, set[Fraction]], set[str], set[str]]:
    """Quantities by unit, asserted words and denied words of a token sequence. A negation
    denies the first content word after it ("not really safe" denies "safe"), within its
    clause."""
    quantities: dict[str, set[Fraction]] = {}
    asserted: set[str] = set()
    denied: set[str] = set()
    negated = False
    i = 0
    while i < len(tokens):
        word = tokens[i]
        if word in _STOPS:
            negated = False
        elif (
            word in _NEGATIONS
            or word.endswith("n't")
            or (word == "against" and i and tokens[i - 1] in _ADVICE)
        ):
            negated = True
        elif _numeric(word):
            value = _number(word)
            if value is not None:
                after = tokens[i + 1] if i + 1 < len(tokens) else None
                if after in _SCALE:
                    value *= _SCALE[after]
                    i += 1
                    after = tokens[i + 1] if i + 1 < len(tokens) else None
                unit = "percent" if word.endswith("%") else _unit(after)
                if unit in _SECONDS:
                    value, unit = value * _SECONDS[unit], "second"
                # "not 4" denies the number; it claims no quantity
                (denied if negated else asserted).add(f"#{value}")
                if not negated:
                    quantities.setdefault(unit, set()).add(value)
                negated = False
        elif word not in _FILLER and word not in _DEGREE:
            (denied if negated else asserted).add(word)
            negated = False
        i += 1
    return quantities, asserted, denied


def _claim_text(answer: str) -> str:
    """The explicit final answer where the answer gives one, else the answer itself."""
    found = extract_answer(answer)
    if found is not None and found.source in ("tag", "boxed", "answer_line"):
        return found.text
    return clean_text(answer).strip()


# Claims of answers and tasks up to this size are kept (a few hundred answers of a session);
# longer ones are read each time, so the cache holds at most about 50 MB.
_KEPT_CHARS = 100_000


def extract_claim(answer: str, task: str | None = None) -> Claim:
    """The claim an answer makes (module docstring). An empty answer makes an empty claim.
    With the `task`, the claim knows which of its words are its own (`new`) and whether it
    only repeats the task.

    A pure function of its text, kept (lru_cache; a `Claim` is frozen): a protocol reads every
    answer so far again after each round (the finding over every round), and a resume reads
    every saved answer again, so each answer is read once, not once per round (issue 23)."""
    if len(answer) + len(task or "") <= _KEPT_CHARS:
        return _kept_claim(answer, task)
    return _claim(answer, task)


@functools.lru_cache(maxsize=512)
def _kept_claim(answer: str, task: str | None) -> Claim:
    return _claim(answer, task)


def _claim(answer: str, task: str | None) -> Claim:
    text = _claim_text(answer)
    read = _NONE_VALUE.sub("null", _LIST_ITEM.sub("", text[:20_000]))
    tokens = _TOKEN.findall(_fold(read))[: MAX_CLAIM_WORDS * 2]
    words = [t for t in tokens if t not in _STOPS][:MAX_CLAIM_WORDS]
    lead = _lead_in(tokens)
    if lead:  # "Verdict: no, it is not safe." is the no and what follows it
        tokens = tokens[lead:]
        words = [t for t in tokens if t not in _STOPS][:MAX_CLAIM_WORDS]
    if 1 <= len(words) <= 3 and words[0] in _NUMBER_WORDS:  # "Four." is 4
        words[0] = _NUMBER_WORDS[words[0]]
        tokens = words
        text = " ".join(words)
    norm = normalize_answer(text)
    choice: str | None = None
    kind: ClaimKind = "statement"
    names = named(text)
    if norm.kind == "choice":
        kind, choice = "option", norm.key.removeprefix("choice:")
    elif len(names.options) == 1:  # "Option C is safest.": the letter is the answer
        kind, choice = "option", next(iter(names.options))
    elif norm.kind == "number":
        kind = "number"
    elif words and (words[0] in _YES or words[0] in _NO):
        # "No, it is not safe": the leading no is the answer, not a negation of what follows
        kind, choice = "yesno", "yes" if words[0] in _YES else "no"
        tokens = tokens[1:]
    quantities, asserted, denied = _read(tokens)
    terms = _terms(words, kind)
    sentence_end = next((i for i, t in enumerate(tokens) if t in _SENTENCE_ENDS), len(tokens))
    head = _terms([t for t in tokens[:sentence_end] if t not in _STOPS], kind)
    content = frozenset(terms)
    told = [t for t in _TOKEN.findall(_fold(task[:20_000])) if t not in _STOPS] if task else []
    asked, numbers = frozenset(_terms(told, "statement")), _numbers(words)
    return Claim(
        text=" ".join(text.split())[:500],
        kind=kind,
        key=norm.key if norm.kind != "text" else "text:" + " ".join(words),
        words=tuple(words),
        terms=terms,
        head=head,
        content=content,
        asserted=frozenset(w for w in asserted if w in content or w.startswith("#")),
        denied=frozenset(w for w in denied if w in content or w.startswith("#")),
        quantities=tuple(sorted((u, frozenset(v)) for u, v in quantities.items())),
        choice=choice,
        names=names,
        new=content - asked if task else None,
        repeats_task=bool(
            task
            and (content or numbers)
            and content <= asked
            # "2 + 3 =" to "What is 2 + 3?": the task's numbers, each as often ("3 x 1 = 3" adds)
            and (not quantities or numbers == _numbers(told))
            and not denied
            # a statement to a wh-question; a number alone to another ("7" to "Is 7 prime?")
            and (kind == "statement") == _asks_what(task)
            and kind in ("statement", "number")
            # a part of the question, unless it names one of the alternatives the task offers
            and (content == asked or not _offers_alternatives(task))
        ),
    )


def _numbers(tokens: Sequence[str]) -> Counter[Fraction]:
    return Counter(v for t in tokens if _numeric(t) and (v := _number(t)) is not None)


def _lead_in(tokens: Sequence[str]) -> int:
    """How many tokens a short label before a yes or no takes ("Verdict:", "In short:",
    "TL;DR:"): up to its colon, within the first sentence's first few tokens; 0 for none."""
    for i, token in enumerate(tokens[:_LEAD_IN]):
        if token in ".!?":
            return 0
        if token == ":":
            after = tokens[i + 1] if i + 1 < len(tokens) else ""
            return i + 1 if i and (after in _YES or after in _NO) else 0
    return 0


def _show(values: frozenset[Fraction], unit: str) -> str:
    shown = ", ".join(str(v) for v in sorted(values))  # 408, 1/2
    return f"{shown} {unit}".strip()


def _quantity_conflict(a: Claim, b: Claim) -> str | None:
    qa, qb = a.values(), b.values()

    def clash(x: frozenset[Fraction], y: frozenset[Fraction]) -> bool:
        return not (x <= y or y <= x)

    for unit in sorted(set(qa) & set(qb)):
        if clash(qa[unit], qb[unit]):
            return f"{_show(qa[unit], unit)} vs {_show(qb[unit], unit)}"
    # A bare number against a claim whose numbers all carry units: "408" vs "408 apples".
    for x, y, flip in ((qa, qb, False), (qb, qa, True)):
        if "" in x and "" not in y and y:
            union = frozenset().union(*y.values())
            if not x[""] & union:
                left, right = _show(x[""], ""), _show(union, "")
                return f"{right} vs {left}" if flip else f"{left} vs {right}"
    return None


def _negation_conflict(a: Claim, b: Claim) -> str | None:
    for x, y, first in ((a, b, True), (b, a, False)):
        only_denied = x.denied - x.asserted
        clash = sorted(only_denied & (y.asserted - y.denied))
        if clash:
            word = clash[0].removeprefix("#")
            return (
                f"one says not '{word}', the other says '{word}'"
                if first
                else f"one says '{word}', the other says not '{word}'"
            )
    for x, y in ((a, b), (b, a)):
        for word in sorted(x.asserted):
            for prefix in ("un", "non"):
                rest = word.removeprefix(prefix)
                if rest != word and len(rest) >= 3 and rest in y.asserted and word not in y.content:
                    return f"'{word}' vs '{rest}'"
    return None


def _matcher(a: Claim, b: Claim) -> difflib.SequenceMatcher[str]:
    """Two claims' word sequences matched: the words aligned (`swaps.opposite`) and how alike
    they are (rule 6; compare has set empty claims aside)."""
    return difflib.SequenceMatcher(None, a.words, b.words, autojunk=False)


def compare(a: Claim, b: Claim) -> Comparison:
    """How claim `a` relates to claim `b` (the rules in the module docstring).

    A pure function of two frozen claims, kept (lru_cache), as `extract_claim` is: the finding
    after a round groups the same final answers that the check before the judge grouped, and a
    comparison of long claims (their word sequences matched) costs up to a millisecond."""
    return _compared(a, b)


@functools.lru_cache(maxsize=4096)
def _compared(a: Claim, b: Claim) -> Comparison:
    if not a.words or not b.words:
        return Comparison(Relation.UNSURE, "an empty claim agrees with nothing")
    if a.kind == "option" and b.kind == "option" and a.choice != b.choice:
        return Comparison(Relation.CONTRADICT, f"option {a.choice} vs option {b.choice}")
    if a.kind == "yesno" and b.kind == "yesno" and a.choice != b.choice:
        return Comparison(Relation.CONTRADICT, f"{a.choice} vs {b.choice}")
    names = conflict(a.names, b.names)  # "plan A" vs "plan B", "O(n)" vs "O(n^2)"
    if names is not None:
        return Comparison(Relation.CONTRADICT, names)
    numbers = _quantity_conflict(a, b)
    if numbers is not None:
        return Comparison(Relation.CONTRADICT, numbers)
    if a.kind == "number" and b.kind == "number":
        units_a, units_b = set(a.values()) - {""}, set(b.values()) - {""}
        if units_a and units_b and not units_a & units_b:
            return Comparison(
                Relation.CONTRADICT, f"{' '.join(sorted(units_a))} vs {' '.join(sorted(units_b))}"
            )
        return Comparison(Relation.AGREE, "the same number")
    if a.key == b.key:
        return Comparison(Relation.AGREE, "the same answer")
    negation = _negation_conflict(a, b)
    if negation is not None:
        return Comparison(Relation.CONTRADICT, negation)
    # the same words with two things exchanged, or one word for its opposite (swaps.py)
    exchanged = turned_round(a.words, b.words)
    if exchanged is not None:
        return Comparison(Relation.CONTRADICT, exchanged)
    matched = _matcher(a, b)
    opcodes = matched.get_opcodes()
    opposed = opposite(a.words, b.words, opcodes) or narrowed(a.words, b.words, opcodes)
    if opposed is not None:
        return Comparison(Relation.CONTRADICT, opposed)
    if (a.kind == "yesno") != (b.kind == "yesno"):
        # "No" beside a statement: whether the statement says no cannot be read off its words
        return Comparison(Relation.UNSURE, "a yes or no beside a statement")
    if a.repeats_task or b.repeats_task:
        return Comparison(Relation.UNSURE, "an answer that only repeats the question")
    if a.kind == "yesno" and not a.content and not b.content and a.choice == b.choice:
        return Comparison(Relation.AGREE, "the same answer")
    a_only, b_only = a.content - b.content, b.content - a.content
    if a.short and b.short:
        # the same sentence with one entity swapped, in the whole claim or in its first
        # sentence ("Use SQLite for X." / "Use Postgres for X; SQLite cannot ...")
        swapped = _substitution(a.terms, b.terms) or _substitution(a.head, b.head)
        swapped = swapped or one_for_another(
            a.words, b.words, opcodes, content=a.content | b.content
        )
        if swapped is not None:
            return Comparison(Relation.CONTRADICT, swapped)
        # A claim with no content words says nothing another could contain ("42" is not
        # inside "Paris"), except a yes or no beside the same yes or no with its reasons.
        both_yesno = a.kind == b.kind == "yesno"
        # (and one saying nothing beyond the task is in no other: "what the capital of France?")
        own = _own(a) and _own(b)
        if (own or both_yesno) and (not a_only or not b_only):
            return _worded(a, b, opcodes, "one says all the other says")
        numbers_only = not a.content or not b.content
        if numbers_only and a.quantities and b.quantities and a.denied == b.denied:
            # numbers alone on both sides state the same: "4" and "2 + 2 = 4", not "2+2=10; 3*4"
            if a.content or b.content or stated(a.names, a.values()) == stated(b.names, b.values()):
                return Comparison(Relation.AGREE, "the same numbers")
    union = a.content | b.content
    shared = len(a.content & b.content) / len(union) if union else 0.0
    if matched.ratio() >= _SIMILAR or shared >= _SHARED:
        return _worded(a, b, opcodes, "nearly the same words, and nothing contradicts")
    return Comparison(Relation.UNSURE, "nothing contradicts, but the wording does not confirm it")


def _worded(
    a: Claim, b: Claim, opcodes: Sequence[tuple[str, int, int, int, int]], reason: str
) -> Comparison:
    """Agreement the wording confirms, unless the words differ where one names a thing and
    the other another ("sessions in Redis" / "sessions in Memcached": swaps.renamed)."""
    swapped = renamed(a.words, b.words, opcodes, a.names.proper, b.names.proper)
    if swapped is not None:
        return Comparison(Relation.CONTRADICT, swapped)
    return Comparison(Relation.AGREE, reason)


_WH = frozenset("what which who whom whose where when why how".split())
_ALTERNATIVES = frozenset("or versus vs either between".split())


def _offers_alternatives(task: str) -> bool:
    """Whether the task names alternatives to pick from ("Postgres or SQLite?"), so that an
    answer made of its words can still pick one."""
    return not _ALTERNATIVES.isdisjoint(_TOKEN.findall(_fold(task[:2_000])))


def _asks_what(task: str) -> bool:
    """Whether the task asks a wh-question ("What is the capital of France?"), which a
    restatement does not answer; a restated yes/no question ("The migration is safe to run on
    Friday.") does answer it."""
    folded = _fold(task[:2_000])
    question = folded[: folded.rfind("?")] if "?" in folded else folded
    # the last sentence: "Tell me what the capital of France is." ends in its own full stop
    return any(w in _WH for w in _TOKEN.findall(question.rstrip(" \t\n.!").split(".")[-1]))


def _own(claim: Claim) -> bool:
    """Whether a claim says anything of its own: content words that are not just the task's
    ("SQLite" to "Postgres or SQLite?" picks one; "the capital of France" repeats the task)."""
    return bool(claim.content) and not claim.repeats_task


@functools.lru_cache(maxsize=4096)
def _substitution(a: tuple[str, ...], b: tuple[str, ...]) -> str | None:
    """The words swapped when two term sequences say the same but for one or two words in one
    place ("use SQLite" / "use Postgres", "Paris" / "Lyon"): another entity, another choice.
    Kept (lru_cache): a short claim's head is most often its whole terms, asked again."""
    return one_for_another(a, b, _opcodes(a, b), most=_SUBSTITUTION)


def _opcodes(a: Sequence[str], b: Sequence[str]) -> Sequence[tuple[str, int, int, int, int]]:
    # autojunk only drops an item that recurs in over 1% of a 200-item sequence: terms never
    # recur (each word once), so autojunk=True and the default behave the same here.
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()  # pragma: no mutate


class ClaimGroup(Struct, frozen=True):
    """Agents whose claims agree pairwise. `claim` is in the words of its most common member."""

    claim: str
    agents: tuple[str, ...]


def group_claims(
    claims: Mapping[str, Claim],
    *,
    confirmed: bool = False,
    order: Sequence[str] | None = None,
    apart: Collection[str] = (),
) -> tuple[ClaimGroup, ...]:
    """Group agents (in `order`, default sorted) whose claims agree pairwise; largest first, then
    by first member. With `confirmed` (a judge says they agree) pairs merely unsure join too, but
    none with an agent of `apart` (the judge's own answer); a contradiction never does."""
    agents = [a for a in (order or sorted(claims)) if a in claims]
    joins: dict[tuple[str, str], bool] = {}
    for i, x in enumerate(agents):
        for y in agents[i + 1 :]:
            relation = compare(claims[x], claims[y]).relation
            vouched = confirmed and x not in apart and y not in apart
            ok = relation is Relation.AGREE or (vouched and relation is Relation.UNSURE)
            joins[(x, y)] = joins[(y, x)] = ok
    groups: list[list[str]] = []
    for agent in agents:
        for group in groups:
            if all(joins[(agent, member)] for member in group):
                group.append(agent)
                break
        else:
            groups.append([agent])
    groups.sort(key=lambda g: (-len(g), agents.index(g[0])))
    return tuple(ClaimGroup(_most_common(claims, g), tuple(g)) for g in groups)


def _most_common(claims: Mapping[str, Claim], group: Sequence[str]) -> str:
    counts = Counter(claims[a].key for a in group)
    top = max(counts.values())
    first = next(a for a in group if counts[claims[a].key] == top)
    return claims[first].text
