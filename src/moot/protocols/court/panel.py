"""The judge panel (seed 6.2): each judge scores every position from 0 to 100 and selects one;
a majority with enough confidence picks the court's answer, a decision over agents that did not
agree (labelled "chosen by the judges", never their consensus). A judge whose pick is not its
own top score contradicts itself: its evaluation is invalid and named. From the second judge
round on, judges see what the panel said before."""

from __future__ import annotations

from moot.deliberation.anonymize import quote
from moot.deliberation.consensus import (
    Evaluation,
    detect_judge_consensus,
    merge_positions,
    support_of,
)
from moot.engine.session import Session
from moot.engine.structured import Parsed, ask_parsed
from moot.protocols.court import prompts
from moot.protocols.court.document import Court, JudgeRound, label, user
from moot.protocols.court.replies import JudgeReply, judge_parser, judge_schema
from moot.protocols.shown import anonymous, nonce
from moot.types import RoundSummary, Step

__all__ = ["judge_positions", "judge_round", "own_pick_problem", "record_judges"]


def judge_positions(c: Court) -> list[str]:
    """The positions the panel weighs (judgePositionsScope): every position that had support
    in the rounds in scope, by id; positions whose texts agree by moot's check are one, shown
    by the id of the text most agents held."""
    scope = c.rounds if c.opts.judge_positions_scope == "all_rounds" else c.rounds[-1:]
    support: dict[str, tuple[float, int]] = {}
    for rnd in scope:
        for pid, (score, count) in support_of(
            rnd.responses, proposals=rnd.candidate is None
        ).items():
            before = support.get(pid, (0.0, 0))
            support[pid] = (before[0] + score, before[1] + count)
    return sorted(pid for pid, _, _ in merge_positions(support, c.texts))


def _prompt(s: Session, c: Court, j: int, positions: list[str], step: str) -> str:
    order = s.shuffle(positions, step=f"{step}/order")
    limit = max(200, min(4200, c.opts.max_context_tokens * 4 // (len(positions) + 2)))
    shown = "\n\n".join(
        quote(
            f"position {pid}",
            anonymous(s, c.texts[pid], f"{step}/{pid}"),
            nonce=nonce(s, f"{step}/{pid}"),
            limit=limit,
        )
        for pid in order
    )
    previous = ""
    if c.judge_rounds:
        quotes = [
            quote(
                label(e.judge),
                anonymous(
                    s,
                    f"selected {e.selected}, confidence {e.confidence:.2f}\n{e.reasoning}",
                    f"{step}/previous/{e.judge}",
                ),
                nonce=nonce(s, f"{step}/previous/{e.judge}"),
                limit=limit,
            )
            for e in c.judge_rounds[-1].evaluations
            if e.ok
        ]
        if quotes:
            previous = prompts.JUDGE_PREVIOUS.format(evaluations="\n\n".join(quotes))
    return prompts.JUDGE.format(
        round=j,
        rounds=c.opts.max_judge_rounds,
        count=len(positions),
        positions=shown,
        previous=previous,
    )


def _evaluation(judge: str, j: int, answer: Parsed[JudgeReply]) -> Evaluation:
    reply = answer.value
    if reply is None:
        return Evaluation(judge, j, None, 0.0, ok=False, error=answer.problem or "no valid answer")
    scores = {k.strip().lower(): v for k, v in reply.scores_by_position_id.items()}
    selected = reply.selected_position_id
    problem = own_pick_problem(selected, scores)
    return Evaluation(
        judge,
        j,
        selected,
        reply.confidence,
        scores,
        reply.reasoning,
        ok=problem is None,
        error=problem,
    )


def own_pick_problem(selected: str, scores: dict[str, int]) -> str | None:
    """Why a judge's selection contradicts its own scores (it selected a position it did not
    score highest), else None."""
    if not scores:
        return None
    top = max(scores.values())
    mine = scores.get(selected)
    if mine is not None and mine >= top:
        return None
    best = min(pid for pid, score in scores.items() if score == top)
    return (
        f"its selectedPositionId {selected} is not its own top score: it scored {selected} "
        f"{mine if mine is not None else 'not at all'} and {best} {top}"
    )


async def judge_round(s: Session, c: Court, j: int, positions: list[str]) -> JudgeRound:
    """Every judge evaluates `positions` at once, within the round's time limit."""
    steps = [Step.at(j, "score", judge, prefix="j") for judge in c.judges]
    asks = [
        ask_parsed(
            s,
            judge,
            [c.systems[judge], user(_prompt(s, c, j, positions, step))],
            judge_parser(positions, repair=not c.strict),
            step=step,
            reminder=prompts.JUDGE_FORMAT,
            reask=not c.strict,
            json_schema=judge_schema(positions),
        )
        for judge, step in zip(c.judges, steps, strict=True)
    ]
    with s.deadline(c.opts.round_timeout):
        answers = await s.gather(*asks)
    evaluations = [_evaluation(judge, j, a) for judge, a in zip(c.judges, answers, strict=True)]
    result = detect_judge_consensus(
        evaluations, c.opts.judge_consensus_threshold, c.opts.judge_min_confidence
    )
    return JudgeRound(j, positions, evaluations, list(answers), steps, result)


def record_judges(s: Session, c: Court, rnd: JudgeRound) -> None:
    """Keep the round in the outcome's details and the readable archive, and tell the faces
    its tally."""
    for e in rnd.evaluations:
        text = f"error: {e.error}\n" if not e.ok else ""
        if e.selected is not None:  # a reply, valid or contradicting its own scores
            scores = "\n".join(f"- {pid}: {score}" for pid, score in sorted(e.scores.items()))
            text += (
                f"selected: {e.selected}\nconfidence: {e.confidence:g}\n\nscores:\n{scores}"
                f"\n\nreasoning: {e.reasoning}\n"
            )
        letter = e.judge.rsplit("_", 1)[-1]
        s.archive(f"judges{rnd.number}/{letter}_evaluation", text)
    result = rnd.result
    failed = [e.judge for e in rnd.evaluations if not e.ok]
    c.details.append(
        {
            "phase": "judges",
            "round": rnd.number,
            "tally": result.votes,
            "required": result.required,
            "leader": result.position_id,
            "confidence": round(result.confidence, 6),
            "reached": result.reached,
            "failed": failed,
        }
    )
    live = RoundSummary(
        round=rnd.number, stage="judges", votes={**result.votes, "failed": len(failed)}
    )
    s.round_done(Step.at(rnd.number, "score", prefix="j"), live)
