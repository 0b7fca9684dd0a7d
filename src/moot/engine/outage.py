"""Asks lost to an outage: the failed calls of a run that a resume can ask again.

A call that fails its last try (after `engine.attempts`) is journaled as a failed ask, and the
protocol goes on without that answer (a vote counts it against the majority, an arena drops the
agent, a court's round may lose its quorum). When every such failure was transient (a provider
down, refusing connections, rate limited, too slow) and the run did not reach a consensus, the
lifecycle pauses it for the outage instead of ending it (`engine.lifecycle.running`): the
failures, not the agents, decided the outcome. `moot resume` then asks the failed steps again
(`Session(retry_failed=True)`) and the protocol recomputes its outcome from the journal.

A run that reached a consensus although it lost asks to transient failures ends as it is, but
its end event lists them (`lost`) and its trust statement says so (`noted`); `moot resume
--retry-failed` asks them again and the protocol recomputes the outcome, whose end event keeps
the outcome it replaces (`before`). Both sentences are derived from the end event, so a replay
says the same; end events of older sessions hold neither and replay as they were.

The rule is generic: it reads the journal's asks, never a protocol's vocabulary.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from moot.types import Event, EventKind, FailureKind, Outcome, alias_label

__all__ = [
    "Lost",
    "asked_steps",
    "describe",
    "lost_asks",
    "noted",
    "outage",
    "paused_without",
]

# How many agents a message names one by one.
_NAMED = 6


class Lost(Struct, frozen=True):
    """A step whose latest journaled answer is a failed call."""

    step: str
    agent: str
    kind: str  # a FailureKind value ("server", "auth", ...), "unknown" if none was recorded
    message: str

    @property
    def transient(self) -> bool:
        return self.kind in _TRANSIENT

    def record(self) -> dict[str, str]:
        return {"step": self.step, "agent": self.agent, "kind": self.kind, "message": self.message}


_TRANSIENT = {k.value for k in FailureKind if k.transient}


def lost_asks(events: Iterable[Event], steps: Collection[str]) -> list[Lost]:
    """The asks among `steps` (the steps a run of the protocol reached) whose latest journaled
    answer is a failed call, in journal order. An ask asked again (a resume that retried it)
    counts by its latest answer."""
    latest: dict[str, Event] = {}
    for event in events:
        if event.kind == EventKind.ASK and event.step is not None and event.step in steps:
            latest.pop(event.step, None)  # keep journal order of the latest answers
            latest[event.step] = event
    lost: list[Lost] = []
    for step, event in latest.items():
        completion = event.data.get("completion") or {}
        if completion.get("status") != "error":
            continue
        failure = completion.get("failure") or {}
        lost.append(
            Lost(
                step=step,
                agent=str(event.data.get("agent") or "-"),
                kind=str(failure.get("kind") or FailureKind.UNKNOWN.value),
                message=str(failure.get("message") or "the call failed"),
            )
        )
    return lost


def asked_steps(events: Iterable[Event]) -> set[str]:
    """Every step the journal holds an ask for (what a finished session reached)."""
    return {e.step for e in events if e.kind == EventKind.ASK and e.step is not None}


def outage(lost: Collection[Lost]) -> bool:
    """Some asks were lost, and every one of them to a transient failure: asking them again
    once the provider is back may change the outcome."""
    return bool(lost) and all(x.transient for x in lost)


def describe(lost: Collection[Lost]) -> str:
    """Who failed and why, in one line: 'Agent A (3 asks: server: upstream connect error)'."""
    by_agent: dict[str, list[Lost]] = {}
    for x in lost:
        by_agent.setdefault(x.agent, []).append(x)
    parts = []
    for agent, mine in sorted(by_agent.items()):
        reasons = list(dict.fromkeys(f"{x.kind}: {x.message}" for x in mine))
        why = "; ".join(reasons[:2]) + (
            f"; and {len(reasons) - 2} more" if len(reasons) > 2 else ""
        )
        count = f"{len(mine)} asks" if len(mine) > 1 else "1 ask"
        parts.append(f"{alias_label(agent)} ({count}: {why})")
    more = len(parts) - _NAMED
    return ", ".join(parts[:_NAMED]) + (f", and {more} more" if more > 0 else "")


def noted(outcome: Outcome, end: Mapping[str, Any], session_id: str) -> Outcome:
    """`outcome` with its trust statement saying what its end event records: the asks it was
    reached without (`lost`), and the outcome a `--retry-failed` resume replaced (`before`)."""
    sentences = [outcome.trust] if outcome.trust else []
    before = end.get("before")
    if isinstance(before, Mapping):
        was = str(before.get("status", "?")).replace("_", " ")
        answer = before.get("final_answer")
        if before.get("status") == outcome.status and answer == outcome.final_answer:
            change = "the outcome is unchanged"
        else:
            change = f"before, the outcome was {was}" + (f" ({str(answer)!r})" if answer else "")
        sentences.append(f"The failed asks were asked again (--retry-failed): {change}.")
    lost = [Lost(**x) for x in end.get("lost") or () if isinstance(x, Mapping)]
    if lost:
        asks = f"{len(lost)} ask{'s' if len(lost) != 1 else ''}"
        sentences.append(
            f"Reached without {asks} that failed for a transient reason ({describe(lost)}): "
            f"`moot resume {session_id} --retry-failed` asks {'it' if len(lost) == 1 else 'them'} "
            "again and recomputes the outcome."
        )
    if len(sentences) == (1 if outcome.trust else 0):
        return outcome
    return replace(outcome, trust=" ".join(sentences))


def paused_without(session_id: str, outcome: Outcome, lost: Collection[Lost]) -> str:
    """Why a run that reached no consensus pauses instead of ending: who failed and why."""
    asks = f"{len(lost)} ask{'s' if len(lost) != 1 else ''}"
    return (
        f"paused for an outage: {asks} failed for a transient reason ({describe(lost)}), and "
        f"without them the run reached no consensus ({outcome.how}); every failure was "
        f"transient: once the provider is back, continue with: moot resume {session_id} "
        "(it asks the failed steps again)"
    )
