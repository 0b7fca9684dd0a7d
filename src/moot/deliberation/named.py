"""What a claim names that its folded words cannot hold, and when two claims' names contradict.

Folding an answer to lower-case words loses nine things that decide technical answers:

  labels       capital letters that name something ("plan A", "node B", "Vitamin D"); folded,
               "A" is the article. Two claims whose labels share none contradict ("A vs B").
  complexities big-O and its kin ("O(n log n)", "Θ(n^2)"); folded, "O(n^2)" is the words
               "o", "n" and the number 2. Two claims whose complexities share none contradict.
  preferences  which of two things is preferred or comes first ("SQLite is better than
               Postgres", "prefer Postgres over SQLite", "lock first, then read"); folded, the
               words are the same either way round. A pair one claim orders and the other
               orders the other way round contradicts. So do two comparisons whose sides are
               exchanged, in whatever words ("Arrays are faster than linked lists." / "Linked
               lists iterate faster than arrays."): `comparisons`.
  sequences    the order of a list in brackets or said to be an order ("an index on
               (user_id, created_at)", "in the order build, test, deploy"); folded, the words
               are the same in any order. The same items in another order contradict.

  expressions  a one-letter variable plus or minus a number ("n - 1"); folded, "n - 1" and
               "n + 1" are the same words, and "n - 1 times" holds every word of "n times".
               Two expressions of one variable that differ contradict, and so does one
               against the variable alone (an off-by-one).

  equations    arithmetic set equal to a number ("2+2=4", "3 * 4 = 12"); folded, "2+2=4" and
               "2+2=10; 3*4 = 15" are numbers, and the first's all stand in the second. Two
               claims that give the same arithmetic different results contradict; `stated` is
               what a claim of numbers alone says: its results, not the operands it restates.

  versions     dotted numbers read as written ("2.4.1", "10.0.0.12", "v1.2", "Python 3.10");
               folded, "2.4.1" is no number at all and "3.10" is the number 3.1. Two claims
               whose versions share none contradict ("3.10 vs 3.1").

  operators    a comparison or assignment standing alone ("==", "===", "<=") or filling code
               ticks ("`is`"); folded, they are no words at all. Two claims whose operators
               share none contradict ("=== vs ==").

  hedged       an answer whose first clause leaves the question open ("It is unknown whether
               P equals NP."); folded, it holds every word of the answer that settles it
               ("P equals NP."). One hedged and one not contradict.

`proper` holds the words written as names (a capital inside the word, "SQLite", "LEFT", or at
the start of a word inside a sentence, "in Redis"), folded, for `swaps.renamed`.
`options` is the option a sentence names ("Option C is safest."), for the claim's choice.
Pure; every pattern is linear and every text is cut before it is read.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from fractions import Fraction

from msgspec import Struct

__all__ = ["Named", "conflict", "named", "stated"]

SCANNED = 2_000  # characters of a claim's text read for names
SIDE = 200  # characters of a comparison's side read, at most

# A capital letter standing alone names something: any but "I", and "A" where it cannot be the
# article: after a word in the sentence ("go with plan A"), or at its start before an end or a
# verb ("A is safer.", "A.").
_LABEL = re.compile(
    r"(?<![\w'’.\-/])"
    r"(?:([B-HJ-Z])|(?<=[a-z,] )(A)|(A)(?=\s*(?:$|[.,;:!?)\]]|(?:is|was|are|were|has|and|or|vs"
    r"|versus|wins|works|fails)\b)))"
    r"(?![\w'’\-/(])"
)
# an option named in a sentence: "Option C is safest", "choice (B) holds"; the letter in capitals
# ("option a" may be an article)
_OPTION = re.compile(r"\b(?i:option|choice)\s+[(\[]?([A-J])(?![\w'])")
# O(n log n), Θ(n^2), Ω(1), o(n): the bound's expression, without spaces or a "^"
_COMPLEXITY = re.compile(r"(?<![\w])([OΘΩo])\s*\(\s*([^()\n]{1,40}?)\s*\)")
# "X is better than Y", "X is far more reliable than Y", "X is worse than Y"
_THING = r"([\w][\w.+#-]{0,40})"
_THAN = re.compile(
    _THING + r"\s+(?:is|are|was|would\s+be|will\s+be)\s+(?:much\s+|far\s+|a\s+lot\s+)?"
    r"(better|worse|(?:more|less)\s+\w+|\w+er)\s+than\s+" + _THING,
    re.IGNORECASE,
)
# "prefer X over Y", "X over Y", "X rather than Y", "X instead of Y"
_OVER = re.compile(
    _THING + r"\s+(?:over|rather\s+than|instead\s+of)\s+" + _THING,
    re.IGNORECASE,
)
# an order: "lock first, then read", "first lock, then read"
_FIRST_THEN = re.compile(
    r"(?:\bfirst\s+" + _THING + r"|" + _THING + r"\s+(?:[\w-]+\s+){0,3}?first)"
    r"\b[,;]?\s+(?:and\s+)?then\s+" + _THING,
    re.IGNORECASE,
)
# a version, read as written: two dots or more ("2.4.1", "10.0.0.12"), a "v" before it ("v1.2"),
# or one dot after a capitalised name ("Python 3.10"; a decimal after one, "About 3.5", reads
# as itself: it only contradicts another form of itself, "About 3.50")
_VERSION = re.compile(
    r"(?<![\w.])(?:v(\d{1,9}(?:\.\d{1,9}){1,5})|(\d{1,9}(?:\.\d{1,9}){2,5}))(?![\w.]*\d)"
    r"|\b[A-Z][\w+#-]{0,40}\s+(\d{1,9}\.\d{1,9})(?![\w.]*\d)"
)
# an operator between spaces (not "x->y", not markdown's "**" or a dash), or a code span that
# holds only an operator or an operator keyword ("`is`")
_OPERATOR = re.compile(
    r"(?<![^\s(])(===|!==|==|!=|<=|>=|<<|>>|&&|\|\||:=|\+=|-=|\*=|/=|->|=>|<|>|=)(?![^\s)])"
    r"|`((?:[^\w\s`]{1,3})|is|in|not|and|or|is not|not in)`"
)
_WORD = re.compile(r"[^\W\d_]+")
# any comparison: "is faster than", "iterate faster than", "are faster to iterate than"
_COMPARED = re.compile(
    r"\b(better|worse|(?:more|less)\s+\w+|\w+er)\s+(?:to\s+\w+\s+)?than\b", re.IGNORECASE
)
_NOT_COMPARATIVES = frozenset("other rather never either neither whether under over".split())
# where a comparison's sides end: a clause's punctuation
_SIDE_END = re.compile(r"[.,;:!?()\[\]]")
# words that say nothing of what is compared
_SIDE_FILLER = frozenset(
    """a an the is are was were be been being it its this that these those for of to in on at
    by with and or as than much far lot way often usually generally typically also still even
    do does did can could will would should may might""".split()
)
# a list whose order is its meaning: code in brackets (below), or a list said to be an order
# ("in the order build, test, deploy", "sort by priority, age", "an index on (a, b)"); items
# of up to three words
_ITEM = r"[\w.\-]+(?:[ \t]+[\w.\-]+){0,2}"
# in brackets, a list of code: a call's arguments ("f(a, b)"), or names of code ("(user_id,
# created_at)": one holds "_", "." or a digit); "(fast, simple)" gives reasons in no order
_CODE_ITEM = r"[\w.\-]+"
_SEQUENCE = re.compile(
    r"(?:(?<=\w)\(|(?<![\w(])[(\[](?=[^)\]]{0,200}[\w][_.\d]))\s*("
    + _CODE_ITEM
    + r"(?:\s*,\s*"
    + _CODE_ITEM
    + r")+)\s*[)\]]"
    r"|\b(?:in\s+(?:the|this)\s+order|order\s*:|(?:sort(?:ed)?|order(?:ed)?|group(?:ed)?)\s+by"
    r"|index(?:ed)?\s+on|(?:composite|compound|primary)\s+key\s+on)\s*[(\[]?\s*("
    + _ITEM
    + r"(?:\s*,\s*(?:and\s+|then\s+)?"
    + _ITEM
    + r")+)",
    re.IGNORECASE,
)
_LIST_SPLIT = re.compile(r"\s*,\s*(?:and\s+|then\s+)?")
# a one-letter variable plus or minus a number ("n - 1", "k+2"); folded, "n - 1" and "n + 1"
# are both the words "n 1", and "n - 1 times" holds every word of "n times"
# arithmetic of two or more numbers set equal to a number ("2+2=4", "6 * 7 = 42"), not "==";
# a chain ("2*3=3+3=6") is none: its middle is no result
_NUMBER = r"\d{1,12}(?:\.\d{1,12})?"
_OPERATION = r"\s*[-+*/×÷]\s*"
_EQUATION = re.compile(
    rf"(?<![\w.=<>!])({_NUMBER}(?:{_OPERATION}{_NUMBER}){{1,8}})\s*=(?!=)\s*(-?{_NUMBER})"
    rf"(?![\w.]*\d|{_OPERATION}\d)"
)
_OPERAND = re.compile(_NUMBER)
_EXPRESSION = re.compile(r"(?<![\w.\-+*/])([b-z])\s*([-+])\s*(\d{1,6})(?!\w|\.\d)")
_VARIABLE = re.compile(r"(?<![\w.\-+*/'’])([b-z])(?![\w'’\-+*/]|\.\w)")
# what may stand between a sentence's end and its first word ("**Redis**", "(Redis")
_OPENING = " \t*_`\"'([<>#-"
_NOT_THINGS = frozenset(
    "it this that they them these those one other something anything nothing much".split()
)


class Named(Struct, frozen=True):
    """A claim's labels, complexities, preferences (how, first, second: "better", "sqlite",
    "postgres"), named options, versions, the words written as names and operators."""

    labels: frozenset[str] = frozenset()
    complexities: frozenset[str] = frozenset()
    preferences: frozenset[tuple[str, str, str]] = frozenset()
    options: frozenset[str] = frozenset()
    versions: frozenset[str] = frozenset()
    proper: frozenset[str] = frozenset()
    operators: frozenset[str] = frozenset()
    hedged: bool = False  # it leaves the question open ("it is unknown whether P equals NP")
    # (how, the words before it, the words after "than"): "faster", {"arrays"}, {"linked", ...}
    comparisons: frozenset[tuple[str, frozenset[str], frozenset[str]]] = frozenset()
    sequences: frozenset[tuple[str, ...]] = frozenset()  # ("user_id", "created_at")
    expressions: frozenset[str] = frozenset()  # "n-1"
    equations: frozenset[tuple[str, Fraction]] = frozenset()  # ("2+2", 4): arithmetic, result
    variables: frozenset[str] = frozenset()  # one-letter names standing alone: "n"


# An answer that leaves the question open, said as such: against one that settles it, the two
# contradict ("It is unknown whether P equals NP." / "P equals NP."), though folded the one holds
# every word of the other. "The cause is unknown." settles what it says and is no such hedge,
# and one after the first clause ("Use SQLite; whether ... is an open question.") qualifies a
# part of the answer.
_HEDGE = re.compile(
    r"\b(?:(?:unknown|unclear|not\s+(?:yet\s+)?(?:known|clear|settled|proven)|undecided|unresolved"
    r"|(?:no\s+one|nobody)\s+knows)\s+(?:whether|if)"
    r"|(?:an?\s+|still\s+an?\s+)?open\s+(?:question|problem))\b",
    re.IGNORECASE,
)


# the claim's first clause: a hedge there is its answer; one later qualifies a part of it
_CLAUSE_END = re.compile(r"[.;:!?](?:\s|$)")


def _pair(first: str, second: str, how: str) -> tuple[str, str, str] | None:
    """One ordered comparison, with "worse" and "less X" turned round into "better" and
    "more X" (a comparative of another word keeps its own order: "slower" is not "faster")."""
    a, b = first.casefold().rstrip(".,"), second.casefold().rstrip(".,")
    if a == b or a in _NOT_THINGS or b in _NOT_THINGS:
        return None
    how, turned = _forward(how)
    return (how, b, a) if turned else (how, a, b)


def _forward(how: str) -> tuple[str, bool]:
    """A comparative folded, and whether it was turned round: "worse" is "better", and
    "less X" is "more X", of the two sides exchanged."""
    how = " ".join(how.casefold().split())
    if how == "worse":
        return "better", True
    if how.startswith("less "):
        return "more " + how.removeprefix("less "), True
    return how, False


def _bound(expression: str) -> str:
    """ "n log n" -> "nlogn", "n^2" and "n²" -> "n2", "N" -> "n"."""
    return "".join(expression.split()).replace("^", "").replace("²", "2").replace("³", "3").lower()


def named(text: str) -> Named:
    """The names in a claim's text (its first `SCANNED` characters)."""
    text = text[:SCANNED]
    labels = frozenset(m.group(1) or m.group(2) or m.group(3) for m in _LABEL.finditer(text))
    complexities = frozenset(
        f"{m.group(1).upper()}({_bound(m.group(2))})" for m in _COMPLEXITY.finditer(text)
    )
    preferences = {_pair(m.group(1), m.group(3), m.group(2)) for m in _THAN.finditer(text)}
    preferences |= {_pair(m.group(1), m.group(2), "over") for m in _OVER.finditer(text)}
    preferences |= {
        _pair(m.group(1) or m.group(2), m.group(3), "before") for m in _FIRST_THEN.finditer(text)
    }
    expressions = frozenset(
        f"{m.group(1)}{m.group(2)}{int(m.group(3))}" for m in _EXPRESSION.finditer(text)
    )
    return Named(
        equations=frozenset(
            ("".join(m.group(1).split()).replace("×", "*").replace("÷", "/"), Fraction(m.group(2)))
            for m in _EQUATION.finditer(text)
        ),
        expressions=expressions,
        variables=frozenset(m.group(1) for m in _VARIABLE.finditer(_EXPRESSION.sub(" ", text))),
        comparisons=_comparisons(text),
        sequences=frozenset(
            tuple(i.casefold().rstrip(".") for i in _LIST_SPLIT.split(m.group(1) or m.group(2)))
            for m in _SEQUENCE.finditer(text)
        ),
        labels=labels,
        complexities=complexities,
        preferences=frozenset(p for p in preferences if p is not None),
        options=frozenset(m.group(1) for m in _OPTION.finditer(text)),
        versions=frozenset(m.group(m.lastindex or 0) for m in _VERSION.finditer(text)),
        proper=_proper(text),
        operators=frozenset(m.group(1) or m.group(2) for m in _OPERATOR.finditer(text)),
        hedged=_HEDGE.search(_CLAUSE_END.split(text, maxsplit=1)[0]) is not None,
    )


