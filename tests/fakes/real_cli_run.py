"""One code task with one real coding CLI against a fake of its vendor's API, run inside a
network namespace of its own (tests/models/test_real_cli.py starts it under `unshare -n`):

    python tests/fakes/real_cli_run.py TOOL EXECUTABLE REPO WORK OUT

It brings up the namespace's loopback (nothing else is reachable), serves the fake API there
(which first asks the CLI to write a file into REPO, outside its worktree), points the CLI at
it through the CLI's own settings with its telemetry and update checks off,
runs `moot`'s pick protocol (`--pick none`, one verify command) on REPO with the agent
`cli:TOOL`, then asks the same agent one question outside any worktree (a text task, in a
folder of its own where the fake asks it to write a file: read-only, it must refuse). What
happened is written as JSON to OUT; the fake's request log to WORK/api.jsonl.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import struct
import sys
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from moot.config import read  # noqa: E402
from tests.fakes.vendor_apis import serving  # noqa: E402

TASK = "Fix add() in calc.py: it must return the sum."
VERIFY = f'{sys.executable} -c "import calc, sys; sys.exit(0 if calc.add(2, 3) == 5 else 1)"'
QUIET = {  # every CLI's telemetry, error reporting and update checks off
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_NON_ESSENTIAL_MODEL_CALLS": "1",
    "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
    "GEMINI_TELEMETRY_ENABLED": "false",
    "QWEN_TELEMETRY_ENABLED": "false",
    "OTEL_SDK_DISABLED": "true",
    "NO_UPDATE_NOTIFIER": "1",
    "GEMINI_CLI_NO_RELAUNCH": "true",  # no second node process (with a larger heap): faster
    "QWEN_CODE_NO_RELAUNCH": "true",
    "NO_BROWSER": "1",
    "CI": "1",
}
SETTINGS = {  # gemini's and qwen's settings.json: API key auth, no telemetry, no updates
    "security": {"auth": {"selectedType": "API_KEY"}, "folderTrust": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "enableAutoUpdate": False},
}


def loopback_up() -> None:
    """`ip link set lo up`, without needing iproute2: a new namespace's loopback is down."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(sock, 0x8913, request))[1]  # SIOCGIFFLAGS
        fcntl.ioctl(sock, 0x8914, struct.pack("16sh", b"lo", flags | 1))  # SIOCSIFFLAGS, UP


def agent(tool: str, url: str, home: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """The agent's config entry and the environment that points `tool` at `url`."""
    env: dict[str, str] = {}
    extra: list[str] = []
    model = "fake-model"
    if tool == "claude":
        model = "claude-sonnet-4-5"
        env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-ant-fake")
    elif tool == "codex":
        env.update(CODEX_HOME=str(home / ".codex"), FAKE_API_KEY="fake")
        (home / ".codex").mkdir(parents=True, exist_ok=True)
        for setting in (
            'model_provider="fake"',
            'model_providers.fake.name="fake"',
            f'model_providers.fake.base_url="{url}/v1"',
            'model_providers.fake.env_key="FAKE_API_KEY"',
            'model_providers.fake.wire_api="responses"',
            "model_providers.fake.request_max_retries=0",
            "model_providers.fake.stream_max_retries=0",
            "check_for_update_on_startup=false",
            "analytics.enabled=false",
            "feedback.enabled=false",
            'otel.exporter="none"',
        ):
            extra += ["-c", setting]
    elif tool == "gemini":
        model = "gemini-2.5-flash"
        env.update(GEMINI_API_KEY="fake", GOOGLE_GEMINI_BASE_URL=url)
        settings = dict(SETTINGS, security={"auth": {"selectedType": "gemini-api-key"}})
        (home / ".gemini").mkdir(parents=True, exist_ok=True)
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    elif tool == "qwen":
        env.update(OPENAI_API_KEY="fake", OPENAI_BASE_URL=f"{url}/v1", OPENAI_MODEL=model)
        settings = dict(SETTINGS, security={"auth": {"selectedType": "openai"}})
        settings["memory"] = {"enableManagedAutoMemory": False, "enableManagedAutoDream": False}
        (home / ".qwen").mkdir(parents=True, exist_ok=True)
        (home / ".qwen" / "settings.json").write_text(json.dumps(settings))
    spec = {"model": f"cli:{tool}#{model}", "timeout": 90, "options": {"extra_args": extra}}
    return spec, env


def text_task(spec: dict[str, Any], folder: Path) -> dict[str, Any]:
    """One question outside any worktree, run in `folder` (options.cwd) with the CLI's
    read-only arguments; returns the answer, the command line it ran and what `folder` holds
    afterwards (the fake asked the CLI to write a file there)."""
    import asyncio

    from moot.config import AgentConfig
    from moot.models.base import create_model
    from moot.types import Message, Request

    options = {**spec["options"], "cwd": str(folder)}
    agent = read(AgentConfig, {**spec, "options": options})
    model = create_model(agent.model, agent.settings())
    request = Request(messages=(Message(role="user", content="What is 6 x 7?"),), timeout=90)
    completion = asyncio.run(model.complete(request))
    failure = completion.failure.message if completion.failure else None
    line = model.command_line(code=False)  # type: ignore[attr-defined]
    left = sorted(p.name for p in folder.iterdir())
    return {"text": completion.text, "failure": failure, "command": line, "left": left}


def main() -> int:
    tool, executable, repo, work, out = sys.argv[1:6]
    work_dir = Path(work)
    home = work_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    loopback_up()
    report: dict[str, Any] = {}
    escape = str(Path(repo) / "escaped-by-agent.txt")  # in the user's repository
    text_folder = work_dir / "text-task"
    text_folder.mkdir()
    text_write = str(text_folder / "written-in-a-text-task.txt")
    with serving(work_dir / "api.jsonl", escape, text_write) as server:
        spec, env = agent(tool, server.url, home)
        os.environ.update(QUIET, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), **env)
        os.environ["PATH"] = f"{Path(executable).parent}{os.pathsep}{os.environ['PATH']}"
        from moot import api
        from moot.config import RunConfig

        config = RunConfig.read(
            {
                "protocol": "pick",
                "agents": [spec],
                "seed": 3,
                "code": {"repo": repo, "verify_commands": [VERIFY]},
                "pick": {"by": "none"},
                "engine": {"attempts": 1},  # a CLI that fails is not started again
            }
        )
        try:
            run = api.start(TASK, config)
            alias = next(iter(run.result.agents))
            folder = run.folder
            patch = folder / "patches" / f"{alias}.patch"
            calc = folder / "worktrees" / alias / "calc.py"
            report = {
                "exit_code": run.exit_code,
                "alias": alias,
                "folder": str(folder),
                "code": run.result.details.get("code"),
                "patch": patch.read_text() if patch.exists() else None,
                "worktree_calc": calc.read_text() if calc.exists() else None,
                "events": (folder / "events.jsonl").read_text()[-20000:],
            }
            report["text_answer"] = text_task(spec, text_folder)
        except Exception:
            report = {"error": traceback.format_exc()}
    Path(out).write_text(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
