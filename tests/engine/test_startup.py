"""Start-up without the garbage collector (issue 12, engine/startup.py): `moot run` and
`moot resume` turn it off while they import and set up, and the engine turns it back on, with
what start-up built frozen, when its event loop starts."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from moot.cli import main
from moot.engine import lifecycle, startup
from moot.lifecycle import plan
from moot.lifecycle.run import run_sync
from tests.scripts import Debate


@pytest.fixture(autouse=True)
def collecting() -> Iterator[None]:
    """Each test starts with the collector on and nothing frozen, and leaves it so."""
    was = gc.isenabled()
    gc.enable()
    gc.unfreeze()
    yield
    gc.unfreeze()
    if was:
        gc.enable()
    else:
        gc.disable()


def test_a_pause_lasts_until_collection_starts_again_and_freezes_what_was_built() -> None:
    with startup.paused():
        assert not gc.isenabled()
        built = [object() for _ in range(10)]
        startup.collect_again()
        assert gc.isenabled()
        assert gc.get_freeze_count() > len(built)
        startup.collect_again()  # a second call changes nothing
    assert gc.isenabled()


def test_a_pause_ends_with_its_block_when_nothing_ended_it() -> None:
    with pytest.raises(RuntimeError), startup.paused():
        assert not gc.isenabled()
        raise RuntimeError("a run that fails before its loop starts")
    assert gc.isenabled()


def test_a_caller_that_turned_the_collector_off_keeps_it_off() -> None:
    gc.disable()
    with startup.paused():
        startup.collect_again()
        assert not gc.isenabled()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_the_engine_turns_collection_back_on_when_its_loop_starts() -> None:
    seen: list[bool] = []

    async def run() -> Any:
        seen.append(gc.isenabled())

    with startup.paused():
        run_sync(run)
    assert seen == [True]


def test_moot_run_sets_up_without_collection_and_runs_with_it(
    monkeypatch: pytest.MonkeyPatch, isolated: object
) -> None:
    seen: dict[str, bool] = {}
    load_config, run_of = plan.load_config, lifecycle.running

    def loading(*args: Any, **kwargs: Any) -> Any:
        seen["config"] = gc.isenabled()
        return load_config(*args, **kwargs)

    @contextlib.asynccontextmanager
    async def running(*args: Any, **kwargs: Any) -> AsyncIterator[lifecycle.Running]:
        seen["run"] = gc.isenabled()
        async with run_of(*args, **kwargs) as run:
            yield run

    monkeypatch.setattr(plan, "load_config", loading)
    monkeypatch.setattr(lifecycle, "running", running)
    args = Debate().run_args()
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 0
    assert seen == {"config": False, "run": True}
    assert gc.isenabled()


def test_resuming_a_finished_session_replays_it_with_collection_on(
    monkeypatch: pytest.MonkeyPatch, isolated: object
) -> None:
    """`moot resume` of a session that had ended replays it without the engine's loop: start-up
    ends there too, or the collector stayed off for the whole replay and its reports."""
    args = Debate().run_args()
    with pytest.raises(SystemExit):
        main(args)
    seen: list[bool] = []
    protocol_call = lifecycle._call

    async def calling(*args: Any) -> Any:
        seen.append(gc.isenabled())
        return await protocol_call(*args)

    monkeypatch.setattr(lifecycle, "_call", calling)
    with pytest.raises(SystemExit) as exit_info:
        main(["resume"])
    assert exit_info.value.code == 0
    assert seen == [True]


def test_under_a_policy_of_the_callers_own_the_engine_runs_on_its_loop() -> None:
    class Policy(asyncio.DefaultEventLoopPolicy):
        pass

    seen: list[type] = []

    async def run() -> Any:
        seen.append(type(asyncio.get_running_loop()._selector))  # type: ignore[attr-defined]

    asyncio.set_event_loop_policy(Policy())
    try:
        run_sync(run)
    finally:
        asyncio.set_event_loop_policy(None)
    run_sync(run)
    assert seen[0] is not seen[1]
    assert seen[1].__module__ == "moot.engine.startup"


def _workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("asyncio_")]


def test_ending_the_workers_lets_an_idle_one_end_before_the_loop_closes() -> None:
    """issue 23: a process that exits after its run waits for the loop's worker threads; the
    loop's close tells them to end only after the outcome is shown, so `end_workers` does it as
    the run ends, and the exit finds them gone."""
    seen: list[int] = []

    async def run() -> None:
        before = set(_workers())
        await asyncio.to_thread(seen.append, 1)  # work given before is done
        started = [t for t in _workers() if t not in before]
        assert started
        startup.end_workers()
        for thread in started:
            thread.join(timeout=5)  # with the loop still running
            assert not thread.is_alive()
        with pytest.raises(RuntimeError):  # nothing more can be given to them
            await asyncio.to_thread(seen.append, 2)

    run_sync(run)
    assert seen == [1]


def test_ending_the_workers_leaves_a_loop_it_did_not_make_alone() -> None:
    async def run() -> list[int]:
        startup.end_workers()
        return await asyncio.gather(asyncio.to_thread(int, "3"), asyncio.to_thread(int, "4"))

    assert asyncio.run(run()) == [3, 4]
    startup.end_workers()  # outside a loop: nothing to do
