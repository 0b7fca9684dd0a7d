"""Mixture-of-Agents (Wang et al. 2024): layers of answers, then an aggregator.

    layer 1    answer = ask(agent, task) for every agent, at once        # r1/propose/<agent>
    layer k>1  answer = ask(agent, task + the valid answers of layer     # rk/propose/<agent>
               k-1, its own among them, under labels drawn for its
               prompt alone), every agent at once; with none valid,
               it answers alone as in layer 1
    aggregate  aggregator = [moa] aggregator, else Agent A (else the     # rL/aggregate/<alias>
               first agent whose last answer is valid); it writes the
               final answer from the last layer's valid answers
    label      moot's finding over the layers' answers (deliberation/finding.py): consensus
               only where more than half of the agents' last-layer answers agree by moot's
               check (persuasion where layer 1 did not already hold it); the aggregator's
               text is evidence and the final answer's wording, never the decision

An invalid or failed answer is named and not counted; it is not shown to the next layer. An
answer that copies the quote fence moot wrapped another answer in is invalid: the fence and
the text inside it are not the agent's own. A change of mind between layers follows no
critique (MoA has none): the finding names none.
Every effect goes through the Session and each step id is stable, so a resume asks nothing
twice and a replay derives the same outcome from the recorded text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from moot.deliberation.answers import extract_answer
from moot.deliberation.finding import judge_answers
from moot.deliberation.markup import strip_markup
from moot.deliberation.substance import NotSubstantive, check_substance
from moot.deliberation.trust import plain_reason
from moot.engine.session import Session
from moot.protocols.moa import prompts
from moot.protocols.moa.options import MoaOptions
from moot.protocols.moa.outcome import AGGREGATOR, describe_round, layer_record, outcome
from moot.protocols.shown import labelled
from moot.protocols.substantive import copied_fence
from moot.protocols.synthesis import without_label_talk
from moot.types import Completion, Message, Outcome, Step, alias_label

__all__ = ["LABELS", "run"]

# Labels an answer is shown under (never A, B, ... which name agents).
LABELS = tuple("PQRSTUVWXYZ")

Row = dict[str, Any]


async def run(s: Session, task: str, opts: MoaOptions) -> Outcome:
    agents = sorted(a for a in s.aliases if a.startswith("agent_"))
    layers: list[list[Row]] = []
    for k in range(1, opts.layers + 1):
        shown = _valid(layers[-1]) if layers else {}
        rows = await s.gather(*(_propose(s, task, k, a, shown, opts) for a in agents))
        layers.append(list(rows))
        if k < opts.layers:
            s.round_done(Step.at(k, "layer"), describe_round(layer_record(k, rows, task), opts))
    last = _valid(layers[-1])
    judgement = judge_answers(
        [{row["agent"]: row["answer"] for row in layer} for layer in layers],
        started=agents,
        # an agent's latest problem: a claim row has one reason an agent had no valid answer
        reasons={r["agent"]: plain_reason(r["problem"]) for k in layers for r in k if r["problem"]},
        task=task,
    )
    aggregated = await _aggregate(s, task, opts.layers, last, opts) if last else None
    record, result = outcome(s.meta, layers, aggregated, judgement, task)
    s.round_done(Step.at(opts.layers, "tally"), describe_round(record, opts))
    return result


def _valid(rows: Sequence[Row]) -> dict[str, Row]:
    return {row["agent"]: row for row in rows if row["status"] == "valid"}


def read_reply(
    alias: str,
    step: str,
    completion: Completion,
    prompt: str,
    task: str,
    labels: Sequence[str] = (),
) -> dict[str, Any]:
    """An answer or the aggregator's text as recorded: valid (its text, and the final answer
    read from it), failed (the call's problem) or invalid (why it is no answer: a reply that
    copies the quote fence around another answer back is none of its own, `copied_fence`).
    `labels`: those the aggregator was shown the answers under; the sentences at its text's
    end that name one ("The answer I followed was: Answer R.") are cut, since the reader never
    saw them (`without_label_talk`)."""
    row: dict[str, Any] = {"agent": alias, "step": step, "status": "valid", "text": ""}
    row |= {"answer": None, "problem": None}
    if not completion.ok:
        message = completion.failure.message if completion.failure else "the call failed"
        return {**row, "status": "failed", "problem": plain_reason(strip_markup(message))}
    text = without_label_talk(strip_markup(completion.text).strip(), labels)
    problem: NotSubstantive | str | None = copied_fence(completion.text, [prompt], task)
    if problem is None:
        problem = check_substance(completion.text, [prompt], task=task)
    extracted = extract_answer(text) if problem is None else None
    if problem is None and extracted is not None:
        problem = check_substance(extracted.text, [prompt], task=task)
    if problem is not None or extracted is None:
        why = str(problem) if problem else 'no final answer could be read from it ("Answer: ...")'
        return {**row, "status": "invalid", "text": text, "problem": why}
    return {**row, "text": text, "answer": extracted.text}


def _blocks(s: Session, step: str, shown: Mapping[str, Row], opts: MoaOptions) -> tuple[str, Row]:
    """The valid answers `shown`, in an order and under labels drawn for the prompt at `step`
    alone, each fenced by its own nonce; and which agent each label shows."""
    order = s.shuffle(sorted(shown), step=f"{step}/labels")  # label i shows order[i]
    labels = dict(zip(LABELS, order, strict=False))
    texts = {label: shown[a]["text"] for label, a in labels.items()}
    return labelled(s, step, texts, opts.max_quote_chars), labels


async def _propose(
    s: Session, task: str, layer: int, alias: str, shown: Mapping[str, Row], opts: MoaOptions
) -> Row:
    """One agent's answer in `layer`, having read the layer before's valid answers (`shown`)."""
    step = Step.at(layer, "propose", alias)
    labels: Row = {}
    if shown:
        answers, labels = _blocks(s, step, shown, opts)
        prompt = prompts.REVISE.format(task=task, answers=answers)
    else:
        prompt = prompts.ANSWER.format(task=task)
    completion = await s.ask(alias, [Message(role="user", content=prompt)], step=step)
    return {**read_reply(alias, step, completion, prompt, task), "layer": layer, "labels": labels}


def aggregator_of(s: Session, valid: Sequence[str]) -> tuple[str, str]:
    """Who writes the final answer, and why it is that participant."""
    if AGGREGATOR in s.aliases:
        return AGGREGATOR, "the aggregator the [moa] section names"
    if "agent_a" in valid:
        return "agent_a", "the default: Agent A's model"
    first = valid[0]
    return first, (
        f"the default is Agent A's model, whose last answer is not valid: {alias_label(first)}'s, "
        "the first agent whose last answer is valid"
    )


async def _aggregate(
    s: Session, task: str, layers: int, last: Mapping[str, Row], opts: MoaOptions
) -> Row:
    """The aggregator's final answer from the last layer's valid answers."""
    alias, why = aggregator_of(s, sorted(last))
    step = Step.at(layers, "aggregate", alias)
    answers, labels = _blocks(s, step, last, opts)
    prompt = prompts.AGGREGATE.format(task=task, answers=answers)
    completion = await s.ask(alias, [Message(role="user", content=prompt)], step=step)
    row = read_reply(alias, step, completion, prompt, task, labels=sorted(labels))
    return {**row, "why": why, "labels": labels}
