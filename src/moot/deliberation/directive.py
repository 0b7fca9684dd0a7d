"""Does a reply tell the answer what to be instead of being one? (issues 9 and 29)

Tiny models answer with instructions addressed to the answerer: "Your answer should be concise
yet informative.", "Your answer must be a single sentence.", and the README's first run once
certified "Your Answer Must be: Your answer must contain a clear title case
1234567890ABCDEFGHIJKLMNOPQRSTUVWXYZ Z" by persuasion. Each sentence of such a reply has the
answer as its subject and a modal verb, and then says only

- what the answer should be like, in words that describe an answer (its form, grade, work or
  how it reads: `QUALITY`), no noun phrase and nothing concrete (no number, name, code or word
  of the task): "should be concise yet informative", "should be concise: brief and clear";
- or what it should be or hold, in words about answers and their form only: "must be a single
  sentence", "must contain a clear title";
- or, after a colon, another such directive;

or it says what the reader's answer is and names nothing (no word of the task, number, code or
name, no clause of substance joined on): "Your Answer Is Unique To The Question You're
Asking.", "Your answer is correct." (two README agents ended on such a sentence by persuasion);
or it only describes an answer: "A concise answer with no extra information." (the README's
first run gave that as its final answer), "the most straightforward answer ever." (another
README run certified that one by persuasion). A "no" that ends its clause ("The answer is no.",
"Your answer: no.") is the answer said, not a word of its description: substance then judges it
as a bare no, an answer to a yes/no question only.

"The answer should be 4.", "The answer should be a queue.", "The solution must contain a mutex.",
"Your answer must be: Paris", "The answer should be simple: use a queue." and "The answer
should be blue." are answers, hedged: a word of the subject names the answer. An alphabet or a
run of digits ("ABCDEFGHIJ", "1234567890") is a sample of characters, not content, and so is a
lone letter the task does not name. A number that counts the answer's parts ("exactly two
sections of one or more lines") says what form it takes, not what it says (`only_counts`:
substance's talk rule reads numbers so too). A parenthesis of plain words ("(single
sentence)") is prose, not code. Everything here is linear in the text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from msgspec import Struct

from moot.deliberation.echo import WORD, fold

__all__ = [
    "ANSWER_NOUNS",
    "ASKS_SIZE",
    "GRADE",
    "QUALITY",
    "WORK",
    "directs_the_answer",
    "only_counts",
]

ANSWER_NOUNS = (
    r"(?:solution|answer|response|reply|reasoning|explanation|justification|rationale|"
    r"submission|proposal|approach)s?"
)
# the answer as a sentence's subject, and a modal verb: "Your answer must", "Each response needs to"
_SUBJECT = (
    r"[\s\-*>\"'(]*(?:your|the|this|that|an?|my|our|each|every|any)\s+(?:[\w'-]{1,24}\s+){0,2}?"
    r"(?P<noun>" + ANSWER_NOUNS + r"|text|output)\s+(?:should|must|needs?\s+to|has\s+to|"
    r"have\s+to|ought\s+to|is\s+(?:required|expected|supposed|going)\s+to|will\s+need\s+to|"
    r"will|would|shall|can|could|may|might)\s+(?:always\s+|also\s+|really\s+)?"
)
# what it should be like, with no noun phrase of its own
_LIKE = re.compile(
    _SUBJECT + r"(?:be|sound|seem|look|read|feel|remain|stay|become)\b"
    r"(?!\s+(?:an?|the|some|any|one|two|this|that|these|those|its|their|our|my|your)\b)"
    r"(?P<rest>.*)",
    re.IGNORECASE | re.DOTALL,
)
# what it should be or hold
_HOLD = re.compile(
    _SUBJECT + r"(?:be|contain|include|have|use|mention|state|give|provide|show|list|cover|"
    r"follow|start\s+with|begin\s+with|end\s+with|consist\s+of)\b(?P<rest>.*)",
    re.IGNORECASE | re.DOTALL,
)
# the reader's answer as the subject, with a copula: "Your Answer Is Unique To The Question",
# "Your answer is correct." (what it is said to be is judged by `_names_something`)
_YOURS = re.compile(
    r"[\s\-*>\"'(]*your\s+(?:[\w'-]{1,24}\s+){0,2}?(?P<noun>" + ANSWER_NOUNS + r")\s+"
    r"(?:is|are|was|were)\b(?P<rest>.*)",
    re.IGNORECASE | re.DOTALL,
)
_CLAUSES = re.compile(r"[^:;,()\-]+")
_I = re.compile(r"I\b")  # a capitalised word that names nothing ("I", "I'm")
# what may join a clause of substance to it: "Your solution is fine but the lock is missing."
_JOINED = frozenset("but because since although though so while whereas except unless".split())
_YOURS_WORDS = 10  # a longer account of the reader's answer is read as one of substance
_NOUN = re.compile(r"\b" + ANSWER_NOUNS + r"\b", re.IGNORECASE)
# words that only say an answer is bare: "with no extra information"
_BARE = frozenset("no extra unnecessary just nothing else".split())
# ... but a "no" that ends its clause is said, not a word of a description: "The answer is
# no.", "Your answer: no." (substance judges a bare no against the task's question)
_SAID_NO = re.compile(r"\bno\b(?![\s'-]*[^\W\d_])", re.IGNORECASE)
# words that only grade an answer: "the most straightforward answer ever", "the best possible",
# "always better than yours", "perfectly prepared"
GRADE = frozenset(
    """
    most very really truly quite best good great perfect ideal simple simplest straightforward
    direct obvious possible ever only right always worse worst perfectly excellent excellently
    ideally flawless flawlessly adequate adequately suitable suited optimal
    """.split()
)
# words of the work an answer takes, not of what it says: "a carefully planned answer", "careful
# planning and attention to detail" (substance's talk rule reads them and the grades as talk
# too: "This task requires careful planning."), the faculties it takes ("critical thinking
# skills", "good judgment and an open mind") and what to be ready for ("be prepared for the
# unexpected")
WORK = frozenset(
    """
    effort efforts care attention attentive diligence diligent dedication patience plan plans
    planned planning prepare prepared preparing preparation readiness focused rigor rigour
    rigorous discipline skill skills expertise knowledge understanding insight insights
    creativity creative thoughtful
    critical analytical judgment judgement intuition imagination curiosity curious ingenuity
    resourcefulness adaptability adaptable persistence perseverance resilience resilient
    determination concentration caution cautious vigilance mind minds mindful open minded
    solving expect unexpected unforeseen surprise surprises challenge challenges obstacle
    obstacles difficulty difficulties
    """.split()
)
# words that say how an answer reads, beside those of its form and grade: "concise yet
# informative", "well reasoned and polite", "succinct and persuasive". What the answer should be
# like is said in such words only; any other word names the subject ("should be blue", "should
# be idempotent"). Words a subject is often said in too (neutral, positive, solid) are none.
QUALITY = frozenset(
    """
    informative engaging persuasive persuasively convincing compelling confident confidently
    reasoned argued written rewritten worded phrased expressed presented explained organised
    organized coherent cohesive consistent readable understandable comprehensible accessible
    succinct succinctly terse crisp compact pertinent helpful useful valuable insightful
    comprehensive exhaustive extensive objective unbiased impartial honest honestly respectful
    courteous polite politely empathetic supportive encouraging casual conversational fluent
    eloquent elegant articulate lucid easy factual truthful reliable trustworthy credible
    interesting witty entertaining tailored polished warm calm jargon technical overly too yet
    but while though although still rather fairly highly extremely somewhat slightly never
    neither nor either free read understand understood follow entire whole another something
    description descriptions code
    """.split()
)
# words of what was asked of an answer and of its meeting it: "a concise answer that meets the
# specified requirements", "a single sentence with the specified information", "tailored
# accordingly", "has no value"
_DEMANDS = frozenset(
    """
    meet meets meeting met satisfy satisfies satisfying fulfil fulfils fulfill fulfills
    specified specification required requirement requirements criteria criterion requested
    instructions instruction information sentence sentences paragraph paragraphs single
    provides providing provided key accordingly already value
    """.split()
)
# a sentence of nothing but a word that joins it to another: "Your answers are already
# correct; however."
_JOINS = frozenset("however though but so yet still anyway also too thus therefore hence".split())
_JOINED_AT_MOST = 16  # characters of a sentence that may be one of them, with its spaces
# "one" as a pronoun, not a number: "explaining why one is better than the other"
_ONE = re.compile(
    r"\b(?:which|why|each|every|any|this|that)\s+one\b|\bone\s+(?:another|is|was|for)\b"
)
# what may stand before the answer noun without saying anything of it ("Solution.", "The answer.")
_DETERMINERS = frozenset("a an the this that your my our their its".split())
_SENTENCE = re.compile(r"[^.!?;\n]+")
_LEFT_OPEN = " \t\r\f\v([{<\"',"  # what a sentence may end on that holds nothing (str.rstrip)
_CODE = r"[`_(){}\[\]=<>/\\|#$%@]"
_CODE_LIKE = re.compile(_CODE)
_CONCRETE = re.compile(r"\d|" + _CODE + r"|\b(?!I\b)[A-Z]")
# a parenthesis of plain lowercase words after a space is prose ("one for the answer itself
# (single sentence)"), not code: its words are read as the sentence's own
_PROSE_PARENS = re.compile(r"(?<![\w)\]])\(([a-z][a-z ,'-]{0,80})\)")
DIRECTIVE_SENTENCES = 12  # more sentences than this are not looked at as one directive
_NESTING = 3  # "must be: ... must be: ..." is followed this deep
# words about the form of an answer, beside the caller's words of talk about answers
_FORM = frozenset(
    """
    title titles heading headings header headers case uppercase lowercase capital capitals
    capitalised capitalized letter letters character characters bold italic italics markdown
    bullet bullets numbered format formatted formatting style tone length wording spelling
    grammar punctuation font plain simple formal informal polite friendly professional
    language english short long concise number numbers numeric text document divider dividers
    separator separators separated
    """.split()
)
# A count of the parts of an answer's form: "two sections", "one or more lines", "3 short
# paragraphs" (a word between, bounded). A number of anything else ("two pairs", "two
# pointers", "2") is the subject's.
_NUMBER = r"(?:\d{1,4}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty)"
_NUMBER_WORD = re.compile(_NUMBER)
_COUNT = re.compile(
    r"\b(" + _NUMBER + r")(?:\s+(?:or|to|and)\s+(" + _NUMBER + r"|more|fewer|less))?\s+"
    r"(?:[\w'-]{1,24}\s+)?(?:sections?|parts?|paragraphs?|sentences?|lines?|words?|bullets?|"
    r"points?|items?|headings?|headers?|titles?|steps?|examples?)\b"
)
# a task that asks for a size or a count ("How long can a post be?"): a number of lines or
# words may be its answer
ASKS_SIZE = frozenset("long many much length limit limits maximum minimum size".split())
# a sample of characters: part of "0123456789", "1234567890" or the alphabet, run together
_SAMPLES = ("0123456789", "1234567890abcdefghijklmnopqrstuvwxyz")
_SAMPLE_LENGTH = 5
_ABOUT_CHARACTERS = frozenset(
    "letter letters character characters digit digits alphabet number numbers".split()
)


def only_counts(words: Sequence[str], folded: str, asked: AbstractSet[str]) -> bool:
    """Whether `words` (of the folded text `folded`) are nothing but numbers that count parts
    of an answer's form there, each as often as it counts one: "two" and "one" in "exactly two
    sections of one or more lines", but not "two" in "Two. Your answer should have two
    sections." Never where the task asks for a size or a count (`asked`: its words), where a
    number of lines may be the answer."""
    if not words:
        return True
    if not ASKS_SIZE.isdisjoint(asked):
        return False
    # (a shortcut: a word that is no number is never counted below, so its mutants are
    # equivalent; most replies hold such a word, and then no text is scanned)
    if not all(map(_NUMBER_WORD.fullmatch, words)):  # pragma: no mutate
        return False
    counts = Counter(n for m in _COUNT.finditer(folded) for n in m.groups() if n in words)
    return not Counter(words) - counts


def _samples(words: list[str], asked: AbstractSet[str]) -> set[str]:
    """The words that only show characters: runs of characters in order ("abcdefg",
    "1234567890abc...z"), and lone letters beside such a run or that the task does not name
    (without a task a letter may be what it asks for: "The answer must be B."). A task about
    characters ("Which letters does the code use?") makes them its answer."""
    if not _ABOUT_CHARACTERS.isdisjoint(asked):
        return set()
    runs = {w for w in words if len(w) >= _SAMPLE_LENGTH and any(w in s for s in _SAMPLES)}
    letters = {
        w for w in words if len(w) == 1 and w.isalpha() and (runs or (asked and w not in asked))
    }
    return runs | letters


class _Task(Struct, frozen=True):
    """What a directive is read against: the task's words (`asked`), their stems (an answer
    noun the task uses makes it an answer) and the caller's words of talk about answers."""

    asked: AbstractSet[str]
    stems: frozenset[str]
    talk: AbstractSet[str]

    def names(self, noun: str) -> bool:
        return noun.lower().rstrip("s") in self.stems


