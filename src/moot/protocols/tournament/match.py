"""One match (seed 001, "Match Mechanics"): round 0 positions, then challenge rounds (odd) and
defense rounds (even), a convergence check after every round, and the arbiter's verdict. An
invalid position never wins: a side with no valid answer by moot's finding
(`finding.no_valid_answer`: no valid position in round 0, after its backups, or a position
that only repeats the question) loses by forfeit to a side that has one, and a match where
neither side has one has no winner (the leader keeps its seat, without a win, for the next
challenger). A challenge or defense reply that fails or is invalid leaves the side's earlier
position standing (`Tournament.kept`); as seed 001 has it, a failed challenge loses the match
by default, and a failed defense ends the debate for the arbiter to judge as it stands.

Step ids number rounds across the whole tournament, so the reports show one round per debate
round with its convergence: `r5/match_2_challenge/agent_c`, `r5/match_2_convergence/agent_a`,
`r7/match_2_verdict/agent_a`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from moot.deliberation.anonymize import quote
from moot.deliberation.convergence import (
    ARBITER_SCHEMA,
    NO_EMBEDDER_NOTE,
    ArbiterScores,
    ConvergenceResult,
    arbiter_prompt,
    contradiction,
    converge,
    structural_similarity,
)
from moot.deliberation.markup import strip_markup
from moot.deliberation.parsing import json_parser
from moot.engine.structured import Parsed, ask_parsed
from moot.errors import ProtocolAborted
from moot.protocols.shown import anonymous, nonce
from moot.protocols.tournament import finding, prompts
from moot.protocols.tournament.bracket import (
    Match,
    Stance,
    Tournament,
    describe_round,
    label,
    progression,
    worded,
)
from moot.protocols.tournament.replies import (
    CHALLENGE_SCHEMA,
    DEFENSE_SCHEMA,
    POSITION_SCHEMA,
    ChallengeReply,
    DefenseReply,
    PositionReply,
    VerdictReply,
    verdict_parser,
    verdict_schema,
)
from moot.protocols.tournament.sides import ask_side, clean, drop, keep, stopped, user
from moot.text import plural
from moot.types import Step

__all__ = ["play_match"]


def _lines(items: Sequence[str]) -> str:
    return "\n".join(f"- {item}" for item in items) or "- (none given)"


def _step(g: int, m: Match, phase: str, alias: str) -> str:
    return Step.at(g, f"match_{m.number}_{phase}", alias)


# -- round 0 ------------------------------------------------------------------------------------
def _history(t: Tournament, step: str) -> tuple[str, str]:
    """Earlier matches' highlights and the key points already settled, quoted as one block."""
    highlights, points = [], []
    for m in t.matches:
        a, b = (label(x) for x in m.sides)
        ended = "converged" if m.converged else "did not converge"
        won = f"{label(m.winner)} won" if m.winner else "no winner"
        highlights.append(
            f"Match {m.number}: {a} vs {b}; {won} ({m.decided_by}); "
            f"convergence {progression(m.scores)}, {ended}."
        )
        points += m.reasons
        if m.last is not None:
            points += [str(d) for d in m.last.details.get("key_disagreements", [])]
        points += m.concessions
        if m.analysis:
            points.append(str(m.analysis.get("fundamental_disagreement", "")))
    fence = nonce(t.s, f"{step}/history")
    limit = t.opts.max_quote_chars
    points = [anonymous(t.s, p, f"{step}/history/{i}") for i, p in enumerate(points) if p]
    return (
        quote("the tournament so far", "\n".join(highlights), nonce=fence, limit=limit),
        quote("the tournament so far", _lines(points), nonce=fence, limit=limit),
    )


