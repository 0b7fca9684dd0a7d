"""The OpenAI-compatible provider against a real server process on loopback: our small server
(tests/openai_server.py) answering with the embedded model. One server per module, always
terminated. The same server then takes part in an arena with the local model and a CLI agent."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from moot.config import RunConfig
from moot.models.base import create_model
from moot.models.schema import schema_problem
from moot.types import Completion, FailureKind, Message, Request
from tests.fakes.fake_agent import install
from tests.scripts import events, start

if not os.environ.get("CI"):  # in CI the embedded model must be there: never skip
    pytest.importorskip("xllamacpp", reason="needs the 'local' extra: scripts/setup.sh local,dev")

pytestmark = [pytest.mark.local_model, pytest.mark.slow]

SERVER = Path(__file__).resolve().parents[1] / "openai_server.py"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log_path = tmp_path_factory.mktemp("openai-server") / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, str(SERVER), "--port", str(port), "--model", "local:smollm2"],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the server exited: {log_path.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the server was not ready in 180s: {log_path.read_text()}")
            time.sleep(0.2)
        yield base
    finally:
        assert proc.stdin is not None
        proc.stdin.close()  # the server's signal to shut down and close its model
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.terminate()
            proc.wait(10)


def ask(spec: str, text: str, **extra: object) -> tuple[Completion, object]:
    model = create_model(spec)

    async def run() -> Completion:
        try:
            return await model.complete(
                Request(messages=(Message(role="user", content=text),), **extra)  # type: ignore[arg-type]
            )
        finally:
            await model.aclose()

    return asyncio.run(run()), model


def test_a_completion_with_real_usage(server: str) -> None:
    completion, _ = ask(
        f"openai-compat:{server}#smollm2",
        "Say hello.",
        max_tokens=8,
        temperature=0.0,
        seed=1,
        timeout=60,
    )
    assert completion.ok, completion.failure
    assert completion.text.strip()
    assert not completion.usage.estimated
    assert completion.usage.prompt_tokens > 5 and 0 < completion.usage.completion_tokens <= 8
    assert completion.cost == 0.0  # served on this machine


def test_json_schema_output_is_enforced_and_checked(server: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "color": {"type": "string", "enum": ["red", "green", "blue"]},
            "sure": {"type": "boolean"},
        },
        "required": ["color", "sure"],
        "additionalProperties": False,
    }
    completion, model = ask(
        f"openai-compat:{server}#smollm2",
        "Pick a color, as JSON.",
        json_schema=schema,
        max_tokens=30,
        timeout=60,
    )
    assert completion.ok, completion.failure
    assert schema_problem(completion.text, schema) is None, completion.text
    # the server takes OpenAI's json_schema form as it is: no fallback down the ladder
    assert model._schema_mode == "json_schema"  # type: ignore[attr-defined]
    assert model.capabilities.json_schema  # type: ignore[attr-defined]


def test_a_call_past_its_timeout_fails_as_a_timeout(server: str) -> None:
    completion, _ = ask(
        f"openai-compat:{server}#smollm2", "Write a long story.", max_tokens=200, timeout=0.05
    )
    assert completion.failure is not None and completion.failure.kind == FailureKind.TIMEOUT


def test_a_closed_port_is_a_connection_failure() -> None:
    completion, _ = ask(f"openai-compat:http://127.0.0.1:{free_port()}/v1#x", "hi", timeout=5)
    assert completion.failure is not None
    assert completion.failure.kind == FailureKind.CONNECTION


def test_an_arena_of_three_providers_reaches_an_outcome(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = install(tmp_path / "bin", ("claude",))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    config = RunConfig.read(
        {
            "agents": [
                # greedy: a sampled junk answer would leave an agent after one call
                {"model": "local:smollm2", "max_tokens": 24, "temperature": 0.0},
                {"model": f"openai-compat:{server}#smollm2", "max_tokens": 24, "temperature": 0.0},
                {"model": "cli:claude"},
            ],
            # seed 3 draws the CLI agent as the round's judge: the verdict's prompt (1,700
            # tokens) is then no model's prefill, half of this test's time on 2 cores; the
            # embedded model's verdict is tested in test_local.py, this server's JSON above
            "seed": 3,
            "arena": {"max_rounds": 1, "reask_on_bad_format": False},
        }
    )
    run = start("What is 6 x 7? Answer briefly.", config)
    assert run.exit_code in (0, 2), run.result.how  # consensus or not: an outcome
    result = json.loads((run.folder / "result.json").read_text())
    usage = {agent["model"].split(":")[0]: agent for agent in result["agents"].values()}
    assert set(usage) == {"local", "openai-compat", "cli"}
    for agent in usage.values():
        assert agent["calls"] >= 3 and agent["failures"] == 0
        assert agent["prompt_tokens"] > 0 and agent["completion_tokens"] > 0
    assert usage["local"]["cost"] == 0.0 and usage["openai-compat"]["cost"] == 0.0
    assert usage["cli"]["cost"] == pytest.approx(0.0123 * usage["cli"]["calls"])
    versions = [e["data"]["data"] for e in events(run.folder) if e["kind"] == "checkpoint"]
    assert versions == [
        {
            "cli": "claude",
            "executable": str(bin_dir / "claude"),
            "cli_version": "claude 9.9.9 (fake)",
        }
    ]


def test_a_reply_stopped_at_max_tokens_says_so_end_to_end(server: str) -> None:
    """The embedded model stops at 3 tokens: the local worker reads its finish reason, our
    server reports "length" as OpenAI does, and the OpenAI-compatible client records it."""
    cut, _ = ask(
        f"openai-compat:{server}#smollm2",
        "Describe the history of Rome in detail.",
        max_tokens=3,
        temperature=0.0,
        seed=1,
        timeout=60,
    )
    assert cut.ok, cut.failure
    assert cut.hit_max_tokens and cut.usage.completion_tokens == 3
    whole, _ = ask(
        f"openai-compat:{server}#smollm2",
        "Say hello.",
        max_tokens=200,
        temperature=0.0,
        seed=1,
        timeout=60,
    )
    assert whole.ok and not whole.hit_max_tokens