def _describes(sentence: str, task: _Task) -> bool:
    """A description of an answer in place of one: "A concise answer with no extra
    information." names an answer and says only what it is like."""
    asked, talk = task.asked, task.talk
    noun = _NOUN.search(sentence)
    if noun is None or task.names(noun.group()):
        return False
    words = WORD.findall(fold(sentence))
    said = [w for w in words if w not in _DETERMINERS and not _NOUN.fullmatch(w)]
    return (
        bool(said)
        and not _CODE_LIKE.search(sentence)
        and all(
            (
                w in talk
                or w in _FORM
                or w in _BARE
                or w in GRADE
                or w in WORK
                or w in QUALITY
                or w in _DEMANDS
            )
            and w not in asked
            for w in words
        )
    )


def _only_how(words: list[str], folded: str, task: _Task) -> bool:
    """Whether `words` (of the folded text `folded`) only say how an answer reads: words of
    talk about answers, of their form, grade, work, bareness and quality, numbers that count
    their parts, and "one" as a pronoun ("why one is better than the other")."""
    others = [
        w
        for w in words
        if w not in task.talk
        and w not in _FORM
        and w not in _BARE
        and w not in GRADE
        and w not in WORK
        and w not in QUALITY
        and w not in _DEMANDS
    ]
    for _ in range(len(_ONE.findall(folded)) if "one" in others else 0):
        others.remove("one")
    return only_counts(others, folded, task.asked)


