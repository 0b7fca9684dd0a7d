"""The court's reply formats (seed section 5) and their parsers for the structured-output ladder.

Schema checks come first (pydantic, strict); then the checks that need the round: a proposal
must carry a position, a yes must name the candidate's id, a judge must select and score
exactly the positions shown. Each failure is a `FormatError` that the re-ask quotes back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from moot.deliberation.markup import strip_markup
from moot.deliberation.parsing import CONFIDENCE_FIELD, TEXT_FIELD, json_parser, strict_object
from moot.errors import FormatError

__all__ = [
    "AgentReply",
    "JudgeReply",
    "agent_parser",
    "agent_schema",
    "judge_parser",
    "judge_schema",
]


def _lower(value: Any) -> Any:
    return value.strip().strip('"').lower() if isinstance(value, str) else value


def _whole(value: Any) -> Any:
    # 85.0 is a whole number; strict validation would refuse it as an int
    return int(value) if isinstance(value, float) and value.is_integer() else value


# lengths count after trimming (seed 3.1)
Position = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4000)]
Reasoning = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=8000)]
PositionRef = Annotated[str, BeforeValidator(_lower), Field(min_length=12, max_length=12)]
Score = Annotated[int, BeforeValidator(_whole), Field(ge=0, le=100)]


class AgentReply(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    vote: Annotated[Literal["yes", "no", "abstain"], BeforeValidator(_lower)]
    target_position_id: PositionRef | None = Field(
        default=None, alias="targetPositionId", description="required if vote is yes"
    )
    new_position_text: Position | None = Field(
        default=None, alias="newPositionText", description="required if vote is no or round 1"
    )
    reasoning: Reasoning
    confidence: float = Field(ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _vote_needs(self) -> AgentReply:
        if self.vote == "yes" and not self.target_position_id:
            raise ValueError('"targetPositionId" is required when voting "yes"')
        if self.vote == "no" and not self.new_position_text:
            raise ValueError('"newPositionText" is required when voting "no"')
        return self


class JudgeReply(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    selected_position_id: PositionRef = Field(alias="selectedPositionId")
    scores_by_position_id: dict[str, Score] = Field(alias="scoresByPositionId")
    reasoning: Reasoning
    confidence: float = Field(ge=0.0, le=1.0)


# The schemas sent to backends that enforce one: the seed's reply schemas specialised to the
# round (a proposal must carry a position, a yes can only name the candidate, a judge must score
# exactly the positions shown), every field required (nullable where optional) so strict
# backends accept them, and no long length bounds (a grammar repeating a character rule 8000
# times is too big for llama.cpp). Replies are validated against the pydantic models anyway.
def agent_schema(candidate: str | None) -> dict[str, Any]:
    """The JSON schema of an agent's reply in a proposal round (no candidate) or a vote."""
    if candidate is None:
        return strict_object(
            {
                "vote": {"type": "string", "enum": ["abstain"]},
                "newPositionText": TEXT_FIELD,
                "reasoning": TEXT_FIELD,
                "confidence": CONFIDENCE_FIELD,
            }
        )
    return strict_object(
        {
            "vote": {"type": "string", "enum": ["yes", "no", "abstain"]},
            "targetPositionId": {
                "anyOf": [{"type": "string", "enum": [candidate]}, {"type": "null"}]
            },
            "newPositionText": {"anyOf": [TEXT_FIELD, {"type": "null"}]},
            "reasoning": TEXT_FIELD,
            "confidence": CONFIDENCE_FIELD,
        }
    )


def judge_schema(positions: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of a judge's reply on these positions."""
    score = {"type": "integer", "minimum": 0, "maximum": 100}
    return strict_object(
        {
            "selectedPositionId": {"type": "string", "enum": list(positions)},
            "scoresByPositionId": strict_object({pid: score for pid in positions}),
            "reasoning": TEXT_FIELD,
            "confidence": CONFIDENCE_FIELD,
        }
    )


def agent_parser(
    candidate: str | None,
    *,
    no_answer: Callable[[str], str | None],
    repair: bool = True,
) -> Callable[[str], AgentReply]:
    """Parse an agent's reply; with no candidate the round is a proposal round. A position
    (a proposal, or a "no" vote's alternative) must be a substantive answer to the task, not
    an echo of the prompt or its template: `no_answer(position)` says why it is not; junk is
    a format error (re-asked, then invalid)."""
    parse = json_parser(AgentReply, repair=repair)

    def parse_reply(text: str) -> AgentReply:
        reply = parse(text)
        if reply.new_position_text:
            position = strip_markup(reply.new_position_text)
            problem = no_answer(position)
            if problem is not None:
                raise FormatError(f'"newPositionText" is not an answer to the topic: {problem}')
            reply = reply.model_copy(update={"new_position_text": position})
        if candidate is None:
            if not reply.new_position_text:
                raise FormatError('this round asks for your position in "newPositionText"')
        elif reply.vote == "yes" and reply.target_position_id != candidate:
            raise FormatError(
                f'a "yes" vote must name the candidate: "targetPositionId" must be '
                f'"{candidate}", not "{reply.target_position_id}"'
            )
        return reply

    return parse_reply


def judge_parser(positions: Sequence[str], *, repair: bool = True) -> Callable[[str], JudgeReply]:
    """Parse a judge's reply: it must select one of `positions` and score each of them."""
    parse = json_parser(JudgeReply, repair=repair)
    shown = set(positions)

    def parse_reply(text: str) -> JudgeReply:
        reply = parse(text)
        if reply.selected_position_id not in shown:
            raise FormatError(
                f'"selectedPositionId" {reply.selected_position_id!r} is not one of the '
                f"positions shown ({', '.join(sorted(shown))})"
            )
        scored = {key.strip().lower() for key in reply.scores_by_position_id}
        missing, unknown = sorted(shown - scored), sorted(scored - shown)
        if missing or unknown:
            problems = [f"no score for {', '.join(missing)}"] if missing else []
            problems += [f"scores for unknown ids {', '.join(unknown)}"] if unknown else []
            raise FormatError(f'"scoresByPositionId" has {" and ".join(problems)}')
        return reply

    return parse_reply
