"""Waves and connections against a real loopback OpenAI-compatible server: with the default
settings every ask of a phase starts at once (12 agents: 4 waves for one round, not 7), all of
them through one shared pool; and the pool's connection limit keeps one endpoint from being
flooded, however many agents call it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator

import pytest

from moot.api import start
from moot.config import EngineConfig
from moot.lifecycle.plan import load_config
from moot.models import http
from moot.models.base import create_model
from moot.types import Message, Request
from tests.arena_server import ChatServer, in_flight, waves
from tests.loopback import serving


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with serving(ChatServer()) as running:
        yield running


def test_the_default_lets_32_agents_ask_at_once() -> None:
    assert EngineConfig().concurrency == 32


def test_twelve_agents_ask_every_phase_at_once_through_one_pool(server: ChatServer) -> None:
    server.latency = 0.2
    agents = [{"model": f"openai-compat:{server.url}#m{index}"} for index in range(12)]
    run = start("Count the pairs.", load_config(None, {"agents": agents, "seed": 1}, rounds=1))
    assert run.result.status == "consensus"
    # solve, evaluate, revise (12 asks each) and verify (1): four waves, the ideal.
    assert len(server.calls) == 37
    assert waves(server.calls) == 4
    assert in_flight(server.calls) == 12
    # One pool for the twelve agents: its connections carry every later phase.
    assert len({call.peer for call in server.calls}) <= 12


def test_one_endpoint_gets_no_more_connections_than_its_pool_allows(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http, "MAX_CONNECTIONS", 3)
    monkeypatch.setattr(http, "MAX_KEEPALIVE", 3)
    server.latency = 0.1
    models = [create_model(f"openai-compat:{server.url}#m{index}") for index in range(8)]
    request = Request(messages=(Message(role="user", content="Task: count the pairs."),))

    async def ask_all() -> list[bool]:
        try:
            done = await asyncio.gather(*(model.complete(request) for model in models))
        finally:
            for model in models:
                await model.aclose()
        return [completion.ok for completion in done]

    assert asyncio.run(ask_all()) == [True] * 8  # the rest waited for a free connection
    assert in_flight(server.calls) == 3
    assert len({call.peer for call in server.calls}) == 3


def test_agents_on_an_http_endpoint_warm_up_without_a_thread(server: ChatServer) -> None:
    """Issue 23: twelve agents on one server import httpx2 once, on the thread that makes them,
    and start no thread: a plain http endpoint loads no certificates, and an import in a worker
    thread beside the session's set-up cost some 80 ms of CPU in lock hand-overs. (A process of
    its own: this one has imported httpx2 long ago.)"""
    code = (
        "import sys, threading\n"
        "from moot.models.base import create_model\n"
        f"models = [create_model('openai-compat:{server.url}#m' + str(i)) for i in range(12)]\n"
        "print(threading.active_count(), 'httpx2' in sys.modules, 'httpcore2' in sys.modules)\n"
    )
    made = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert made.stdout.split() == ["1", "True", "True"]


def test_a_rate_limited_agent_waits_as_long_as_the_server_asks(server: ChatServer) -> None:
    server.rate_limited = {"m1": 1}
    server.retry_after = "7"
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    agents = [{"model": f"openai-compat:{server.url}#m{index}"} for index in range(3)]
    plan = load_config(None, {"agents": agents, "seed": 1}, rounds=1)
    run = start("Count the pairs.", plan, sleep=sleep)
    assert run.result.status == "consensus"
    assert waits and min(waits) >= 7.0  # Retry-After, not the engine's own shorter backoff
    assert server.rate_limited == {"m1": 0}
