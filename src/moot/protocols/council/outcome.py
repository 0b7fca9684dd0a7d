"""What a council's outcome says: moot's finding over the agents' answers labels it; the
chairman's text is the final answer, where it is a valid answer that does not contradict an
agreed answer, or without one draws on some answer rather than contradicting them all, and
some agent gave a valid answer (else there is nothing to synthesize); where it is not, the
best-ranked agreeing answer stands, or without a consensus the best-ranked valid answer,
labelled so, or none (no valid ranking placed one: the answers stand side by side as the
disagreements); the trust statement says how the answers were ordered (by no valid ranking,
one, or the mean of several), which answers the chairman's answer draws on and which it sets
aside, or why it was rejected, and names every ranking that was an abstention."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from moot.deliberation.claims import Relation
from moot.deliberation.finding import Judgement, names
from moot.deliberation.synthesis import relate
from moot.deliberation.trust import plain_reason, tiny_note
from moot.protocols.synthesis import CHAIRMAN, verdict
from moot.types import Finding, Outcome, RoundSummary, Synthesis, alias_label

__all__ = ["CHAIRMAN", "Stages", "describe_round", "outcome", "relations"]

# Why a chairman's text is no synthesis where the finding holds no agent's answer an answer:
# it would have only the chairman's word behind it (a tiny model's "5" to "Is 7 a prime
# number?" was accepted and printed as the final answer).
NOTHING = "no agent gave a valid answer, so there is nothing to synthesize"


def _by(alias: str) -> str:
    """Which model chaired, where it was an agent's: " (Agent A's model chaired)"."""
    return "" if alias == CHAIRMAN else f" ({alias_label(alias)}'s model chaired)"


def relations(
    chair: Mapping[str, Any],
    answers: Sequence[Mapping[str, Any]],
    finding: Finding | None = None,
    task: str | None = None,
) -> dict[str, str]:
    """How the chairman's final answer relates to each valid answer by moot's check, group by
    group as the finding groups them (`deliberation/synthesis.relate`): agent -> "drew_on"
    (they agree), "set_aside" (they contradict) or "unsure"."""
    if chair["status"] != "valid":
        return {}
    valid = {row["agent"]: row["answer"] for row in answers if row["status"] == "valid"}
    kinds = {Relation.AGREE: "drew_on", Relation.CONTRADICT: "set_aside", Relation.UNSURE: "unsure"}
    return {a: kinds[r] for a, r in relate(chair["answer"], valid, finding, task).items()}


class Stages(Struct, frozen=True):
    """What the council's stages recorded: the session's begin record, every answer, every
    ranking and their aggregate, the chairman's reply (None: not asked), and moot's finding
    over the answers."""

    meta: Mapping[str, Any]
    answers: Sequence[Mapping[str, Any]]
    rankings: Sequence[Mapping[str, Any]]
    ranked: Mapping[str, Any]
    chair: Mapping[str, Any] | None
    judgement: Judgement


def _best(st: Stages, among: Sequence[str]) -> str | None:
    """The best-ranked of the agents `among` whose answers are valid, by the aggregate; None
    where no valid ranking placed any of them."""
    return next(
        (row["agent"] for row in st.ranked["order"] if row["agent"] in among and row["place"]),
        None,
    )


def _final(st: Stages, task: str | None) -> tuple[str, str, Synthesis | None, str | None]:
    """The final answer, a sentence on where it comes from, the chairman's text as a
    synthesis checked against the agreed answer (protocols/synthesis.py; without one, a text
    that agrees with no answer and contradicts them is rejected too), and the agent whose
    answer is the final answer where it is not the chairman's (else None). The picked answer,
    which stands where the synthesis is not accepted, is the best-ranked of the agreeing
    answers, or without a consensus the best-ranked valid answer (none where no valid ranking
    placed one): never the chairman's word alone. Where no agent gave a valid answer, a
    chairman's text is recorded, never accepted."""
    f, chair = st.judgement.finding, st.chair
    valid = [row["agent"] for row in st.answers if row["status"] == "valid"]
    best = (
        next(row["agent"] for row in st.ranked["order"] if row["agent"] in set(f.agreed))
        if f.consensus
        else _best(st, valid)
    )
    picked = next((row["text"] for row in st.answers if row["agent"] == best), "")
    synthesis = verdict(chair, f, picked=picked, task=task) if chair is not None else None
    if synthesis is not None and f.valid == 0:
        synthesis = replace(synthesis, accepted=False, reason=NOTHING)
    if chair is not None and synthesis is not None and synthesis.accepted:
        where = (
            f"the final answer is the chairman's text{_by(chair['agent'])}, which keeps the "
            "agreed answer"
            if f.consensus
            else f"the final answer is the chairman's synthesis{_by(chair['agent'])} of "
            "answers that disagree, not a consensus"
        )
        return chair["text"], where, synthesis, None
    why = (
        f"was rejected ({synthesis.reason})"
        if chair is not None and chair["status"] == "valid" and synthesis is not None
        else f"gave no valid answer ({plain_reason(chair['problem'])})"
        if chair
        else "was not asked"
    )
    if not picked and (f.valid == 0 or chair is None or chair["status"] != "valid"):
        # nothing was picked and the chairman wrote no answer to check (or there was nothing
        # to synthesize): its text and why it is not the final answer are the chairman's
        # record (details, trust), not a synthesis. A valid text moot's check rejected stays a
        # synthesis, so the reports say why it is not the final answer.
        synthesis = None
    if f.valid == 0:
        return "", "no final answer: there is nothing to synthesize", synthesis, None
    if best is None:
        where = f"no final answer: the chairman's text {why}, and no valid ranking placed an answer"
        return "", where, synthesis, None
    which = (
        "the best-ranked of the agreeing answers"
        if f.consensus
        else f"the best-ranked answer by {st.ranked['method']}{_tied(st, best)}, not a consensus"
    )
    where = f"the chairman's text {why}, so the final answer is {alias_label(best)}'s, {which}"
    return picked, where, synthesis, best


