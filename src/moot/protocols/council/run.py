"""The council: independent answers, rankings of each other's answers, a chairman's answer.

    stage 1  answer = ask(agent, task) for every agent, at once        # r1/answer/<agent>
             valid only where the finding reads it as an answer too
             ("5" to a yes/no question is none: protocols/synthesis.py)
    stage 2  ranking = ask(agent, the others' valid answers under      # r1/rank/<agent>
             labels drawn for its prompt alone); strict, no re-ask;
             an invalid ranking is that agent's abstention (a reason
             that only names a label or a rank, "A:", is none)
             aggregate = mean rank of every valid answer (ranking.py)
    stage 3  chairman = [council] or [synthesis] chairman, else the    # r1/chair/<alias>
             agent whose answer ranks first; it writes the final answer
             from the answers, their ranks and the reviewers' reasons;
             read and checked against the agreed claim as every
             synthesis is (protocols/synthesis.py); `[synthesis]
             enabled = false` leaves it out, and so does having no
             valid answer: there is nothing to synthesize
    final    the chairman's text where it is accepted, else the picked
             answer: the best-ranked of the agreeing answers, or without
             a consensus the best-ranked valid answer, or none where no
             valid ranking placed one (outcome.py)
    label    moot's finding over the stage 1 answers (deliberation/finding.py): consensus
             only where more than half of the agents' answers agree by moot's check; the
             rankings and the chairman's text are evidence, never the decision

Every effect goes through the Session and each step id is stable, so a resume asks nothing
twice and a replay derives the same labels, rankings and outcome from the recorded text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from moot.config import SynthesisSettings, read, synthesis_enabled
from moot.deliberation.anonymize import quote
from moot.deliberation.finding import judge_answers
from moot.deliberation.markup import strip_markup
from moot.deliberation.trust import plain_reason
from moot.engine.session import Session
from moot.errors import FormatError
from moot.protocols.council import prompts
from moot.protocols.council.options import CouncilOptions
from moot.protocols.council.outcome import CHAIRMAN, Stages, describe_round, outcome
from moot.protocols.council.ranking import LABELS, aggregate, parse_ranking
from moot.protocols.shown import anonymous, labelled, nonce
from moot.protocols.synthesis import read_answer
from moot.types import Message, Outcome, Step

__all__ = ["run"]


async def run(s: Session, task: str, opts: CouncilOptions) -> Outcome:
    agents = sorted(a for a in s.aliases if a.startswith("agent_"))
    asked = prompts.ANSWER.format(task=task)
    steps = [Step.at(1, "answer", a) for a in agents]
    replies = await s.gather(
        *(
            s.ask(a, [Message(role="user", content=asked)], step=st)
            for a, st in zip(agents, steps, strict=True)
        )
    )
    answers = [
        read_answer(a, st, c, asked, task) for a, st, c in zip(agents, steps, replies, strict=True)
    ]
    valid = {row["agent"]: row for row in answers if row["status"] == "valid"}
    rankings = await s.gather(*(_rank(s, task, a, valid, opts) for a in agents))
    ranked = aggregate([a for a in agents if a in valid], rankings)
    judgement = judge_answers(
        [{row["agent"]: row["answer"] for row in answers}],
        started=agents,
        reasons={r["agent"]: plain_reason(r["problem"]) for r in answers if r["problem"]},
        task=task,
    ).numbered(1)  # the council's one round is its round 1 (`r1/...`, "Round 1" in reports)
    chairs = synthesis_enabled(_settings(s.meta), default=True)
    chair = await _chair(s, task, valid, rankings, ranked, opts) if valid and chairs else None
    stages = Stages(s.meta, answers, rankings, ranked, chair, judgement)
    record, result = outcome(stages, task)
    s.round_done(Step.at(1, "tally"), describe_round(record, opts))
    return result


async def _rank(
    s: Session, task: str, alias: str, valid: Mapping[str, Mapping[str, Any]], opts: CouncilOptions
) -> dict[str, Any]:
    """One agent's ranking of the others' valid answers (aliases, best first) with a reason
    for each, or its abstention and why."""
    step = Step.at(1, "rank", alias)
    others = [a for a in sorted(valid) if a != alias]
    row: dict[str, Any] = {"ranker": alias, "step": step, "status": "valid", "labels": {}}
    row |= {"ranking": None, "reasons": None, "problem": None}
    if len(others) < 2:
        problem = f"it had {len(others)} other valid answer{'s' * (len(others) != 1)} to rank"
        return {**row, "status": "skipped", "problem": problem}
    shown = s.shuffle(others, step=f"{step}/labels")  # label i shows shown[i]
    labels = list(LABELS[: len(shown)])
    texts = {label: valid[a]["text"] for label, a in zip(labels, shown, strict=True)}
    blocks = labelled(s, step, texts, opts.max_quote_chars)
    prompt = prompts.RANK.format(
        task=task,
        answers=blocks,
        reasons=", ".join(f'"{label}": "..."' for label in labels),
        labels=", ".join(labels),
    )
    completion = await s.ask(
        alias,
        [Message(role="user", content=prompt)],
        step=step,
        json_schema=prompts.rank_schema(labels),
    )
    row["labels"] = dict(zip(labels, shown, strict=True))
    if not completion.ok:
        failure = completion.failure.message if completion.failure else "the call failed"
        return {**row, "status": "failed", "problem": plain_reason(strip_markup(failure))}
    try:
        order, reasons = parse_ranking(completion.text, labels)
    except FormatError as exc:  # the message may quote the reply: no protocol markup
        problem = f"invalid ranking: {plain_reason(strip_markup(str(exc)))}"
        return {**row, "status": "invalid", "problem": problem}
    by_label = row["labels"]
    return {
        **row,
        "ranking": [by_label[x] for x in order],
        "reasons": {by_label[x]: reasons[x] for x in labels},
    }


def _settings(meta: Mapping[str, Any]) -> SynthesisSettings | None:
    """The session's `[synthesis]` table: `enabled = false` leaves the chairman out."""
    raw = (meta.get("config") or {}).get("synthesis")
    return read(SynthesisSettings, raw) if isinstance(raw, dict) else None


