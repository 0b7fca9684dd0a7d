"""moot's finding on a tournament: the label follows the contestants' final positions, never the
arbiter's say-so (issue 29).

    history[0] = each contestant's first stated position (a challenger entering a later match
                 states it after reading the leader's, as the seed has it)
    history[g] = every contestant's latest position after debate round g (the step ids' rN);
                 one that left the bracket keeps the last position it stated
    final      = the last of them; a contestant that failed or gave junk has no valid answer
    verdicts   = the arbiter's convergence scores and its choices of a winner, as evidence
    judgement  = finding.judge_answers(history, started, verdicts, critics)

An arbiter's score claims agreement when it reaches the match's threshold. It is invalid when
its own fields contradict each other (100/100 with disagreements listed, converged with the
core recommendations scored as opposed) and not upheld where the two positions it scored
contradict. Only a score of the pair of positions both sides finally held may confirm agreement
the wording cannot (never a contradiction). A side that takes up the other's position in a
match changed its mind after the other's challenge, though the two texts may not contradict;
so did a side that replaced its position by one that keeps none of its words.
"""

from __future__ import annotations

import msgspec

from moot.deliberation.claims import Relation, compare, extract_claim
from moot.deliberation.convergence import ConvergenceResult, structural_similarity
from moot.deliberation.finding import Judgement, judge_answers, replaced
from moot.protocols.tournament.bracket import Match, Tournament, label
from moot.text import plural
from moot.types import ChangeOfMind, ModelVerdict

__all__ = [
    "arbiter_problem",
    "bar_no_answer",
    "judge",
    "moves",
    "no_valid_answer",
    "remember",
    "started",
]

_OPPOSED = 50  # an arbiter's core_recommendation below this says the two recommend different things


def started(t: Tournament) -> list[str]:
    """Every contestant that took part: the seeds, and the backups that replaced one."""
    backups = [b for m in t.matches for b in m.replaced.values()]
    return [*t.seeds, *(b for b in backups if b not in t.seeds)]


def remember(t: Tournament, m: Match, g: int) -> None:
    """After debate round `g` of match `m`: the sides' positions join the record; a side
    replaced in round 0, or left without a valid position there, had none."""
    latest = dict(t.said[-1]) if t.said else {}
    for gone in m.replaced:
        t.first.setdefault(gone, None)
        latest[gone] = None
    for alias in m.sides:
        position = m.stances[alias].recommendation if alias in m.stances else None
        if t.first.get(alias) is None:
            t.first[alias] = position
        latest[alias] = position
    assert len(t.said) == g - 1, "one record per debate round"
    t.said.append(latest)


def no_valid_answer(t: Tournament, alias: str, position: str | None) -> str | None:
    """Why a contestant holding `position` (None: it stated none) has no valid answer by
    moot's finding, else None: it gave an invalid answer where it had to state its position
    (`judge` then gives it no final answer), or its position only repeats the question. Such
    a position never wins a match (match.py)."""
    if alias in t.invalid:
        return f"it gave an invalid answer ({t.invalid[alias]})"
    if position is None:
        return "it stated no position"
    claim = extract_claim(position, t.task)
    if claim.repeats_task:
        text = " ".join(claim.text.split())
        return f"its position only repeats the question ('{text[:80]}')"
    return None


def bar_no_answer(t: Tournament, m: Match, g: int) -> None:
    """Before any verdict: a side without a valid answer (`no_valid_answer`) cannot
    win. Against a side that has one it loses by forfeit; if neither has one (a side that lost
    a challenge by forfeit counts as without), the match has no winner."""
    held = {side: m.stances[side].recommendation if side in m.stances else None for side in m.sides}
    void = {side: why for side in m.sides if (why := no_valid_answer(t, side, held[side]))}
    if not void or (m.forfeit is not None and set(void) == {m.forfeit}):
        return  # the arbiter decides, or the forfeit already stands
    losers = {**({m.forfeit: m.reasons[0]} if m.forfeit else {}), **void}
    said = [f"{label(side)}: {why}" for side, why in losers.items()]
    if len(losers) == 2:
        m.winner, m.forfeit, m.decided_by = None, None, "no winner"
        m.reasons = [f"neither side holds a valid answer ({'; '.join(said)})"]
        leaving = m.sides[1]  # the leader keeps its seat, without a win
        if leaving in void:  # else it lost by its forfeit, as the bracket records
            why = f"invalid in round {g}: no winner of match {m.number}: {void[leaving]}"
            t.out.setdefault(leaving, why)
        return
    (loser,) = losers
    m.forfeit, m.winner, m.decided_by = loser, m.other(loser), "forfeit"
    m.reasons = [f"{label(loser)} holds no valid answer: {losers[loser]}"]


def _agrees(t: Tournament, a: str, b: str) -> bool:
    """Two positions say the same by moot's relation, or nearly word for word with nothing
    contradicting."""
    relation = compare(extract_claim(a), extract_claim(b)).relation
    if relation is Relation.AGREE:
        return True
    return relation is Relation.UNSURE and structural_similarity(a, b) >= t.thresholds.structural


