"""How moot starts each coding CLI: in a code task's worktree with the arguments that let it
edit there without asking, read-only everywhere else, never in moot's own working directory
(often the user's repository), not even for its `--version` probe; custom commands are never
probed at all. Also the human pick's answer by letter, and what `moot doctor` shows."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moot import api
from moot.models.base import CALL_CONTEXT, CallContext, ModelSettings, create_model
from moot.models.cli_agents import TOOLS
from moot.types import Completion, Message, Request
from tests.code.test_code_tasks import TASK, config, git_env, repo, state
from tests.fakes.fake_agent import install
from tests.scripts import no_sleep

__all__ = ["git_env", "repo"]  # fixtures used here, defined with the code-task tests

MOOT = str(Path(sys.executable).parent / "moot")


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "calls.jsonl"))
    return tmp_path / "calls.jsonl"


def calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def ask(
    model: Any, cwd: str | None = None, *, read_only: bool = False
) -> tuple[Completion, list[dict[str, Any]]]:
    """One call as a session makes it: in a worktree (`cwd`), in a judge's sandbox (`cwd`,
    `read_only`) or neither; returns what the call journaled as checkpoints."""
    recorded: list[dict[str, Any]] = []

    async def call() -> Completion:
        context = CallContext(
            "r0/solve/agent_a",
            "agent_a",
            (),
            recorded.append,
            lambda message: None,
            cwd,
            read_only,
        )
        token = CALL_CONTEXT.set(context)
        try:
            request = Request(messages=(Message(role="user", content="Fix it."),), timeout=20)
            completion: Completion = await model.complete(request)
            return completion
        finally:
            CALL_CONTEXT.reset(token)

    return asyncio.run(call()), recorded


EDIT_ARGS = {
    "claude": ["-p", "--output-format", "json", "--permission-mode", "acceptEdits"],
    "codex": [
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--sandbox",
        "workspace-write",
        "--cd",
        "{tree}",
        "-c",
        "sandbox_workspace_write.network_access=false",
        "-c",
        "sandbox_workspace_write.exclude_slash_tmp=true",
        "-c",
        "sandbox_workspace_write.exclude_tmpdir_env_var=true",
        "-",
    ],
    "gemini": ["--output-format", "json", "--approval-mode", "auto_edit", "--skip-trust"],
    "qwen": [
        "--output-format",
        "json",
        "--approval-mode",
        "default",
        "--allowed-tools",
        "edit(./**)",
    ],
    "cursor-agent": ["-p", "--output-format", "json", "--workspace", "{tree}", "--trust"],
}
READ_ARGS = {
    "claude": ["-p", "--output-format", "json", "--permission-mode", "dontAsk"],
    "codex": [
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--sandbox",
        "read-only",
        "--cd",
        "{tree}",
        "-",
    ],
    "gemini": ["--output-format", "json", "--approval-mode", "default", "--skip-trust"],
    "qwen": ["--output-format", "json", "--approval-mode", "default"],
    "cursor-agent": [
        "-p",
        "--output-format",
        "json",
        "--mode",
        "ask",
        "--workspace",
        "{tree}",
        "--trust",
    ],
}


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_in_a_worktree_each_tool_may_edit_there_without_asking(
    fakes: Path, tmp_path: Path, tool: str
) -> None:
    tree = tmp_path / "worktree"
    tree.mkdir()
    completion, _ = ask(create_model(f"cli:{tool}"), cwd=str(tree))
    assert completion.ok, completion.failure
    [call] = calls(fakes)
    argv = call["argv"][:-1] if tool == "cursor-agent" else call["argv"]  # the prompt last
    assert argv == [a.replace("{tree}", str(tree)) for a in EDIT_ARGS[tool]]
    assert call["cwd"] == str(tree)


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_outside_a_worktree_each_tool_is_read_only_in_an_empty_folder(
    fakes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str
) -> None:
    users = tmp_path / "users-project"
    users.mkdir()
    (users / "calc.py").write_text("x = 1\n")
    monkeypatch.chdir(users)
    completion, _ = ask(create_model(f"cli:{tool}"))
    assert completion.ok, completion.failure
    [call] = calls(fakes)
    ran_in = Path(call["cwd"])
    assert ran_in != users and not ran_in.exists()  # a temporary folder, removed afterwards
    argv = call["argv"][:-1] if tool == "cursor-agent" else call["argv"]
    assert argv == [a.replace("{tree}", str(ran_in)) for a in READ_ARGS[tool]]


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_a_judge_in_a_code_task_runs_in_its_sandbox_read_only(
    fakes: Path, tmp_path: Path, tool: str
) -> None:
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    completion, _ = ask(create_model(f"cli:{tool}"), cwd=str(sandbox), read_only=True)
    assert completion.ok, completion.failure
    [call] = calls(fakes)
    argv = call["argv"][:-1] if tool == "cursor-agent" else call["argv"]
    assert argv == [a.replace("{tree}", str(sandbox)) for a in READ_ARGS[tool]]
    assert call["cwd"] == str(sandbox)


def test_options_change_the_arguments_extra_before_the_prompt_args_replace_them(
    fakes: Path, tmp_path: Path
) -> None:
    tree = str(tmp_path)
    extra = ModelSettings(options={"extra_args": ["--add-dir", "/data"]})
    ask(create_model("cli:codex#gpt-5.2", extra), cwd=tree)
    own = ModelSettings(options={"args": ["exec", "--cd", "{{CWD}}", "-m", "{{MODEL}}", "-"]})
    ask(create_model("cli:codex#o3", own), cwd=tree)
    first, second = calls(fakes)
    assert first["argv"][:3] == ["exec", "--model", "gpt-5.2"]
    assert first["argv"][-3:] == ["--add-dir", "/data", "-"]  # before stdin's '-'
    assert second["argv"] == ["exec", "--cd", tree, "-m", "o3", "-"]


def test_the_version_probe_runs_in_an_empty_folder_with_stdin_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool that ignores `--version` and edits whatever is in its folder, reading stdin."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    probe_log = tmp_path / "probe.jsonl"
    script = bin_dir / "qwen"
    script.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        "entry = {'argv': sys.argv[1:], 'cwd': os.getcwd(), 'files': sorted(os.listdir('.')),"
        " 'stdin': sys.stdin.read()}\n"
        f"open({str(probe_log)!r}, 'a').write(json.dumps(entry) + '\\n')\n"
        "for name in os.listdir('.'):\n"
        "    if os.path.isfile(name):\n"
        "        open(name, 'a').write('edited by the probe\\n')\n"
        "print(json.dumps({'type': 'result', 'result': 'done'}))\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    users = tmp_path / "users-project"
    users.mkdir()
    (users / "calc.py").write_text("x = 1\n")
    monkeypatch.chdir(users)
    from moot.models import cli_process

    monkeypatch.setattr(cli_process, "_VERSIONS", {})
    completion, recorded = ask(create_model("cli:qwen"), cwd=str(tmp_path / "missing-is-fine"))
    probe = [e for e in calls(probe_log) if e["argv"] == ["--version"]]
    assert len(probe) == 1
    assert probe[0]["cwd"] != str(users) and probe[0]["files"] == [] and probe[0]["stdin"] == ""
    assert (users / "calc.py").read_text() == "x = 1\n"
    assert recorded[0]["cli_version"] == '{"type": "result", "result": "done"}'
    del completion


def test_a_custom_command_is_never_probed_its_path_and_hash_are_journaled(
    tmp_path: Path,
) -> None:
    log = tmp_path / "runs.jsonl"
    script = tmp_path / "my-agent"
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        "print('an answer')\n"
    )
    script.chmod(0o755)
    tree = tmp_path / "tree"
    tree.mkdir()
    completion, recorded = ask(create_model(f"cli:{script}"), cwd=str(tree))
    assert completion.ok, completion.failure
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert runs == [[]]  # one run, the call itself: no `--version`
    assert recorded == [
        {
            "cli": str(script),
            "executable": str(script),
            "sha256": hashlib.sha256(script.read_bytes()).hexdigest(),
        }
    ]


HEEDLESS = """#!{python}
# A custom coding command that ignores its arguments (`--version` too) and edits every file in
# its working folder: appends to each, creates one, removes one.
import os
for root, dirs, files in os.walk("."):
    dirs[:] = [d for d in dirs if d != ".git"]
    for name in files:
        if name != ".git":  # a worktree's link to its repository
            with open(os.path.join(root, name), "a") as handle:
                handle.write("edited\\n")