def _tied(st: Stages, best: str) -> str:
    """ ", first in alias order of Agent A and Agent B, tied" where `best` tied for first."""
    tied = st.ranked["top_tied"]
    return f", first in alias order of {names(tied)}, tied" if best in tied else ""


def _ordered(st: Stages) -> str:
    """How the answers were ordered, in a sentence: by no ranking, one agent's ranking or the
    mean rank over several, with the answers no valid ranking placed named."""
    ranked = st.ranked
    k, tied = ranked["valid_rankings"], ranked["top_tied"]
    unranked = [row["agent"] for row in ranked["order"] if row["place"] is None]
    if k == 0:
        return "No ranking was valid, so the answers were not ordered."
    if k == 1:
        (ranker,) = [r["ranker"] for r in st.rankings if r.get("ranking")]
        said = f"The answers were ordered by the one valid ranking, {alias_label(ranker)}'s"
    else:
        said = f"The answers were ordered by {ranked['method']} over {k} valid rankings"
    said += f" ({names(tied)} tied for first)" if tied else ""
    if unranked:
        said += (
            f"; {names(unranked)}'s answer{'s were' if len(unranked) > 1 else ' was'} not "
            "ranked by any"
        )
    return said + "."


def _trust(
    st: Stages, related: Mapping[str, str], synthesis: Synthesis | None, best: str | None
) -> str:
    specs = {str(a): str(spec) for a, spec in st.meta.get("aliases", {}).items()}
    tiny = tiny_note(specs.values())
    sentences = [tiny] if tiny else []
    f = st.judgement.finding
    n = len(st.answers)
    if f.consensus:
        sentences.append(
            f"{len(f.agreed)} of the {n} agents' independent answers agree on '{f.claim}' by "
            "moot's check; the rankings and the chairman are evidence, not the decision."
        )
    elif f.valid == 0:  # no answers to speak of, nor rankings of them
        sentences.append(
            "No agent gave a valid answer, so there is nothing to synthesize and no final answer."
        )
    elif synthesis is not None and synthesis.accepted:
        sentences.append(
            f"The {n} agents' answers do not agree by moot's check: the final answer is a "
            "synthesis of disagreeing answers, not a consensus."
        )
    elif best is not None:
        sentences.append(
            f"The {n} agents' answers do not agree by moot's check: the final answer is the "
            f"best-ranked answer, {alias_label(best)}'s, not a consensus."
        )
    else:
        sentences.append(
            f"The {n} agents' answers do not agree by moot's check, and there is no final answer."
        )
    if f.valid:
        sentences.append(_ordered(st))
    rejected = synthesis is not None and not synthesis.accepted
    if st.chair is not None and st.chair["status"] == "valid" and f.valid == 0:
        sentences.append(
            f"The chairman's text{_by(st.chair['agent'])} is recorded, not the final answer."
        )
    elif st.chair is not None and st.chair["status"] == "valid" and rejected:
        assert synthesis is not None
        sentences.append(
            f"The chairman's text{_by(st.chair['agent'])} was rejected: {synthesis.reason}."
        )
    elif st.chair is not None and st.chair["status"] == "valid":
        drew = [a for a, r in related.items() if r == "drew_on"]
        aside = [a for a, r in related.items() if r == "set_aside"]
        unsure = [a for a, r in related.items() if r == "unsure"]
        parts = []
        if drew:
            parts.append(f"draws on {names(drew)}'s answer{'s' * (len(drew) > 1)}")
        if aside:
            parts.append(f"sets aside {names(aside)}'s, which it contradicts")
        if unsure:
            parts.append(f"cannot be compared with {names(unsure)}'s")
        if parts:
            sentences.append(
                f"The chairman's answer{_by(st.chair['agent'])} " + "; ".join(parts) + "."
            )
    elif st.chair is not None:
        sentences.append(f"The chairman gave no valid answer: {plain_reason(st.chair['problem'])}.")
    dropped = [r for r in st.answers if r["status"] != "valid"]
    if dropped:
        listed = "; ".join(f"{alias_label(r['agent'])}: {r['problem']}" for r in dropped)
        sentences.append(f"Answers set aside as {'/'.join(_statuses(dropped))}: {listed}.")
    abstained = [r for r in st.rankings if r["status"] in ("invalid", "failed")]
    if abstained:
        listed = "; ".join(f"{alias_label(r['ranker'])}: {r['problem']}" for r in abstained)
        sentences.append(f"Rankings counted as abstentions: {listed}.")
    sentences += st.judgement.sentences()
    return " ".join(sentences)


