"""The real coding CLIs in a code task, each against a fake of its vendor's API on loopback.

.ci/run installs the npm packages, at the exact versions it names, into .ci/node. Each test
runs tests/fakes/real_cli_run.py inside a network namespace of its own (`unshare -n`, or
`unshare -rn` when not root): the CLI, moot and the fake API see nothing but loopback. The fake
first asks the CLI to write a file into the user's repository, then answers with the tool calls
that read and edit calc.py; the test checks that the write outside was refused, that the edit
landed in the agent's worktree, that moot collected it as that agent's change, that `--verify`
ran on it, that the user's dirty repository is byte for byte unchanged, and that the same CLI
answers a text task with moot's read-only arguments, refusing the write the fake asks for there.

A CLI that is not installed is skipped with the reason, except under CI (env CI set), where
every npm CLI must run. cursor-agent is in no package registry: it is started only when found
on PATH, and then only to check that its parser accepts moot's arguments.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.code.test_code_tasks import git_env, repo, state
from tests.fakes.vendor_apis import ANSWER, DONE, NEW

__all__ = ["git_env", "repo"]  # fixtures used here, defined with the code-task tests

ROOT = Path(__file__).resolve().parents[2]
LOCAL_BIN = ROOT / ".ci" / "node" / "node_modules" / ".bin"
RUNNER = ROOT / "tests" / "fakes" / "real_cli_run.py"
TIMEOUT = 240  # seconds for one CLI's code task and text task (each call: 90 at most)


def _executable(name: str) -> str:
    """The pinned CLI from .ci/node, else one on PATH; skipped when missing, outside CI."""
    local = LOCAL_BIN / name
    found = str(local) if local.exists() else shutil.which(name)
    if found is None:
        message = f"{name} is not installed (.ci/run installs it into .ci/node)"
        if os.environ.get("CI"):
            pytest.fail(f"under CI every coding CLI must run: {message}")
        pytest.skip(message)
    return found


def _isolated() -> list[str]:
    """The prefix that gives a command a network namespace of its own: loopback only."""
    unshare = shutil.which("unshare")
    prefix = [unshare, "-n"] if os.geteuid() == 0 else [unshare, "-rn"]
    if unshare is None or subprocess.run([*prefix, "true"], capture_output=True).returncode:
        message = "cannot make a network namespace here (unshare -n)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return [str(p) for p in prefix]


def _version(executable: str) -> str:
    done = subprocess.run(
        [executable, "--version"],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        cwd="/",
    )
    return (done.stdout or done.stderr).strip().splitlines()[0]


@pytest.mark.parametrize("tool", ["claude", "codex", "gemini", "qwen"])
def test_the_real_cli_edits_its_worktree_and_moot_verifies_the_change(
    tool: str, repo: Path, tmp_path: Path
) -> None:
    executable = _executable(tool)
    prefix = _isolated()
    before = state(repo)
    out = tmp_path / "out.json"
    work = tmp_path / "work"
    args = [sys.executable, str(RUNNER), tool, executable, str(repo), str(work), str(out)]
    done = subprocess.run(
        [*prefix, *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
        cwd=repo,  # moot started in the user's repository, as a user does
    )
    api_log = work / "api.jsonl"
    requests = [json.loads(line) for line in api_log.read_text().splitlines()]
    assert done.returncode == 0 and out.exists(), done.stderr[-3000:]
    report: dict[str, Any] = json.loads(out.read_text())
    context = f"{_version(executable)}: {json.dumps(requests)[:3000]}\n{report}"[:8000]
    assert "error" not in report, report.get("error")
    # the CLI asked the fake, which answered with the read and edit tool calls, then the end
    calls = [r.get("answer") for r in requests]
    assert any(a not in (None, "text", "count", "404") for a in calls), context
    alias = report["alias"]
    # the edit landed in the agent's worktree ...
    assert report["worktree_calc"] == f"def add(a, b):\n{NEW}\n", context
    # ... moot collected it as that agent's change ...
    row = report["code"][alias]
    assert row["status"] == "completed" and row["files"] == 1, context
    assert f"+{NEW}" in report["patch"]
    # ... and the verify command ran on it, and passed
    [check] = row["checks"]
    assert check["exit_code"] == 0 and "calc.add(2, 3)" in check["command"]
    assert DONE in report["events"]  # the CLI's own answer, journaled
    # the fake's first tool call wrote into the user's repository: the CLI refused it
    assert requests[0].get("turn") == 0 and requests[0].get("answer") != "text", context
    assert not (repo / "escaped-by-agent.txt").exists(), context
    # the user's repository: tree, index, stash and branches untouched
    assert state(repo) == before
    # a text task: moot's read-only arguments are accepted and the answer comes back
    text = report["text_answer"]
    assert text["failure"] is None and text["text"] == ANSWER, text
    assert text["left"] == [], text  # read-only: the write the fake asked for was refused


def test_cursor_agent_accepts_moots_arguments() -> None:
    """cursor-agent ships through its own installer, in no package registry: when it is on
    PATH, start it for real with moot's arguments; a parse error fails, an auth error is
    fine (there is no key, and no network: loopback only)."""
    from moot.models.cli_agents import TOOLS

    found = shutil.which("cursor-agent")
    if found is None:
        pytest.skip("cursor-agent is not installed (its installer is not a package registry)")
    prefix = _isolated()
    tool = TOOLS["cursor-agent"]
    for code in (True, False):
        argv = [
            a.replace("{{CWD}}", "/tmp").replace("{{PROMPT}}", "Say OK.")
            for a in tool.argv("", code=code)
        ]
        done = subprocess.run(
            [*prefix, found, *argv],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            cwd="/tmp",
        )
        said = (done.stdout + done.stderr).lower()
        for parse_error in (
            "unknown option",
            "unknown argument",
            "invalid option",
            "error: option",
        ):
            assert parse_error not in said, said[-2000:]


def test_a_missing_cli_is_skipped_but_fails_under_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.modules[__name__], "LOCAL_BIN", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="under CI every coding CLI must run"):
        _executable("claude")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="claude is not installed"):
        _executable("claude")
