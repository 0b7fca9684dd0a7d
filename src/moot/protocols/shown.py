"""What a participant's text looks like to another participant, for every protocol: without
the phrases by which its author names its model or vendor ("As Claude, I ..." -> "As an AI
assistant, I ..."; seeds 000 and 004), each replacement journaled with the step that showed
it, so a resume or replay derives the same prompt and the record says what was changed; and
the nonce that fences each quoted text."""

from __future__ import annotations

from moot.deliberation.anonymize import scrub_identity
from moot.engine.session import Session

__all__ = ["anonymous", "nonce"]


def anonymous(s: Session, text: str, step: str) -> str:
    """`text` as another participant may see it; what was replaced is journaled (a `note` at
    `step/scrub`) when anything was."""
    scrubbed, replaced = scrub_identity(text)
    if replaced:
        s.note(f"{step}/scrub", replaced=[[r.original, r.replacement] for r in replaced])
    return scrubbed


def nonce(s: Session, step: str) -> str:
    """The id that fences a text quoted at `step` (12 hex digits): drawn from the session's
    random stream for `step`, so a resume or replay derives the same prompt, and no author
    saw it before writing."""
    return f"{s.rng(step).getrandbits(48):012x}"
