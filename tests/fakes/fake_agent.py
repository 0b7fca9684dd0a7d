"""A stand-in for the coding agents' CLIs (claude, codex, gemini, cursor-agent, qwen).

It answers in the real tool's JSON output shape, chosen by the name it was started under, and
misbehaves on request through FAKE_MODE: fail, auth, ratelimit, hang, hang_escaped, flood, text.
It logs what it received (argv and stdin) as one JSON line to FAKE_LOG when that is set.
`install(bin_dir, names)` writes launchers for it; tests put that folder first on PATH.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

SOLUTION = (
    "<solution>\n## PLAN\n1. Use the standard library.\n## CHANGES\nThe answer is 42.\n"
    "</solution>\n<analysis>\n## RISKS\nnone\n## DISAGREEMENTS\nNone.\n</analysis>"
)
VERDICT = (
    "AGREEMENT POINTS: all of it.\n<verdict>\ndecision: CONSENSUS\nconvergence_score: 9\n"
    "remaining_disagreements: 0\nbase_solution: Agent A\nmodifications: none\n</verdict>"
)


def install(
    bin_dir: Path, names: tuple[str, ...] = ("claude", "codex", "gemini", "cursor-agent", "qwen")
) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    target = Path(__file__).resolve()
    for name in names:
        launcher = bin_dir / name
        launcher.write_text(
            f"#!{sys.executable}\nimport runpy\n"
            f"runpy.run_path({str(target)!r}, {{'FAKE_TOOL': {name!r}}}, '__main__')\n"
        )
        launcher.chmod(0o755)
    return bin_dir


def answer(prompt: str) -> str:
    if "FAKE_ANSWER" in os.environ:
        return os.environ["FAKE_ANSWER"]
    return VERDICT if "decision: CONSENSUS or CONTINUE" in prompt else SOLUTION


def shaped(tool: str, text: str) -> str:
    if tool == "claude":
        return json.dumps(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "duration_ms": 1520,
                "duration_api_ms": 1310,
                "num_turns": 1,
                "result": text,
                "session_id": "0d6a1c9e-2f0b-4a55-9d3c-6f1e2b7a8c90",
                "total_cost_usd": 0.0123,
                "usage": {
                    "input_tokens": 11,
                    "cache_creation_input_tokens": 5,
                    "cache_read_input_tokens": 100,
                    "output_tokens": 7,
                    "server_tool_use": {"web_search_requests": 0},
                    "service_tier": "standard",
                },
                "permission_denials": [],
                "uuid": "5b3a2c1d-0000-4000-8000-000000000001",
            }
        )
    if tool == "codex":
        events = [
            {"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"},
            {"type": "turn.started"},
            {
                "type": "item.completed",
                "item": {"id": "item_0", "type": "reasoning", "text": "**Thinking it through**"},
            },
            {
                "type": "item.completed",
                "item": {"id": "item_1", "type": "agent_message", "text": text},
            },
            {
                "type": "turn.completed",
                "usage": {"input_tokens": 120, "cached_input_tokens": 20, "output_tokens": 9},
            },
        ]
        return "\n".join(json.dumps(e) for e in events)
    if tool == "gemini":
        return json.dumps(
            {
                "response": text,
                "stats": {
                    "models": {
                        "gemini-2.5-pro": {
                            "api": {"totalRequests": 1, "totalErrors": 0, "totalLatencyMs": 900},
                            "tokens": {
                                "prompt": 50,
                                "candidates": 8,
                                "total": 70,
                                "cached": 10,
                                "thoughts": 12,
                                "tool": 0,
                            },
                        }
                    },
                    "tools": {"totalCalls": 0, "totalSuccess": 0, "totalFail": 0},
                    "files": {"totalLinesAdded": 0, "totalLinesRemoved": 0},
                },
            },
            indent=2,
        )
    if tool == "cursor-agent":
        return json.dumps(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "duration_ms": 3210,
                "duration_api_ms": 3210,
                "result": text,
                "session_id": "c6b62c6f-7ead-4fd6-9922-e952131177ff",
                "request_id": "10e11780-df2f-45dc-a1ff-4540af32e9c0",
            }
        )
    if tool == "qwen":
        return json.dumps(
            [
                {
                    "type": "system",
                    "subtype": "session_start",
                    "session_id": "s1",
                    "model": "qwen3-coder-plus",
                },
                {
                    "type": "assistant",
                    "session_id": "s1",
                    "message": {
                        "id": "m1",
                        "type": "message",
                        "role": "assistant",
                        "model": "qwen3-coder-plus",
                        "content": [{"type": "text", "text": text}],
                        "usage": {"input_tokens": 30, "output_tokens": 6},
                    },
                },
                {
                    "type": "result",
                    "subtype": "success",
                    "session_id": "s1",
                    "is_error": False,
                    "duration_ms": 1234,
                    "num_turns": 1,
                    "result": text,
                    "usage": {"input_tokens": 30, "output_tokens": 6},
                },
            ]
        )
    return text


def error_output(tool: str) -> str:
    if tool == "claude":
        return json.dumps(
            {
                "type": "result",
                "subtype": "success",
                "is_error": True,
                "result": "Invalid API key · Please run /login",
                "duration_ms": 5,
            }
        )
    if tool == "gemini":
        return json.dumps(
            {
                "error": {
                    "type": "Error",
                    "code": 429,
                    "message": "[API Error: 429 Too Many Requests] Quota exceeded",
                }
            }
        )
    if tool == "codex":
        return json.dumps(
            {"type": "turn.failed", "error": {"message": "unexpected status 401 Unauthorized"}}
        )
    return ""


def main() -> int:
    tool = str(globals().get("FAKE_TOOL") or Path(sys.argv[0]).name)
    args = sys.argv[1:]
    if args == ["--version"]:
        print(f"{tool} 9.9.9 (fake)")
        return 0
    prompt = args[-1] if tool == "cursor-agent" else sys.stdin.read()
    log = os.environ.get("FAKE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            entry = {"tool": tool, "argv": args, "prompt": prompt, "cwd": os.getcwd()}
            handle.write(json.dumps(entry) + "\n")
    mode = os.environ.get("FAKE_MODE", "ok")
    if mode in ("hang", "hang_escaped"):
        child = subprocess.Popen(  # a grandchild that would outlive us if not killed
            [sys.executable, "-c", "import time; time.sleep(120)"],
            start_new_session=mode == "hang_escaped",
        )
        Path(os.environ["FAKE_PIDFILE"]).write_text(str(child.pid))
        time.sleep(120)
        return 0
    if mode == "flood":
        chunk = "x" * 65536
        for _ in range(11 * 16 + 1):  # just over 11 MB
            sys.stdout.write(chunk)
        sys.stdout.flush()
        time.sleep(30)
        return 0
    if mode == "fail":
        print("Error: the agent crashed (segfault in the renderer)", file=sys.stderr)
        return 3
    if mode == "auth":
        print(error_output(tool))
        return 1
    if mode == "text":
        print(answer(prompt))
        return 0
    print(shaped(tool, answer(prompt)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
