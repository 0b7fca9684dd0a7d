"""The arena's replies for a scripted persona (`moot bench --suite adversarial`,
protocols/scripting.py): a `<solution>` with its analysis when it solves or revises, the
persona's critique when it evaluates, and the judge persona's `<verdict>` when it verifies."""

from __future__ import annotations

from typing import Any

from moot.protocols.scripting import Actor, JudgeKind, Script
from moot.types import Request, Step

__all__ = ["SCRIPT"]


def _solution(text: str) -> str:
    return (
        f"<solution>\n## PLAN\n- Worked through it.\n## CHANGES\n{text}\n</solution>\n"
        "<analysis>\n## RISKS\nnone\n## OPEN QUESTIONS\nnone\n## DISAGREEMENTS\nNone.\n</analysis>"
    )


def _verdict(judge: JudgeKind, agree: bool) -> str:
    claims = judge in ("always_consensus", "self_contradicting", "always_100") or (
        judge == "fair" and agree
    )
    score = 10 if claims else 3
    remaining = 23 if judge == "self_contradicting" else (0 if claims else 2)
    decision = "CONSENSUS" if claims else "CONTINUE"
    return (
        "AGREEMENT POINTS: all of them.\nDISAGREEMENT POINTS: "
        + ("none" if remaining == 0 else "many")
        + f"\nCONVERGENCE SCORE: {score}\n<verdict>\ndecision: {decision}\n"
        f"convergence_score: {score}\nremaining_disagreements: {remaining}\n"
        "base_solution: merged\nmodifications: none\n</verdict>"
    )


def reply(actor: Actor, request: Request) -> str:
    phase = Step.parse(request.meta["step"]).phase or ""
    if phase == "verify":
        return _verdict(actor.judge, actor.agree)
    if phase == "evaluate":
        return actor.critique(actor.held)
    text = actor.answer(request.prompt)
    return _solution(text if text is not None else actor.abstention)


def _options(judge: str) -> dict[str, Any]:
    return {"max_rounds": 2}


SCRIPT = Script(reply=reply, options=_options, revises=True)
