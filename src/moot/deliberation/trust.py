"""How far to trust an outcome: its label and a short plain statement (issue 9, "Labels say
exactly what happened" and "Every outcome carries a short plain statement").

A court once called "2 of 2 yes" unanimous although one of its three agents had failed. Here the
label counts every agent that started: "unanimous" only when all of them agreed; agents that
failed or gave an invalid answer are named and lower the label ("supermajority of the 2 valid
agents; Agent B failed"); and no consensus stands without a quorum of valid agents (by default
more than half of those that started). The statement says what the agreement rests on (votes,
matching answers, a judge's score, verify commands), what failed and why, who abstained (an
abstention is never a vote against), and, when a model known to be tiny took part, that the
answer is a demonstration, not evidence. A judge panel's pick is never a consensus (issue 29: a
model's selection is evidence): it is labelled "chosen by the judges", and `own_judges_note`
says when the judges are the agents' own models.

Pure: protocols describe what happened with the types below and call `assess`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal, NamedTuple

from msgspec import Struct

__all__ = [
    "TINY_MODEL_PATTERNS",
    "Checks",
    "Evidence",
    "JudgePanel",
    "JudgeScore",
    "MatchingAnswers",
    "Participant",
    "Trust",
    "Votes",
    "assess",
    "is_tiny",
    "own_judges_note",
    "plain_reason",
    "qualified",
    "tiny_note",
]

Status = Literal["agreed", "dissented", "abstained", "failed", "invalid"]


class Participant(Struct, frozen=True):
    """One agent that started, as the user knows it ("Agent B"), and how it ended: agreed with
    the outcome, dissented, abstained, failed (no reply: an error, a timeout), or invalid (a
    reply that was not a substantive answer). `reason` says why it failed or was invalid."""

    name: str
    status: Status
    reason: str = ""


class Votes(Struct, frozen=True):
    """The agents voted on the answer (the court's agent rounds)."""


class MatchingAnswers(Struct, frozen=True):
    """The agents' answers matched: word for word ("exact"), nearly ("similar", with the lowest
    pairwise similarity as `score`), or as a judge found ("judged")."""

    method: Literal["exact", "similar", "judged"]
    score: float | None = None


class JudgeScore(Struct, frozen=True):
    """One judge scored the solutions' convergence (the arena's verify)."""

    judge: str
    score: int
    out_of: int = 10


class JudgePanel(Struct, frozen=True):
    """A panel of judges selected the answer (the court's judge rounds). A panel's pick is a
    decision over agents that did not agree, never their consensus: the outcome is labelled
    "chosen by the judges" and no consensus is allowed."""

    selected: int
    judges: int
    confidence: float


class Checks(Struct, frozen=True):
    """Verify commands run on the result: how many passed of how many."""

    passed: int
    total: int


Evidence = Votes | MatchingAnswers | JudgeScore | JudgePanel


class Trust(NamedTuple):
    """The outcome's label (one line), its trust statement (a few plain sentences, to be shown
    first), and whether a consensus may be declared at all."""

    label: str
    statement: str
    consensus_allowed: bool


# Model specs known to be tiny: the embedded default and anything under a billion parameters
# by its name (135M, 360M, 0.5B). Their agreement demonstrates the product, not an answer.
TINY_MODEL_PATTERNS = (
    re.compile(r"^local:(?:smollm2?(?:-135m(?:-instruct)?)?|default)$"),
    re.compile(r"smollm"),
    re.compile(r"(?:^|[-_:/ .])\d{2,3}m(?:$|[-_. ])"),
    re.compile(r"(?:^|[-_:/ .])0\.\d+b(?:$|[-_. ])"),
)


def is_tiny(spec: str) -> bool:
    """Whether the model spec names a model known to be tiny (`local:smollm2`, `...-135M...`)."""
    lowered = spec.strip().lower()
    return any(pattern.search(lowered) for pattern in TINY_MODEL_PATTERNS)


def tiny_note(models: Iterable[str]) -> str | None:
    """The sentence that opens a trust statement when a tiny model took part, else None."""
    tiny = sorted({spec for spec in models if is_tiny(spec)})
    if not tiny:
        return None
    return (
        "This answer is a demonstration, not evidence: it comes from a tiny model "
        f"({', '.join(tiny)})."
    )


def own_judges_note(agents: Iterable[str], judges: Iterable[str]) -> str | None:
    """The sentence a trust statement needs when judges run on the agents' own models (model
    specs): their verdict is the same models judging their own debate, not an independent
    check. None when no judge shares a model with an agent."""
    shared = sorted(set(agents) & set(judges))
    if not shared:
        return None
    return (
        f"The judges are the agents' own models ({', '.join(shared)}): their verdict is not an "
        "independent check of the agents' answers."
    )


def plain_reason(reason: str, limit: int = 200) -> str:
    """A reason for a trust statement (it can quote model text or a provider's error): one
    printable line of at most `limit` characters, without a closing full stop."""
    flat = " ".join(str(reason).split())
    flat = "".join(ch if ch.isprintable() else "?" for ch in flat).rstrip(". ")
    return flat[:limit] + ("..." if len(flat) > limit else "")


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _valid(count: int) -> str:
    return "the 1 valid agent" if count == 1 else f"the {count} valid agents"


def _share(quorum: float) -> str:
    return "half" if quorum == 0.5 else f"{quorum:.0%}"


def _head(evidence: Evidence | None, agreed: int, valid: int, started: int, dropped: bool) -> str:
    if isinstance(evidence, JudgeScore):
        head = f"judged consensus ({evidence.judge}, score {evidence.score}/{evidence.out_of})"
        return head + (f" among {_valid(valid)}" if dropped else "")
    if agreed == started:
        return "unanimous"
    if not dropped:
        return f"supermajority: {agreed} of {started} agents"
    if agreed == valid:
        return f"supermajority of {_valid(valid)}"
    return f"supermajority: {agreed} of {_valid(valid)}"


def _how(evidence: Evidence | None, agreed: int, started: int, valid: int) -> str:
    """The sentence saying what the consensus rests on."""
    if isinstance(evidence, JudgeScore):
        return (
            f"{evidence.judge}, as judge, scored the convergence of the solutions of "
            f"{_valid(valid)} {evidence.score}/{evidence.out_of}."
        )
    if isinstance(evidence, MatchingAnswers):
        how = {
            "exact": "word for word",
            "similar": "in nearly the same words"
            + (f" (similarity {evidence.score:.2f})" if evidence.score is not None else ""),
            "judged": "as a judge found",
        }[evidence.method]
        return f"{agreed} of the {started} agents that started gave the same answer, {how}."
    return f"{agreed} of the {started} agents that started voted for it."


def assess(
    participants: Sequence[Participant],
    *,
    reached: bool,
    evidence: Evidence | None = None,
    checks: Checks | None = None,
    models: Sequence[str] = (),
    quorum: float = 0.5,
    unheld: int = 0,
) -> Trust:
    """The label, trust statement and whether a consensus may stand, for an outcome.

    `participants` are every agent that started. `reached` is what the protocol's own rule found
    (a supermajority of votes, matching answers, a judge's CONSENSUS); a judge panel's pick
    (`JudgePanel`) is labelled "chosen by the judges" and never allows a consensus;
    `evidence` says which; `checks` the verify commands' results; `models` every model spec that
    took part (agents and judges), to spot tiny ones; `unheld` how many agents end on one answer
    that none of them held at first (`Finding.unheld`: no consensus, but not a disagreement).
    A consensus is allowed only when `reached` and more than `quorum` of the participants gave
    a valid answer."""
    started = len(participants)
    if started == 0:
        raise ValueError("no participants: pass every agent that started, failed ones included")
    if not 0.0 <= quorum < 1.0:
        raise ValueError(f"quorum {quorum} must be a share from 0 up to (not including) 1")
    dropped = [p for p in participants if p.status in ("failed", "invalid")]
    valid = started - len(dropped)
    agreed = sum(1 for p in participants if p.status == "agreed")
    quorum_met = valid > quorum * started
    chosen = evidence if isinstance(evidence, JudgePanel) else None
    reached = reached and chosen is None  # a panel's pick is never the agents' consensus
    allowed = reached and quorum_met

    qualifiers = [
        f"{p.name} failed" if p.status == "failed" else f"{p.name} gave an invalid answer"
        for p in dropped
    ]
    if checks is not None and checks.passed < checks.total:
        qualifiers.append(f"{checks.total - checks.passed} of {checks.total} checks failed")
    if allowed:
        head = _head(evidence, agreed, valid, started, bool(dropped))
    elif chosen is not None:
        head = (
            f"chosen by the judges ({chosen.selected} of {chosen.judges} judges); no consensus "
            "among the agents"
        )
    elif reached:
        head = f"no consensus: no quorum ({valid} of {started} agents valid)"
    else:
        head = "no consensus"
    label = "; ".join([head, *qualifiers])

    tiny = tiny_note(models)
    sentences: list[str] = [tiny] if tiny else []
    if allowed:
        sentences.append(_how(evidence, agreed, started, valid))
        others = [p for p in participants if p.status in ("dissented", "abstained")]
        for p in others:
            sentences.append(
                f"{p.name} "
                + (
                    "abstained"
                    if p.status == "abstained"
                    else "voted against"
                    if isinstance(evidence, Votes)
                    else "gave another answer"
                )
                + "."
            )
    elif reached:
        sentences.append(
            f"No consensus can be claimed: only {valid} of the {started} agents gave a valid "
            f"answer, and a quorum needs more than {_share(quorum)} of them."
        )
    else:
        abstained = [p.name for p in participants if p.status == "abstained"]
        sided = valid - len(abstained)
        if abstained:
            sentences.append(
                f"{_names(abstained)} abstained"
                + (
                    f", and the {sided} agents that took a side did not agree."
                    if sided > 1
                    else "."
                )
            )
        elif valid == 0:
            sentences.append(f"None of the {started} agents that started gave a valid answer.")
        elif valid == 1:
            sentences.append(
                f"Only 1 of the {started} agents that started gave a valid answer: it had no one "
                "to agree with."
            )
        elif unheld > 1:
            sentences.append(
                f"{unheld} of the {started} agents that started end on the same answer, but none "
                "of them held it in their first, independent answer, so it is not counted as "
                "their consensus."
            )
        else:
            sentences.append(
                f"The {valid} valid agents of the {started} that started did not agree."
            )
        if chosen is not None:
            sentences.append(
                f"{chosen.selected} of {chosen.judges} judges chose this answer (average "
                f"confidence {chosen.confidence:.2f}): a decision by the judges, not an agreement "
                "of the agents."
            )
        if isinstance(evidence, JudgeScore):
            sentences.append(
                f"{evidence.judge}, as judge, scored their convergence "
                f"{evidence.score}/{evidence.out_of}."
            )
    for p in dropped:
        what = "failed" if p.status == "failed" else "gave an invalid answer"
        sentences.append(f"{p.name} {what}" + (f": {plain_reason(p.reason)}." if p.reason else "."))
    if checks is not None:
        sentences.append(f"Verify commands: {checks.passed} of {checks.total} passed.")
    return Trust(label, " ".join(sentences), allowed)


def qualified(how: str, trust: Trust, reached: bool) -> str:
    """The outcome line with the trust assessment's word: a finding it does not allow is
    named as such ("..., but ..."), else its qualifiers (a tiny model, ...) are added."""
    qualifiers = trust.label.split("; ")[1:]
    if reached and not trust.consensus_allowed:
        return f"{how}, but {trust.label}"
    if qualifiers:
        return f"{how}; {'; '.join(qualifiers)}"
    return how
