"""Does an answer to a question that asks for a yes or a no say one, or anything that may be one?

A new user's arena run on "Is 91 a prime number? Answer yes or no." (the embedded model) ended
in a consensus, exit 0, on the final answer "91: 03/24/2023 8:57 PM": the number the question
names and a time stamp, neither a yes nor a no. deliberation/substance.py refuses a bare "no" to
a question that a yes or no does not answer; this is the other direction. Where the task asks
for a yes or a no in so many words (`question.asks_yes_or_no`), a reply says neither when none
of the words of its own (what the substance check leaves it: no copy of the prompt or the task,
no template) takes a side:

- no yes or no, nor a word for one: "Correct", "False", "Certainly", "Not", "Never";
- no verb that states something ("It does.", "It can.", "91 isn't."; the auxiliaries, as
  deliberation/question.py reads a yes/no question by them);
- no sign that states something: "91 = 7*13", "91 > 90";
- and no word but numbers, dates and times ("03/24/2023 8:57 PM", "ninety-one", "24th"), a word
  that names a number ("The number 91."), filler and talk about answers ("My final answer: 91").

One word of anything else may take a side ("Composite.", "Prime.", "Divisible by 7."), and so
it passes: which words carry a yes or a no takes understanding them, and the check refuses
only what it is sure says neither. A plain yes/no question without the request ("Can we meet
on Friday?") is not judged here: "At 5 pm." may answer it.

Pure and linear in the reply's words: set operations on its distinct words, one bounded
pattern per distinct word that is no known word, and one scan for a sign.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from moot.deliberation.question import AUXILIARIES
from moot.deliberation.talkwords import FILLER, META_WORDS

__all__ = ["says_neither"]

# Words that take a side, or may: a yes or no, a truth value or verdict, a word that affirms
# ("Certainly."), a negation, or a verb that states something ("It does."). (Any word that is
# no number and not of `_NO_SIDE` may take one anyway; the list matters for the words of talk
# and filler among them, "not", "cannot", "sure", "is", which would otherwise say none.)
_SIDES = (
    frozenset(
        """
        yes yeah yep yup yea aye nope nah no not never neither nor none nothing nobody cannot
        ain't true false correct incorrect right wrong affirmative negative absolutely
        definitely certainly surely sure indeed course
        """.split()
    )
    | AUXILIARIES
)
# Words that say no side: numbers, dates and times, the words that name a number, and filler
# and talk (what the substance check reads as no answer of a model's own).
_NUMBER_WORDS = frozenset(
    """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty
    ninety hundred thousand million billion
    """.split()
)
_CALENDAR = frozenset(
    """
    am pm p m utc gmt january february march april june july august september october november
    december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday
    friday saturday sunday
    """.split()
)
_NAMES_A_NUMBER = frozenset("number numbers numeral numerals integer integers digit digits".split())
_NO_SIDE = _NUMBER_WORDS | _CALENDAR | _NAMES_A_NUMBER | FILLER | META_WORDS
# a number, an ordinal or a time run together: "91", "24th", "8pm"
_NUMBER = re.compile(r"\d+(?:st|nd|rd|th|am|pm)?")
# a sign that states something: "=", "≠", "≤", "≥", or a product or comparison of two numbers
# ("7*13", "91 > 90"; a "*" alone is markdown's emphasis)
_SIGN = re.compile(r"[=≠≤≥]|\d\s{0,3}[*×·<>]\s{0,3}\d")


def says_neither(own: Iterable[str], folded: str) -> bool:
    """Whether a reply whose words of its own are `own` (folded, as the substance check leaves
    them) and whose folded text is `folded` says neither yes nor no, nor anything that may be
    one (see the module's docstring). A reply with no words of its own says nothing at all,
    which the substance check names otherwise: False."""
    words = set(own)
    if not words or not _SIDES.isdisjoint(words):
        return False
    if any(_NUMBER.fullmatch(w) is None for w in words - _NO_SIDE):
        return False
    return _SIGN.search(folded) is None
