"""Whether a participant's reply is an answer at all, for every protocol: moot's substance
check (deliberation/substance.py), run once per session. The verdict is journaled with the
answer (`Session.checked`), so a resume or replay reads it back instead of checking again,
and acts on the verdict the run acted on (issue 23)."""

from __future__ import annotations

from collections.abc import Sequence

from moot.deliberation.substance import check_substance
from moot.engine.session import Session

__all__ = ["no_answer"]

_NO_TASK = "\x00"  # stands for "no task given" in a verdict's key; no task text is a NUL


def no_answer(
    s: Session, rule: str, text: str, asked: Sequence[str], task: str | None
) -> str | None:
    """Why `text` is no answer to the task it was `asked` for, or None; `rule` names the
    check in the journal (a protocol's name for what it checks, say "court_position")."""

    def check() -> str | None:
        problem = check_substance(text, asked, task=task)
        return None if problem is None else str(problem)

    return s.checked(rule, [text, _NO_TASK if task is None else task, *asked], check)