def _comparisons(text: str) -> frozenset[tuple[str, frozenset[str], frozenset[str]]]:
    """Each comparison in `text` with the words of its two sides, within its clause, turned
    round as `_forward` says."""
    found = set()
    ends = [e.start() for e in _SIDE_END.finditer(text)]  # where clauses end, in order
    for m in _COMPARED.finditer(text):
        how, turned = _forward(m.group(1))
        if how in _NOT_COMPARATIVES:
            continue
        i = bisect.bisect_left(ends, m.start())  # the first clause end at or after it
        start = ends[i - 1] + 1 if i else 0
        j = bisect.bisect_left(ends, m.end())
        # a side is its clause's words, up to `SIDE` characters from the comparison
        before = _side(text[max(start, m.start() - SIDE) : m.start()])
        after = _side(text[m.end() : min(ends[j] if j < len(ends) else len(text), m.end() + SIDE)])
        if turned:
            before, after = after, before
        if before and after:
            found.add((how, before - after, after - before))
    return frozenset(found)


def _exchanged(
    one: tuple[str, frozenset[str], frozenset[str]],
    other: tuple[str, frozenset[str], frozenset[str]],
) -> bool:
    """Whether two comparisons say the same of their sides the other way round."""
    return one[0] == other[0] and bool(one[1] & other[2]) and bool(one[2] & other[1])


