"""What a Mixture-of-Agents outcome says: moot's finding over the agents' answers labels it;
the aggregator's text is the final answer where it does not contradict an agreed answer (and,
without one, where it draws on one of the answers at least, or contradicts none); the
trust statement says which last-layer answers the aggregator's answer draws on and which it
sets aside, and names every answer that was invalid or failed, by layer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from moot.deliberation.claims import Relation
from moot.deliberation.finding import Judgement, judge_answers, names
from moot.deliberation.synthesis import relate
from moot.deliberation.trust import plain_reason, tiny_note
from moot.types import Finding, Outcome, RoundSummary, alias_label

__all__ = ["AGGREGATOR", "describe_round", "layer_record", "outcome", "relations"]

AGGREGATOR = "aggregator_a"  # the alias of the aggregator the [moa] section names

Row = Mapping[str, Any]


def _by(alias: str) -> str:
    """Which model aggregated, where it was an agent's: " (Agent A's model aggregated)"."""
    return "" if alias == AGGREGATOR else f" ({alias_label(alias)}'s model aggregated)"


def layer_record(layer: int, rows: Sequence[Row], task: str) -> dict[str, Any]:
    """A layer's round entry: how many answers were valid and whether they agree by moot's
    check (that layer alone)."""
    agents = [str(r["agent"]) for r in rows]
    f = judge_answers([{r["agent"]: r["answer"] for r in rows}], started=agents, task=task).finding
    return {
        "round": layer,
        "layer": layer,
        "answers": len(rows),
        "valid": sum(1 for r in rows if r["status"] == "valid"),
        "set_aside": [r["agent"] for r in rows if r["status"] != "valid"],
        "agree": f.consensus,
        "claim": f.claim if f.consensus else None,
        "groups": [[claim, list(members)] for claim, members in f.groups],
    }


def relations(
    aggregated: Row, last: Sequence[Row], finding: Finding | None = None, task: str | None = None
) -> dict[str, str]:
    """How the aggregator's answer relates to each valid last-layer answer by moot's check,
    group by group as the finding groups them (`deliberation/synthesis.relate`): agent ->
    "drew_on" (they agree), "set_aside" (they contradict) or "unsure"."""
    if aggregated["status"] != "valid":
        return {}
    answers = {row["agent"]: row["answer"] for row in last if row["status"] == "valid"}
    kinds = {Relation.AGREE: "drew_on", Relation.CONTRADICT: "set_aside", Relation.UNSURE: "unsure"}
    related = relate(aggregated["answer"], answers, finding, task)
    return {agent: kinds[relation] for agent, relation in related.items()}


def _final(
    aggregated: Row | None, judgement: Judgement, last: Sequence[Row], related: Mapping[str, str]
) -> tuple[str, str]:
    """The final answer and a sentence on where it comes from."""
    f = judgement.finding
    ok = aggregated is not None and aggregated["status"] == "valid"
    if not f.consensus:
        if ok and _sets_all_aside(related):
            return "", (
                "no final answer: the aggregator's answer agrees with none of the last-layer "
                "answers and contradicts them, so it is no aggregation of them"
            )
        if ok:
            assert aggregated is not None
            return aggregated["text"], (
                f"the final answer is the aggregator's aggregation{_by(aggregated['agent'])} of "
                "answers that disagree, not a consensus"
            )
        return "", "no final answer: the aggregator gave none" if aggregated else "no final answer"
    agreed = set(f.agreed)
    if ok and not any(related.get(a) == "set_aside" for a in agreed):
        assert aggregated is not None
        return aggregated["text"], (
            f"the final answer is the aggregator's text{_by(aggregated['agent'])}, which keeps "
            "the agreed answer"
        )
    first = next(row for row in last if row["agent"] in agreed)
    why = (
        "contradicts the agreed answer"
        if ok
        else f"is no valid answer ({plain_reason(aggregated['problem'])})"
        if aggregated
        else "was not asked"
    )
    return first["text"], (
        f"the aggregator's text {why}, so the final answer is {alias_label(first['agent'])}'s, "
        "the first in alias order of the agreeing last-layer answers"
    )


def _sets_all_aside(related: Mapping[str, str]) -> bool:
    """Whether the aggregator's answer draws on no last-layer answer and contradicts one at
    least: without a consensus, such an answer is the aggregator's own, not an aggregation of
    theirs (as a council's chairman's is rejected: deliberation/synthesis.py)."""
    kinds = set(related.values())
    return "set_aside" in kinds and "drew_on" not in kinds


