"""The tournament's reply formats (seed 001) and their parsers for the structured-output ladder.

Every reply is model output: validated strictly (pydantic), with bounds on what reaches the
journal, the prompts of later rounds and the reports. The JSON schemas sent to backends that
enforce one list every field as required and allow no others, as the court's do.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from moot.deliberation.parsing import CONFIDENCE_FIELD, TEXT_FIELD, json_parser, strict_object
from moot.errors import FormatError
from moot.text.jsonfix import balanced_object
from moot.types import CUT_MARK, Completion

__all__ = [
    "CHALLENGE_SCHEMA",
    "DEFENSE_SCHEMA",
    "POSITION_SCHEMA",
    "ChallengeReply",
    "DefenseReply",
    "PositionReply",
    "VerdictReply",
    "cut_off",
    "parser",
    "verdict_parser",
    "verdict_schema",
]


M = TypeVar("M", bound=BaseModel)


def _upper(value: Any) -> Any:
    return value.strip().strip('"').upper() if isinstance(value, str) else value


Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=6000)]
Point = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1000)]
Points = Annotated[list[Point], Field(max_length=20)]
Confidence = Annotated[float, Field(ge=0.0, le=1.0)]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class PositionReply(_Reply):
    """Round 0: a side's initial position (or the leader's restated one)."""

    recommendation: Text
    reasons: Points
    confidence: Confidence
    confidence_factors: Points
    uncertainty_points: Points


class ChallengeReply(_Reply):
    """A challenge round: a review of the other side's position, and one's own current one."""

    weaknesses: Annotated[list[Point], Field(min_length=2, max_length=20)]
    counter_claims: Points
    alternatives: Points
    strong_points: Points
    position: Text  # the side's own recommendation now (unchanged, or moved by the other's)
    confidence: Confidence


class DefenseReply(_Reply):
    """A defense round: answers to the challenges, concessions, the updated or held position."""

    defense: Points
    concessions: Points
    position: Text
    position_changed: bool
    what_changed: Annotated[str, StringConstraints(strip_whitespace=True, max_length=2000)]
    confidence: Confidence


class VerdictReply(_Reply):
    """The arbiter's decision on a match; the two analysis fields when it did not converge."""

    winner: Annotated[Literal["A", "B"], BeforeValidator(_upper)]
    reasons: Annotated[list[Point], Field(min_length=1, max_length=10)]
    fundamental_disagreement: Annotated[
        str, StringConstraints(strip_whitespace=True, max_length=2000)
    ] = ""
    why_no_convergence: Annotated[
        str, StringConstraints(strip_whitespace=True, max_length=2000)
    ] = ""


# What the schemas let through, bounded so that a small model looping on one entry (the
# walkthrough's smollm2 repeated a reason until its 320-token cap cut the JSON off) must close
# the object in time: the embedded runtime's grammar enforces maxItems and maxLength, and the
# longest reply each schema allows fits 320 tokens (tests/protocols/tournament/
# test_tournament_walkthrough.py). The parsers keep their wider bounds, so a backend that
# enforces no schema, and replies journaled before, still read.
POSITION_CHARS = 300  # a recommendation or position
POINT_CHARS = 80  # one entry of a list: a reason, a weakness, a concession


def _text(limit: int = POSITION_CHARS) -> dict[str, Any]:
    return {**TEXT_FIELD, "maxLength": limit}


def _list(most: int, least: int = 0) -> dict[str, Any]:
    bounds = {"minItems": least} if least else {}
    return {"type": "array", "items": _text(POINT_CHARS), "maxItems": most, **bounds}


POSITION_SCHEMA = strict_object(
    {
        "recommendation": _text(),
        "reasons": _list(3),
        "confidence": CONFIDENCE_FIELD,
        "confidence_factors": _list(2),
        "uncertainty_points": _list(2),
    }
)
CHALLENGE_SCHEMA = strict_object(
    {
        "weaknesses": _list(3, least=2),
        "counter_claims": _list(2),
        "alternatives": _list(1),
        "strong_points": _list(1),
        "position": _text(),
        "confidence": CONFIDENCE_FIELD,
    }
)
DEFENSE_SCHEMA = strict_object(
    {
        "defense": _list(3),
        "concessions": _list(2),
        "position": _text(),
        "position_changed": {"type": "boolean"},
        "what_changed": {"type": "string", "maxLength": 160},
        "confidence": CONFIDENCE_FIELD,
    }
)


def verdict_schema(converged: bool) -> dict[str, Any]:
    """The arbiter's verdict; without convergence it must also analyse the disagreement."""
    properties: dict[str, Any] = {
        "winner": {"type": "string", "enum": ["A", "B"]},
        "reasons": _list(3, least=1),
    }
    if not converged:
        properties["fundamental_disagreement"] = _text(200)
        properties["why_no_convergence"] = _text(200)
    return strict_object(properties)


def parser(model: type[M]) -> Callable[[str], M]:
    """A strict parser for one of the side replies."""
    return json_parser(model)


def verdict_parser(converged: bool) -> Callable[[str], VerdictReply]:
    """The verdict's parser: without convergence the analysis fields are required."""
    parse = json_parser(VerdictReply)

    def parse_verdict(text: str) -> VerdictReply:
        reply = parse(text)
        if not converged and not (reply.fundamental_disagreement and reply.why_no_convergence):
            raise FormatError(
                'the match did not converge: "fundamental_disagreement" and '
                '"why_no_convergence" must both be filled in'
            )
        return reply

    return parse_verdict


_STRING = re.compile(r'"((?:[^"\\]|\\.){4,400})"')


def cut_off(completion: Completion) -> str | None:
    """Why a reply whose JSON object never closes is unusable: it was cut off at the token
    limit (the usage the provider reported says at how many tokens), naming the entry it
    repeated until then when it looped; None for a reply whose JSON closes (its problem is
    another), or one the engine cut at its size cap (its own warning says so). Read from the
    journaled completion, so a replay says the same."""
    text = completion.text
    if "{" not in text or text.endswith(CUT_MARK) or balanced_object(text) is not None:
        return None
    usage = completion.usage
    tokens = usage.completion_tokens
    if tokens and not usage.estimated:
        said = f"its reply was cut off at the {tokens}-token limit before its JSON was complete"
    else:
        said = (
            "its reply broke off before its JSON was complete, as one cut off at the token "
            "limit does"
        )
    for entry, times in Counter(_STRING.findall(text)).most_common(1):
        if times >= 3:  # a loop: one entry over and over
            shown = entry if len(entry) <= 60 else f"{entry[:57]}..."
            said += f" (it repeated '{shown}' {times} times)"
    return said
