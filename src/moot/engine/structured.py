"""The structured-output ladder: parse, re-ask once quoting the problem, else mark invalid.

Parsing always runs on recorded text, so a parser fixed between a crash and a resume applies to
answers already paid for, with no new call. A malformed JSON reply is repaired here, once, off
the event loop (engine/repair.py), and the repair journaled as a note: a resume or a replay
takes it from the journal and repairs nothing (issue 30: reading a session is linear in size).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from msgspec import Struct

from moot import lazy
from moot.engine.session import Session
from moot.errors import FormatError
from moot.types import Completion, Message

if TYPE_CHECKING:
    from moot.engine import repair
    from moot.text import jsonfix
else:
    (repair,) = lazy.modules("moot.engine", "repair")  # a reply's JSON repair
    (jsonfix,) = lazy.modules("moot.text", "jsonfix")  # a reply's parse

__all__ = ["Parsed", "ask_parsed"]

T = TypeVar("T")

REASK = (
    "Your previous answer could not be used: {problem}\n"
    "Answer again, in full, following the required format exactly.{reminder}"
)


class Parsed(Struct, Generic[T], frozen=True):
    """The outcome of a structured ask. `value` is None when the reply stayed invalid."""

    value: T | None
    completion: Completion
    messages: tuple[Message, ...]  # the conversation including the final reply
    problem: str | None = None
    reasked: bool = False

    @property
    def ok(self) -> bool:
        return self.value is not None


async def ask_parsed(
    s: Session,
    alias: str,
    messages: Sequence[Message],
    parse: Callable[[str], T],
    *,
    step: str,
    reminder: str = "",
    reask: bool = True,
    json_schema: dict[str, Any] | None = None,
    max_tokens: int | None = None,
) -> Parsed[T]:
    completion = await s.ask(
        alias, messages, step=step, json_schema=json_schema, max_tokens=max_tokens
    )
    conversation = (*messages, Message(role="assistant", content=completion.text))
    if not completion.ok:
        problem = completion.failure.message if completion.failure else "the call failed"
        return Parsed(None, completion, tuple(messages), problem=problem)
    try:
        return Parsed(await _parse(s, parse, completion.text, step), completion, conversation)
    except FormatError as first:
        problem = str(first)
    if not reask:
        return Parsed(None, completion, conversation, problem=problem)
    follow_up = Message(
        role="user",
        content=REASK.format(problem=problem, reminder=f"\n\n{reminder}" if reminder else ""),
    )
    retry = await s.ask(
        alias,
        [*conversation, follow_up],
        step=f"{step}/reask",
        json_schema=json_schema,
        max_tokens=max_tokens,
    )
    retried = (*conversation, follow_up, Message(role="assistant", content=retry.text))
    if not retry.ok:
        problem = retry.failure.message if retry.failure else "the call failed"
        return Parsed(None, retry, conversation, problem=problem, reasked=True)
    try:
        value = await _parse(s, parse, retry.text, f"{step}/reask")
        return Parsed(value, retry, retried, reasked=True)
    except FormatError as second:
        return Parsed(None, retry, retried, problem=str(second), reasked=True)


async def _parse(s: Session, parse: Callable[[str], T], text: str, step: str) -> T:
    """`parse(text)`, with a JSON repair it needs made off the event loop first: taken from
    the journal's note at `<step>/json_repair` when there is one, else made and noted."""
    for _ in range(3):  # a reply holds one JSON object: one repair, then the parse succeeds
        with jsonfix.deferring():
            try:
                return parse(text)
            except jsonfix.RepairNeeded as needed:
                target = needed.target
        jsonfix.remember(target, await _repaired(s, f"{step}/json_repair", target))
    return parse(text)  # a parser that asks again repairs in place


async def _repaired(s: Session, step: str, target: str) -> dict[str, Any] | None:
    digest = jsonfix.digest(target)
    noted = s.noted(step)
    if noted is not None and noted.get("digest") == digest:
        value = noted.get("value")
        return value if isinstance(value, dict) else None
    value = await repair.repair_off_loop(target)
    s.note(step, what="json_repair", digest=digest, value=value)
    return value