def _trust(
    meta: Mapping[str, Any],
    layers: Sequence[Sequence[Row]],
    aggregated: Row | None,
    judgement: Judgement,
    related: Mapping[str, str],
) -> str:
    specs = {str(a): str(spec) for a, spec in meta.get("aliases", {}).items()}
    tiny = tiny_note(specs.values())
    sentences = [tiny] if tiny else []
    f = judgement.finding
    n, count = len(layers[-1]), len(layers)
    if f.consensus:
        sentences.append(
            f"{len(f.agreed)} of the {n} agents' last-layer answers agree on '{f.claim}' by "
            "moot's check; the aggregator's text is evidence, not the decision."
        )
    else:
        sentences.append(
            f"The {n} agents' last-layer answers do not agree by moot's check: the final answer "
            "is an aggregation of disagreeing answers, not a consensus."
        )
    if count > 1:
        sentences.append(
            f"Each layer after the first of {count} was shown the layer before's answers, so "
            "the last layer's answers are not independent."
        )
    if aggregated is not None and aggregated["status"] == "valid":
        parts = []
        for kind, words in (
            ("drew_on", "draws on {}'s answer{}"),
            ("set_aside", "sets aside {}'s, which it contradicts"),
            ("unsure", "cannot be compared with {}'s"),
        ):
            who = [a for a, r in related.items() if r == kind]
            if who:
                parts.append(words.format(names(who), "s" * (len(who) > 1)))
        if parts:
            sentences.append(
                f"The aggregator's answer{_by(aggregated['agent'])} " + "; ".join(parts) + "."
            )
        if not f.consensus and _sets_all_aside(related):
            sentences.append(
                "It draws on none of their answers, so it is no aggregation of them: there is "
                "no final answer."
            )
    elif aggregated is not None:
        sentences.append(
            f"The aggregator gave no valid answer: {plain_reason(aggregated['problem'])}."
        )
    dropped = [r for layer in layers for r in layer if r["status"] != "valid"]
    if dropped:
        listed = "; ".join(
            f"{alias_label(r['agent'])} in layer {r['layer']}: {r['problem']}" for r in dropped
        )
        kinds = "/".join(sorted({str(r["status"]) for r in dropped}))
        sentences.append(f"Answers set aside as {kinds}, not counted: {listed}.")
    sentences += judgement.sentences()
    return " ".join(sentences)


def outcome(
    meta: Mapping[str, Any],
    layers: Sequence[Sequence[Row]],
    aggregated: Row | None,
    judgement: Judgement,
    task: str,
) -> tuple[dict[str, Any], Outcome]:
    """The last layer's round entry (with the decision) and the outcome."""
    f = judgement.finding
    last = layers[-1]
    related = relations(aggregated, last, f, task) if aggregated is not None else {}
    final, where = _final(aggregated, judgement, last, related)
    records = [layer_record(k, rows, task) for k, rows in enumerate(layers, 1)]
    record = records[-1] | {
        "label": f.label,
        "consensus": f.consensus,
        "claim": f.claim if f.consensus else None,
        "aggregator": aggregated["agent"] if aggregated else None,
        "aggregator_valid": bool(aggregated and aggregated["status"] == "valid"),
    }
    records[-1] = record
    details = {
        "rounds": records,
        "layers": [list(layer) for layer in layers],
        "aggregator": {**aggregated, "relations": related} if aggregated else None,
    }
    result = Outcome(
        protocol="moa",
        status="consensus" if f.consensus else "no_consensus",
        consensus=f.consensus,
        how=f"{f.reason}; {where}",
        trust=_trust(meta, layers, aggregated, judgement, related),
        final_answer=final,
        rounds=len(layers),
        disagreements=tuple(
            f"{claim!r}: {names(members)}"
            for claim, members in f.groups
            if not f.consensus or claim != f.claim
        ),
        positions={r["agent"]: r["answer"] for r in last if r["status"] == "valid"},
        details=details,
        **judgement.outcome_fields(),
    )
    return record, result


def describe_round(entry: Mapping[str, Any], options: Any) -> RoundSummary | None:
    """A layer as the faces show it: whether its answers agree; the last also the decision."""
    if "layer" not in entry:
        return None
    if "aggregator" in entry:
        if entry.get("consensus"):
            decision = f"consensus on {entry['claim']}"
        else:
            decision = "no consensus: the aggregator's aggregation of disagreeing answers"
        if entry.get("aggregator") and not entry.get("aggregator_valid"):
            decision += "; the aggregator gave no valid answer"
    elif entry.get("agree"):
        decision = f"the layer's answers agree on {entry['claim']}"
    else:
        decision = "the layer's answers differ"
    problem = None
    if entry.get("set_aside"):
        problem = f"{entry['answers'] - entry['valid']} of {entry['answers']} answers invalid: " + (
            ", ".join(alias_label(str(a)) for a in entry["set_aside"])
        )
    return RoundSummary(round=int(entry["round"]), decision=decision, problem=problem)
