"""What the task's question takes for an answer (issue 29): whether a bare yes or no answers it,
and which literal nulls ("None", "null", "N/A", "nil", "undefined") and truth values ("True",
"FALSE") do.

A bare "No." answers "Is it safe to run the migration on Friday?" but not "What is the capital of
France?" nor "Should we use Postgres or SQLite?"; "yes or no" offers no alternatives, it asks for
one ("Is 91 prime, yes or no?", "91 is prime. Yes or no?"). Where the task asks for a yes or no in
so many words (`asks_yes_or_no`), a reply that says neither, nor anything that may be one, is no
answer (deliberation/polar.py). A null alone answers a question about code or values ("What does
this Python function return when the list is empty?": "None"); "none" and "nil" also one that asks
which or how many ("How many moons does Venus have?"), "undefined" one about a division or a limit
("What is 1/0?"); to any other question it is no answer, as the embedded model wrote it. A truth
value alone answers a question about code or values, a yes/no question, and one that speaks of
truth ("True or false: ..."); "#TRUE," to "What is the capital of France?" is no answer (a README
run's agent gave it). deliberation/substance asks this module before it takes such a reply for an
answer. Everything here reads the task once (the readings are cached per task: a resume checks
every saved answer again) and is linear in its words.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from moot.deliberation.echo import PROMPT_CAP, WORD, fold

__all__ = [
    "ASKING",
    "AUXILIARIES",
    "asks_for_a_name",
    "asks_yes_or_no",
    "clear_caches",
    "is_yes_no_question",
    "null_said",
    "takes_nulls",
]

# A question that a bare yes/no answers starts with an auxiliary verb ("Is it safe to run the
# migration on Friday?"), unless it offers alternatives ("Should we use Postgres or SQLite?").
AUXILIARIES = frozenset(
    """
    is are was were am do does did can could should would will shall has have had may might must
    need ought isn't aren't wasn't weren't don't doesn't didn't can't couldn't shouldn't
    wouldn't won't hasn't haven't hadn't mustn't shan't mightn't needn't
    """.split()
)
# a question's words that say nothing of its subject ("How do I make ...?", "Should we use ...?")
ASKING = frozenset("how what which who whom whose why when where make use sure please".split())
# where a question's sentence begins: after a sentence end, a line break or a colon
# ("Context ... Question: is it safe?"); its clauses split at commas and semicolons
_SENTENCE_END = re.compile(r"[.!?](?=\s)|[\n:]")
_CLAUSE = re.compile(r"[,;]|\s-+\s")
# "yes or no", "yes/no", "'yes' or 'no'", "y/n": a request for a yes or a no, not two alternatives
_YES_OR_NO = re.compile(
    r"\b(?:yes\W{0,3}(?:or|/)\W{0,3}no|no\W{0,3}(?:or|/)\W{0,3}yes|y\s?/\s?n)\b"
)
# the words that may stand beside it in a clause that only asks for one ("Answer with a plain
# yes or no", "Please, just yes or no")
_ASKING_FOR_IT = frozenset(
    "answer reply respond say state tell me us please just only simply with a an in one word "
    "plain simple clear single".split()
)


def _question(task: str) -> str:
    """The task's question, folded: its last sentence that ends in "?", else its last one."""
    folded = fold(task[:PROMPT_CAP])
    if "?" in folded:
        folded = folded[: folded.rfind("?")]
    return _SENTENCE_END.split(folded.strip())[-1]


@functools.lru_cache(maxsize=8)
def is_yes_no_question(task: str) -> bool:
    """Does a bare yes or no answer `task`? Its question (the last sentence that ends in "?",
    else its last sentence) asks "whether", or offers no alternatives ("or", other than "or
    not" and "yes or no") and has a clause that starts with an auxiliary verb or only asks for
    a yes or no ("91 is prime. Yes or no?")."""
    question = _question(task)
    pair = _YES_OR_NO.search(question) is not None
    words = WORD.findall(_YES_OR_NO.sub(" ", question) if pair else question)
    if "whether" in words:
        return True
    if "or" in words and " or not " not in f" {' '.join(words)} ":
        return False
    clauses = _CLAUSE.split(question)
    opening = [m.group() for m in map(WORD.search, clauses) if m is not None]
    if not AUXILIARIES.isdisjoint(opening):
        return True
    # a clause that only asks for a yes or no: "91 is prime. Yes or no?", "Tell me, yes or no?"
    # ("Explain why people answer yes or no." asks for more)
    return pair and any(
        _YES_OR_NO.search(clause) is not None
        and _ASKING_FOR_IT.issuperset(WORD.findall(_YES_OR_NO.sub(" ", clause)))
        for clause in clauses
    )


