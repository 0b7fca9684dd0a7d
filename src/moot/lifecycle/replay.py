"""Replay: recompute a session's outcome from its journal alone (zero model calls) and compare
it with the stored `result.json`.

A difference that is not a mismatch is explained (`ReplayReport.changed`): the stored result
was computed from this very journal (its seal holds) before labels were moot's finding, and the
replay gives the outcome under that rule. `moot replay`, `moot migrate` (which checks that the
upgraded journal replays to its result) and `resume` of a finished session all come here.
"""

from __future__ import annotations

from pathlib import Path

from msgspec import Struct
from msgspec.structs import replace

from moot.engine import lifecycle, opening
from moot.engine.journal import Journal, key_from_env
from moot.engine.result import Result, unsealed
from moot.engine.store import SessionFolder, find_session
from moot.errors import ReplayIncomplete
from moot.lifecycle import plan as plans
from moot.types import EventKind

__all__ = ["FINDING_RULE", "ReplayReport", "outcome_change", "replay"]

# The rule under which an outcome replayed today may differ from one stored before it.
FINDING_RULE = "moot's finding (labels are decided from the agents' final answers)"


class ReplayReport(Struct, frozen=True):
    """A replay's result, and whether it matches the stored result.json. `changed` explains a
    difference that is not a mismatch: the stored result was computed from this very journal
    (its seal holds) before labels were moot's finding, and the replay gives the outcome under
    that rule ("outcome changed: ..."); None when identical, or when nothing explains it."""

    session_id: str
    result: Result
    identical: bool | None  # None: no stored result.json to compare with
    steps: int
    changed: str | None = None


def replay(ref: str | None, *, root: Path | None = None) -> ReplayReport:
    """Recompute the outcome from the journal alone and compare it with `result.json`."""
    folder = opening.current_format(find_session(ref, root))
    journal, _ = Journal.open(folder.events, key_from_env(), repair=False)
    meta = opening.begin_meta(journal, folder)
    plan, agents = plans.reopen(meta)
    stored = folder.result_json.read_text(encoding="utf-8") if folder.result_json.exists() else None
    try:
        result = lifecycle.replay_session(
            folder, journal, plan.config, agents, plans.protocol_fn(plan)
        )
    except ReplayIncomplete as exc:
        ended = _ended_earlier(folder, journal, stored, exc)
        if ended is None:
            raise
        return ended
    identical = None if stored is None else result.same_as_stored(stored)
    steps = _steps(journal)
    changed = None
    if stored is not None and identical is False:
        changed = outcome_change(folder, journal, stored, result)
    return ReplayReport(folder.id, result, identical, steps, changed)


def _steps(journal: Journal) -> int:
    return sum(1 for e in journal.events if e.kind in (EventKind.ASK, EventKind.SHELL))


def _ended_earlier(
    folder: SessionFolder, journal: Journal, stored_text: str | None, why: ReplayIncomplete
) -> ReplayReport | None:
    """A finished session that today's code would not have ended where it did: a judge's
    CONSENSUS ended it, and under moot's finding the deliberation goes on to a round the
    journal never recorded. Its outcome under the rule is moot's finding over the final answers
    as journaled (the stored result's positions), with every agent that started counted. A
    stored result from before the rule gives a changed outcome; one written under it (by `moot
    resume`) is compared byte for byte. None if nothing explains the stop (no stored result, or
    one edited since, or a missing step in a round the journal holds: a re-ask)."""
    from moot.deliberation.finding import judge_answers
    from moot.engine.seal import seal_result

    if stored_text is None or _within_recorded_rounds(why.step, journal):
        return None
    try:
        stored = Result.read(stored_text)
    except ValueError:
        return None
    started = [a for a in stored.aliases if a.startswith("agent_")]
    if not started or (stored.finding is None and not _computed_from(folder, stored, journal)):
        return None
    j = judge_answers([dict(stored.positions)], started=started, task=stored.task)
    finding = j.finding
    reason = finding.reason[:1].upper() + finding.reason[1:]
    missing = f"it asks for {why.step}, {why.effect} the journal never recorded"
    replayed = seal_result(
        replace(
            stored,
            status="consensus" if finding.consensus else "no_consensus",
            consensus=finding.consensus,
            how=f"{finding.reason} (today's code would not have ended the session there)",
            trust=" ".join([f"{reason}.", *j.sentences()]),
            final_answer=stored.final_answer if finding.consensus else "",
            finding=finding,
            claims=[replace(c, round=stored.rounds) for c in j.claims],
            changes=list(j.changes),
            verdicts=list(j.verdicts),
            journal=None,
        ),
        journal,
    )
    if stored.finding is not None:  # written under the rule (by `moot resume`): compare
        same = replayed.same_as_stored(stored_text)
        return ReplayReport(folder.id, replayed, same, _steps(journal))
    changed = (
        f"outcome changed: the stored result was labelled {stored.status} ({stored.how}); "
        f"under {FINDING_RULE} it is {finding.label}: {finding.reason}. Today's code would "
        f"not have ended the session there ({missing}): this is the finding over the final "
        "answers as journaled"
    )
    return ReplayReport(folder.id, replayed, False, _steps(journal), changed)


def _within_recorded_rounds(step: str, journal: Journal) -> bool:
    """Whether `step` belongs to a round the journal holds steps of (a re-ask in round 1 of a
    session that recorded round 1): then the code changed how that round is asked, not where
    the session ends, and the stop is not explained."""
    recorded = {e.step.split("/", 1)[0] for e in journal.events if e.step}
    return step.split("/", 1)[0] in recorded


def outcome_change(
    folder: SessionFolder, journal: Journal, stored_text: str, replayed: Result
) -> str | None:
    """Why the replayed result differs from the stored one, when the only cause is that labels
    are now moot's finding: the stored result carries no finding, it was computed from this
    journal as it stands (its seal holds: nobody edited it) and names the same session, task
    and agents, and the replay carries a finding. None for any other difference."""
    try:
        stored = Result.read(stored_text)
    except ValueError:
        return None
    if stored.finding is not None or replayed.finding is None:
        return None
    if not _computed_from(folder, stored, journal):
        return None
    same = ("session_id", "protocol", "task", "aliases")
    if any(getattr(stored, name) != getattr(replayed, name) for name in same):
        return None
    finding = replayed.finding
    if stored.status != finding.label or stored.consensus != replayed.consensus:
        return (
            f"outcome changed: the stored result was labelled {stored.status} ({stored.how}); "
            f"under {FINDING_RULE} it is {finding.label}: {finding.reason}"
        )
    return (
        f"outcome changed: the stored result ({stored.status}) was written before "
        f"{FINDING_RULE}; the replay adds the finding, {finding.label}: {finding.reason}"
    )


def _computed_from(folder: SessionFolder, stored: Result, journal: Journal) -> bool:
    """Whether `stored` was computed from `journal` and not edited since: its seal holds over
    its content and names a head of this journal, after which only warnings were journaled (a
    replay with changed prompts notes each one). A result from before sealed results passes
    unless its folder says its journal is sealed."""
    seal = stored.journal
    if seal is None:
        return not (folder.meta() or {}).get("journal_head")
    if seal.signed != journal.signed or not 0 < seal.events <= len(journal.events):
        return False
    expected = journal.seal_text(unsealed(stored, seal.events, seal.head, seal.signed).to_json())
    if seal.seal != expected or journal.hashes[seal.events - 1] != seal.head:
        return False
    return all(e.kind == EventKind.WARNING for e in journal.events[seal.events :])