def chairman_of(s: Session, ranked: Mapping[str, Any], valid: Sequence[str]) -> tuple[str, str]:
    """Who writes the final answer, and why it is that participant."""
    if CHAIRMAN in s.aliases:
        return CHAIRMAN, "the chairman the config names"
    if ranked["top"] is not None:
        why = "the model of the agent whose answer ranks first"
        if ranked["top_tied"]:
            why += "; first in alias order of those tied for first"
        return str(ranked["top"]), why
    return valid[0], "no valid ranking: the model of the first agent with a valid answer"


async def _chair(
    s: Session,
    task: str,
    valid: Mapping[str, Mapping[str, Any]],
    rankings: Sequence[Mapping[str, Any]],
    ranked: Mapping[str, Any],
    opts: CouncilOptions,
) -> dict[str, Any]:
    """The chairman's final answer from every valid answer (best ranked first), its mean rank
    and what the reviewers said of it."""
    alias, why = chairman_of(s, ranked, sorted(valid))
    step = Step.at(1, "chair", alias)
    order = [row["agent"] for row in ranked["order"]]
    blocks = []
    for label, a in zip(LABELS[: len(order)], order, strict=True):
        row = next(r for r in ranked["order"] if r["agent"] == a)
        rank = (
            f"mean rank {row['mean_rank']:g} from {row['rankings']} reviewer"
            + ("s" * (row["rankings"] != 1))
            if row["mean_rank"] is not None
            else "not ranked"
        )
        said = [r["reasons"][a] for r in rankings if r["reasons"] and a in r["reasons"]]
        text = anonymous(s, valid[a]["text"], f"{step}/{label}")
        if said:
            text += "\n\nReviewers' reasons:\n" + "\n".join(
                f"- {anonymous(s, x, f'{step}/{label}/{i}')}" for i, x in enumerate(said, 1)
            )
        fenced = quote(
            f"Answer {label}", text, nonce=nonce(s, f"{step}/{label}"), limit=opts.max_quote_chars
        )
        blocks.append(f"ANSWER {label} ({rank}):\n{fenced}")
    prompt = prompts.CHAIR.format(task=task, answers="\n\n".join(blocks))
    completion = await s.ask(alias, [Message(role="user", content=prompt)], step=step)
    labels = LABELS[: len(order)]  # a sentence that names one tells the reader nothing
    return {**read_answer(alias, step, completion, prompt, task, labels), "why": why}
