"""The run lifecycle (`moot.lifecycle.run`, issue 28): the protocol's own check of a config runs
once on the way from a config file to a session, and the library face keeps its names."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import moot.protocols.court as court_protocol
from moot import api
from moot.lifecycle.plan import load_config
from moot.lifecycle.run import run_sync
from tests.court_scripts import Court, stubborn
from tests.scripts import no_sleep, start

PG = "Use Postgres."


def counting(monkeypatch: pytest.MonkeyPatch) -> list[Mapping[str, Any]]:
    """Every call of the court's own config check (its paths), recorded."""
    calls: list[Mapping[str, Any]] = []
    check = court_protocol.path_problems

    def counted(data: Mapping[str, Any], cwd: Path) -> list[str]:
        calls.append(data)
        return check(data, cwd)

    monkeypatch.setattr(court_protocol, "path_problems", counted)
    return calls


def test_a_checked_config_is_not_checked_again_when_its_session_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = counting(monkeypatch)
    config = Court({"one": stubborn(PG), "two": stubborn(PG)}).config()
    plan = load_config(None, config.dump())  # `moot run`: the CLI's way in
    assert plan.checked and len(calls) == 1
    run = api.start("Which database?", plan, sleep=no_sleep)  # the plan as the CLI hands it
    assert run.exit_code == 0
    assert len(calls) == 1


def test_a_config_no_one_checked_is_checked_when_its_session_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = counting(monkeypatch)
    config = Court({"one": stubborn(PG), "two": stubborn(PG)}).config()
    run = start("Which database?", config)
    assert run.exit_code == 0
    assert len(calls) == 1


def test_the_library_face_keeps_its_names() -> None:
    from moot.lifecycle import replay, run

    assert api.start_async is run.start_async and api.resume_async is run.resume_async
    assert api.RunResult is run.RunResult and api.ReplayReport is replay.ReplayReport
    assert api.replay is replay.replay and api.outcome_change is replay.outcome_change


@pytest.mark.skipif(sys.platform == "win32", reason="signals through the loop: POSIX only")
def test_a_signal_that_no_run_records_ends_as_ctrl_c_would() -> None:
    """`api.resume` of a finished session replays it on a thread under `run_sync`'s loop: a
    Ctrl-C there cancels the task, and the caller (the CLI) sees a KeyboardInterrupt, as when
    the replay ran without a loop, not a CancelledError."""

    async def replaying() -> None:
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(5)

    with pytest.raises(KeyboardInterrupt):
        run_sync(replaying)
