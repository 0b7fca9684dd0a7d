"""Session rules: recorded steps are free, a changed prompt keeps its answer with a warning,
step ids are unique, and replay never calls a model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from moot import api as runner
from moot.engine import session as session_module
from moot.engine import standing as standing_module
from moot.models.scripted import ScriptedModel
from moot.protocols.arena import prompts
from moot.types import Completion, Message, Request, Usage, load
from tests.scripts import Debate, events, no_sleep, start


def test_changed_prompt_on_resume_keeps_the_answer_and_journals_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    debate = Debate()
    paused = start("task", debate.config(limits={"max_tokens": 900}))
    assert paused.exit_code == 3
    solved = {s for s in debate.steps if s.startswith("r0/solve/")}
    assert solved, "the limit should fall after the solve phase started"

    recorded = {e["step"] for e in events(paused.folder) if e["kind"] == "ask"}
    monkeypatch.setattr(prompts, "SOLVE", "Changed wording.\n" + prompts.SOLVE)
    resumed = runner.resume(paused.session_id, limits={"max_tokens": 10**6}, sleep=no_sleep)
    assert resumed.exit_code == 0
    assert all(debate.steps[s] == 1 for s in solved), "a recorded step was asked again"
    warnings = [e for e in events(paused.folder) if e["kind"] == "warning"]
    # The solve prompts changed, and so did every recorded follow-up that carries them.
    assert solved <= {w["step"] for w in warnings} <= recorded
    assert len(warnings) == len({w["step"] for w in warnings})  # one warning per step
    assert "recorded answer is kept" in warnings[0]["data"]["message"]


def test_replay_makes_no_model_call_and_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    debate = Debate()
    run = start("task", debate.config())
    asked = sum(debate.steps.values())
    report = runner.replay(run.session_id)
    assert report.identical is True
    assert sum(debate.steps.values()) == asked
    assert report.steps == asked


def test_replay_of_a_paused_session_rebuilds_the_partial_result() -> None:
    paused = start("task", Debate().config(limits={"max_tokens": 1500}))
    report = runner.replay(paused.session_id)
    assert report.result.status == "paused"
    assert report.identical is True


def test_step_ids_must_be_unique_within_a_run() -> None:
    from moot.engine.session import Session

    session = Session.__new__(Session)
    session._used = set()
    session._claim("r0/solve/agent_a")
    with pytest.raises(RuntimeError, match="used twice"):
        session._claim("r0/solve/agent_a")


def test_randomness_is_derived_from_seed_and_step() -> None:
    from moot.engine.session import Session

    a = Session.__new__(Session)
    a.seed = 11
    b = Session.__new__(Session)
    b.seed = 11
    assert a.shuffle(range(10), step="x") == b.shuffle(range(10), step="x")
    assert a.shuffle(range(10), step="x") != a.shuffle(range(10), step="y")


def test_a_steps_generator_is_random_random_of_its_number() -> None:
    """`rng` makes `random.Random(n)` without its Python layers: the state, every kind of draw
    and the pinned values of old journals (a request's seed, a quote's nonce) are the same."""
    import hashlib
    import random

    from moot.engine.session import Session

    session = Session.__new__(Session)
    session.seed = 7
    for step in ["r0/solve/agent_a", "r1/evaluate/agent_b/order", "r3/verify/agent_c", "x" * 300]:
        number = int.from_bytes(hashlib.sha256(f"7/{step}".encode()).digest()[:8], "big")
        made, expected = session.rng(step), random.Random(number)
        assert type(made) is random.Random and vars(made) == vars(expected)
        assert made.getstate() == expected.getstate()
        draws = [
            lambda g: g.randrange(2**31),
            lambda g: g.getrandbits(48),
            lambda g: g.gauss(0, 1),
            lambda g: g.gauss(0, 1),
            lambda g: g.random(),
            lambda g: g.sample(range(100), 5),
        ]
        for draw in draws:
            assert draw(made) == draw(expected)
    assert session.rng("r0/solve/agent_a").randrange(2**31) == 629450769
    assert f"{session.rng('r1/evaluate/agent_a/agent_b').getrandbits(48):012x}" == "5d954314f39d"


def test_gather_finishes_every_call_before_a_limit_stops_the_run() -> None:
    """A limit reached while calls are in flight must not throw away answers being paid for."""
    from moot.models.scripted import register_script

    debate = Debate()
    inner = debate.script("greedy")

    async def greedy(request: Request) -> Completion:
        alias = request.meta["agent"]
        if alias == "agent_b":
            await asyncio.sleep(0.3)  # still in flight when agent_c is refused
        # agent_a ignores its max_tokens: the limit is passed while agent_b is being paid for
        tokens = 6000 if alias == "agent_a" else 10
        return Completion(text=inner(request), usage=Usage(prompt_tokens=tokens))

    register_script("greedy", greedy)
    config = debate.config(limits={"max_tokens": 5000})
    for agent in config.agents:
        agent.model, agent.max_tokens = "scripted:@greedy", 2000
    # agent_a and agent_b fit beside each other (2 x (prompt + 2000) <= 5000); agent_c waits
    # for them, and finds the limit passed once agent_a has answered
    paused = start("task", config)
    assert paused.exit_code == 3 and "token limit reached" in (paused.message or "")
    asks = sorted(e["step"] for e in events(paused.folder) if e["kind"] == "ask")
    assert asks == ["r0/solve/agent_a", "r0/solve/agent_b"]
    assert sum(debate.steps.values()) == 2


def test_interrupt_is_recorded_and_resumable(capsys: pytest.CaptureFixture[str]) -> None:
    debate = Debate()
    gate: dict[str, asyncio.Event] = {}

    async def slow(request):  # type: ignore[no-untyped-def]
        if request.meta["step"] == "r1/evaluate/agent_b":
            raise asyncio.CancelledError  # what Ctrl-C does to a call in flight
        return debate.script("one")(request)

    from moot.models.scripted import register_script

    register_script("slow", slow)
    config = debate.config()
    for agent in config.agents:
        agent.model = "scripted:@slow"
    run = start("task", config)
    assert run.exit_code == 130 and run.result.status == "interrupted"
    assert "moot resume" in (run.message or "")
    # the outcome line is "interrupted: <how>": not "interrupted: interrupted; ..."
    assert run.result.how.startswith("the answers so far are kept; continue with: moot resume")
    # `moot status` says it once, on its "Ended:" line (it printed it again below)
    from tests.cli.test_cli import moot

    code, out, _ = moot(capsys, "status", run.session_id)
    assert code == 0 and out.count(f"continue with: moot resume {run.session_id}") == 1, out
    assert events(run.folder)[-1]["data"]["reason"] == "interrupted"
    del gate


def test_each_ask_of_a_phase_sends_its_request_before_the_next_ask_makes_its_own() -> None:
    """Issue 23: a call ran in a task of its own (asyncio.wait_for does so on Python 3.11), so
    every ask of a phase made its request (a digest of the whole conversation, the budget's
    hold) before the first one went out: at 12 agents the first request of each phase waited
    some 15 ms for the eleven others."""
    debate, order = Debate(), []
    script = debate.script

    def recording(name: str) -> Any:
        reply = script(name)

        def sent(request: Request) -> str:
            order.append(("sent", request.meta["step"]))
            return reply(request)

        return sent

    debate.script = recording  # type: ignore[method-assign]

    def asked(event: Any) -> None:
        if event.kind == "ask_started":
            order.append(("asked", event.step))

    run = start("task", debate.config(), subscribers=[asked])
    assert run.exit_code == 0
    solve = [entry for entry in order if entry[1].startswith("r0/solve/")]
    assert len(solve) == 6
    assert [kind for kind, _ in solve] == ["asked", "sent"] * 3
    assert all(solve[i][1] == solve[i + 1][1] for i in range(0, 6, 2))


def test_a_provider_that_guards_its_own_timeout_calls_in_the_askers_task() -> None:
    """The same for a provider with a timeout guard of its own (the HTTP ones): no task of its
    own, whose start would wait for every other ask of the phase."""
    seen: list[asyncio.Task[Any] | None] = []

    def reply(request: Request) -> str:
        seen.append(asyncio.current_task())
        return "fine"

    model = ScriptedModel(reply)
    model.guards_timeout = True

    async def ask() -> asyncio.Task[Any] | None:
        completion = await model.complete(Request(messages=[Message(role="user", content="hi")]))
        assert completion.ok and completion.text == "fine"
        return asyncio.current_task()

    assert seen == [asyncio.run(ask())]


def test_a_replay_reads_each_journaled_answer_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23: the Session validated every ask's completion on load, then its standing (what
    the faces show) validated each again: a resume of a thousand events read them twice."""
    run = start("task", Debate().config())
    asks = sum(e["kind"] == "ask" for e in events(run.folder))
    read: list[object] = []

    def counting(obj: Any, kind: type[Any]) -> Any:
        if kind is Completion:
            read.append(obj)
        return load(obj, kind)

    for module in (session_module, standing_module):
        monkeypatch.setattr(module, "load", counting)
    assert runner.replay(run.session_id).identical is True
    assert asks > 0 and len(read) == asks
