"""Does a chairman's synthesis keep the agreed answer? The rule every protocol's synthesis is
checked by (protocols/synthesis.py asks for it; the council's chairman is one).

A synthesis may rewrite, correct and complete the picked answer, but where more than half of
the agents agree, it may not change what they agree on:

  1. no consensus, and its final answer agrees with none of the agents' answers and
     contradicts one at least (answers 60, 7 and 2 to "What is 5 + 5?", a synthesis of 6):
     it draws on none of them, so it is no synthesis of them               -> rejected
  2. no consensus otherwise: nothing agreed to keep; it is a synthesis of disagreeing
     answers                                                                -> accepted
  3. its final answer contradicts the agreed claim by moot's check (30 vs 300, an added "not",
     another option)                                                        -> rejected
  4. it leaves out the agreed claim's content words (`keeps_agreed_content`) -> rejected
  5. otherwise                                                              -> accepted

Rule 1 asks for a contradiction, not only the lack of an agreement: a long synthesis that
moot's check cannot compare with long answers ("unsure") is not shown to set them all aside.

Pure and deterministic: a replay checks the recorded text to the same verdict.
"""

from __future__ import annotations

from collections.abc import Mapping

from msgspec import Struct

from moot.deliberation.agreement import keeps_agreed_content
from moot.deliberation.answers import extract_answer
from moot.deliberation.claims import Relation, compare, extract_claim
from moot.deliberation.finding import names
from moot.types import Finding

__all__ = ["SynthesisCheck", "check_synthesis", "relate"]


class SynthesisCheck(Struct, frozen=True):
    """Whether a synthesis may be the final answer, and why in words."""

    accepted: bool
    reason: str
    of_disagreeing: bool = False


def check_synthesis(
    text: str, finding: Finding | None, *, task: str | None = None
) -> SynthesisCheck:
    """Check a synthesis (`text`, the chairman's reply) against moot's finding over the agents'
    answers: rejected where it contradicts or drops the agreed claim, or, without one, where it
    sets aside every answer it can be compared with."""
    extracted = extract_answer(text)
    answer = extracted.text if extracted is not None else text
    if finding is None or not finding.consensus or not finding.claim:
        unheld = _draws_on_none(answer, finding, task)
        if unheld is not None:
            return SynthesisCheck(False, unheld, of_disagreeing=True)
        return SynthesisCheck(
            True,
            "the agents' answers do not agree, so it is a synthesis of disagreeing answers, "
            "not a consensus",
            of_disagreeing=True,
        )
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


def relate(
    answer: str, answers: Mapping[str, str], finding: Finding | None, task: str | None = None
) -> dict[str, Relation]:
    """How a final answer written from the agents' `answers` (agent -> its final answer)
    relates to each, by moot's check: group by group as the finding groups them, so agents
    whose answers the finding holds one claim stand in one relation to it (it cannot draw on
    Agent B's "The capital of Italy is Rome." and be unsure of Agent C's "In Italian, the
    capital of Italy is Rome." where the finding puts them together); an answer in no group,
    on its own."""
    mine = extract_claim(answer, task)
    grouped: dict[str, Relation] = {}
    for claim, members in finding.groups if finding is not None else ():
        relation = compare(mine, extract_claim(claim, task)).relation
        grouped.update(dict.fromkeys(members, relation))
    return {
        agent: grouped[agent]
        if agent in grouped
        else compare(mine, extract_claim(text, task)).relation
        for agent, text in answers.items()
    }


def _draws_on_none(answer: str, finding: Finding | None, task: str | None) -> str | None:
    """Why a synthesis of disagreeing answers is none of them: its final answer (`answer`)
    agrees with no group of the agents' answers and contradicts one at least; None otherwise
    (or where the finding holds no answer to compare it with)."""
    if finding is None or not finding.groups:
        return None
    mine = extract_claim(answer, task)
    relations = [compare(mine, extract_claim(claim, task)).relation for claim, _ in finding.groups]
    if Relation.AGREE in relations or Relation.CONTRADICT not in relations:
        return None
    aside = [
        f"{names(members)}'s ({_short(claim)})"
        for (claim, members), relation in zip(finding.groups, relations, strict=True)
        if relation is Relation.CONTRADICT
    ]
    listed = ", ".join(aside[:-1]) + " and " + aside[-1] if len(aside) > 1 else aside[0]
    return (
        f"its answer '{_short(mine.text)}' agrees with none of the agents' answers and "
        f"contradicts {listed}, so it is no synthesis of them"
    )


def _short(text: str, limit: int = 80) -> str:
    """A claim on one line, cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