open("created-by-agent.txt", "w").write("new\\n")
if os.path.exists("untracked.txt"):
    os.remove("untracked.txt")
print("I edited everything.")
"""


def test_a_custom_command_run_from_the_users_dirty_repository_leaves_it_unchanged(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "bin" / "heedless"
    script.parent.mkdir()
    script.write_text(HEEDLESS.format(python=sys.executable))
    script.chmod(0o755)
    monkeypatch.chdir(repo)  # moot started in the user's repository, as a user does
    before = state(repo)
    agent = {"model": "cli:heedless", "options": {"command": str(script), "output": "text"}}
    run = api.start(TASK, config([agent, agent], repo, pick={"by": "none"}), sleep=no_sleep)
    assert state(repo) == before  # tree, index, stash and branches, byte for byte
    code = run.result.details["code"]
    assert all(row["files"] >= 1 for row in code.values())  # the edits landed in worktrees


def test_the_human_pick_takes_the_agents_letter(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from moot.engine.choice import read_choice

    options = ["agent_a", "agent_b", "agent_c"]
    for answer, chosen in (("B\n", "agent_b"), ("b\n", "agent_b"), ("c\n", "agent_c")):
        monkeypatch.setattr(sys, "stdin", io.StringIO(answer))
        assert asyncio.run(read_choice("Which change do you pick?", options)) == chosen
    monkeypatch.setattr(sys, "stdin", io.StringIO("2\n"))
    assert asyncio.run(read_choice("Pick", options)) == "agent_b"  # numbers still work
    monkeypatch.setattr(sys, "stdin", io.StringIO("z\n\n"))
    assert asyncio.run(read_choice("Pick", options)) is None
    assert "'z' is not one of the choices" in capsys.readouterr().err


def test_doctor_shows_the_version_and_each_command_line(fakes: Path, tmp_path: Path) -> None:
    script = tmp_path / "my-agent"
    script.write_text("#!/bin/sh\necho should-not-run >> " + str(tmp_path / "ran") + "\n")
    script.chmod(0o755)
    done = subprocess.run(
        [MOOT, "doctor", "--models", "cli:codex#o3", "--models", f"cli:{script}"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=os.environ,
    )
    out = done.stdout
    assert "codex 9.9.9 (fake)" in out, out + done.stderr
    bin_codex = str(tmp_path / "bin" / "codex")
    assert (
        f"code task: {bin_codex} exec --model o3 --json --skip-git-repo-check --sandbox "
        "workspace-write --cd {{CWD}} -c sandbox_workspace_write.network_access=false -c "
        "sandbox_workspace_write.exclude_slash_tmp=true -c "
        "sandbox_workspace_write.exclude_tmpdir_env_var=true - < {{PROMPT}}" in out
    ), out
    assert (
        f"text task: {bin_codex} exec --model o3 --json --skip-git-repo-check --sandbox "
        "read-only --cd {{CWD}} - < {{PROMPT}}" in out
    ), out
    assert f"sha256 {hashlib.sha256(script.read_bytes()).hexdigest()}" in out
    assert not (tmp_path / "ran").exists()  # doctor does not start a custom command either
