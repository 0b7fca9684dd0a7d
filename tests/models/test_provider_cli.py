"""CLI agents through fake executables on PATH that print each tool's real output shape, fail,
hang past the timeout (leaving no process behind) or flood stdout."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from moot.errors import ConfigError
from moot.models.base import CALL_CONTEXT, CallContext, ModelSettings, create_model
from moot.types import Completion, FailureKind, Message, Request
from tests.fakes.fake_agent import SOLUTION, install


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "calls.jsonl"))
    return tmp_path / "calls.jsonl"


def ask(model: Any, text: str = "What is 6 x 7?", timeout: float = 20.0) -> Completion:
    request = Request(
        messages=(Message(role="system", content="Be brief."), Message(role="user", content=text)),
        timeout=timeout,
    )
    result: Completion = asyncio.run(model.complete(request))
    return result


def calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"  # a zombie has exited; only its parent's bookkeeping is left


@pytest.mark.parametrize(
    ("tool", "prompt_tokens", "completion_tokens", "cache_read", "cost"),
    [
        ("claude", 116, 7, 100, 0.0123),
        ("codex", 120, 9, 20, None),
        ("gemini", 50, 20, 10, None),
        ("qwen", 30, 6, 0, None),
    ],
)
def test_each_tool_output_shape_gives_text_usage_and_cost(
    fakes: Path,
    tool: str,
    prompt_tokens: int,
    completion_tokens: int,
    cache_read: int,
    cost: float | None,
) -> None:
    completion = ask(create_model(f"cli:{tool}"))
    assert completion.ok, completion.failure
    assert completion.text == SOLUTION
    assert completion.usage.prompt_tokens == prompt_tokens
    assert completion.usage.completion_tokens == completion_tokens
    assert completion.usage.cache_read_tokens == cache_read
    assert not completion.usage.estimated
    assert completion.cost == cost
    [call] = calls(fakes)
    assert "Be brief." in call["prompt"] and "What is 6 x 7?" in call["prompt"]


def test_the_prompt_goes_where_each_tool_reads_it(fakes: Path) -> None:
    ask(create_model("cli:claude#claude-sonnet-4-6"))
    ask(create_model("cli:codex"))
    ask(create_model("cli:cursor-agent"))
    claude, codex, cursor = calls(fakes)
    assert claude["argv"] == [
        "--model",
        "claude-sonnet-4-6",
        "-p",
        "--output-format",
        "json",
        "--permission-mode",
        "dontAsk",  # no worktree: read-only (tests/cli/test_cli_modes.py has each tool's)
    ]
    assert codex["argv"][0] == "exec" and codex["argv"][-1] == "-"  # '-' reads stdin
    assert cursor["argv"][:3] == ["-p", "--output-format", "json"]
    assert "What is 6 x 7?" in cursor["argv"][-1]  # cursor-agent takes it as an argument


def test_cursor_agent_without_usage_is_estimated_and_unpriced(fakes: Path) -> None:
    completion = ask(create_model("cli:cursor-agent"))
    assert completion.ok and completion.usage.estimated and completion.cost is None


def test_a_named_model_is_priced_from_its_vendor_table(fakes: Path) -> None:
    completion = ask(create_model("cli:codex#gpt-5.4-mini"))
    # 100 fresh input tokens at $0.75/M, 20 cached at $0.075/M, 9 output at $4.50/M
    assert completion.cost == pytest.approx((100 * 0.75 + 20 * 0.075 + 9 * 4.5) / 1e6)


@pytest.mark.parametrize(
    ("tool", "kind", "words"),
    [
        ("claude", FailureKind.AUTH, "Invalid API key"),
        ("gemini", FailureKind.RATE_LIMIT, "429"),
        ("codex", FailureKind.AUTH, "401"),
    ],
)
def test_tool_errors_are_classified(
    fakes: Path, monkeypatch: pytest.MonkeyPatch, tool: str, kind: FailureKind, words: str
) -> None:
    monkeypatch.setenv("FAKE_MODE", "auth")
    completion = ask(create_model(f"cli:{tool}"))
    assert not completion.ok and completion.failure is not None
    assert completion.failure.kind == kind
    assert words in completion.failure.message


def test_a_nonzero_exit_is_an_error_with_the_stderr_text(
    fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_MODE", "fail")
    completion = ask(create_model("cli:claude"))
    assert completion.failure is not None
    assert completion.failure.kind == FailureKind.UNKNOWN  # not retried: nothing says transient
    assert "exit code 3" in completion.failure.message
    assert "segfault in the renderer" in completion.failure.message


@pytest.mark.parametrize("mode", ["hang", "hang_escaped"])
def test_a_hung_tool_is_killed_with_its_whole_tree(
    fakes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    monkeypatch.setenv("FAKE_MODE", mode)
    monkeypatch.setenv("FAKE_PIDFILE", str(pidfile))
    started = time.monotonic()
    completion = ask(create_model("cli:gemini"), timeout=1.5)
    elapsed = time.monotonic() - started
    assert completion.failure is not None and completion.failure.kind == FailureKind.TIMEOUT
    assert "process tree was killed" in completion.failure.message
    assert elapsed < 6
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild), "the tool's child outlived the call"


def test_stdout_is_capped(fakes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODE", "flood")
    started = time.monotonic()
    completion = ask(create_model("cli:claude"), timeout=25)
    assert completion.failure is not None
    assert completion.failure.kind == FailureKind.BAD_RESPONSE
    assert "10,485,760 bytes" in completion.failure.message
    assert time.monotonic() - started < 15  # stopped at the cap, not at the timeout


def test_a_prompt_over_the_stdin_cap_is_refused_before_spawning(fakes: Path) -> None:
    completion = ask(create_model("cli:claude"), text="x" * (2 * 1024 * 1024 + 1))
    assert completion.failure is not None
    assert completion.failure.kind == FailureKind.CONTEXT_LENGTH
    assert calls(fakes) == []


def test_the_tool_version_is_journaled_once_through_the_call_context(fakes: Path) -> None:
    recorded: list[dict[str, Any]] = []
    model = create_model("cli:qwen")

    async def twice() -> None:
        for step in ("r0/solve/agent_a", "r1/revise/agent_a"):
            context = CallContext(
                step,
                "agent_a",
                tuple(recorded),
                lambda d, s=step: recorded.append({**d, "step": s}),
                lambda message: None,
            )
            token = CALL_CONTEXT.set(context)
            try:
                await model.complete(Request(messages=(Message(role="user", content="hi"),)))
            finally:
                CALL_CONTEXT.reset(token)

    asyncio.run(twice())
    assert len(recorded) == 1
    assert recorded[0]["cli_version"] == "qwen 9.9.9 (fake)"
    assert recorded[0]["step"] == "r0/solve/agent_a"


def custom_tool(tmp_path: Path) -> Path:
    """A command that answers with its arguments and stdin, as JSON."""
    script = tmp_path / "echo-tool"
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        "if sys.argv[1:] == ['--version']:\n    print('echo-tool 0.1'); sys.exit(0)\n"
        "stdin = sys.stdin.read()\n"
        "print(json.dumps({'result': 'args=' + ' '.join(sys.argv[1:]) + '|stdin=' + stdin}))\n"
    )
    script.chmod(0o755)
    return script


def test_custom_cli_fills_the_tokens_and_reads_json(tmp_path: Path) -> None:
    tool = custom_tool(tmp_path)
    settings = ModelSettings(
        max_tokens=77,
        temperature=0.3,
        options={
            "command": str(tool),
            "args": ["--max", "{{MAX_TOKENS}}", "-t", "{{TEMPERATURE}}", "--prompt={{PROMPT}}"],
        },
    )
    completion = ask(create_model("cli:mytool", settings), text="hello there")
    assert completion.ok, completion.failure
    assert completion.text.startswith("args=--max 77 -t 0.3 --prompt=Be brief.")
    assert completion.text.endswith("|stdin=")  # the prompt went in the arguments only


def test_custom_cli_without_prompt_token_reads_stdin_with_a_chat_template(tmp_path: Path) -> None:
    tool = custom_tool(tmp_path)
    settings = ModelSettings(options={"args": ["-x"], "chat_template": "chatml"})
    completion = ask(create_model(f"cli:{tool}", settings), text="hello there")
    assert completion.ok, completion.failure
    assert "args=-x|stdin=<|im_start|>system\nBe brief.<|im_end|>" in completion.text
    assert completion.text.endswith("<|im_start|>assistant\n")


def test_custom_cli_plain_text_output(tmp_path: Path) -> None:
    script = tmp_path / "plain"
    script.write_text("#!/bin/sh\ncat >/dev/null\necho 'just words'\n")
    script.chmod(0o755)
    completion = ask(create_model(f"cli:{script}"))
    assert completion.ok and completion.text == "just words"
    assert completion.usage.estimated


def test_custom_cli_needs_an_absolute_executable_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="absolute path"):
        create_model("cli:mytool", ModelSettings(options={"command": "echo-tool"}))
    with pytest.raises(ConfigError, match="not an executable"):
        create_model(f"cli:{tmp_path / 'missing'}")


def test_a_builtin_tool_missing_from_path_names_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match="install Claude Code"):
        create_model("cli:claude")
