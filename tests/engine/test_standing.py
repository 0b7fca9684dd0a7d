"""Where a session stands (engine/standing.py), folded from its events: what the live view's
table and state.json show."""

from __future__ import annotations

import pytest

from moot.engine.standing import Standing
from moot.types import Completion, Event, EventKind, Usage


def _event(kind: EventKind, ts: float, seq: int, **data: object) -> Event:
    return Event(kind=kind, step="r1/solve/agent_a", data=dict(data), seq=seq, ts=ts)


@pytest.mark.parametrize("ended", [EventKind.STOPPED, EventKind.FAILED])
def test_a_call_cut_short_by_the_end_of_the_run_keeps_its_time(ended: EventKind) -> None:
    """Ctrl-C 4 s into an agent's first call: its row showed 0.0s, the call's time dropped."""
    standing = Standing.for_aliases({"agent_a": "local:smollm2"})
    standing.apply(_event(EventKind.RUN_STARTED, 100.0, 0))
    standing.apply(_event(EventKind.ASK_STARTED, 101.0, 1, agent="agent_a"))
    standing.apply(_event(EventKind.CALL_STARTED, 101.5, 2, agent="agent_a"))
    standing.apply(_event(ended, 105.0, 3, reason="interrupted", status="failed"))
    row = standing.agents["agent_a"]
    assert row.elapsed(now=200.0) == pytest.approx(4.0)
    assert row.status == "stopped" and row.since is None


def test_a_finished_call_counts_once() -> None:
    standing = Standing.for_aliases({"agent_a": "local:smollm2"})
    standing.apply(_event(EventKind.ASK_STARTED, 101.0, 0, agent="agent_a"))
    done = Completion(text="x", usage=Usage(), cost=0.0, model="m", latency=9.0)
    standing.apply(_event(EventKind.ASK, 103.0, 1, agent="agent_a"), done)
    standing.apply(_event(EventKind.STOPPED, 110.0, 2, reason="interrupted"))
    assert standing.agents["agent_a"].elapsed(now=200.0) == pytest.approx(2.0)
