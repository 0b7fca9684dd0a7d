"""Mixture-of-Agents' replies for a scripted persona (`moot bench --suite adversarial`,
protocols/scripting.py): each layer's answer with its final answer line (a persona reads the
answers of the layer before; no critiques, so it does not revise), and the judge persona's final
answer when it aggregates."""

from __future__ import annotations

from typing import Any

from moot.protocols.scripting import Actor, Script, final_writer
from moot.types import Request, Step

__all__ = ["SCRIPT"]


def reply(actor: Actor, request: Request) -> str:
    if Step.parse(request.meta["step"]).phase == "aggregate":
        return final_writer(actor, request.prompt)
    text = actor.answer(request.prompt)
    if actor.junk or text is None:
        return text if text is not None else actor.abstention
    return f"Let me work it out.\nAnswer: {text}"


def _options(judge: str) -> dict[str, Any]:
    return {"aggregator": judge, "layers": 2}


SCRIPT = Script(reply=reply, options=_options)
