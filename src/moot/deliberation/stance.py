"""Does a reply take a stance on the debate instead of answering its task?

A new user's court run certified as its consensus, on "What is the capital of France?", a
position that opened "I am going to abstain from this debate by voting against my opponent's
choice of a certain position name based only upon the fact of his age being 19 and not on any
other factor." (and looped: deliberation/echo.py `looped`); another agent held the same sentence
alone. Substance's META rule did not see it: it needs every word of the reply's own to be a word
of talk, and "age", "fact" or "factor" are none.

What such a reply says is an act in the debate, not an answer: the speaker abstains, concedes,
withdraws, forfeits or recuses itself, or votes, sides, agrees or disagrees with, supports,
opposes, rejects, endorses or backs a party to it (an opponent, him, her or them, a position,
proposal, side or vote, the debate or the motion). A reply is such a stance when every sentence
of it opens with one, in the first person (`_STANCE`: "I am going to abstain from this debate",
"I will vote against him", "I do not support the position of my opponent"), and when it names
nothing an answer would: no word of the task's question, no name (a capitalised word other than
"I" inside a sentence), no code, and no number unless the task asks for a name (a number never
answers "What is the capital of France?", deliberation/question.py).

An answer stays one: "My opponent is wrong: the capital is Paris." opens with no act of the
speaker's and names the subject; "I vote against my opponent: Paris." has a sentence after the
colon that is no stance; "I vote for SQLite." (to "Postgres or SQLite?") votes for a thing, not a
party; "I disagree with Agent B because Lyon is not the capital." names the subject. A short label
before a first colon ("Abstrakt: I abstain from this debate.") is no sentence of its own. The
stance alone is judged: "I abstain from this debate; Paris." answers. What this reads wrong is a
stance whose reason names the answer in lowercase words of no task ("I vote against him, paris is
right"); such a reply is no clean answer either, and is re-asked.

Everything here is linear in the text: its sentences are split once, each is matched at its
start by a bounded pattern, and the first sentence that is no stance ends the reading.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

from moot.deliberation.echo import WORD, fold

__all__ = ["takes_a_stance"]

# a party to the debate, as the object of an act in it
_PARTY = (
    r"(?:(?:the|this|that|my|our|his|her|their|your|each|every|any)\s+)?(?:other\s+)?"
    r"(?:opponent(?:'s|s)?|him|her|them|debate|motion|position|positions|proposal|proposals|"
    r"side|sides|vote|votes|participant|participants|agent|agents|panel)\b"
)
# what the act of leaving a debate may be done from or by: "abstain from this debate",
# "withdraw my position", "abstain by voting against ...", or nothing more ("I abstain.")
_LEFT = r"(?:\s+(?:from|on|in)\s+" + _PARTY + r"|\s+(?:myself|" + _PARTY + r")|\s+by\b|\s*(?:,|\Z))"
_STANCE = re.compile(
    r"[\W_]*(?:i|we)(?:'m|'ll|'ve|'d)?\s+"
    # what may stand between the speaker and the act: "am going to", "will", "do not"
    r"(?:(?:am|are|was|were|have|has|had|been|will|shall|would|must|hereby|now|also|again|"
    r"still|therefore|thus|just|only|do|does|did|not|never|going\s+to|about\s+to|"
    r"(?:want|choose|chose|decide|decided|intend|plan|wish|need|have|has)\s+to)\s+){0,5}"
    r"(?:(?:abstain|abstains|abstained|abstaining|concede|concedes|conceded|conceding|"
    r"withdraw|withdraws|withdrew|withdrawn|withdrawing|forfeit|forfeits|forfeited|"
    r"forfeiting|recuse|recused|recusing)" + _LEFT + "|"
    r"(?:vote|votes|voted|voting|side|sided|siding|agree|agreed|disagree|disagreed|support|"
    r"supported|oppose|opposed|reject|rejected|endorse|endorsed|back|backed)"
    r"(?:\s+(?:again|also|still|not))?\s+(?:(?:against|for|with|in\s+favou?r\s+of|on)\s+)?"
    + _PARTY
    + r")",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^.!?;:\n]+")
_LABEL_WORDS = 2  # a label before a first colon: "Abstrakt:", "Final position:"
_CODE = re.compile(r"[`_(){}\[\]=<>/\\|#$%@]")
_DIGIT = re.compile(r"\d")
_NAME = re.compile(r"(?<![\w'])(?!I(?:'[a-z]+)?\b)[A-Z]")  # a capital that starts a word, not "I"


def _names_something(sentence: str, asked: AbstractSet[str], numbers_name: bool) -> bool:
    """Whether a stance's sentence names what an answer would: code, a number (where a number
    may answer), a capitalised word after its first, or a word of the task."""
    if _CODE.search(sentence) or (numbers_name and _DIGIT.search(sentence)):
        return True
    first = WORD.search(sentence)
    if first is not None and _NAME.search(sentence, first.end()):
        return True
    return not asked.isdisjoint(WORD.findall(fold(sentence)))


def takes_a_stance(text: str, asked: AbstractSet[str], *, numbers_name: bool = True) -> bool:
    """Whether every sentence of `text` (a short label before a first colon aside) opens with the
    speaker's act in the debate (`_STANCE`) and names nothing: no code, no capitalised name,
    no word of `asked` (the task's words of its subject) and, where `numbers_name`, no number."""
    sentences = _SENTENCE.finditer(text)
    seen = False
    for i, m in enumerate(sentences):
        sentence = m.group()
        if not WORD.search(sentence):
            continue
        label = text.startswith(":", m.end()) and len(WORD.findall(sentence)) <= _LABEL_WORDS
        if i == 0 and label:
            continue
        if _STANCE.match(sentence) is None or _names_something(sentence, asked, numbers_name):
            return False
        seen = True
    return seen
