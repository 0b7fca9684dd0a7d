"""What a council's outcome says: moot's finding over the agents' answers labels it; the
chairman's text is the final answer, where it does not contradict an agreed answer; the trust
statement says which answers the chairman's answer draws on and which it sets aside, and names
every ranking that was an abstention."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from moot.deliberation.claims import Relation, compare, extract_claim
from moot.deliberation.finding import Judgement, names
from moot.deliberation.trust import plain_reason, tiny_note
from moot.protocols.synthesis import CHAIRMAN, verdict
from moot.types import Outcome, RoundSummary, Synthesis, alias_label

__all__ = ["CHAIRMAN", "describe_round", "outcome", "relations"]


def _by(alias: str) -> str:
    """Which model chaired, where it was an agent's: " (Agent A's model chaired)"."""
    return "" if alias == CHAIRMAN else f" ({alias_label(alias)}'s model chaired)"


def relations(chair: Mapping[str, Any], answers: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """How the chairman's final answer relates to each valid answer by moot's check: agent ->
    "drew_on" (they agree), "set_aside" (they contradict) or "unsure"."""
    if chair["status"] != "valid":
        return {}
    mine = extract_claim(chair["answer"])
    out = {}
    for row in answers:
        if row["status"] != "valid":
            continue
        relation = compare(mine, extract_claim(row["answer"])).relation
        out[row["agent"]] = {
            Relation.AGREE: "drew_on",
            Relation.CONTRADICT: "set_aside",
            Relation.UNSURE: "unsure",
        }[relation]
    return out


def _final(
    chair: Mapping[str, Any] | None,
    judgement: Judgement,
    answers: Sequence[Mapping[str, Any]],
    ranked: Mapping[str, Any],
    task: str | None,
) -> tuple[str, str, Synthesis | None]:
    """The final answer, a sentence on where it comes from, and the chairman's text as a
    synthesis checked against the agreed answer (protocols/synthesis.py): where it is
    rejected, the best-ranked of the agreeing answers stands."""
    f = judgement.finding
    picked = best = ""
    if f.consensus:
        best = next(row["agent"] for row in ranked["order"] if row["agent"] in set(f.agreed))
        picked = next(row["text"] for row in answers if row["agent"] == best)
    synthesis = verdict(chair, f, picked=picked, task=task) if chair is not None else None
    if not f.consensus:
        if synthesis is not None and synthesis.accepted:
            assert chair is not None
            return (
                chair["text"],
                (
                    f"the final answer is the chairman's synthesis{_by(chair['agent'])} of answers "
                    "that disagree, not a consensus"
                ),
                synthesis,
            )
        why = "no final answer: the chairman gave none" if chair else "no final answer"
        return "", why, synthesis
    if synthesis is not None and synthesis.accepted:
        assert chair is not None
        return (
            chair["text"],
            (
                f"the final answer is the chairman's text{_by(chair['agent'])}, which keeps the "
                "agreed answer"
            ),
            synthesis,
        )
    why = (
        f"was rejected ({synthesis.reason})"
        if chair is not None and chair["status"] == "valid" and synthesis is not None
        else f"gave no valid answer ({plain_reason(chair['problem'])})"
        if chair
        else "was not asked"
    )
    return (
        picked,
        (
            f"the chairman's text {why}, so the final answer is {alias_label(best)}'s, the "
            "best-ranked of the agreeing answers"
        ),
        synthesis,
    )


def _trust(
    meta: Mapping[str, Any],
    answers: Sequence[Mapping[str, Any]],
    rankings: Sequence[Mapping[str, Any]],
    ranked: Mapping[str, Any],
    chair: Mapping[str, Any] | None,
    judgement: Judgement,
    related: Mapping[str, str],
) -> str:
    specs = {str(a): str(spec) for a, spec in meta.get("aliases", {}).items()}
    tiny = tiny_note(specs.values())
    sentences = [tiny] if tiny else []
    f = judgement.finding
    n = len(answers)
    if f.consensus:
        sentences.append(
            f"{len(f.agreed)} of the {n} agents' independent answers agree on '{f.claim}' by "
            "moot's check; the rankings and the chairman are evidence, not the decision."
        )
    else:
        sentences.append(
            f"The {n} agents' answers do not agree by moot's check: the final answer is a "
            "synthesis of disagreeing answers, not a consensus."
        )
    sentences.append(
        f"The answers were ordered by {ranked['method']} over {ranked['valid_rankings']} valid "
        f"ranking{'s' * (ranked['valid_rankings'] != 1)}"
        + (f" ({names(ranked['top_tied'])} tied for first)" if ranked["top_tied"] else "")
        + "."
    )
    if chair is not None and chair["status"] == "valid":
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
                f"The chairman's answer{_by(chair['agent'])} " + "; ".join(parts) + "."
            )
    elif chair is not None:
        sentences.append(f"The chairman gave no valid answer: {plain_reason(chair['problem'])}.")
    dropped = [r for r in answers if r["status"] != "valid"]
    if dropped:
        listed = "; ".join(f"{alias_label(r['agent'])}: {r['problem']}" for r in dropped)
        sentences.append(f"Answers set aside as {'/'.join(_statuses(dropped))}: {listed}.")
    abstained = [r for r in rankings if r["status"] in ("invalid", "failed")]
    if abstained:
        listed = "; ".join(f"{alias_label(r['ranker'])}: {r['problem']}" for r in abstained)
        sentences.append(f"Rankings counted as abstentions: {listed}.")
    sentences += judgement.sentences()
    return " ".join(sentences)


def _statuses(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return sorted({str(r["status"]) for r in rows})


def outcome(
    meta: Mapping[str, Any],
    answers: Sequence[Mapping[str, Any]],
    rankings: Sequence[Mapping[str, Any]],
    ranked: Mapping[str, Any],
    chair: Mapping[str, Any] | None,
    judgement: Judgement,
    task: str | None = None,
) -> tuple[dict[str, Any], Outcome]:
    """The round record (`details["rounds"][0]`) and the outcome."""
    f = judgement.finding
    related = relations(chair, answers) if chair is not None else {}
    final, where, synthesis = _final(chair, judgement, answers, ranked, task)
    record = {
        "round": 1,
        "label": f.label,
        "consensus": f.consensus,
        "claim": f.claim if f.consensus else None,
        "method": ranked["method"],
        "order": list(ranked["order"]),
        "top_tied": list(ranked["top_tied"]),
        "answers": len(answers),
        "valid": sum(1 for r in answers if r["status"] == "valid"),
        "abstained": [r["ranker"] for r in rankings if r["status"] in ("invalid", "failed")],
        "chairman": chair["agent"] if chair else None,
        "chairman_valid": bool(chair and chair["status"] == "valid"),
    }
    details = {
        "rounds": [record],
        "answers": list(answers),
        "rankings": list(rankings),
        "aggregate": dict(ranked),
        "chairman": {**chair, "relations": related} if chair else None,
    }
    result = Outcome(
        protocol="council",
        status="consensus" if f.consensus else "no_consensus",
        consensus=f.consensus,
        how=f"{f.reason}; {where}",
        trust=_trust(meta, answers, rankings, ranked, chair, judgement, related),
        final_answer=final,
        rounds=1,
        disagreements=tuple(
            f"{claim!r}: {names(members)}"
            for claim, members in f.groups
            if not f.consensus or claim != f.claim
        ),
        positions={r["agent"]: r["answer"] for r in answers if r["status"] == "valid"},
        details=details,
        synthesis=synthesis,
        **judgement.outcome_fields(),
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