def _position_prompt(t: Tournament, m: Match, seat: int, held: Stance | None, step: str) -> str:
    # no held position: the first match, or a leader whose last match had no winner
    if m.number == 1 or held is None:
        return prompts.INITIAL.format(match=m.number, format=prompts.POSITION_FORMAT)
    if seat == 0 and held is not None:  # the leader restates its refined position
        own = quote(
            "your position",
            held.recommendation,
            nonce=nonce(t.s, step),
            limit=t.opts.max_quote_chars,
        )
        return prompts.LEADER.format(
            match=m.number, position=own, confidence=held.confidence, format=prompts.POSITION_FORMAT
        )
    leader = m.sides[0]
    text = "(not stated)" if held is None else anonymous(t.s, held.recommendation, f"{step}/leader")
    highlights, points = _history(t, step)
    return prompts.CHALLENGER.format(
        match=m.number,
        leader=label(leader),
        leader_position=quote(
            label(leader), text, nonce=nonce(t.s, step), limit=t.opts.max_quote_chars
        ),
        highlights=highlights,
        key_points=points,
        format=prompts.POSITION_FORMAT,
    )


def _stance(alias: str, reply: PositionReply) -> Stance:
    return Stance(
        alias,
        reply.recommendation,
        tuple(reply.reasons),
        reply.confidence,
        tuple(reply.confidence_factors),
        tuple(reply.uncertainty_points),
    )


async def _positions(t: Tournament, m: Match, g: int, held: Stance | None) -> dict[str, Any]:
    """Round 0: both sides state a position at once. A side without one is replaced by the next
    backup, which gets the same prompt; with none left, a side that failed stops the tournament
    (exit 1) and one whose answer was invalid loses the match by forfeit (neither side with a
    position: no winner)."""
    prompts_for = {}
    for seat, alias in enumerate(m.sides):
        step = _step(g, m, "positions", alias)
        prompts_for[seat] = _position_prompt(t, m, seat, held, step)
    answers = await t.s.gather(
        *(
            ask_side(
                t,
                alias,
                prompts_for[seat],
                PositionReply,
                POSITION_SCHEMA,
                _step(g, m, "positions", alias),
            )
            for seat, alias in enumerate(m.sides)
        )
    )
    failed: dict[str, str] = {}
    invalid: dict[str, str] = {}
    for seat, answer in enumerate(answers):
        alias = m.sides[seat]
        while answer.value is None:
            kind, problem = drop(t, alias, answer)
            (failed if kind == "failed" else invalid)[alias] = problem
            t.out[alias] = f"{kind} in round {g} (the positions of match {m.number}): {problem}"
            if not t.backups:
                if kind == "failed":
                    raise ProtocolAborted(stopped(t, m, g, alias, answer))
                break
            backup = t.backups.pop(0)
            m.replaced[alias] = backup
            m.sides[seat] = alias = backup
            answer = await ask_side(
                t,
                backup,
                prompts_for[seat],
                PositionReply,
                POSITION_SCHEMA,
                _step(g, m, "positions", backup),
            )
        if answer.value is not None:
            m.stances[alias] = _stance(alias, answer.value)
    void = [alias for alias in m.sides if alias not in m.stances]
    if len(void) == 2:
        m.incomplete = f"neither side stated a valid position in round {g}"  # no winner
    elif void:
        (loser,) = void
        m.forfeit, m.winner, m.decided_by = loser, m.other(loser), "forfeit"
        m.reasons = [f"{label(loser)} gave an invalid answer in round {g}: {invalid[loser]}"]
    for alias in m.sides:
        if alias not in m.stances:
            continue
        st = m.stances[alias]
        m.transcript.append(
            f"Round 0, {m.side_label(alias)} states: {st.recommendation} "
            f"(confidence {st.confidence:.2f}; reasons: {'; '.join(st.reasons)})"
        )
    return {
        **({"failed": failed} if failed else {}),
        **({"invalid": invalid} if invalid else {}),
    }