def _names_something(sentence: str, rest: str, task: _Task) -> bool:
    """Whether `rest` (what `sentence` says the answer is) names something: a word of the task,
    a number, code, or a name (a capitalised word other than "I", unless most words of its
    clause of the sentence are: "Your Answer Is Not a Function of the World" names nothing)."""
    if _CODE_LIKE.search(rest) or any(c.isdigit() for c in rest):
        return True
    if any(w in task.asked for w in WORD.findall(fold(rest))):
        return True
    subject = _CLAUSES.match(sentence)  # the clause `rest` begins in: "Your Answer Is ..."
    for i, clause in enumerate(_CLAUSES.findall(rest)):
        whole = (subject.group() if i == 0 and subject is not None else clause).split()
        if len(whole) >= 3 and sum(w[:1].isupper() for w in whole) * 2 > len(whole):
            continue  # title case
        if any(w[:1].isupper() and not _I.match(w) for w in clause.split()):
            return True
    return False


def _directive(sentence: str, task: _Task, depth: int) -> bool:
    asked, talk = task.asked, task.talk
    if _SAID_NO.search(sentence):
        return False
    # a bracket or quote left open at the end holds nothing: "... concise yet informative ("
    sentence = _PROSE_PARENS.sub(r" \1 ", sentence.rstrip(_LEFT_OPEN))
    # what the reader's answer is, naming nothing: talk about an answer, not one
    yours = _YOURS.match(sentence)
    if yours is not None and not task.names(yours.group("noun")):
        head, colon, after = yours.group("rest").partition(":")
        words = WORD.findall(fold(head))
        if (
            len(words) <= _YOURS_WORDS
            and _JOINED.isdisjoint(words)
            and not _names_something(sentence, head, task)
            and (not colon or (depth < _NESTING and _directive(after, task, depth + 1)))
        ):
            return True
    like = _LIKE.match(sentence)
    hold = like or _HOLD.match(sentence)
    if hold is None:
        return _describes(sentence, task)
    if task.names(hold.group("noun")):
        return False
    rest = hold.group("rest")
    nested = rest.lstrip()
    if nested.startswith(":") and depth < _NESTING:
        if _directive(nested[1:], task, depth + 1):
            return True
    folded = fold(rest)
    words = WORD.findall(folded)
    if any(w in asked for w in words):
        return False
    if like is not None and not _CONCRETE.search(rest) and _only_how(words, folded, task):
        return True
    # what it should hold: only words about answers, their form, grade, work and bareness ("no
    # extra information", "a detailed plan"), samples of characters, or counts of its parts
    samples = _samples(words, asked)
    others = [
        w
        for w in words
        if w not in talk
        and w not in _FORM
        and w not in _BARE
        and w not in GRADE
        and w not in WORK
        and w not in _DEMANDS
        and w not in samples
    ]
    return not _CODE_LIKE.search(rest) and only_counts(others, folded, asked)


def directs_the_answer(text: str, asked: AbstractSet[str], talk: AbstractSet[str]) -> bool:
    """Whether every sentence of `text` tells the answer what it should be or hold, and not
    something of the subject. `asked` are the task's words of its subject (an answer noun or
    word the task uses makes it an answer); `talk` are words about answers and their parts."""
    sentences = [m.group() for m in _SENTENCE.finditer(text) if m.group().strip()]
    # (a joining word is short: a longer sentence is not read for one)
    sentences = [
        s
        for s in sentences
        if len(s) > _JOINED_AT_MOST or not _JOINS.issuperset(WORD.findall(fold(s)))
    ]
    if not sentences or len(sentences) > DIRECTIVE_SENTENCES:
        return False
    task = _Task(asked, frozenset(w.rstrip("s") for w in asked), talk)
    return all(_directive(sentence, task, 0) for sentence in sentences)
