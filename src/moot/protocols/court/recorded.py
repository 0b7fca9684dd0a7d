"""What a recorded court reply stands for (`ProtocolDefinition.stands_for`; `moot bench` reads a
journal with it where result.json has no claims).

An agent's reply is a vote (seed section 5): a "yes" stands for the candidate position it
names (its text from the positions read so far, or quoted in the prompt), never a number from
its reasoning or confidence; a "no" or a proposal for its own `newPositionText`; an abstention
for no answer ("")."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from moot.deliberation.parsing import json_object

__all__ = ["stands_for"]

_CANDIDATE = re.compile(
    r'<quoted from="candidate position ([0-9a-f]{12})" id="([0-9A-Za-z_-]+)">\n(.*?)\n'
    r'</quoted id="\2">',
    re.DOTALL,
)


def _vote(reply: str) -> dict[str, Any] | None:
    data = json_object(reply)
    return data if data is not None and isinstance(data.get("vote"), str) else None


def stands_for(reply: str, prompt: str, positions: Mapping[str, str]) -> str | None:
    """The position text a vote supports ("" when none); None when `reply` is no vote."""
    data = _vote(reply)
    if data is None:
        return None
    if data.get("vote") == "yes":
        target = data.get("targetPositionId")
        if isinstance(target, str) and target in positions:
            return positions[target]
        for pid, _, text in _CANDIDATE.findall(prompt):
            if not isinstance(target, str) or pid == target:
                return str(text)
        return ""
    text = data.get("newPositionText")
    return text if isinstance(text, str) else ""