# -- challenge and defense -------------------------------------------------------------------------
async def _challenge(t: Tournament, m: Match, g: int, r: int) -> dict[str, Any]:
    """Each side reviews the other's current position. A side that fails loses the match by
    default; if both fail, the arbiter judges the debate as it stands."""
    asks = []
    for alias in m.sides:
        other = m.stances[m.other(alias)]
        step = _step(g, m, "challenge", alias)
        fence = nonce(t.s, step)
        texts = {
            "position": other.recommendation,
            "reasons": _lines(other.reasons),
            "factors": _lines(other.factors),
            "uncertainty": _lines(other.uncertainty),
        }
        quoted = {
            what: quote(
                label(other.alias),
                anonymous(t.s, text, f"{step}/{what}"),
                nonce=fence,
                limit=t.opts.max_quote_chars,
            )
            for what, text in texts.items()
        }
        prompt = prompts.CHALLENGE.format(
            match=m.number, round=r, format=prompts.CHALLENGE_FORMAT, **quoted
        )
        asks.append(ask_side(t, alias, prompt, ChallengeReply, CHALLENGE_SCHEMA, step))
    answers: list[Parsed[ChallengeReply]] = await t.s.gather(*asks)
    dropped = {
        a: keep(t, a, g, "challenge", p)
        for a, p in zip(m.sides, answers, strict=True)
        if p.value is None
    }
    failed = {a: why for a, (_, why) in dropped.items()}
    if len(failed) == 1:
        loser = next(iter(failed))
        m.forfeit = loser
        m.winner, m.decided_by = m.other(loser), "forfeit"
        what = (
            "failed to provide a challenge"
            if dropped[loser][0] == "failed"
            else "gave an invalid challenge"
        )
        m.reasons = [f"{label(loser)} {what} in round {g}: {failed[loser]}"]
    elif failed:
        m.incomplete = f"both sides failed in round {g} (challenge)"
    changed = {}
    for alias, answer in zip(m.sides, answers, strict=True):
        reply = answer.value
        if reply is None:
            continue
        target = m.other(alias)
        m.challenges[target] = [*reply.weaknesses, *reply.counter_claims, *reply.alternatives]
        changed[alias] = _move(m, alias, reply.position, reply.confidence)
        m.transcript.append(
            f"Round {r}, {m.side_label(alias)} challenges: weaknesses: "
            f"{'; '.join(reply.weaknesses)}; counter-claims: "
            f"{'; '.join(reply.counter_claims) or '-'}; alternatives: "
            f"{'; '.join(reply.alternatives) or '-'}; strong points: "
            f"{'; '.join(reply.strong_points) or '-'}"
        )
    invalid = [a for a, (kind, _) in dropped.items() if kind == "invalid"]
    entry: dict[str, Any] = {"position_changed": changed}
    return {**entry, **({"failed": failed, "invalid": invalid} if failed else {})}


async def _defense(t: Tournament, m: Match, g: int, r: int) -> dict[str, Any]:
    """Each side answers the challenges raised against it and holds or updates its position. A
    failure here ends the debate: the arbiter judges what there is."""
    asks = []
    for alias in m.sides:
        own = m.stances[alias]
        step = _step(g, m, "defense", alias)
        fence = nonce(t.s, step)
        prompt = prompts.DEFENSE.format(
            match=m.number,
            round=r,
            position=quote(
                "your position", own.recommendation, nonce=fence, limit=t.opts.max_quote_chars
            ),
            challenges=quote(
                label(m.other(alias)),
                anonymous(t.s, _lines(m.challenges.get(alias, [])), f"{step}/challenges"),
                nonce=fence,
                limit=t.opts.max_quote_chars,
            ),
            format=prompts.DEFENSE_FORMAT,
        )
        asks.append(ask_side(t, alias, prompt, DefenseReply, DEFENSE_SCHEMA, step))
    answers: list[Parsed[DefenseReply]] = await t.s.gather(*asks)
    dropped = {
        a: keep(t, a, g, "defense", p)
        for a, p in zip(m.sides, answers, strict=True)
        if p.value is None
    }
    failed = {a: why for a, (_, why) in dropped.items()}
    if failed:
        who = ", ".join(f"{label(a)} ({why})" for a, why in failed.items())
        m.incomplete = f"round {g} (defense) failed for {who}"
    changed, claimed = {}, {}
    for alias, answer in zip(m.sides, answers, strict=True):
        reply = answer.value
        if reply is None:
            continue
        changed[alias] = _move(m, alias, reply.position, reply.confidence)
        claimed[alias] = reply.position_changed
        m.concessions += [f"{label(alias)} conceded: {c}" for c in reply.concessions]
        m.transcript.append(
            f"Round {r}, {m.side_label(alias)} defends: {'; '.join(reply.defense) or '-'}; "
            f"concedes: {'; '.join(reply.concessions) or '-'}; position "
            f"{'changed' if changed[alias] else 'held'}"
            + (f" ({reply.what_changed})" if reply.what_changed else "")
        )
    entry: dict[str, Any] = {"position_changed": changed, "position_changed_claimed": claimed}
    invalid = [a for a, (kind, _) in dropped.items() if kind == "invalid"]
    return {**entry, **({"failed": failed, "invalid": invalid} if failed else {})}