def _side(text: str) -> frozenset[str]:
    words = {w.casefold() for w in _WORD.findall(text)}
    return frozenset(words - _SIDE_FILLER)


def _proper(text: str) -> frozenset[str]:
    """The words of `text` written as names, folded: a capital after the first letter, or a
    capital first letter inside a sentence (the first word of a sentence tells nothing)."""
    found = set()
    for m in _WORD.finditer(text):
        word = m.group()
        if len(word) < 2 or not any(c.isupper() for c in word):
            continue
        if not any(c.isupper() for c in word[1:]):
            i = m.start() - 1
            while i >= 0 and text[i] in _OPENING:  # each run before one word: linear
                i -= 1
            if i < 0 or not (text[i].isalnum() or text[i] in ",;"):
                continue
        found.add(word.casefold())
    return frozenset(found)


def _shown(names: frozenset[str]) -> str:
    return "/".join(sorted(names))


def conflict(a: Named, b: Named) -> str | None:
    """Why two claims' names contradict ("A vs B", "O(nlogn) vs O(n2)", "sqlite better than
    postgres vs postgres better than sqlite"), or None."""
    if a.labels and b.labels and a.labels.isdisjoint(b.labels):  # "plan A" vs "plan B"
        return f"{_shown(a.labels)} vs {_shown(b.labels)}"
    if a.complexities and b.complexities and a.complexities.isdisjoint(b.complexities):
        return f"{_shown(a.complexities)} vs {_shown(b.complexities)}"
    if a.versions and b.versions and a.versions.isdisjoint(b.versions):  # "3.10" vs "3.1"
        return f"{_shown(a.versions)} vs {_shown(b.versions)}"
    if a.operators and b.operators and a.operators.isdisjoint(b.operators):  # "===" vs "=="
        return f"{_shown(a.operators)} vs {_shown(b.operators)}"
    # An order one claim gives both ways ("X is better for reads; Y is better for writes")
    # contradicts nothing: the other claim may say either half of it.
    for how, first, second in a.preferences:
        turned = (how, second, first)
        if turned in b.preferences and turned not in a.preferences:
            if (how, first, second) not in b.preferences:
                said = how if how in ("over", "before") else f"{how} than"
                return f"{first} {said} {second} vs {second} {said} {first}"
    for one in a.comparisons:  # the sides exchanged, in whatever words
        for other in b.comparisons:
            if _exchanged(one, other) and not any(_exchanged(one, c) for c in a.comparisons):
                if not any(_exchanged(other, c) for c in b.comparisons):
                    how, before, after = one
                    ours, theirs = _shown(before & other[2]), _shown(after & other[1])
                    return f"{ours} {how} than {theirs} vs {theirs} {how} than {ours}"
    for order in a.sequences:
        for other_order in b.sequences:
            reordered = other_order != order and sorted(other_order) == sorted(order)
            if reordered and other_order not in a.sequences and order not in b.sequences:
                return f"({', '.join(order)}) vs ({', '.join(other_order)})"
    expressions = _expressions(a, b) or _expressions(b, a)
    if expressions is not None:
        return expressions
    for sum_, result in sorted(a.equations):  # "2+2=4" vs "2+2=10"
        results = sorted(r for s_, r in b.equations if s_ == sum_)
        if results and result not in results:
            return f"{sum_}={result} vs {sum_}={'/'.join(map(str, results))}"
    if a.hedged != b.hedged:
        return "one leaves the question open, the other settles it"
    return None


def _expressions(a: Named, b: Named) -> str | None:
    """ "n - 1" against "n + 1", or against "n" alone: another count (an off-by-one)."""
    for expression in sorted(a.expressions):
        variable = expression[0]
        theirs = sorted(e for e in b.expressions if e[0] == variable)
        if theirs and expression not in b.expressions:
            return f"{expression} vs {'/'.join(theirs)}"
        if not theirs and variable in b.variables and variable not in a.variables:
            return f"{expression} vs {variable}"
    return None


def stated(names: Named, values: Mapping[str, frozenset[Fraction]]) -> frozenset[Fraction]:
    """What a claim of numbers alone (its `values` by unit) says: each equation's result, not
    the operands it restates ("2 + 2 = 4" says 4), and every number outside its equations."""
    numbers = frozenset[Fraction]().union(*values.values())
    operands = {Fraction(n) for sum_, _ in names.equations for n in _OPERAND.findall(sum_)}
    results = {result for _, result in names.equations}
    return frozenset((numbers - operands) | results)