def _statuses(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return sorted({str(r["status"]) for r in rows})


def _chairman(
    chair: Mapping[str, Any], related: Mapping[str, str], synthesis: Synthesis | None
) -> dict[str, Any]:
    """The chairman's record: its reply as read, how it relates to each answer, and, where no
    synthesis holds its text (nothing was picked to stand in its place), `recorded_only` (the
    key is left out otherwise, so the records of sessions from before it read unchanged)."""
    record = {**chair, "relations": related}
    return record if synthesis is not None else {**record, "recorded_only": True}


def outcome(st: Stages, task: str | None = None) -> tuple[dict[str, Any], Outcome]:
    """The round record (`details["rounds"][0]`) and the outcome."""
    f = st.judgement.finding
    # a chairman draws on no answer, nor sets one aside, where the finding holds none
    related = relations(st.chair, st.answers, f, task) if st.chair is not None and f.valid else {}
    final, where, synthesis, best = _final(st, task)
    record = {
        "round": 1,
        "label": f.label,
        "consensus": f.consensus,
        "claim": f.claim if f.consensus else None,
        "method": st.ranked["method"],
        "order": list(st.ranked["order"]),
        "top_tied": list(st.ranked["top_tied"]),
        "answers": len(st.answers),
        "valid": sum(1 for r in st.answers if r["status"] == "valid"),
        "abstained": [r["ranker"] for r in st.rankings if r["status"] in ("invalid", "failed")],
        "chairman": st.chair["agent"] if st.chair else None,
        "chairman_valid": bool(st.chair and st.chair["status"] == "valid"),
    }
    details = {
        "rounds": [record],
        "answers": list(st.answers),
        "rankings": list(st.rankings),
        "aggregate": dict(st.ranked),
        "chairman": _chairman(st.chair, related, synthesis) if st.chair else None,
    }
    result = Outcome(
        protocol="council",
        status="consensus" if f.consensus else "no_consensus",
        consensus=f.consensus,
        how=f"{f.reason}; {where}",
        trust=_trust(st, related, synthesis, best),
        final_answer=final,
        rounds=1,
        disagreements=tuple(
            f"{claim!r}: {names(members)}"
            for claim, members in f.groups
            if not f.consensus or claim != f.claim
        ),
        positions={r["agent"]: r["answer"] for r in st.answers if r["status"] == "valid"},
        details=details,
        synthesis=synthesis,
        **st.judgement.outcome_fields(),
    )
    return record, result


def describe_round(entry: Mapping[str, Any], options: Any) -> RoundSummary | None:
    if "order" not in entry or "chairman" not in entry:
        return None
    ranks = ", ".join(
        f"{alias_label(str(row['agent']))} {float(row['mean_rank']):g}"
        for row in entry["order"]
        if row.get("mean_rank") is not None
    )
    if entry.get("consensus"):
        decision = f"consensus on {entry['claim']}"
    elif entry.get("valid") == 0:
        decision = f"no consensus: {NOTHING}"
    else:
        decision = "no consensus: the chairman's synthesis of disagreeing answers"
    if ranks:
        decision += f"; {entry.get('method') or 'mean rank'}: {ranks}"
    if entry.get("chairman") and not entry.get("chairman_valid"):
        decision += "; the chairman gave no valid answer"
    problems = []
    if entry.get("valid", 0) < entry.get("answers", 0):
        problems.append(
            f"{entry['answers'] - entry['valid']} of {entry['answers']} answers invalid"
        )
    if entry.get("abstained"):
        problems.append(
            "rankings abstained: " + ", ".join(alias_label(str(a)) for a in entry["abstained"])
        )
    return RoundSummary(
        round=int(entry["round"]),
        decision=decision,
        problem="; ".join(problems) or None,
    )