def _move(m: Match, alias: str, position: str, confidence: float) -> bool:
    """Update a side's stance; whether its position changed (the texts differ beyond the
    structural layer's idea of the same text, or they contradict: "391" is not "381")."""
    stance = m.stances[alias]
    before = stance.recommendation
    changed = structural_similarity(before, position) < 95.0 or bool(
        contradiction(before, position)
    )
    stance.recommendation, stance.confidence = position, confidence
    return changed


# -- convergence -----------------------------------------------------------------------------------
async def _check(t: Tournament, m: Match, g: int) -> ConvergenceResult:
    """The three layers on the two current positions; unchanged positions keep their result
    (nobody is asked twice about the same pair)."""
    a, b = (m.stances[x].recommendation for x in m.sides)
    if m.last is not None and m.last_pair == (a, b):
        return m.last
    arbiter = m.arbiter

    async def ask_arbiter(x: str, y: str) -> ArbiterScores | None:
        assert arbiter is not None
        step = _step(g, m, "convergence", arbiter)
        x, y = anonymous(t.s, x, f"{step}/a"), anonymous(t.s, y, f"{step}/b")
        answer = await ask_parsed(
            t.s,
            arbiter,
            [user(arbiter_prompt(x, y, task=t.task))],
            json_parser(ArbiterScores),
            step=step,
            json_schema=ARBITER_SCHEMA,
        )
        return answer.value

    result = await converge(
        a,
        b,
        embedder=t.embedder,
        arbiter=ask_arbiter if arbiter is not None else None,
        thresholds=t.thresholds,
    )
    if NO_EMBEDDER_NOTE in result.notes:
        t.s.warn(NO_EMBEDDER_NOTE)
    m.last, m.last_pair = result, (a, b)
    m.checks.append((g, result, (a, b)))
    return result


# -- the verdict -----------------------------------------------------------------------------------
async def _verdict(t: Tournament, m: Match) -> None:
    """The arbiter picks the winner on the final positions and the debate, with reasons; without
    convergence it also writes the fundamental disagreement and why. Without a usable verdict
    the more confident side wins (the leader on a tie)."""
    if m.decided_by is not None:  # a forfeit, or no winner
        return
    a, b = (m.stances[x] for x in m.sides)
    answer = None
    if m.arbiter is not None:
        step = _step(m.rounds[-1], m, "verdict", m.arbiter)
        fence = nonce(t.s, step)
        limit = t.opts.max_quote_chars
        extra = "" if m.converged else prompts.ANALYSIS_FORMAT
        prompt = prompts.VERDICT.format(
            match=m.number,
            rounds=plural(len(m.rounds), "round"),
            task=t.task,
            a=quote("A", anonymous(t.s, a.recommendation, f"{step}/a"), nonce=fence, limit=limit),
            b=quote("B", anonymous(t.s, b.recommendation, f"{step}/b"), nonce=fence, limit=limit),
            debate=quote(
                "the debate",
                anonymous(t.s, "\n".join(m.transcript), f"{step}/debate"),
                nonce=fence,
                limit=limit * 2,
            ),
            incomplete=f"\nThe debate is incomplete: {m.incomplete or m.ended_early}.\n"
            if (m.incomplete or m.ended_early)
            else "",
            progression=progression(m.scores),
            converged="converged" if m.converged else "did not converge",
            analysis="" if m.converged else prompts.ANALYSIS,
            format=prompts.VERDICT_FORMAT.format(extra=extra),
        )
        answer = await ask_parsed(
            t.s,
            m.arbiter,
            [user(prompt)],
            verdict_parser(m.converged),
            step=step,
            json_schema=verdict_schema(m.converged),
        )
    reply: VerdictReply | None = clean(answer.value) if answer and answer.value else None
    if reply is not None:
        m.winner = m.sides[0] if reply.winner == "A" else m.sides[1]
        m.decided_by, m.reasons = "arbiter", [r for r in reply.reasons if worded(r)]
        if not m.converged:
            m.analysis = {
                "fundamental_disagreement": worded(reply.fundamental_disagreement),
                "why_no_convergence": worded(reply.why_no_convergence),
                "arbiter_choice": m.winner,
                "positions": {x: m.stances[x].recommendation for x in m.sides},
                "progression": progression(m.scores),
            }
        return
    why = (
        "no arbiter is available"
        if answer is None
        else f"the arbiter gave no usable verdict ({answer.problem})"
    )
    m.winner = m.sides[1] if b.confidence > a.confidence else m.sides[0]
    m.decided_by = "fallback"
    m.reasons = [f"{why}: the side with the higher final confidence wins, the leader on a tie"]


