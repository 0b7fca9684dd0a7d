"""The provider checkpoint hook: a Cursor agent's id is journaled the moment it is known, so a
session resumed after a crash polls the same agent instead of launching another."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from moot import api as runner
from moot.config import RunConfig
from moot.engine.store import list_sessions
from moot.models.base import ModelSettings, Spec, register_provider
from moot.models.cursor_cloud import CursorModel
from tests.fakes.cursor_api import CursorApi, SimulatedCrash
from tests.scripts import Debate, events, no_sleep, start

API = CursorApi()


def fake_cursor(spec: Spec, settings: ModelSettings) -> CursorModel:
    return CursorModel(spec, settings, transport=httpx2.MockTransport(API))


register_provider("cursor-fake", __name__, "fake_cursor")

OPTIONS = {"repository": "https://github.com/acme/widgets", "poll_interval": 0, "retry_base": 0}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> CursorApi:
    monkeypatch.setenv("CURSOR_API_KEY", "cursor-test-KEYVALUE0123456789")
    fresh = CursorApi(runs=3)
    monkeypatch.setattr(API, "__dict__", fresh.__dict__)
    return API


def config(debate: Debate) -> RunConfig:
    agents: list[dict[str, Any]] = [{"model": s} for s in debate.specs(("one", "two"))]
    agents.append({"model": "cursor-fake:claude-4-sonnet", "options": OPTIONS})
    return RunConfig.read({"agents": agents, "seed": 7, "arena": {"max_rounds": 1}})


def cursor_alias(folder: Any) -> str:
    meta = json.loads((folder / "session.json").read_text())
    return next(a for a, spec in meta["aliases"].items() if spec.startswith("cursor-fake"))


def test_a_resumed_session_polls_the_same_agent_instead_of_launching(api: CursorApi) -> None:
    api.crash_at_poll = 2  # killed while the agent is still running
    with pytest.raises(SimulatedCrash):
        start("Fix the flaky test", config(Debate()))
    [folder] = [f.path for f in list_sessions()]
    alias = cursor_alias(folder)
    journal = events(folder)
    [checkpoint] = [e for e in journal if e["kind"] == "checkpoint"]
    assert checkpoint["step"] == f"r0/solve/{alias}"
    assert checkpoint["data"]["data"]["cursor_agent"] == "bc_0001"
    assert not any(e["kind"] == "ask" and e["step"] == checkpoint["step"] for e in journal)
    assert api.launches == 1

    resumed = runner.resume(None, sleep=no_sleep)
    assert resumed.exit_code in (0, 2)  # an outcome, consensus or not
    assert api.launches == 1, "the resumed run launched a second agent"
    assert api.followups >= 2  # evaluate and revise continued the same conversation
    solve = next(
        e for e in events(folder) if e["kind"] == "ask" and e["step"] == checkpoint["step"]
    )
    assert solve["data"]["completion"]["text"] == "<solution>answer 1</solution>"
    assert resumed.result.agents[alias].calls >= 3


def test_an_uninterrupted_session_uses_one_agent_per_conversation(api: CursorApi) -> None:
    run = start("Fix the flaky test", config(Debate()))
    assert run.exit_code in (0, 2)
    alias = cursor_alias(run.folder)
    asks = [e for e in events(run.folder) if e["kind"] == "ask" and e["data"]["agent"] == alias]
    checkpoints = [e for e in events(run.folder) if e["kind"] == "checkpoint"]
    assert api.launches == 1 and api.followups == len(asks) - 1
    assert [c["data"]["data"]["action"] for c in checkpoints] == ["launch"] + ["followup"] * (
        len(asks) - 1
    )
    # a journaled follow-up records how far the conversation was, so a resume reads only
    # the new reply and re-sends the follow-up only if it never arrived
    assert all({"seen", "users", "thread"} <= set(c["data"]["data"]) for c in checkpoints)
