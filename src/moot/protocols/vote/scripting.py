"""The vote's replies for a scripted persona (`moot bench --suite adversarial`,
protocols/scripting.py): one independent answer, with its final answer line."""

from __future__ import annotations

from moot.protocols.scripting import Actor, Script
from moot.types import Request

__all__ = ["SCRIPT"]


def reply(actor: Actor, request: Request) -> str:
    text = actor.answer(request.prompt)
    if actor.junk or text is None:
        return text if text is not None else actor.abstention
    return f"Let me work it out.\nAnswer: {text}"


SCRIPT = Script(reply=reply)
