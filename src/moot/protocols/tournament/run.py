"""The tournament (seed 001): a single-elimination bracket. The first two seeds meet, the
winner carries its refined position and the debate's history into a match with the next
challenger, and so on: N-1 matches for N models.

    seeds = shuffle(agents)                         # or as given, with shuffle = false
    leader, held = seeds[0], None
    for challenger in seeds[1:]:
        match = play_match(leader, challenger, held, history)   # match.py
        leader, held = match.winner, match.winner's final position
    champion = leader

The outcome succeeds (exit 0) when the final match converged, or when the arbiter's choice is
accepted (`accept_arbiter_choice`); otherwise it shows both positions, the convergence
progression and the arbiter's analysis (exit 2).
"""

from __future__ import annotations

from typing import Any

from moot.deliberation.convergence import Embedder, Thresholds, default_embedder
from moot.engine.session import Session
from moot.protocols.tournament.bracket import (
    Match,
    Stance,
    Tournament,
    budget_shares,
    label,
    progression,
)
from moot.protocols.tournament.code import run_code
from moot.protocols.tournament.match import play_match
from moot.protocols.tournament.options import TournamentOptions
from moot.types import Outcome

__all__ = ["run"]


def _given_order(s: Session, agents: list[str]) -> list[str]:
    """The agents in the order the config gave them (aliases are shuffled per session): match
    each configured agent, in order, to the first unused alias with the same settings."""
    configured = (s.meta.get("config") or {}).get("agents") or []
    left = list(agents)
    ordered = []
    for entry in configured:
        for alias in left:
            if s.agent(alias).config.model_dump(mode="json") == entry:
                ordered.append(alias)
                left.remove(alias)
                break
    return ordered + left


def _embedder(s: Session, opts: TournamentOptions) -> Embedder | None:
    if not opts.semantic:
        return None
    embedder, note = default_embedder()
    if note is not None:
        s.warn(note)  # once per session: the semantic layer is skipped
    return embedder


def _setup(s: Session, task: str, opts: TournamentOptions) -> Tournament:
    agents = [a for a in s.aliases if a.startswith("agent_")]
    seeds = s.shuffle(agents, step="bracket/seeding") if opts.shuffle else _given_order(s, agents)
    return Tournament(
        s=s,
        task=task,
        opts=opts,
        seeds=seeds,
        arbiters=[a for a in s.aliases if a.startswith("arbiter_")],
        backups=[a for a in s.aliases if a.startswith("backup_")],
        embedder=_embedder(s, opts),
        thresholds=Thresholds(opts.structural_threshold, opts.semantic_threshold),
        shares=budget_shares(len(agents) - 1),
    )


async def run(s: Session, task: str, opts: TournamentOptions) -> Outcome:
    if s.code_task:  # a bracket of changes (tournament/code.py)
        agents = [a for a in s.aliases if a.startswith("agent_")]
        seeds = (
            s.shuffle(agents, step="bracket/seeding") if opts.shuffle else _given_order(s, agents)
        )
        arbiters = [a for a in s.aliases if a.startswith("arbiter_")]
        return await run_code(s, task, opts, seeds, arbiters)
    t = _setup(s, task, opts)
    leader, held = t.seeds[0], None
    for index, challenger in enumerate(t.seeds[1:], start=1):
        sides = [leader, challenger]
        m = Match(number=index, sides=sides, arbiter=t.arbiter_for(index, sides))
        await play_match(t, m, held)
        t.matches.append(m)
        assert m.winner is not None
        for side in m.sides:
            if side != m.winner and side not in t.out:
                t.out[side] = f"lost match {m.number}"
        leader, held = m.winner, m.stances[m.winner]
    return _outcome(t, leader, held)


def _outcome(t: Tournament, champion: str, held: Stance | None) -> Outcome:
    final = t.matches[-1]
    accepted = (
        not final.converged and t.opts.accept_arbiter_choice and final.decided_by == "arbiter"
    )
    success = final.converged or accepted
    if final.converged:
        ended = (
            f"the final match converged ({progression(final.scores)}, "
            f"{final.last.layer if final.last else '?'} layer)"
        )
    else:
        ended = f"the final match did not converge ({progression(final.scores)})"
        if accepted:
            ended += "; the arbiter's choice is accepted (accept_arbiter_choice)"
    earlier = "".join(f"; {_result_line(m)}" for m in t.matches[:-1])
    how = (
        f"{label(champion)} won the tournament: {len(t.seeds)} models, {len(t.matches)} "
        f"match(es){earlier}; {ended}; decided by {final.decided_by}: "
        f"{'; '.join(final.reasons)}"
    )
    positions: dict[str, str] = {}
    for m in t.matches:
        for alias, stance in m.stances.items():
            positions[alias] = stance.recommendation
    return Outcome(
        protocol="tournament",
        status="consensus" if success else "no_consensus",
        consensus=success,
        how=how,
        final_answer=held.recommendation if held is not None else "",
        rounds=t.round_no,
        disagreements=tuple(_disagreement(m) for m in t.matches if not m.converged),
        positions=positions,
        details={"rounds": t.rounds, "bracket": _bracket(t, champion)},
    )


def _result_line(m: Match) -> str:
    """'match 1: Agent C beat Agent A (arbiter, converged 40% -> 100%)': the bracket, read in
    the outcome line that every face shows."""
    loser = m.other(m.winner or "")
    ended = "converged" if m.converged else "did not converge"
    return (
        f"match {m.number}: {label(m.winner or '')} beat {label(loser)} "
        f"({m.decided_by}, {ended} {progression(m.scores)})"
    )


def _disagreement(m: Match) -> str:
    a, b = m.sides
    text = (
        f"match {m.number} ({label(a)} vs {label(b)}) did not converge: convergence "
        f"{progression(m.scores)}"
    )
    if m.analysis:
        text += (
            f"; fundamental disagreement: {m.analysis['fundamental_disagreement']}; why: "
            f"{m.analysis['why_no_convergence']}; the arbiter chose {label(m.winner or '')}'s "
            "position"
        )
    elif m.winner:
        text += f"; {label(m.winner)} won by {m.decided_by}"
    return text


def _bracket(t: Tournament, champion: str) -> dict[str, Any]:
    return {
        "seeding": list(t.seeds),
        "shuffled": t.opts.shuffle,
        "matches": [m.record() for m in t.matches],
        "champion": champion,
        "left": dict(t.out),
        "budget_shares": [round(x, 4) for x in t.shares],
        "semantic_layer": t.embedder.name if t.embedder is not None else None,
    }
