"""The judge panel (seed 6.2): each judge scores every position from 0 to 100 and selects one;
a majority of the seated panel with enough confidence picks the court's answer, a decision over
agents that did not agree (labelled "chosen by the judges", never their consensus). A verdict is
invalid, and named, when its pick is not its own top score (it contradicts itself), when it
scores every position the same (it prefers none), or when its reasoning is no argument (moot's
substance check). From the second judge round on, judges see what the panel said before.

    valid    = the verdicts that are none of the above
    leader   = the position most valid verdicts select (ties: confidence, then the smaller id)
    decided  = leader's selections >= ceil(judge_consensus_threshold x seated judges)
               and the average confidence of its selectors >= judge_min_confidence

Departure from the seed, which counts ceil(threshold x valid judges): a panel is at least three
judges (seed 5), and counted over the valid verdicts alone one valid judge of three would
decide; an invalid verdict is an abstention that the majority still has to outweigh."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from msgspec.structs import replace

from moot.deliberation.anonymize import quote
from moot.deliberation.consensus import (
    Evaluation,
    JudgeConsensus,
    detect_judge_consensus,
    merge_positions,
    required_votes,
    support_of,
)
from moot.engine.session import Session
from moot.engine.structured import Parsed, ask_parsed
from moot.protocols.court import prompts
from moot.protocols.court.document import Court, JudgeRound, label, user
from moot.protocols.court.replies import JudgeReply, judge_parser, judge_schema
from moot.protocols.court.rounds import describe_round
from moot.protocols.shown import anonymous, nonce
from moot.protocols.substantive import no_answer
from moot.types import Step

__all__ = [
    "judge_positions",
    "judge_round",
    "no_preference_problem",
    "own_pick_problem",
    "panel_decision",
    "record_judges",
]


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


def _evaluation(
    judge: str, j: int, answer: Parsed[JudgeReply], junk: Callable[[str], str | None]
) -> Evaluation:
    """A judge's reply as the seed's evaluation; `junk(reasoning)` says why its reasoning is no
    argument (moot's substance check), else None."""
    reply = answer.value
    if reply is None:
        return Evaluation(judge, j, None, 0.0, ok=False, error=answer.problem or "no valid answer")
    scores = {k.strip().lower(): v for k, v in reply.scores_by_position_id.items()}
    selected = reply.selected_position_id
    problem = own_pick_problem(selected, scores) or no_preference_problem(scores)
    if problem is None:
        why = junk(reply.reasoning)
        problem = None if why is None else f'its "reasoning" is no argument: {why}'
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


def no_preference_problem(scores: dict[str, int]) -> str | None:
    """Why a judge's scores give no preference (every position scored the same, so its
    selection chooses nothing), else None."""
    values = set(scores.values())
    if len(scores) < 2 or len(values) != 1:
        return None
    return f"it scored every position the same ({values.pop()}/100), so it prefers none of them"


def panel_decision(
    evaluations: Sequence[Evaluation], seated: int, majority: float, min_confidence: float
) -> JudgeConsensus:
    """The seed's judge consensus over the valid evaluations (`detect_judge_consensus`), held
    to a quorum of the seated panel: the leader needs ceil(majority x seated) selections."""
    found = detect_judge_consensus(evaluations, majority, min_confidence)
    required = required_votes(seated, majority)
    leader = found.position_id
    if leader is None or found.votes.get(leader, 0) >= required:
        return replace(found, required=required)
    eligible = tuple(e.judge for e in evaluations if e.ok and e.selected is not None)
    # short of the selections needed: as the seed reports it, no leader and every judge dissents
    return JudgeConsensus(False, None, 0.0, eligible, found.votes, required)


async def judge_round(s: Session, c: Court, j: int, positions: list[str]) -> JudgeRound:
    """Every judge evaluates `positions` at once, within the round's time limit."""
    steps = [Step.at(j, "score", judge, prefix="j") for judge in c.judges]
    prompts_for = {
        judge: _prompt(s, c, j, positions, step)
        for judge, step in zip(c.judges, steps, strict=True)
    }
    asks = [
        ask_parsed(
            s,
            judge,
            [c.systems[judge], user(prompts_for[judge])],
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

    def junk(judge: str) -> Callable[[str], str | None]:
        asked = [c.systems[judge].content, prompts_for[judge]]
        return lambda reasoning: no_answer(s, "court_judge_reasoning", reasoning, asked, c.question)

    evaluations = [
        _evaluation(judge, j, a, junk(judge)) for judge, a in zip(c.judges, answers, strict=True)
    ]
    result = panel_decision(
        evaluations,
        len(c.judges),
        c.opts.judge_consensus_threshold,
        c.opts.judge_min_confidence,
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
    entry: dict[str, object] = {
        "phase": "judges",
        "round": rnd.number,
        "tally": result.votes,
        "required": result.required,
        "leader": result.position_id,
        "confidence": round(result.confidence, 6),
        "reached": result.reached,
        # every verdict that selected nothing; of them, the replies that were no valid verdict
        "failed": [e.judge for e in rnd.evaluations if not e.ok],
        "invalid": [e.judge for e in rnd.evaluations if not e.ok and e.selected is not None],
    }
    c.details.append(entry)
    s.round_done(Step.at(rnd.number, "score", prefix="j"), describe_round(entry, c.opts))
