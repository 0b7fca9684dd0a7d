"""A call that failed: what it cost and how its message words a timeout.

A failed call of a model that runs free (the embedded model, a scripted one, a server on
loopback) cost nothing, so the run's cost stays known, $0.0000; a failed call of a priced model
may have been billed, so its cost is unknown. A timeout is worded for people: "no answer within
1.1 s", never "no answer within 1.1000s" or "80.7681s"."""

from __future__ import annotations

import asyncio

import pytest
from msgspec.structs import replace

from moot.config import Limits
from moot.engine.limits import Budget
from moot.errors import LimitReached
from moot.models.durations import seconds_text
from moot.models.scripted import register_script
from moot.types import FailureKind, Request
from tests.cli.test_cli import moot
from tests.scripts import Debate, events, start


def test_a_failed_call_of_a_free_model_keeps_the_cost_known() -> None:
    debate = Debate(fail={"three"})
    run = start("What is 6 times 7?", debate.config(engine={"attempts": 1}))
    failed = [
        e
        for e in events(run.folder)
        if e["kind"] == "ask" and e["data"]["completion"]["status"] == "error"
    ]
    assert failed, "agent three's calls failed"
    assert all(e["data"]["completion"]["cost"] == 0.0 for e in failed)
    assert run.result.cost == 0.0
    assert all(usage.cost == 0.0 for usage in run.result.agents.values())


def test_the_run_line_says_zero_dollars_not_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    debate = Debate(fail={"three"}, fail_kind=FailureKind.BAD_RESPONSE)
    _, out, _ = moot(capsys, *debate.run_args())
    assert "cost $0.0000." in out, out
    assert "cost unknown" not in out


def test_a_failed_call_of_a_priced_model_has_an_unknown_cost() -> None:
    """Its provider may have billed it (a timeout after the request was sent): unknown."""
    debate = Debate(fail={"three"})
    config = debate.config(engine={"attempts": 1})
    config.agents[2].options["price"] = {"input": 1.0, "output": 2.0}
    run = start("What is 6 times 7?", config)
    assert run.result.cost is None
    costs = {usage.model: usage.cost for usage in run.result.agents.values()}
    assert costs == {"scripted:@one": 0.0, "scripted:@two": 0.0, "scripted:@three": None}


def test_a_timeout_is_worded_for_people_and_costs_nothing() -> None:
    """The engine's guard fires 1 s after a 0.1 s call timeout: "1.1 s", the scripted
    model having no timeout of its own."""
    debate = Debate()

    async def hangs(request: Request) -> str:
        await asyncio.sleep(30)  # cancelled by the guard
        return "never"

    register_script("hangs", hangs)
    config = debate.config(("one", "two"), engine={"attempts": 1}, limits={"call_timeout": 0.1})
    config.agents.append(replace(config.agents[0], **{"model": "scripted:@hangs"}))
    run = start("What is 6 times 7?", config)
    failed = [
        e
        for e in events(run.folder)
        if e["kind"] == "ask" and e["data"]["completion"]["status"] == "error"
    ]
    assert failed
    messages = {e["data"]["completion"]["failure"]["message"] for e in failed}
    assert messages == {"no answer within 1.1 s"}, messages
    assert run.result.status == "paused"  # a transient failure: resume asks it again
    assert "no answer within 1.1 s" in run.message
    assert run.result.cost == 0.0


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.05, "0.05 s"),
        (1.1000000001, "1.1 s"),
        (2.0, "2 s"),
        (45.2, "45 s"),
        (59.6, "1 min"),
        (80.7681, "1 min 21 s"),
        (120.0, "2 min"),
        (3900.0, "1 h 5 min"),
    ],
)
def test_seconds_in_words(seconds: float, text: str) -> None:
    assert seconds_text(seconds) == text


def test_the_time_limit_is_worded_in_minutes() -> None:
    clock = iter([0.0, 1260.0])
    budget = Budget(Limits(timeout=1200.0), [], clock=lambda: next(clock))
    with pytest.raises(LimitReached, match="time limit reached: 21 min of 20 min of running time"):
        budget.check([])
