"""Refine's replies for a scripted persona (`moot bench --suite adversarial`,
protocols/scripting.py): the persona's text when it writes, revises or synthesizes, its
critique as the critic, and the judge persona's ranking as a judge."""

from __future__ import annotations

import json
import re
from typing import Any

from moot.protocols.scripting import Actor, JudgeKind, Script
from moot.types import Request, Step

__all__ = ["SCRIPT"]

_SHOWN = re.compile(r"RESPONSE ([A-Z]):\n<quoted [^>]*>\n(.*?)\n</quoted", re.DOTALL)


def _plain(text: str) -> str:
    return " ".join(text.split()).casefold().rstrip(".")


def _ranking(judge: JudgeKind, prompt: str) -> str:
    """Every judge prefers the same texts in every pass (by their wording), so the judges'
    preference is stable and the incumbent can win `convergence_k` passes in a row; the
    self-contradicting judge names its favourite twice."""
    shown = _SHOWN.findall(prompt)
    labels = [label for label, _ in sorted(shown, key=lambda item: (_plain(item[1]), item[0]))]
    labels = labels or ["X", "Y", "Z"]
    ranking = labels if judge != "self_contradicting" else [labels[0], labels[0], *labels[1:-1]]
    return json.dumps({"ranking": ranking, "reason": "scripted"})


def reply(actor: Actor, request: Request) -> str:
    phase = Step.parse(request.meta["step"]).phase or ""
    if phase == "judge":
        return _ranking(actor.judge, request.prompt)
    if phase == "critic":
        return actor.critique(actor.held or actor.first)
    text = actor.answer(request.prompt)
    return text if text is not None else actor.abstention


def _options(judge: str) -> dict[str, Any]:
    return {
        "judges": 1,
        "convergence_k": 2,
        "max_passes": 4,
        "roles": {"judge": {"model": judge}},
    }


SCRIPT = Script(reply=reply, options=_options, revises=True)
