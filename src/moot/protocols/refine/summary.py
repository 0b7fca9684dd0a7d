"""How a refine pass reads in the generic views (a `RoundSummary`: the Borda table as votes,
the winner and the streak as the decision), and the worst case a run can reach (`--dry-run`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from moot.config import AgentConfig, RunConfig
from moot.deliberation.anonymize import alias_for
from moot.protocols.definition import Projected, Projection, completion_cap
from moot.protocols.refine.cast import cast_pass
from moot.protocols.refine.options import RefineOptions
from moot.protocols.synthesis import latest_replies
from moot.types import Event, RoundSummary, alias_label

__all__ = ["describe_round", "feedback", "project"]

_PROMPT_OVERHEAD = 300  # tokens of instructions and labels around the quoted texts


def describe_round(entry: Mapping[str, Any], options: RefineOptions) -> RoundSummary | None:
    if "round" not in entry or "streak" not in entry:
        return None
    winner, streak, k = entry["winner"], entry["streak"], entry.get("k", "?")
    if entry.get("converged"):
        decision = f"A holds: converged (streak {streak} of {k})"
    elif winner == "A":
        decision = f"A holds (streak {streak} of {k})"
    else:
        decision = f"{winner} wins: the new incumbent (streak 0 of {k})"
    borda = entry.get("borda") or {}
    notes = []
    if borda.get("tie"):
        tied = ", ".join(borda.get("tied", []))
        notes.append(f"tie between {tied}, broken by {borda.get('tiebreak')}")
    abstained = [j["judge"] for j in entry.get("judges", []) if j.get("ranking") is None]
    if abstained:
        notes.append("abstained: " + ", ".join(alias_label(a) for a in abstained))
    if entry.get("problem"):
        notes.append(str(entry["problem"]))
    return RoundSummary(
        round=int(entry["round"]),
        decision=decision,
        votes={name: float(v) for name, v in (borda.get("scores") or {}).items()},
        problem="; ".join(notes) or None,
        method="Borda",
    )


def project(config: RunConfig, options: RefineOptions) -> Projection:
    """Calls per participant: the fewest (A wins the first k passes) and the most (a new
    incumbent every pass, so every pass runs), with the largest prompt each may get."""
    members: dict[str, AgentConfig] = {
        alias_for(i, "agent"): agent for i, agent in enumerate(config.agents)
    }
    for prefix, member in options.roles.by_prefix():
        if member is not None:
            members[f"{prefix}_a"] = member
    cap = max(completion_cap(m) for m in members.values())
    text = min(cap, options.max_quote_chars // 4 + 20)
    prompt = {"author": 0, "critic": text, "author_b": 2 * text, "synthesizer": 2 * text}
    prompt["judge"] = 3 * text
    fewest = _count(list(members), options, options.convergence_k, converging=True)
    most = _count(list(members), options, options.max_passes, converging=False)
    result = []
    for alias, member in members.items():
        played = sorted(set(most[alias]) | set(fewest[alias]))
        if not played:
            continue
        result.append(
            Projected(
                member=member,
                role=f"{alias_label(alias)} ({', '.join(played)})",
                fewest=sum(fewest[alias].values()),
                most=sum(most[alias].values()),
                prompt_tokens=_PROMPT_OVERHEAD + max(prompt[r] for r in played),
            )
        )
    return result


def _count(
    aliases: list[str], options: RefineOptions, passes: int, *, converging: bool
) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {alias: {} for alias in aliases}

    def add(alias: str, role: str) -> None:
        counts[alias][role] = counts[alias].get(role, 0) + 1

    agents = sorted(a for a in aliases if a.startswith("agent_"))
    writer = None
    if options.input is None and agents:
        writer = agents[0]
        add(writer, "author")
    for number in range(1, passes + 1):
        cast = cast_pass(aliases, number, options.judges, writer)
        add(cast.critic, "critic")
        add(cast.author_b, "author_b")
        add(cast.synthesizer, "synthesizer")
        for judge in cast.judges:
            add(judge, "judge")
        if not converging:
            writer = cast.author_b
    return counts


def feedback(details: Mapping[str, Any], events: list[Event]) -> list[str]:
    """What a chairman's synthesis weighs (protocols/synthesis.py): the last pass's critique
    and its judges' reasons."""
    critiques = [f"Critique by {x}" for x in latest_replies(events, "critic")]
    return critiques + [f"Ranking by {x}" for x in latest_replies(events, "judge")]
