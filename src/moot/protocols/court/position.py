"""Whether an advocate's position answers the question: the test the arena holds a solution to
(protocols/substantive.py `answer_problem`), so the court cannot seat, put to the vote or hand
to its judges what the arena would refuse. Without it, a bare number to a yes/no question ("6"
to "Is 7 a prime number?") was a position, not asked again, and a judge panel's pick of it the
court's answer.

The verdict is journaled (`Session.checked`) under the rule and key the court's substance
check always used, so a resume or replay of an older session reads back the verdict its run
acted on."""

from __future__ import annotations

import re
from collections.abc import Sequence

from moot.engine.session import Session
from moot.protocols.substantive import answer_problem

__all__ = ["position_problem", "why_no_answer"]

RULE = "court_position"
# The reply schema's field spelled out for its value ("[The new Position Text]", from the
# embedded model): the template check knows the prompt's words as written, not `newPositionText`
_FIELD = re.compile(
    r"\W*(?:(?:the|your|my|a)\s+)?(?:new\s*)?position(?:\s*text)?\W*", re.IGNORECASE
)


def position_problem(s: Session, text: str, asked: Sequence[str], task: str) -> str | None:
    """Why a position is no answer to the `task` it was `asked` for, or None (checked once
    per session)."""
    return s.checked(RULE, [text, task, *asked], lambda: why_no_answer(text, asked, task))


def why_no_answer(text: str, asked: Sequence[str], task: str) -> str | None:
    """Why a position is no answer: it only names the field it was to fill, or it fails the
    test every answer the finding reads is held to (`answer_problem`)."""
    if _FIELD.fullmatch(text):
        return f"it only names the field it was to fill ('{' '.join(text.split())[:60]}')"
    return answer_problem(text, asked, task)
