"""Does a chairman's synthesis keep the agreed answer? The rule every protocol's synthesis is
checked by (protocols/synthesis.py asks for it; the council's chairman is one).

A synthesis may rewrite, correct and complete the picked answer, but where more than half of
the agents agree, it may not change what they agree on:

  1. no consensus: nothing agreed to keep; it is accepted as a synthesis of disagreeing answers
  2. its final answer contradicts the agreed claim by moot's check (30 vs 300, an added "not",
     another option)                                                        -> rejected
  3. it leaves out the agreed claim's content words (`keeps_agreed_content`) -> rejected
  4. otherwise                                                              -> accepted

Pure and deterministic: a replay checks the recorded text to the same verdict.
"""

from __future__ import annotations

from msgspec import Struct

from moot.deliberation.agreement import keeps_agreed_content
from moot.deliberation.answers import extract_answer
from moot.deliberation.claims import Relation, compare, extract_claim
from moot.types import Finding

__all__ = ["SynthesisCheck", "check_synthesis"]


class SynthesisCheck(Struct, frozen=True):
    """Whether a synthesis may be the final answer, and why in words."""

    accepted: bool
    reason: str
    of_disagreeing: bool = False


def check_synthesis(
    text: str, finding: Finding | None, *, task: str | None = None
) -> SynthesisCheck:
    """Check a synthesis (`text`, the chairman's reply) against moot's finding over the agents'
    answers: rejected where it contradicts or drops the agreed claim."""
    if finding is None or not finding.consensus or not finding.claim:
        return SynthesisCheck(
            True,
            "the agents' answers do not agree, so it is a synthesis of disagreeing answers, "
            "not a consensus",
            of_disagreeing=True,
        )
    extracted = extract_answer(text)
    answer = extracted.text if extracted is not None else text
    agreed = finding.claim
    comparison = compare(extract_claim(answer, task), extract_claim(agreed, task))
    if comparison.relation is Relation.CONTRADICT:
        return SynthesisCheck(
            False, f"it contradicts the agreed answer '{agreed}' ({comparison.reason})"
        )
    kept, why = keeps_agreed_content(text, [agreed], task=task)
    if not kept:
        return SynthesisCheck(False, f"it drops the agreed answer '{agreed}': {why}")
    return SynthesisCheck(True, f"it keeps the agreed answer '{agreed}'")
