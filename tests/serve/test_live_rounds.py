"""The session page while a run goes on: who is working now, and each round's result in the
timeline as the round ends (round summaries are signals the Session writes to state.json,
not journal lines), not only once the run is over."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import anyio

from moot.engine.store import SessionFolder
from moot.serve.live import follow_view
from moot.serve.pages import now_html
from tests.serve.test_app import fake_session


def _state(folder: Path, n: int, decision: str, when: float) -> None:
    state = {
        "session_id": folder.name,
        "status": "running",
        "pid": os.getpid(),
        "protocol": "arena",
        "task": "t",
        "stage": "round",
        "round": n,
        "phase": "verify",
        "agents": {
            "agent_a": {"status": "done", "step": f"r{n}/solve/agent_a"},
            "agent_b": {"status": "thinking", "step": f"r{n}/verify/agent_b"},
        },
        "round_result": {"round": n, "judge": "agent_b", "decision": decision, "score": 3 + n},
        "updated": when,
    }
    path = folder / "state.json"
    path.write_text(json.dumps(state))
    os.utime(path, (when, when))


def test_the_stream_sends_who_works_now_and_each_rounds_result_as_it_ends(
    tmp_path: Path,
) -> None:
    folder = fake_session(tmp_path / "sessions", 3)
    now = time.time()
    _state(folder, 1, "CONTINUE", now - 10)

    async def watch() -> list[dict[str, Any]]:
        stream = follow_view(SessionFolder(folder))
        got = [await anext(stream) for _ in range(3)]  # now, view, status
        _state(folder, 2, "REVISE", now - 5)
        got += [await anext(stream) for _ in range(3)]
        await stream.aclose()  # type: ignore[attr-defined]
        return got

    messages = anyio.run(watch)
    assert [m["event"] for m in messages] == ["now", "view", "status"] * 2
    first_now, first_view, _, _, second_view, status = messages
    assert "Agent B</strong> thinking · r1/verify/agent_b" in first_now["data"]
    assert first_now["data"].index("Agent B") < first_now["data"].index("Agent A")  # busy first
    assert "CONTINUE" in first_view["data"] and "REVISE" not in first_view["data"]
    assert "CONTINUE" in second_view["data"] and "REVISE" in second_view["data"]
    assert status["data"] == "running"


def test_nothing_is_shown_as_working_once_the_run_ended() -> None:
    assert now_html({"status": "consensus", "agents": {"agent_a": {"status": "done"}}}) == ""