def _clean_details(details: dict[str, Any]) -> dict[str, Any]:
    """The convergence check's details (the arbiter's key disagreements) without markup."""
    out: dict[str, Any] = {}
    for key, value in details.items():
        if isinstance(value, str):
            value = strip_markup(value)
        elif isinstance(value, list):
            value = [strip_markup(v) if isinstance(v, str) else v for v in value]
        out[key] = value
    return out


# -- the match -------------------------------------------------------------------------------------
def _record_round(
    t: Tournament,
    m: Match,
    g: int,
    r: int,
    kind: str,
    extra: dict[str, Any],
    result: ConvergenceResult | None,
) -> None:
    entry: dict[str, Any] = {
        "round": g,
        "match": m.number,
        "match_round": r,
        "kind": kind,
        "sides": list(m.sides),
    }
    if result is not None:
        m.scores.append(result.score)
        entry.update(
            score=result.score,
            layer=result.layer,
            scores=dict(result.scores),
            details=_clean_details(result.details),
            converged=m.converged,
            decision="converged" if m.converged else "continue",
            arbiter=m.arbiter if result.layer == "arbiter" else None,
        )
        notes = [n for n in result.notes if n != NO_EMBEDDER_NOTE]
        if notes:
            entry["notes"] = notes
        invalid = finding.arbiter_problem(result, t.opts.convergence_threshold)
        if invalid:
            entry["problem"] = f"the arbiter's verdict is invalid: {invalid}"
        if result.contradiction:  # whatever the score: similarity never overrides it
            entry["contradiction"] = result.contradiction
            entry["problem"] = f"the positions contradict: {result.contradiction}"
    else:
        entry["decision"] = "forfeit" if m.forfeit else "incomplete"
        entry["problem"] = m.reasons[0] if m.forfeit else m.incomplete
    entry.update(extra)
    t.rounds.append(entry)
    t.s.round_done(Step.at(g, f"match_{m.number}_{kind}"), describe_round(entry, t.opts))


async def play_match(t: Tournament, m: Match, held: Stance | None) -> Match:
    """Run match `m` to its winner; `held` is the leader's position from the match before."""
    threshold = t.opts.convergence_threshold
    for r in range(0, t.opts.max_rounds + 1):
        if r > 0:
            why = t.share_reached(m.number)
            if why is not None:
                m.ended_early = why
                break
        g = t.next_round()
        m.rounds.append(g)
        before = {x: m.stances[x].recommendation for x in m.sides if x in m.stances}
        if r == 0:
            kind = "positions"
            extra = await _positions(t, m, g, held)
        elif r % 2:
            kind = "challenge"
            extra = await _challenge(t, m, g, r)
        else:
            kind = "defense"
            extra = await _defense(t, m, g, r)
        finding.remember(t, m, g)
        if r > 0:
            finding.moves(t, m, g, before)
        if m.forfeit or m.incomplete:
            _record_round(t, m, g, r, kind, extra, None)
            break
        result = await _check(t, m, g)
        # an arbiter whose scores contradict each other cannot make the match converge
        m.converged = result.reached(threshold) and not finding.arbiter_problem(result, threshold)
        _record_round(t, m, g, r, kind, extra, result)
        if m.converged:
            break
    finding.bar_no_answer(t, m, m.rounds[-1])
    await _verdict(t, m)
    return m
