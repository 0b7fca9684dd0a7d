"""What the task's question takes for an answer (issue 29): whether a bare yes or no answers it.

A bare "No." answers "Is it safe to run the migration on Friday?" but not "What is the capital
of France?" nor "Should we use Postgres or SQLite?": deliberation/substance asks this module
before it takes such a reply for an answer. Everything here reads the task once (the readings
are cached per task: a resume checks every saved answer again) and is linear in its words.
"""

from __future__ import annotations

import functools
import re

from moot.deliberation.echo import PROMPT_CAP, WORD, fold

__all__ = ["ASKING", "AUXILIARIES", "clear_caches", "is_yes_no_question"]

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


@functools.lru_cache(maxsize=8)
def is_yes_no_question(task: str) -> bool:
    """Does a bare yes or no answer `task`? Its question (the last sentence that ends in "?",
    else its last sentence) asks "whether", or has a clause that starts with an auxiliary verb
    and offers no alternatives ("or", other than "or not")."""
    folded = fold(task[:PROMPT_CAP])
    if "?" in folded:
        folded = folded[: folded.rfind("?")]
    question = _SENTENCE_END.split(folded.strip())[-1]
    words = WORD.findall(question)
    if "whether" in words:
        return True
    if "or" in words and " or not " not in f" {' '.join(words)} ":
        return False
    for clause in _CLAUSE.split(question):
        first_word = WORD.search(clause)
        if first_word is not None and first_word.group() in AUXILIARIES:
            return True
    return False


def clear_caches() -> None:
    """Forget every reading of tasks (for tests that must read afresh)."""
    is_yes_no_question.cache_clear()
