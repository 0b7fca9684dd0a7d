"""What a participant's text looks like to another participant, for every protocol: without
the phrases by which its author names its model or vendor ("As Claude, I ..." -> "As an AI
assistant, I ..."; seeds 000 and 004), each replacement journaled with the step that showed
it, so a resume or replay derives the same prompt and the record says what was changed; and
the nonce that fences each quoted text."""

from __future__ import annotations

from collections.abc import Mapping

from moot.deliberation.anonymize import quote, scrub_identity
from moot.engine.session import Session

__all__ = ["anonymous", "labelled", "nonce"]


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


def labelled(s: Session, step: str, texts: Mapping[str, str], limit: int) -> str:
    """The answers `texts` (by label, in order) for the prompt at `step`: each under its
    label ("ANSWER A:"), as another participant may see it, fenced by a nonce of its own and
    cut at `limit` characters."""
    return "\n\n".join(
        f"ANSWER {label}:\n"
        + quote(
            f"Answer {label}",
            anonymous(s, text, f"{step}/{label}"),
            nonce=nonce(s, f"{step}/{label}"),
            limit=limit,
        )
        for label, text in texts.items()
    )