@functools.lru_cache(maxsize=8)
def asks_yes_or_no(task: str) -> bool:
    """Does `task` ask for a yes or a no in so many words ("Is 91 a prime number? Answer yes or
    no.", "Is it safe (y/n)?")? A yes/no question (`is_yes_no_question`) whose text says "yes
    or no" anywhere; a plain yes/no question ("Is it safe to deploy on Friday?") does not:
    "Only with a rollback plan." answers it without a yes or no, and so may "At 5 pm." answer
    "Can we meet on Friday?", while to "Answer yes or no" a number or a date is no answer."""
    return is_yes_no_question(task) and _YES_OR_NO.search(fold(task[:PROMPT_CAP])) is not None


_NULLS = frozenset("none null nil undefined".split())
_TRUTH = frozenset("true false".split())
_LITERALS = _NULLS | _TRUTH
# a task that speaks of truth: "True or false: ...", "Is the statement correct?"
_ABOUT_TRUTH = frozenset("true false truth statement statements claim claims".split())
# "N/A", "n/a", "N.A." (folded: its "a" is a filler word, so its words are only "n")
_NOT_APPLICABLE = re.compile(r"\bn\s*[/.]\s*a\b")
# a task about code or values: its words, or code in it ("`d.get('x')`", "x = f()")
_ABOUT_VALUES = frozenset(
    """
    return returns returned returning value values result results output outputs print prints
    printed evaluate evaluates evaluated evaluation expression expressions variable variables
    field fields key keys property properties attribute attributes type types function
    functions method methods code snippet program programs script query queries column columns
    cell cells row rows default defaults parameter parameters argument arguments pointer
    pointers object objects api json yaml sql python javascript typescript java php kotlin lua
    null none nil undefined nan void
    """.split()
)
_CODE = re.compile(r"`|\w\(|[=!<>]=|=>|->|\s=\s")
# a task that asks which or how many, and one about a division or a limit
_WHICH_OR_HOW_MANY = frozenset(
    "which whichever who whom whose many much any option options choice choices".split()
)
_UNDEFINED = re.compile(
    r"[\w)]\s*/\s*[\w(]|\b(?:divided|division|divide|limit|log|ln|sqrt|tan|slope|derivative|"
    r"integral|domain)\b"
)


def null_said(words: Sequence[str], folded: str) -> str | None:
    """The null or truth value that a reply's words of its own (`words`: filler and talk taken
    out) say and nothing else, or None: "none" for "None", "The answer is None." or "None
    None", "n/a" for "N/A" (of the folded reply `folded`), "true" for "#TRUE,"."""
    if not words:
        return None
    if set(words) == {"n"}:
        return "n/a" if _NOT_APPLICABLE.search(folded) else None
    return words[0] if _LITERALS.issuperset(words) and len(set(words)) == 1 else None


@functools.lru_cache(maxsize=8)
def takes_nulls(task: str) -> frozenset[str]:
    """The nulls and truth values (as `null_said` names them) that answer `task` on their
    own."""
    folded = fold(task[:PROMPT_CAP])
    words = set(WORD.findall(folded))
    if not _ABOUT_VALUES.isdisjoint(words) or _CODE.search(folded):
        return _LITERALS | {"n/a"}
    taken = {"none", "nil"} if not _WHICH_OR_HOW_MANY.isdisjoint(words) else set()
    if not _ABOUT_TRUTH.isdisjoint(words) or is_yes_no_question(task):
        taken |= _TRUTH
    if _UNDEFINED.search(folded):
        taken.add("undefined")
    return frozenset(taken)


# A question whose answer is a name, never a bare number: who, whom or whose, or what or which
# thing of the kinds below ("What is the capital of Italy?", "Which country ...?"; "2" and
# ",1234567890," were the embedded model's positions in a new user's court run, taken as answers)
_NAMED = re.compile(
    r"(?:who|whom|whose)\b|(?:what|which)(?:'s|\s+is|\s+are|\s+was|\s+were)?\s+"
    r"(?:(?:the|a|an)\s+)?(?:[\w'-]{1,24}\s+)?(?:capital|name|city|town|country|nation|language|"
    r"author|writer|painter|composer|currency|continent|river|ocean|sea|lake|mountain|planet|"
    r"animal|person|president|king|queen|inventor|founder|company|colou?r)s?\b"
)


@functools.lru_cache(maxsize=8)
def asks_for_a_name(task: str) -> bool:
    """Does `task`'s question (read as `is_yes_no_question` reads it) ask for a name, which no
    bare number answers?"""
    question = _question(task)
    return any(_NAMED.match(clause.strip()) for clause in _CLAUSE.split(question))


def clear_caches() -> None:
    """Forget every reading of tasks (for tests that must read afresh)."""
    asks_for_a_name.cache_clear()
    asks_yes_or_no.cache_clear()
    is_yes_no_question.cache_clear()
    takes_nulls.cache_clear()
