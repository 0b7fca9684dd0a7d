"""The judges of a pass: each ranks the candidates under its own seeded labels, in a fresh
context, from structured output; an invalid ranking is that judge's abstention."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from moot.deliberation.anonymize import quote
from moot.deliberation.borda import BordaResult, borda
from moot.deliberation.markup import strip_markup
from moot.deliberation.parsing import extract_json
from moot.engine.session import Session
from moot.errors import FormatError
from moot.protocols.refine import prompts
from moot.protocols.shown import nonce
from moot.types import Message, Step

__all__ = ["LABELS", "judge_pass", "parse_ranking"]

LABELS = ("X", "Y", "Z")


def parse_ranking(text: str, labels: list[str]) -> list[str]:
    """The judge's ranking of `labels`, best first; `FormatError` when it is not exactly a
    permutation of them (model output is untrusted)."""
    data = extract_json(text, repair=False)
    ranking = data.get("ranking")
    if not isinstance(ranking, list) or not all(isinstance(x, str) for x in ranking):
        raise FormatError('"ranking" must be a list of labels')
    cleaned = [x.strip().upper() for x in ranking]
    if sorted(cleaned) != sorted(labels):
        raise FormatError(f"the ranking {json.dumps(ranking)} must name each of {labels} once")
    return cleaned


async def _judge(
    s: Session, task: str, texts: Mapping[str, str], alias: str, step: str, limit: int
) -> dict[str, Any]:
    names = s.shuffle(list(texts), step=f"{step}/labels")  # label i shows names[i]
    labels = list(LABELS[: len(names)])
    shown = "\n\n".join(
        f"RESPONSE {label}:\n"
        + quote(f"Response {label}", texts[name], nonce=nonce(s, f"{step}/{label}"), limit=limit)
        for label, name in zip(labels, names, strict=True)
    )
    prompt = prompts.JUDGE.format(task=task, labels=", ".join(labels), candidates=shown)
    completion = await s.ask(
        alias,
        [Message(role="user", content=prompt)],
        step=step,
        json_schema=prompts.judge_schema(labels),
    )
    record: dict[str, Any] = {
        "judge": alias,
        "step": step,
        "labels": dict(zip(labels, names, strict=True)),
        "ranking": None,
        "problem": None,
    }
    if not completion.ok:
        failure = completion.failure.message if completion.failure else "call failed"
        record["problem"] = strip_markup(failure)
        return record
    try:
        ranked = parse_ranking(completion.text, labels)
    except FormatError as exc:  # the message may quote the reply: no protocol markup
        record["problem"] = f"invalid ranking, abstains: {strip_markup(str(exc))}"
        record["invalid"] = True
        return record
    record["ranking"] = [record["labels"][label] for label in ranked]
    return record


async def judge_pass(
    s: Session,
    task: str,
    number: int,
    texts: Mapping[str, str],
    judges: tuple[str, ...],
    limit: int,
) -> tuple[list[dict[str, Any]], BordaResult]:
    """Every judge's ranking of `texts` (name -> text as the judges may see it: scrubbed of
    identity phrases, the incumbent "A" first) and their Borda aggregate; ties go to the
    incumbent."""
    steps = [Step.at(number, "judge", alias, str(i + 1)) for i, alias in enumerate(judges)]
    records = await s.gather(
        *(
            _judge(s, task, texts, alias, step, limit)
            for alias, step in zip(judges, steps, strict=True)
        )
    )
    result = borda(list(texts), [r["ranking"] for r in records], incumbent="A")
    return records, result