def _replaced(t: Tournament, old: str, new: str) -> bool:
    """A position given up for one that keeps none of its words: the two neither agree nor
    contradict (moot's relation cannot tell), yet nothing of the old one is left. A rewording
    that keeps its point ("Use Postgres." to "Postgres, for durability.") is no move."""
    if _agrees(t, old, new):
        return False
    before, after = extract_claim(old, t.task), extract_claim(new, t.task)
    return replaced(before, after)


def moves(t: Tournament, m: Match, g: int, before: dict[str, str]) -> None:
    """After challenge or defense round `g`: each side has read the other's challenge; a side
    whose new position takes up the other's (as it stood before the round) conceded to it, and
    one that replaced its position by one that keeps none of it (`_replaced`) moved."""
    for alias in m.sides:
        other = m.other(alias)
        if alias not in before or other not in before:
            continue
        t.critics[(alias, g)] = (other,)
        old, new = before[alias], m.stances[alias].recommendation
        if new == old:
            continue
        if _agrees(t, new, before[other]) and not _agrees(t, old, before[other]):
            toward: tuple[str, ...] = (other,)
        elif _replaced(t, old, new):
            toward = ()
        else:
            continue
        t.concessions.append(
            ChangeOfMind(
                agent=alias,
                round=g,
                before=extract_claim(old).text,
                after=extract_claim(new).text,
                toward=toward,
                critics=(other,),
            )
        )


def arbiter_problem(result: ConvergenceResult, threshold: float) -> str:
    """Why the arbiter's scores in `result` contradict each other, or "" (and for a result that
    another layer decided)."""
    if result.layer != "arbiter":
        return ""
    d = result.details
    overall = d.get("overall_convergence")
    core = d.get("core_recommendation")
    listed = d.get("key_disagreements") or []
    if overall == 100 and listed:
        return (
            "it scored the positions 100/100, the same, yet listed "
            f"{plural(len(listed), 'disagreement')} between them"
        )
    if isinstance(overall, int | float) and overall >= threshold:
        if isinstance(core, int | float) and core < _OPPOSED:
            return (
                f"it called the positions converged ({overall:g}/100) yet scored their core "
                f"recommendations {core:g}/100"
            )
    return ""


def _score(
    t: Tournament, m: Match, g: int, result: ConvergenceResult, pair: tuple[str, str]
) -> ModelVerdict | None:
    """The arbiter's convergence score on `pair`, as evidence (None: no arbiter scored it)."""
    if result.layer != "arbiter" or m.arbiter is None:
        return None
    a, b = (label(x) for x in m.sides)
    threshold = t.opts.convergence_threshold
    claims = result.score >= threshold
    says = (
        f"called the positions of {a} and {b} converged ({result.score:g}/100, match {m.number})"
        if claims
        else f"scored the convergence of {a} and {b} {result.score:g}/100 (match {m.number})"
    )
    problem = arbiter_problem(result, threshold)
    return ModelVerdict(
        by=label(m.arbiter),
        role="arbiter",
        says=says,
        round=g,
        claims_agreement=claims,
        valid=not problem,
        problem=problem,
        upheld=not (claims and result.contradiction),
    )


def _scores(t: Tournament, final: dict[str, str | None]) -> tuple[list[ModelVerdict], set[int]]:
    """Every score the arbiters gave, and the indices of those on the two positions both sides
    finally held (the only ones that may confirm agreement)."""
    verdicts: list[ModelVerdict] = []
    about_final: set[int] = set()
    for m in t.matches:
        for g, result, pair in m.checks:
            verdict = _score(t, m, g, result, pair)
            if verdict is None:
                continue
            held = [final.get(side) for side in m.sides]
            if held == list(pair):
                about_final.add(len(verdicts))
            verdicts.append(verdict)
    return verdicts, about_final


def _choices(t: Tournament) -> list[ModelVerdict]:
    """The arbiters' choices of a match's winner: evidence, no claim that anyone agrees."""
    return [
        ModelVerdict(
            by=label(m.arbiter),
            role="arbiter",
            says=f"chose {label(m.winner)}'s position in match {m.number}",
            round=m.rounds[-1] if m.rounds else None,
        )
        for m in t.matches
        if m.decided_by == "arbiter" and m.arbiter is not None and m.winner is not None
    ]


def judge(t: Tournament) -> Judgement:
    """moot's finding on the bracket (the module docstring)."""
    who = started(t)
    history: list[dict[str, str | None]] = [dict(t.first), *(dict(r) for r in t.said)]
    final = history[-1]
    reasons = {**t.failed, **t.invalid}
    for alias in who:
        if alias in reasons:
            final[alias] = None  # its last answer was no answer
    scores, about_final = _scores(t, final)
    judgement = judge_answers(
        history,
        started=who,
        verdicts=[v for i, v in enumerate(scores) if i in about_final],
        critics=t.critics,
        reasons=reasons,
        name=label,
        task=t.task,
        kept=t.kept,
    )
    seen = {(c.agent, c.round) for c in judgement.changes}
    changes = [*judgement.changes, *(c for c in t.concessions if (c.agent, c.round) not in seen)]
    changes.sort(key=lambda c: (c.round, who.index(c.agent) if c.agent in who else len(who)))
    return msgspec.structs.replace(
        judgement, changes=tuple(changes), verdicts=(*scores, *_choices(t))
    )
