"""What an agent sees of earlier rounds (seed 3.4): the context topology picks the rounds and
answers, and the cut keeps them within the token budget, dropping middle rounds first; and the
system prompt each agent and judge is given."""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct

from moot.deliberation.anonymize import quote
from moot.deliberation.consensus import Response
from moot.engine.session import Session
from moot.protocols.court import prompts
from moot.protocols.court.document import AgentRound, Court, label
from moot.protocols.shown import anonymous, nonce
from moot.text import joined
from moot.types import Message, estimate_tokens

__all__ = ["Block", "fit_rounds", "history", "system_prompt"]


class Block(Struct, frozen=True):
    """One earlier round as a prompt shows it."""

    round: int
    text: str
    tokens: int


def fit_rounds(blocks: list[Block], budget: int) -> tuple[list[Block], list[int]]:
    """Keep `blocks` (in round order) within `budget` tokens: middle rounds go first, oldest
    first, keeping the first and the last (seed 3.4); then the first. The last always stays."""
    kept = list(blocks)
    dropped: list[int] = []
    while len(kept) > 2 and sum(b.tokens for b in kept) > budget:
        dropped.append(kept.pop(1).round)
    if len(kept) == 2 and sum(b.tokens for b in kept) > budget:
        dropped.append(kept.pop(0).round)
    return kept, sorted(dropped)


def _quote_limit(c: Court) -> int:
    # two rounds of every agent's answer fit the context budget
    return max(200, c.opts.max_context_tokens * 4 // (2 * len(c.agents) + 2))


def _describe(r: Response) -> str:
    head = f"vote: {r.vote}, confidence {r.confidence:.2f}"
    if r.vote == "yes":
        return f"{head}, for the candidate {r.position_id}\nreasoning: {r.reasoning}"
    position = f"position {r.position_id}: {r.position_text}" if r.position_id else "no position"
    return f"{head}\n{position}\nreasoning: {r.reasoning}"


def _block(s: Session, c: Court, past: AgentRound, members: list[str], me: str, step: str) -> str:
    shown = {r.agent: r for r in past.responses if r.ok}

    def text(a: str) -> str:  # another agent's answer names no model (scrubbed, journaled)
        said = _describe(shown[a])
        return said if a == me else anonymous(s, said, f"{step}/r{past.number}/{a}")

    quotes = [
        quote(
            label(a) + (" (you)" if a == me else ""),
            text(a),
            nonce=nonce(s, f"{step}/r{past.number}/{a}"),
            limit=_quote_limit(c),
        )
        for a in members
        if a in shown
    ]
    if not quotes:
        return ""
    on = f"votes on {past.candidate}" if past.candidate else "proposals"
    return f"Round {past.number} ({on}):\n\n" + "\n\n".join(quotes)


def history(s: Session, c: Court, me: str, step: str, budget: int) -> tuple[str, list[int]]:
    """The earlier rounds agent `me` sees, by topology, cut to `budget` tokens; and the rounds
    the cut left out. Other agents' answers are quoted, in an order shuffled per prompt."""
    if not c.rounds:
        return "", []
    topology = c.opts.context_topology
    last = c.rounds[-1].number
    order = s.shuffle(c.agents, step=f"{step}/order")
    blocks = []
    for past in c.rounds:
        if topology == "last_round" and past.number != last:
            continue
        own_only = topology == "last_round_with_self" and past.number != last
        text = _block(s, c, past, [me] if own_only else order, me, step)
        if text:
            blocks.append(Block(past.number, text, estimate_tokens(text)))
    kept, dropped = fit_rounds(blocks, budget)
    if not kept:
        return "", dropped
    note = prompts.HISTORY_DROPPED.format(dropped=_rounds_named(dropped)) if dropped else ""
    rounds = "\n\n".join(b.text for b in kept)
    return prompts.HISTORY.format(note=note, rounds=rounds), dropped


def system_prompt(s: Session, c: Court, alias: str, *, judge: bool) -> Message:
    """The system prompt of an agent or (`judge`) a judge: the court's task and question,
    its label, its role when its config gives one, and the reply format."""
    question = f"\nQuestion: {c.opts.initial_query}" if c.opts.initial_query else ""
    role = s.agent(alias).config.system_prompt
    template = prompts.JUDGE_SYSTEM if judge else prompts.AGENT_SYSTEM
    text = template.format(
        label=label(alias),
        n=len(c.judges if judge else c.agents),
        topic=c.task,
        question=question,
        role=f"\nYour role: {role}" if role else "",
        format=prompts.JUDGE_FORMAT if judge else prompts.AGENT_FORMAT,
    )
    return Message(role="system", content=text)


def _rounds_named(numbers: Sequence[int]) -> str:
    """`round 2`, `rounds 1 and 3`, `rounds 1, 2 and 4`."""
    return ("round " if len(numbers) == 1 else "rounds ") + joined([str(n) for n in numbers])
