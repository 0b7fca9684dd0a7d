"""The council's replies for a scripted persona (`moot bench --suite adversarial`,
protocols/scripting.py): an independent answer with its final answer line, a ranking of the
labels it is shown in their order with the persona's critique as each reason, and the judge
persona's final answer when it chairs."""

from __future__ import annotations

import json
import re
from typing import Any

from moot.protocols.scripting import Actor, Script, final_writer
from moot.types import Request, Step

__all__ = ["SCRIPT"]

_LABEL = re.compile(r'"([A-Z])": "\.\.\."')  # the reasons' template in the rank prompt


def reply(actor: Actor, request: Request) -> str:
    phase = Step.parse(request.meta["step"]).phase or ""
    if phase == "chair":
        return final_writer(actor, request.prompt)
    if phase == "rank":
        labels = list(dict.fromkeys(_LABEL.findall(request.prompt)))
        reason = actor.critique(actor.held)
        return json.dumps({"reasons": dict.fromkeys(labels, reason), "ranking": labels})
    text = actor.answer(request.prompt)
    if actor.junk or text is None:
        return text if text is not None else actor.abstention
    return f"Let me work it out.\nAnswer: {text}"


def _options(judge: str) -> dict[str, Any]:
    return {"chairman": judge}


SCRIPT = Script(reply=reply, options=_options)
