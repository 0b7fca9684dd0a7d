"""How a side of a match is asked, and what a side without a usable answer leaves: its reply
is parsed strictly, cleaned of markup and checked for substance (re-asked once); a side with no
position in round 0 is failed or invalid (`Tournament.failed`, `.invalid`), a later reply that
failed or was invalid leaves its earlier position standing (`Tournament.kept`), and a reply cut
off at the token limit is named as such."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from moot.deliberation.markup import strip_markup
from moot.engine.structured import Parsed, ask_parsed
from moot.errors import FormatError
from moot.protocols.substantive import no_answer
from moot.protocols.tournament import prompts
from moot.protocols.tournament.bracket import Match, Tournament, label
from moot.protocols.tournament.replies import ChallengeReply, PositionReply, cut_off, parser
from moot.types import Message

__all__ = ["ask_side", "clean", "drop", "keep", "stopped", "user"]

R = TypeVar("R", bound=BaseModel)


def user(text: str) -> Message:
    return Message(role="user", content=text)


def clean(reply: R) -> R:
    """The reply without protocol markup in any of its texts (a `<solution>` tag, a quote
    fence copied back): none of it may reach a later prompt, the answer or result.json."""
    update: dict[str, Any] = {}
    for name, value in reply.__dict__.items():
        if isinstance(value, str):
            update[name] = strip_markup(value)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            update[name] = [x for x in (strip_markup(v) for v in value) if x]
    return reply.model_copy(update=update)


def _side_parser(
    t: Tournament, model: type[R], field: str, asked: Sequence[str]
) -> Callable[[str], R]:
    """A side's reply parsed strictly, cleaned of markup, and its position (`field`) checked
    for substance: an empty one, an echo of the prompt or its template, or a refusal is a
    format error, so it is re-asked once and then counts like a failed reply."""
    parse = parser(model)

    def parse_side(text: str) -> R:
        reply = clean(parse(text))
        position = str(getattr(reply, field))
        problem = no_answer(t.s, "tournament_position", position, asked, t.task)
        if problem is not None:
            raise FormatError(f'"{field}" is not an answer to the task: {problem}')
        return reply

    return parse_side


_POSITION_FIELD = {PositionReply: "recommendation", ChallengeReply: "position"}


async def ask_side(
    t: Tournament, alias: str, prompt: str, model: type[R], schema: dict[str, Any], step: str
) -> Parsed[R]:
    system = Message(role="system", content=prompts.SYSTEM.format(label=label(alias), task=t.task))
    field = _POSITION_FIELD.get(model, "position")
    parse = _side_parser(t, model, field, [system.content, prompt])
    result: Parsed[R] = await ask_parsed(
        t.s, alias, [system, user(prompt)], parse, step=step, json_schema=schema
    )
    return result


def _problem(answer: Parsed[Any]) -> tuple[str, str]:
    """A side without a usable answer: "failed" (no reply: an error, a timeout) or "invalid"
    (a reply that stayed malformed or junk after the re-ask), and why; a reply cut off at the
    token limit says so, not which fields it never reached."""
    if not answer.completion.ok:
        return "failed", answer.problem or "the call failed"
    return "invalid", cut_off(answer.completion) or answer.problem or "no valid answer"


def drop(t: Tournament, alias: str, answer: Parsed[Any]) -> tuple[str, str]:
    """Record a side without a position (round 0) as failed or invalid; its kind and why."""
    kind, problem = _problem(answer)
    (t.failed if kind == "failed" else t.invalid).setdefault(alias, problem)
    return kind, problem


def keep(t: Tournament, alias: str, g: int, phase: str, answer: Parsed[Any]) -> tuple[str, str]:
    """Record a challenge or defense reply that failed or was invalid: the side's earlier
    position stands (the finding's claims say why in round `g`); its kind and why."""
    kind, problem = _problem(answer)
    t.kept[(alias, g)] = f"its {phase} {'failed' if kind == 'failed' else 'was invalid'}: {problem}"
    return kind, problem


def stopped(t: Tournament, m: Match, g: int, alias: str, answer: Parsed[Any]) -> str:
    """Why the tournament stops: a side failed (no reply) in round 0 and no backup can take its
    place; without both positions the match cannot start (seed 001). What a resume does."""
    problem = t.failed[alias]
    spare = "is left" if t.opts.backups else "is configured"
    text = (
        f"{label(alias)} failed in round {g}, the positions of match {m.number} ({problem}), "
        f"and no backup model {spare} to replace it; add one under [tournament] backups"
    )
    failure = answer.completion.failure
    if failure is None or not failure.transient:  # an outage's pause says how to go on
        text += (
            f". `moot resume {t.s.folder.id}` replays this failure; `moot resume "
            f"{t.s.folder.id} --retry-failed` asks it again"
        )
    return text
