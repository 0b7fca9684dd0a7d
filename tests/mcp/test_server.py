"""`moot mcp` over stdio, driven by the SDK's own client: a scripted deliberation runs through
the deliberate tool with one progress notification per phase, a cancel stops it (the session
stays resumable), resume_session finishes it, and bad arguments are tool errors that name the
problem while the server goes on. The server is a subprocess; its agents are a file of scripted
replies (tests/mcp/agents.py), held at the verify phase until the test opens a gate file."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
AGENTS = Path(__file__).with_name("agents.py")
BOUND = 90  # seconds: every exchange with the server ends well before this


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "MOOT_HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(ROOT / "src"),
        "PATH": os.environ.get("PATH", ""),
    }


@asynccontextmanager
async def connected(tmp_path: Path) -> AsyncIterator[Client]:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "moot.cli", "mcp"],
        env=_env(tmp_path),
        cwd=str(tmp_path),
    )
    async with Client(server, read_timeout_seconds=BOUND) as client:
        yield client


def _agents(tmp_path: Path) -> list[str]:
    shutil.copy(AGENTS, tmp_path / "agents.py")
    return [f"scripted:agents.py#agent_{n}" for n in ("one", "two", "three")]


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    data = result.structured_content
    return data.get("result", data) if isinstance(data, dict) and len(data) == 1 else data


def _text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def _status(client: Client, session_id: str) -> str:
    rows = _data(await client.call_tool("list_sessions", {}))
    return next(str(row["status"]) for row in rows if row["session_id"] == session_id)


@pytest.mark.slow
def test_a_deliberation_reports_its_phases_is_cancelled_and_resumed(tmp_path: Path) -> None:
    async def scenario() -> None:
        specs = _agents(tmp_path)
        phases: list[str] = []
        held = anyio.Event()

        async def progress(done: float, total: float | None, message: str | None) -> None:
            phases.append(str(message))
            if message is not None and "verify" in message:
                held.set()  # the agents wait at verify until the gate opens

        async with connected(tmp_path) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {
                "deliberate",
                "list_sessions",
                "show_session",
                "resume_session",
                "stop_session",
                "say",
            } <= names
            with anyio.CancelScope() as call:

                async def cancel_once_held() -> None:
                    await held.wait()
                    call.cancel()

                async with anyio.create_task_group() as group:
                    group.start_soon(cancel_once_held)
                    returned = await client.call_tool(
                        "deliberate",
                        {"task": "What is 6 times 7?", "models": specs, "seed": 3},
                        progress_callback=progress,
                    )
                    pytest.fail(f"the call returned while its agents were held: {returned}")
            assert call.cancelled_caught
            assert phases == [  # one notification per phase, in order
                "round 0: solve",
                "round 1: evaluate",
                "round 1: revise",
                "round 1: verify",
            ]

            rows = _data(await client.call_tool("list_sessions", {}))
            assert len(rows) == 1
            session_id = rows[0]["session_id"]
            with anyio.fail_after(BOUND):  # the server journals the interruption, then it shows
                while await _status(client, session_id) != "interrupted":
                    await anyio.sleep(0.05)

            # a note to one agent of the interrupted session, as `moot say` leaves it
            sent = _data(
                await client.call_tool(
                    "say", {"session_id": session_id, "agent": "B", "text": "Check 6 x 7."}
                )
            )
            assert sent["session_id"] == session_id and sent["agent"] == "agent_b"
            assert sent["note_id"]
            unknown = await client.call_tool("say", {"agent": "Agent Q", "text": "hello"})
            assert unknown.is_error and "Agent Q" in _text(unknown), _text(unknown)

            (tmp_path / "open").write_text("go\n")
            phases.clear()
            outcome = _data(
                await client.call_tool(
                    "resume_session", {"session_id": session_id}, progress_callback=progress
                )
            )
            assert outcome["session_id"] == session_id
            assert outcome["status"] == "consensus", outcome
            assert outcome["trust"], "the outcome comes with its trust statement"
            assert "42" in str(outcome["final_answer"])
            assert outcome["exit_code"] == 0
            assert phases == ["round 1: verify"], "recorded phases are not asked again"

            late = await client.call_tool("say", {"agent": "B", "text": "Too late."})
            assert late.is_error and "finished" in _text(late), _text(late)

            shown = _data(await client.call_tool("show_session", {"session_id": session_id}))
            assert shown["status"] == "consensus"
            report = await client.read_resource(f"moot://sessions/{session_id}/report.md")
            text = report.contents[0].text  # type: ignore[union-attr]
            assert "What is 6 times 7?" in text and "Consensus reached" in text

    anyio.run(scenario)


@pytest.mark.slow
def test_stop_session_interrupts_a_run_of_this_server_and_its_call_returns_the_outcome(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        specs = _agents(tmp_path)
        held = anyio.Event()
        outcome: dict[str, Any] = {}

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if message is not None and "verify" in message:
                held.set()

        async with connected(tmp_path) as client:

            async def deliberate() -> None:
                result = await client.call_tool(
                    "deliberate",
                    {"task": "What is 6 times 7?", "models": specs},
                    progress_callback=progress,
                )
                outcome.update(_data(result))

            async with anyio.create_task_group() as group:
                group.start_soon(deliberate)
                with anyio.fail_after(BOUND):
                    await held.wait()
                (row,) = _data(await client.call_tool("list_sessions", {}))
                assert row["status"] == "running"
                session_id = row["session_id"]
                stopped = _data(await client.call_tool("stop_session", {"session_id": session_id}))
                assert stopped == {
                    "session_id": session_id,
                    "stopped": True,
                    "status": "interrupted",
                }
            assert outcome["session_id"] == session_id
            assert outcome["status"] == "interrupted" and outcome["exit_code"] == 130
            assert session_id in outcome["message"]  # how to continue it

            (tmp_path / "open").write_text("go\n")
            resumed = _data(await client.call_tool("resume_session", {}))  # the latest
            assert resumed["session_id"] == session_id and resumed["status"] == "consensus"

    anyio.run(scenario)


@pytest.mark.slow
def test_http_serves_the_same_tools_on_loopback(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**_env(tmp_path), "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    command = [sys.executable, "-m", "moot.cli", "mcp", "--http", "--port", str(port)]
    server = subprocess.Popen(command, env=env, cwd=tmp_path, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + BOUND
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, "moot mcp --http exited"
                assert time.monotonic() < deadline, "moot mcp --http never listened"
                time.sleep(0.05)
        specs = _agents(tmp_path)
        (tmp_path / "open").write_text("go\n")

        async def scenario() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=BOUND) as client:
                outcome = _data(
                    await client.call_tool(
                        "deliberate", {"task": "What is 6 times 7?", "models": specs}
                    )
                )
                assert outcome["status"] == "consensus" and outcome["trust"]
                (row,) = _data(await client.call_tool("list_sessions", {}))
                assert row["session_id"] == outcome["session_id"]

        anyio.run(scenario)
    finally:
        server.terminate()
        server.wait(timeout=BOUND)


@pytest.mark.slow
def test_bad_arguments_are_tool_errors_that_name_the_problem(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with connected(tmp_path) as client:
            unknown = await client.call_tool(
                "deliberate", {"task": "Which?", "protocol": "no-such-protocol"}
            )
            assert unknown.is_error and "no-such-protocol" in _text(unknown)
            spec = await client.call_tool("deliberate", {"task": "Which?", "models": ["nope"]})
            assert spec.is_error and "nope" in _text(spec)
            empty = await client.call_tool("deliberate", {"task": "  "})
            assert empty.is_error and "task" in _text(empty)
            config = await client.call_tool("deliberate", {"task": "Which?", "config": "x.toml"})
            assert config.is_error and "x.toml" in _text(config)
            missing = await client.call_tool("show_session", {"session_id": "feedfacecafe"})
            assert missing.is_error and "no sessions" in _text(missing)
            resumed = await client.call_tool("resume_session", {"session_id": "feedfacecafe"})
            assert resumed.is_error and "no sessions" in _text(resumed)
            chair = await client.call_tool("deliberate", {"task": "Which?", "chairman": "nope"})
            assert chair.is_error and "nope" in _text(chair)  # the run's chairman, checked
            typed = await client.call_tool("deliberate", {"task": "Which?", "rounds": "many"})
            assert typed.is_error and "rounds" in _text(typed)
            limit = await client.call_tool("list_sessions", {"limit": 0})
            assert limit.is_error and "limit" in _text(limit)
            # the server is still there, and made no session of any of it
            assert _data(await client.call_tool("list_sessions", {})) == []

    anyio.run(scenario)
