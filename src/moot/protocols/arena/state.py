"""What the arena knows between phases, and how it names an agent to the others."""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import Struct, field

from moot.protocols.arena.options import ArenaOptions
from moot.types import Message, ModelVerdict

# Only named in annotations: run.py loads them while the first asks are in flight (moot/lazy.py).
if TYPE_CHECKING:
    from moot.deliberation import trust
    from moot.protocols import codework

__all__ = ["State", "label"]


class State(Struct):
    """What the protocol knows between phases; rebuilt identically on every resume."""

    task: str
    opts: ArenaOptions
    budget: int
    quote_limit: int
    system: Message
    conversations: dict[str, list[Message]] = field(default_factory=dict)
    solutions: dict[str, str] = field(default_factory=dict)
    analyses: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # alias -> why it left (no reply)
    invalid: dict[str, str] = field(default_factory=dict)  # alias -> why its answer was junk
    # (alias, round) -> why that round's revision was not taken: the earlier solution stands
    kept: dict[tuple[str, int], str] = field(default_factory=dict)
    fresh_from: str | None = None
    judges: list[str] = field(default_factory=list)
    rounds: list[dict[str, object]] = field(default_factory=list)
    checks: trust.Checks | None = None  # the last round's verify commands: passed of total
    works: dict[str, codework.Work] = field(default_factory=dict)  # a code task's changes
    # what moot's finding reads: each agent's answer after every round (None: no valid one),
    # whose critiques each agent read before revising, and every judge's verdict as weighed
    history: list[dict[str, str | None]] = field(default_factory=list)
    critics: dict[tuple[str, int], tuple[str, ...]] = field(default_factory=dict)
    verdicts: list[ModelVerdict] = field(default_factory=list)

    @property
    def active(self) -> list[str]:
        left = self.failed.keys() | self.invalid.keys()
        return [a for a in self.conversations if a in self.solutions and a not in left]


def label(alias: str) -> str:
    """'agent_b' -> 'Agent B': how the prompts and the outcome name an agent."""
    return "Agent " + alias.rsplit("_", 1)[-1].upper()
