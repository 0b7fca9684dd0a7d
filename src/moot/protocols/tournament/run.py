"""The tournament (seed 001): a single-elimination bracket. The first two seeds meet, the
winner carries its refined position and the debate's history into a match with the next
challenger, and so on: N-1 matches for N models.

    seeds = shuffle(agents)                         # or as given, with shuffle = false
    leader, held = seeds[0], None
    for challenger in seeds[1:]:
        match = play_match(leader, challenger, held, history)   # match.py
        leader, held = match.winner, match.winner's final position
        (no winner: neither side has a valid answer; the leader keeps its seat, held = None)
    champion = the final match's winner, else none (no final answer)

The label is moot's finding (tournament/finding.py), never the arbiter's: the bracket
winner's last position is the final answer, and the outcome is a consensus (exit 0) only when
more than half of all the contestants that started end on positions that agree by moot's check,
the winner among them (persuasion when they got there by giving up their own); otherwise it
shows the positions, the convergence progression and the arbiter's analysis (exit 2). The
arbiter's convergence scores and choices are evidence: a score of 100 on positions that
contradict is named as such. `accept_arbiter_choice` only says that the arbiter's choice is
the final answer; it never makes a consensus. A position that is junk (empty, an echo of the
prompt or its template, a refusal) counts like a failed reply, and a side without a valid
answer never wins a match (finding.bar_no_answer); a challenge or defense reply that failed or
was invalid leaves the side's earlier position standing (match.py). The outcome's trust statement
says who won how, what moot found, who changed their mind after whose challenge, what failed
or was invalid, and whether a tiny model took part.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from moot.config import dump
from moot.deliberation.convergence import Embedder, Thresholds, default_embedder
from moot.deliberation.finding import Judgement, names
from moot.deliberation.markup import strip_markup
from moot.deliberation.substance import check_substance
from moot.deliberation.trust import assess, plain_reason, qualified, tiny_note
from moot.engine.replies import call_settings_masked
from moot.engine.session import Session
from moot.protocols.tournament.bracket import (
    Match,
    Stance,
    Tournament,
    budget_shares,
    label,
    participants,
    progression,
)
from moot.protocols.tournament.code import run_code
from moot.protocols.tournament.finding import judge, started
from moot.protocols.tournament.match import play_match
from moot.protocols.tournament.options import TournamentOptions
from moot.text import plural
from moot.types import Finding, Outcome

__all__ = ["run"]


def _given_order(s: Session, agents: list[str]) -> list[str]:
    """The agents in the order the config gave them (aliases are shuffled per session): match
    each configured agent, in order, to the first unused alias with the same settings."""
    configured = (s.meta.get("config") or {}).get("agents") or []
    left = list(agents)
    ordered = []
    for entry in configured:
        for alias in left:
            # the recorded config holds header and base_url secrets masked
            config = dump(s.agent(alias).config)
            if call_settings_masked(config) == call_settings_masked(entry):
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


def _seeding(s: Session, opts: TournamentOptions) -> list[str]:
    agents = [a for a in s.aliases if a.startswith("agent_")]
    return s.shuffle(agents, step="bracket/seeding") if opts.shuffle else _given_order(s, agents)


def _arbiters(s: Session) -> list[str]:
    return [a for a in s.aliases if a.startswith("arbiter_")]


def _setup(s: Session, task: str, opts: TournamentOptions) -> Tournament:
    seeds = _seeding(s, opts)
    return Tournament(
        s=s,
        task=task,
        opts=opts,
        seeds=seeds,
        arbiters=_arbiters(s),
        backups=[a for a in s.aliases if a.startswith("backup_")],
        embedder=_embedder(s, opts),
        thresholds=Thresholds(opts.structural_threshold, opts.semantic_threshold),
        shares=budget_shares(len(seeds) - 1),
    )


async def run(s: Session, task: str, opts: TournamentOptions) -> Outcome:
    if s.code_task:  # a bracket of changes (tournament/code.py)
        return await run_code(s, task, opts, _seeding(s, opts), _arbiters(s))
    t = _setup(s, task, opts)

    async def match(number: int, sides: list[str]) -> Match:
        m = Match(number=number, sides=sides, arbiter=t.arbiter_for(number, sides))
        previous = t.matches[-1] if t.matches else None  # its winner is this match's leader
        held = previous.stances[previous.winner] if previous and previous.winner else None
        return await play_match(t, m, held)

    champion = await t.knockout(t.seeds, match)
    return _outcome(t, champion, t.matches[-1].stances[champion] if champion else None)


def _outcome(t: Tournament, champion: str | None, held: Stance | None) -> Outcome:
    """The outcome; with no champion (the final match had no winner) there is no final
    answer."""
    final = t.matches[-1]
    answer = strip_markup(held.recommendation) if held is not None else ""
    junk = check_substance(answer, task=t.task)  # every position was checked; this is the last
    judgement = _finding(t, champion, judge(t), junk)
    f = judgement.finding
    people = participants(started(t), f.agreed, t.failed, t.invalid)
    trust = assess(people, reached=f.consensus, models=t.models(started(t)), unheld=f.unheld)
    success = f.consensus and trust.consensus_allowed
    accepted = (
        not success
        and not final.converged
        and t.opts.accept_arbiter_choice
        and final.decided_by == "arbiter"
    )
    if champion is None:
        ended = f"the final match had no winner: {'; '.join(final.reasons)}"
    elif final.converged:
        ended = (
            f"the final match converged ({progression(final.scores)}, "
            f"{final.last.layer if final.last else '?'} layer)"
        )
    else:
        ended = f"the final match did not converge ({progression(final.scores)})"
        if accepted:
            ended += (
                "; the arbiter's choice is the final answer (accept_arbiter_choice), "
                "not a consensus"
            )
    earlier = "".join(f"; {_result_line(m)}" for m in t.matches[:-1])
    if champion is None:
        how = (
            f"no winner: {len(t.seeds)} models, {plural(len(t.matches), 'match', 'matches')}"
            f"{earlier}; {ended}; "
            f"{_said(f)}"
        )
    else:
        how = (
            f"{label(champion)} won the tournament: {len(t.seeds)} models, "
            f"{plural(len(t.matches), 'match', 'matches')}{earlier}; {ended}; "
            f"decided by {final.decided_by}"
            + (f": {'; '.join(final.reasons)}" if final.reasons else ", which gave no reason")
            + f"; {_said(f)}"
        )
    how = qualified(how, trust, f.consensus)
    positions: dict[str, str] = {}
    for m in t.matches:
        for alias, stance in m.stances.items():
            positions[alias] = stance.recommendation
    return Outcome(
        protocol="tournament",
        status="consensus" if success else "no_consensus",
        consensus=success,
        how=how,
        trust=_statement(t, champion, final, judgement, success, junk, accepted),
        final_answer=answer,
        rounds=t.round_no,
        # a match that ended before any debate (a side stated no valid position) measured none
        disagreements=tuple(_disagreement(t, m) for m in t.matches if m.scores and not m.converged),
        positions=positions,
        details={
            "rounds": t.rounds,
            "bracket": _bracket(t, champion),
            "failed_agents": dict(t.failed),
            "invalid_agents": dict(t.invalid),
            **({"kept": _kept(t)} if t.kept else {}),
            "final_from": champion,
        },
        finding=judgement.finding,
        claims=judgement.claims,
        changes=judgement.changes,
        verdicts=judgement.verdicts,
    )


def _finding(
    t: Tournament, champion: str | None, judgement: Judgement, junk: object | None
) -> Judgement:
    """moot's finding, held to the bracket: the final answer is the winner's last position, so
    a majority that the winner is not part of (or a winner whose position is no answer, or no
    winner at all) is no consensus on that answer."""
    f = judgement.finding
    if not f.consensus:
        return judgement
    if champion is None:
        why = f"{f.reason}, but the final match had no winner, so there is no final answer"
    elif junk is not None:
        why = f"{f.reason}, but the winner's final position is not an answer to the task: {junk}"
    elif champion not in f.agreed:
        why = (
            f"{f.reason}, but the bracket's winner, {label(champion)}, holds another position, "
            "and its position is the final answer"
        )
    else:
        return judgement
    changed = replace(f, label="no_consensus", reason=why, claim=None, agreed=())
    return msgspec.structs.replace(judgement, finding=changed)


def _said(f: Finding) -> str:
    """The finding as the outcome line says it; the agreed answer itself is the final answer,
    shown after the trust statement, so the line names who agreed, not what."""
    who = names(f.agreed)
    agreed = f"{len(f.agreed)} of {f.started} contestants' final positions agree ({who})"
    if f.label == "consensus":
        how = f"confirmed by {f.confirmed_by}" if f.confirmed_by else "by moot's check"
        return f"consensus: {agreed}, {how}"
    if f.label == "persuasion":
        return (
            f"converged by persuasion: {agreed}, but only {f.independent} held that position first"
        )
    return f"no consensus: {f.reason}"


_LAYERS = {
    "structural": "their texts are nearly the same",
    "semantic": "an embedding model found that they mean the same",
}


def _called_converged(t: Tournament, m: Match) -> str:
    """ "Agent C, as arbiter, called the positions converged (100/100), but they still differ:
    391 vs 381", when the arbiter's last score on a match's positions reached the threshold
    while the positions contradict; else ""."""
    last = m.last
    if last is None or not last.contradiction:
        return ""
    if last.layer == "arbiter" and m.arbiter and last.score >= t.opts.convergence_threshold:
        return (
            f"{label(m.arbiter)}, as arbiter, called the positions converged "
            f"({last.score:g}/100), but they still differ: {last.contradiction}"
        )
    return f"the positions still differ: {last.contradiction}"


def _statement(
    t: Tournament,
    champion: str | None,
    final: Match,
    judgement: Judgement,
    success: bool,
    junk: object | None,
    accepted: bool,
) -> str:
    """How far to trust the outcome, in plain words: tiny models first, then who won how (the
    arbiter's verdicts, the convergence of the final match and which layer measured it), moot's
    finding on the final positions and who changed their mind, what failed or was invalid."""
    tiny = tiny_note(t.models(started(t)))
    sentences: list[str] = [tiny] if tiny else []
    who = started(t)
    backups = len(who) - len(t.seeds)
    field = f"{len(t.seeds)} models" + (f" and {plural(backups, 'backup')}" if backups else "")
    if champion is None:
        # sides without a position are named, with why, at the end: said once
        named = t.failed.keys() | t.invalid.keys()
        why = (
            "neither side holds a valid answer; both are named below"
            if set(final.sides) <= named
            else plain_reason("; ".join(final.reasons))
        )
        sentences.append(
            f"Nobody won the tournament of {field} in "
            f"{plural(len(t.matches), 'match', 'matches')}: the final match had no winner "
            f"({why}), so there is no final answer."
        )
    else:
        sentences.append(
            f"{label(champion)} won the tournament of {field} in "
            f"{plural(len(t.matches), 'match', 'matches')}; "
            "the final answer is its last position."
        )
    sentences += [f"{line[0].upper()}{line[1:]}." for line in map(_result_line, t.matches[:-1])]
    a, b = (label(x) for x in final.sides)
    if final.converged and final.last is not None:
        layer = final.last.layer
        why = _LAYERS.get(layer) or (
            f"{label(final.arbiter)}, as arbiter, scored their convergence {final.last.score:g}/100"
            if final.arbiter
            else f"score {final.last.score:g}/100"
        )
        sentences.append(
            f"In the final match {a} and {b} converged ({progression(final.scores)}, {layer} "
            "layer): "
            f"{why}."
        )
    elif not final.scores:
        sentences.append(f"The final match ({a} vs {b}) ended before any debate.")
    else:
        differ = _called_converged(t, final)
        sentences.append(
            f"The final match ({a} vs {b}) did not converge ({progression(final.scores)})"
            + (f": {differ}." if differ else ".")
        )
    reasons = plain_reason("; ".join(final.reasons))
    if champion is None:
        pass  # said above
    elif final.decided_by == "arbiter" and final.arbiter:
        chose = f"{label(final.arbiter)}, as arbiter, chose {label(champion)}'s position"
        sentences.append(f"{chose}: {reasons}." if reasons else f"{chose}; it gave no reason.")
    elif final.decided_by == "forfeit":
        sentences.append(f"{label(champion)} won by forfeit (named below).")
    else:
        sentences.append(f"No arbiter's verdict decided it: {reasons}.")
    if accepted:
        sentences.append(
            "The arbiter's choice is the final answer (accept_arbiter_choice); a choice is "
            "no consensus."
        )
    f = judgement.finding
    if success:
        sentences.append(f"{f.reason[0].upper()}{f.reason[1:]}.")
    elif f.consensus:
        valid = len(who) - len(t.failed.keys() | t.invalid.keys())
        sentences.append(
            f"No consensus can be claimed: only {valid} of the {len(who)} models gave a "
            "valid answer, and a quorum needs more than half of them."
        )
    else:
        sentences.append(f"No consensus: {plain_reason(f.reason, limit=400)}.")
    sentences += judgement.sentences(label)
    for alias in who:
        if alias in t.failed:
            sentences.append(f"{label(alias)} failed: {plain_reason(t.failed[alias])}.")
        elif alias in t.invalid:
            sentences.append(
                f"{label(alias)} gave an invalid answer: {plain_reason(t.invalid[alias])}."
            )
    for (alias, g), why in t.kept.items():
        reply, _, problem = why.removeprefix("its ").partition(": ")
        phase, _, verb = reply.partition(" ")
        sentences.append(
            f"{label(alias)}'s {phase} in round {g} {verb} ({plain_reason(problem)}); its "
            "earlier position stands."
        )
    return " ".join(sentences)


def _kept(t: Tournament) -> dict[str, dict[str, str]]:
    """Each side's challenge and defense replies that failed or were invalid, by round (as
    result.json keeps them: "agent_b": {"2": "its challenge was invalid: ..."})."""
    out: dict[str, dict[str, str]] = {}
    for (alias, g), why in t.kept.items():
        out.setdefault(alias, {})[str(g)] = why
    return out


def _result_line(m: Match) -> str:
    """'match 1: Agent C beat Agent A (arbiter, converged 40% -> 100%)': the bracket, read in
    the outcome line that every face shows; 'match 1: no winner between Agent C and Agent B
    (neither side holds a valid answer ...)' when neither had a valid answer."""
    ended = f"{'converged' if m.converged else 'did not converge'} {progression(m.scores)}"
    if not m.scores:  # it ended in its first round: a side stated no valid position
        ended = "before any debate"
    if m.winner is None:
        a, b = (label(x) for x in m.sides)
        return f"match {m.number}: no winner between {a} and {b} ({'; '.join(m.reasons)}; {ended})"
    loser = m.other(m.winner)
    return f"match {m.number}: {label(m.winner)} beat {label(loser)} ({m.decided_by}, {ended})"


def _disagreement(t: Tournament, m: Match) -> str:
    a, b = m.sides
    text = (
        f"match {m.number} ({label(a)} vs {label(b)}) did not converge: convergence "
        f"{progression(m.scores)}"
    )
    differ = _called_converged(t, m)
    if differ:
        text += f"; {differ}"
    if m.analysis:
        core, why = (m.analysis.get(k) for k in ("fundamental_disagreement", "why_no_convergence"))
        text += f"; fundamental disagreement: {core}" if core else ""
        text += f"; why: {why}" if why else ""
        text += f"; the arbiter chose {label(m.winner or '')}'s position"
    elif m.winner:
        text += f"; {label(m.winner)} won by {m.decided_by}"
    else:
        text += f"; no winner: {'; '.join(m.reasons)}"
    return text


def _bracket(t: Tournament, champion: str | None) -> dict[str, Any]:
    return {
        **t.record(champion),
        "budget_shares": [round(x, 4) for x in t.shares],
        "semantic_layer": t.embedder.name if t.embedder is not None else None,
    }
