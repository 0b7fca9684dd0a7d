"""Start-up without the garbage collector (issues 12 and 23, moot/collector.py): the `moot`
command turns it off before its first import, `moot run` and `moot resume` keep it off while
they set up, and the engine turns it back on, with what start-up built frozen, once its event
loop first waits on the models (at the latest `startup.LATEST` seconds after it starts); any
other command turns it back on as soon as it is known."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import click
import pytest

import moot.__main__
from moot import collector
from moot.cli import cli, main
from moot.engine import lifecycle, startup
from moot.lifecycle import plan
from moot.lifecycle.run import run_sync
from tests.arena_server import ChatServer
from tests.loopback import serving
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


def test_the_entry_points_pause_lasts_until_collection_is_back_and_freezes_what_was_built() -> None:
    collector.pause()
    with collector.paused():
        assert not gc.isenabled()
        built = [object() for _ in range(10)]
        collector.collect_again()
        assert gc.isenabled()
        assert gc.get_freeze_count() > len(built)
        collector.collect_again()  # a second call changes nothing
    assert gc.isenabled()


def test_a_pause_of_a_block_of_its_own_freezes_nothing_of_the_callers() -> None:
    """The CLI called in a process of the caller's (a test's): its pause ends with collection
    back on, and none of the caller's objects frozen for good (53,075 were, before)."""
    with collector.paused():
        assert not gc.isenabled()
        collector.collect_again()
        assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_the_cli_called_in_process_freezes_nothing_of_the_callers(isolated: object) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*Debate().run_args(), "--dry-run"])
    assert exit_info.value.code == 0
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_pause_ends_with_its_block_when_nothing_ended_it() -> None:
    with pytest.raises(RuntimeError), collector.paused():
        assert not gc.isenabled()
        raise RuntimeError("a run that fails before its loop starts")
    assert gc.isenabled()


def test_a_caller_that_turned_the_collector_off_keeps_it_off() -> None:
    gc.disable()
    with collector.paused():
        collector.collect_again()
        assert not gc.isenabled()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_the_engine_turns_collection_back_on_once_its_loop_first_waits() -> None:
    """Issue 23: turned on as the loop started, the collector made 28 passes, 10 ms, while the
    session opened and the HTTP stack was imported, all before the first request."""
    seen: list[bool] = []

    async def run() -> Any:
        seen.append(gc.isenabled())
        await asyncio.sleep(0)  # the loop runs on, with no wait: still starting up
        seen.append(gc.isenabled())
        await asyncio.sleep(startup.IDLE * 4)  # a wait, as on the models
        seen.append(gc.isenabled() and gc.get_freeze_count() > 0)

    collector.pause()  # as the entry point does
    with collector.paused():
        run_sync(run)
    assert seen == [False, False, True]


def test_a_loop_that_never_waits_turns_collection_back_on_at_the_latest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(startup, "LATEST", 0.05)
    seen: list[float] = []

    async def run() -> Any:
        started = time.monotonic()
        while not gc.isenabled() and time.monotonic() - started < 10:
            await asyncio.sleep(0)  # busy: never a wait of IDLE
        seen.append(time.monotonic() - started)

    with collector.paused():
        run_sync(run)
        assert gc.isenabled()  # by the loop, not by the end of the block
    assert 0.04 < seen[0] < 10


def test_under_a_policy_of_the_callers_own_collection_is_back_on_as_the_loop_starts() -> None:
    seen: list[bool] = []

    async def run() -> Any:
        seen.append(gc.isenabled())

    asyncio.set_event_loop_policy(type("Policy", (asyncio.DefaultEventLoopPolicy,), {})())
    try:
        with collector.paused():
            run_sync(run)
    finally:
        asyncio.set_event_loop_policy(None)
    assert seen == [True]


def test_moot_run_sets_up_and_opens_its_session_without_collection(
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
    assert seen == {"config": False, "run": False}
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


def test_the_entry_point_pauses_the_collector_before_it_imports_the_cli(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bool] = []
    monkeypatch.setattr("moot.cli.main", lambda: seen.append(gc.isenabled()))
    moot.__main__.main()
    assert seen == [False]
    collector.collect_again()
    assert gc.isenabled()


def test_a_command_that_starts_no_run_ends_the_entry_points_pause(isolated: object) -> None:
    collector.pause()
    with pytest.raises(SystemExit) as exit_info:
        main(["list"])
    assert exit_info.value.code == 0
    assert gc.isenabled() and gc.get_freeze_count() > 0


def test_the_cli_keeps_the_pause_for_a_command_that_starts_a_run_and_ends_it_for_another() -> None:
    """Known before its options are parsed (the models' specs import pydantic and moot's types)."""
    context = click.Context(cli)
    collector.pause()
    for name in ("run", "resume"):
        assert cli.get_command(context, name) is not None
        assert not gc.isenabled()
    assert cli.get_command(context, "show") is not None
    assert gc.isenabled()


def test_moot_run_carries_the_entry_points_pause_on_until_its_loop_starts(
    monkeypatch: pytest.MonkeyPatch, isolated: object
) -> None:
    seen: list[bool] = []
    load_config = plan.load_config

    def loading(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return load_config(*args, **kwargs)

    monkeypatch.setattr(plan, "load_config", loading)
    collector.pause()
    with pytest.raises(SystemExit) as exit_info:
        main(Debate().run_args())
    assert exit_info.value.code == 0
    assert seen == [False]
    assert gc.isenabled()


# Counts the collections a `moot` process makes from the CLI's import (after the interpreter's
# own start and the entry point's) to the end of start-up (the freeze), into the file $COLLECTED
# names: put first on PYTHONPATH as sitecustomize.py, it runs before the entry point.
COUNTING = """
import gc, os, sys
_counted = [0, None]

def _count(phase, info):
    if phase == "start" and "moot.cli" in sys.modules:
        _counted[0] += 1

gc.callbacks.append(_count)
_freeze = gc.freeze

def _frozen():
    if _counted[1] is None:
        _counted[1] = _counted[0]
        with open(os.environ["COLLECTED"], "w") as out:
            out.write(str(_counted[0]))
    _freeze()

gc.freeze = _frozen
"""


def test_the_moot_command_starts_a_run_without_a_single_collection(
    isolated: Path, tmp_path: Path
) -> None:
    """Issue 23: the pause began only once `run` was known, after click, pydantic and moot's
    types were imported (the models' specs are parsed first): some 90 collections, 15 ms."""
    shim, collected = tmp_path / "shim", tmp_path / "collected"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(COUNTING)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {
        **os.environ,
        "MOOT_HOME": str(isolated),
        "PYTHONPATH": os.pathsep.join([str(shim), src]),
        "COLLECTED": str(collected),
    }
    script = str(Path(sys.executable).parent / "moot")
    with serving(ChatServer()) as server:
        argv = [script, "run", "Count the pairs that sum to a target.", "--rounds", "1"]
        for index in range(3):
            argv += ["--models", f"openai-compat:{server.url}#m{index}"]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert collected.read_text() == "0"


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
