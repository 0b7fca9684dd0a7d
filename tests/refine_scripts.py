"""Scripted refine participants: an author, a critic, author B, a synthesizer and judges whose
preferences a test sets per pass, keyed on the step ids the engine passes in `meta`."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from moot.config import RunConfig
from moot.models.scripted import register_script
from moot.types import Request

INITIAL = "Draft zero: store sessions in a table."
CRITIQUE = "Problem: no expiry. Problem: no index."

# (pass number, judge number) -> the candidates best first ("A", "B", "AB"), or a raw reply.
Preference = Callable[[int, int], list[str] | str]


def revision(number: int) -> str:
    return f"Revision {number}: sessions with expiry and an index."


def merge(number: int) -> str:
    # a merge keeps what A and B agree on (issue 9: a synthesis that drops it is invalid)
    return f"Merge {number}: a revision of sessions in a table, with expiry and an index."


_BLOCK = re.compile(r"RESPONSE ([XYZ]):\n<quoted [^>]*>\n(.*?)\n</quoted", re.DOTALL)


def shown(prompt: str) -> dict[str, str]:
    """Label -> the text shown under it in a judge's or synthesizer's prompt."""
    return {label: text for label, text in _BLOCK.findall(prompt)}


class Refinery:
    """One reply function for every participant; records every request."""

    def __init__(self, prefer: Preference) -> None:
        self.prefer = prefer
        self.requests: list[Request] = []
        self.steps: Counter[str] = Counter()
        self._lock = threading.Lock()

    def reply(self, request: Request) -> str:
        """Record the request, then answer it for its phase, pass and (a judge's) number."""
        step = request.meta["step"]
        with self._lock:
            self.requests.append(request)
            self.steps[step] += 1
        head, phase, *rest = step.split("/")
        judge = int(rest[-1]) if phase == "judge" else 0
        return self.answer(request, phase, int(head[1:]), judge)

    def answer(self, request: Request, phase: str, number: int, judge: int) -> str:
        if phase == "author":
            return INITIAL
        if phase == "critic":
            return CRITIQUE
        if phase == "revise":
            return revision(number)
        if phase == "synthesize":
            return merge(number)
        assert phase == "judge", request.meta["step"]
        wanted = self.prefer(number, judge)
        if isinstance(wanted, str):
            return wanted
        names = {}
        for label, text in shown(request.prompt).items():
            names["B" if text == revision(number) else "AB" if text == merge(number) else "A"] = (
                label
            )
        return json.dumps({"ranking": [names[n] for n in wanted], "reason": "scripted"})

    def config(self, agents: int = 4, **refine: Any) -> RunConfig:
        register_script("refinery", self.reply)
        return RunConfig.read(
            {
                "protocol": "refine",
                "agents": [{"model": "scripted:@refinery"}] * agents,
                "seed": 3,
                "refine": refine,
            }
        )

    def prompts(self, phase: str) -> list[tuple[str, str]]:
        return [(r.meta["step"], r.prompt) for r in self.requests if f"/{phase}/" in r.meta["step"]]
