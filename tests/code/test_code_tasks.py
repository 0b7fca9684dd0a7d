"""Code tasks end to end, against real git repositories made by each test: agents in worktrees
(a scripted coding CLI that edits files, API-style scripted agents answering with diffs),
verify commands, `pick` with a human choice and with a judge, `moot apply` / `clean` /
`doctor`, and a SIGKILL during the agents' work."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from moot import api
from moot.config import RunConfig
from moot.engine.store import find_session
from moot.errors import MootError, WorkspaceError
from moot.lifecycle.code import apply_session, clean, live_worktrees, strays
from moot.lifecycle.plan import resolve
from moot.lifecycle.projection import estimate, render
from tests.scripts import no_sleep
from tests.waiting import asks, wait_for_journal, wait_until

MOOT = str(Path(sys.executable).parent / "moot")
TASK = "Fix add() in calc.py: it must return the sum."
CALC = "def add(a, b):\n    return a - b\n"


def diff(new: str, old: str = "    return a - b", head: str = "def add(a, b):") -> str:
    return (
        "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n"
        f" {head}\n-{old}\n+{new}\n"
    )


GOOD = diff("    return a + b")
WRONG = diff("    return a * b")  # applies, fails verification
STALE = diff("    return a + b", head="def sub(a, b):")  # does not apply
VERIFY = f'{sys.executable} -c "import calc, sys; sys.exit(0 if calc.add(2, 3) == 5 else 1)"'

AGENTS = f"""
import json, os
from pathlib import Path

GOOD = {GOOD!r}
WRONG = {WRONG!r}
STALE = {STALE!r}
LOG = Path(os.environ["AGENT_LOG"])


def _log(name, request):
    with LOG.open("a") as handle:
        prompt = "\\n".join(m.content for m in request.messages)
        entry = {{"agent": name, "step": request.meta["step"], "prompt": prompt}}
        handle.write(json.dumps(entry) + "\\n")


def good(request):
    _log("good", request)
    return "Here is the fix.\\n```diff\\n" + GOOD + "```\\n"


def wrong(request):
    _log("wrong", request)
    return "```diff\\n" + WRONG + "```"


def stale(request):
    _log("stale", request)
    return "```diff\\n" + STALE + "```"


def chatty(request):
    _log("chatty", request)
    if request.meta["step"].endswith("/reapply"):
        return GOOD
    return "I would change the minus into a plus."


def judge(request):
    import re
    _log("judge", request)
    text = request.messages[-1].content
    winner = None
    for label, block in re.findall(
        r'from="(Agent [A-Z]) verification" id="[0-9a-f]+v">(.*?)</quoted', text, re.S
    ):
        if "[passed]" in block:
            winner = label
    return "The one whose verification passed is best. WINNER: " + str(winner)
"""

ARENA = """
import re


def _reply(request, diff):
    step = request.meta["step"]
    text = request.messages[-1].content
    if "/solve/" in step:
        return "My fix:\\n```diff\\n" + diff + "```"
    if "/evaluate/" in step:
        return "Strengths: short. Weaknesses: none. Errors: none."
    if "/revise/" in step:
        return "I keep my change as it is."
    base = "merged"
    quoted = r'from="(Agent [A-Z])" id="[0-9a-f]+">(.*?)</quoted'
    for label, block in re.findall(quoted, text, re.S):
        if "[passed]" in block:
            base = label
    return ("AGREEMENT POINTS: all.\\n<verdict>\\ndecision: CONSENSUS\\n"
            "convergence_score: 9\\nremaining_disagreements: 0\\n"
            f"base_solution: {base}\\nmodifications: none\\n</verdict>")


def arena_good(request):
    _log("arena_good", request)
    return _reply(request, GOOD)


def arena_wrong(request):
    _log("arena_wrong", request)
    return _reply(request, WRONG)
"""

EDITOR = '''#!{python}
"""A coding CLI stand-in: edits calc.py in its working folder, answers in text."""
import os, sys, time
from pathlib import Path
if "--version" in sys.argv:
    print("editor 1.0")
    sys.exit(0)
prompt = sys.stdin.read()
with open(os.environ["AGENT_LOG"], "a") as log:
    log.write('{{"agent": "editor", "cwd": "%s"}}\\n' % os.getcwd())
hold = os.environ.get("EDITOR_HOLD")
if hold and not Path(hold + ".release").exists():
    Path(hold + ".tmp").write_text(str(os.getpid()))
    os.replace(hold + ".tmp", hold)  # whole: the test reads the pid once the file exists
    time.sleep(60)
Path("calc.py").write_text(Path("calc.py").read_text().replace("a - b", "a + b"))
Path("NEWS.md").write_text("add() returns the sum\\n")
print("I fixed add() and wrote NEWS.md.")
'''


def sh(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "--no-optional-locks", *args], cwd=cwd, capture_output=True, check=True
    )
    return done.stdout.decode()


@pytest.fixture(autouse=True)
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Test User")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "test@example.invalid")
    monkeypatch.setenv("AGENT_LOG", str(tmp_path / "agents.log"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository in a dirty state: staged, unstaged, untracked and ignored files."""
    root = tmp_path / "project"
    root.mkdir()
    sh(root, "init", "-q", "-b", "main")
    (root / "calc.py").write_text(CALC)
    (root / "README.md").write_text("calc\n")
    (root / ".gitignore").write_text(".env\n__pycache__/\n")
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "first")
    (root / "staged.txt").write_text("staged\n")
    sh(root, "add", "staged.txt")
    (root / "README.md").write_text("calc, unstaged edit\n")
    (root / "untracked.txt").write_text("untracked\n")
    (root / ".env").write_text("SECRET=1\n")
    return root


@pytest.fixture
def agents_file(tmp_path: Path) -> Path:
    path = tmp_path / "agents.py"
    path.write_text(AGENTS + ARENA)
    return path


@pytest.fixture
def editor(tmp_path: Path) -> Path:
    path = tmp_path / "bin" / "editor"
    path.parent.mkdir()
    path.write_text(EDITOR.format(python=sys.executable))
    path.chmod(0o755)
    return path


def state(root: Path) -> dict[str, Any]:
    """Everything of the user's repository a code task must not change, byte for byte."""
    files = {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts and "__pycache__" not in p.parts
    }
    return {
        "files": files,
        "index": (root / ".git" / "index").read_bytes(),
        "status": sh(root, "status", "--porcelain=v2", "--untracked-files=all"),
        # the user's own branches (moot's agents work on moot/<session>/<alias> ones)
        "branches": [
            b
            for b in sh(root, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
            if not b.startswith(("refs/heads/moot/", "refs/moot/"))
        ],
        "stash": sh(root, "stash", "list"),
        "head": sh(root, "rev-parse", "HEAD"),
    }


def _asked_by(suffix: str, folder: Any) -> Callable[[list[dict[str, Any]]], bool]:
    """A journal predicate: the agent whose spec ends with `#suffix` has an ask line."""

    def predicate(events: list[dict[str, Any]]) -> bool:
        if not asks(events):
            return False
        aliases = json.loads(folder.session_json.read_text())["aliases"]
        alias = next(a for a, spec in aliases.items() if spec.endswith(f"#{suffix}"))
        return any(e["data"].get("agent") == alias for e in asks(events))

    return predicate


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def log(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "agents.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def config(specs: list[Any], repo: Path, **extra: Any) -> RunConfig:
    agents = [s if isinstance(s, dict) else {"model": s} for s in specs]
    data: dict[str, Any] = {
        "protocol": "pick",
        "agents": agents,
        "seed": 3,
        "code": {"repo": str(repo), "verify_commands": [VERIFY]},
        **extra,
    }
    return RunConfig.read(data)


def by_spec(run: api.RunResult) -> dict[str, str]:
    """model spec's function name -> alias."""
    return {u.model.rsplit("#", 1)[-1]: a for a, u in run.result.agents.items()}


async def choose_first(prompt: str, options: Any) -> str | None:
    return str(next(iter(options)))


def test_agents_start_from_the_exact_dirty_state_and_edit_only_their_worktree(
    repo: Path, agents_file: Path, editor: Path, tmp_path: Path
) -> None:
    before = state(repo)
    cli_agent = {"model": "cli:editor", "options": {"command": str(editor), "output": "text"}}
    run = api.start(
        TASK,
        config([cli_agent, f"scripted:{agents_file}#good"], repo, pick={"by": "none"}),
        sleep=no_sleep,
    )
    assert state(repo) == before  # the user's tree, index and branches: untouched
    folder = run.folder
    trees = sorted((folder / "worktrees").iterdir())
    assert [t.name for t in trees if t.is_dir()] == ["agent_a", "agent_b"]
    for tree in trees:
        if not tree.is_dir():
            continue
        assert (tree / "staged.txt").read_text() == "staged\n"
        assert (tree / "README.md").read_text() == "calc, unstaged edit\n"
        assert (tree / "untracked.txt").read_text() == "untracked\n"
        assert not (tree / ".env").exists()  # ignored files (secrets) are not copied
        assert "a + b" in (tree / "calc.py").read_text()
    # the coding CLI ran in its own worktree, not in the user's repository
    editor_alias = next(a for a, u in run.result.agents.items() if u.model == "cli:editor")
    cwd = next(e["cwd"] for e in log(tmp_path) if e["agent"] == "editor")
    assert Path(cwd) == folder / "worktrees" / editor_alias
    code = run.result.details["code"]
    assert code[editor_alias]["files"] == 2  # calc.py and NEWS.md
    assert all(row["status"] == "completed" for row in code.values())
    assert all(row["checks"][0]["exit_code"] == 0 for row in code.values())
    patch = (folder / "patches" / f"{editor_alias}.patch").read_text()
    assert "+    return a + b" in patch and "NEWS.md" in patch
    assert "passed" in (folder / "patches" / f"{editor_alias}.verify.txt").read_text()
    assert run.result.details["winner"] is None and run.exit_code == 2
    # the API agent saw the repository listing, not the ignored secret
    prompt = next(e["prompt"] for e in log(tmp_path) if e["agent"] == "good")
    assert "calc.py" in prompt and "SECRET" not in prompt
    assert api.replay(run.session_id).identical is True  # replay touches no git


def test_diffs_good_malformed_and_not_applying(
    repo: Path, agents_file: Path, tmp_path: Path
) -> None:
    specs = [f"scripted:{agents_file}#{name}" for name in ("good", "chatty", "stale")]
    run = api.start(TASK, config(specs, repo, pick={"by": "none"}), sleep=no_sleep)
    aliases = by_spec(run)
    code = run.result.details["code"]
    assert code[aliases["good"]]["status"] == "completed"
    # no diff at first: asked once more with the reason, then its diff applied
    assert code[aliases["chatty"]]["status"] == "completed"
    chatty_steps = [e["step"] for e in log(tmp_path) if e["agent"] == "chatty"]
    assert chatty_steps == ["r0/work/" + aliases["chatty"], f"r0/work/{aliases['chatty']}/reapply"]
    reask = next(e["prompt"] for e in log(tmp_path) if e["step"].endswith("/reapply"))
    assert "holds no unified diff" in reask
    # a diff that does not apply: git's error goes back once, then the attempt failed
    stale = code[aliases["stale"]]
    assert stale["status"] == "failed" and "did not apply twice" in stale["problem"]
    stale_prompts = [e["prompt"] for e in log(tmp_path) if e["agent"] == "stale"]
    assert len(stale_prompts) == 2 and "calc.py" in stale_prompts[1].rsplit("could not be", 1)[1]
    tree = run.folder / "worktrees" / aliases["stale"]
    assert (tree / "calc.py").read_text() == CALC  # nothing half applied


def test_judge_sees_both_verification_results_and_picks_the_passing_change(
    repo: Path, agents_file: Path, tmp_path: Path
) -> None:
    specs = [f"scripted:{agents_file}#{name}" for name in ("good", "wrong")]
    run = api.start(
        TASK,
        config(specs, repo, pick={"by": "judge", "judge": f"scripted:{agents_file}#judge"}),
        sleep=no_sleep,
    )
    aliases = by_spec(run)
    prompt = next(e["prompt"] for e in log(tmp_path) if e["agent"] == "judge")
    assert "[passed]" in prompt and "[failed (exit code 1)]" in prompt
    assert "+    return a + b" in prompt and "+    return a * b" in prompt
    assert run.result.details["winner"] == aliases["good"]
    assert run.exit_code == 0
    good = "Agent " + aliases["good"].rsplit("_", 1)[-1].upper()
    judge = f"scripted:{agents_file}#judge"
    assert run.result.trust == (
        f"A judge model ({judge}) chose {good}'s change; its verify commands passed 1/1."
        " No other agent reviewed it."
    )
    before = state(repo)["files"]
    done = apply_session(find_session(run.session_id))
    assert done.alias == aliases["good"]
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    after = state(repo)["files"]
    assert {k: v for k, v in after.items() if k != "calc.py"} == {
        k: v for k, v in before.items() if k != "calc.py"
    }
    assert sh(repo, "rev-parse", "HEAD") == state(repo)["head"]  # not committed
    assert live_worktrees(find_session(run.session_id)) == 0  # cleaned after apply
    assert "moot/" not in sh(repo, "branch", "--list", "--all")


def test_pick_with_a_human_choice_on_stdin_then_apply(
    repo: Path, agents_file: Path, tmp_path: Path
) -> None:
    specs = [f"scripted:{agents_file}#good", f"scripted:{agents_file}#wrong"]
    args = [MOOT, "run", TASK, "--protocol", "pick", "--seed", "3", "--verify", VERIFY]
    for spec in specs:
        args += ["--models", spec]
    args += ["--repo", str(repo)]
    done = subprocess.run(args, input="2\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Which change do you pick?" in done.stderr
    session = done.stdout.split("Session ", 1)[1].split(":", 1)[0]
    result = json.loads((find_session(session).result_json).read_text())
    second = sorted(result["details"]["code"])[1]
    assert result["details"]["winner"] == second
    assert f"{second}: completed" in done.stdout and "verify" in done.stdout
    # a choice, not agents agreeing: the outcome line does not call it a consensus
    assert f"Session {session}: change chosen: " in done.stdout
    # the choice is journaled: replay gives the same winner without asking
    again = subprocess.run([MOOT, "replay", session], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "Identical" in again.stdout
    applied = subprocess.run(
        [MOOT, "apply", session, "--commit"], capture_output=True, text=True, timeout=60
    )
    assert applied.returncode == 0, applied.stderr
    wanted = "a + b" if result["agents"][second]["model"].endswith("#good") else "a * b"
    assert wanted in (repo / "calc.py").read_text()
    assert "calc.py" in sh(repo, "show", "--name-only", "HEAD")
    assert "staged.txt" not in sh(repo, "show", "--name-only", "HEAD")  # only the change


def test_apply_merges_a_clean_change_since_and_refuses_a_conflicting_one(
    repo: Path, agents_file: Path
) -> None:
    specs = [f"scripted:{agents_file}#good"]
    run = api.start(TASK, config(specs, repo), sleep=no_sleep, chooser=choose_first)
    folder = find_session(run.session_id)
    # a conflicting edit of the same line: refused, nothing touched
    (repo / "calc.py").write_text("def add(a, b):\n    return b - a\n")
    before = state(repo)
    with pytest.raises(WorkspaceError, match="conflict"):
        apply_session(folder, keep=True)
    assert state(repo) == before
    # edits since, elsewhere: merged three-way, the user's edits kept
    (repo / "calc.py").write_text(CALC)
    (repo / "README.md").write_text("calc, edited again after the session began\n")
    (repo / "later.txt").write_text("new\n")
    done = apply_session(folder)
    assert done.applied.three_way
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (repo / "README.md").read_text() == "calc, edited again after the session began\n"
    assert (repo / "later.txt").read_text() == "new\n"


def test_a_bad_repository_fails_at_once_and_creates_nothing(
    tmp_path: Path, agents_file: Path, isolated: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    args = [MOOT, "run", TASK, "--protocol", "pick", "--models", f"scripted:{agents_file}#good"]
    args.append(f"--repo={plain}")
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "is not inside a git repository" in done.stderr
    assert not (isolated / "sessions").exists() or not any((isolated / "sessions").iterdir())
    empty = tmp_path / "empty"
    empty.mkdir()
    sh(empty, "init", "-q")
    done = subprocess.run([*args[:-1], f"--repo={empty}"], capture_output=True, text=True)
    assert done.returncode == 1 and "commit" in done.stderr
    with pytest.raises(MootError, match="--repo"):
        api.start(
            TASK,
            replace(config([f"scripted:{agents_file}#good"], empty), code=None),
            sleep=no_sleep,
        )


def test_a_nested_repository_or_a_context_glob_matching_nothing_leaves_nothing(
    repo: Path, agents_file: Path, isolated: Path, tmp_path: Path
) -> None:
    before = state(repo)
    specs = [f"scripted:{agents_file}#good"]
    with pytest.raises(WorkspaceError, match="--context 'docs/\\*\\*' matches no file"):
        api.start(
            TASK,
            config(specs, repo, code={"repo": str(repo), "context": ["docs/**"]}),
            sleep=no_sleep,
        )
    nested = repo / "vendor" / "lib"
    nested.mkdir(parents=True)
    sh(nested, "init", "-q")
    (nested / "code.c").write_text("int x;\n")
    sh(nested, "add", "-A")
    sh(nested, "commit", "-q", "-m", "nested")
    with pytest.raises(WorkspaceError, match="vendor/lib"):
        api.start(TASK, config(specs, repo), sleep=no_sleep)
    shutil.rmtree(repo / "vendor")
    assert state(repo) == before
    assert sh(repo, "for-each-ref") == sh(repo, "for-each-ref", "refs/heads/main")
    assert not (repo / ".git" / "moot" / "sessions").exists() or not any(
        (repo / ".git" / "moot" / "sessions").iterdir()
    )
    sessions = isolated / "sessions"
    assert not sessions.exists() or not any(sessions.iterdir())


def test_sigkill_during_the_work_then_resume_asks_nobody_twice_and_clean_leaves_nothing(
    repo: Path, agents_file: Path, editor: Path, tmp_path: Path
) -> None:
    hold = tmp_path / "hold"
    toml = tmp_path / "moot.toml"
    toml.write_text(
        textwrap.dedent(
            f"""
            protocol = "pick"
            seed = 5
            [[agents]]
            model = "cli:editor"
            options = {{ command = "{editor}", output = "text" }}
            [[agents]]
            model = "scripted:{agents_file}#good"
            [pick]
            by = "none"
            [code]
            repo = "{repo}"
            verify_commands = ['{VERIFY}']
            """
        )
    )
    env = {**os.environ, "EDITOR_HOLD": str(hold)}
    process = subprocess.Popen(
        [MOOT, "run", TASK, "--config", str(toml)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_until(hold.exists, "the editor to start", alive=lambda: process.poll() is None)
    folder = find_session(None)
    # the API agent's turn (instant) is journaled while the editor holds
    wait_for_journal(
        folder.path,
        _asked_by("good", folder),
        "the API agent's ask in the journal",
        alive=lambda: process.poll() is None,
    )
    os.kill(process.pid, signal.SIGKILL)
    process.wait(30)
    assert live_worktrees(folder) == 2
    Path(str(hold) + ".release").write_text("")
    asked_before = [e["agent"] for e in log(tmp_path)]
    assert asked_before.count("good") == 1
    done = subprocess.run(
        [MOOT, "resume", folder.id], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr  # finished; no winner picked (by = none)
    asked = [e["agent"] for e in log(tmp_path)]
    assert asked.count("good") == 1  # the journaled answer was not asked again
    assert asked.count("editor") == 2  # killed mid-call, so asked again
    result = json.loads(folder.result_json.read_text())
    assert all(r["status"] == "completed" for r in result["details"]["code"].values())
    listed = subprocess.run([MOOT, "list"], capture_output=True, text=True, timeout=60)
    assert "worktrees: 2 still exist" in listed.stdout
    clean(folder)
    assert sh(repo, "worktree", "list").count("\n") == 1
    assert "moot" not in sh(repo, "branch", "--list", "--all")
    assert strays(repo) == []


def test_the_arena_on_a_code_task_judges_diffs_with_their_verification(
    repo: Path, agents_file: Path, tmp_path: Path
) -> None:
    specs = [f"scripted:{agents_file}#arena_{name}" for name in ("good", "wrong")]
    before = state(repo)
    run = api.start(
        TASK, config(specs, repo, protocol="arena", arena={"max_rounds": 1}), sleep=no_sleep
    )
    assert state(repo) == before
    aliases = by_spec(run)
    judged = [e["prompt"] for e in log(tmp_path) if "/verify/" in e["step"]]
    assert len(judged) == 1
    # both changes, with both verification results, quoted as untrusted text
    assert "[passed]" in judged[0] and "[failed (exit code 1)]" in judged[0]
    assert "+    return a + b" in judged[0] and "+    return a * b" in judged[0]
    assert judged[0].count("<quoted from=") >= 2
    # two different changes: the judge's CONSENSUS is not borne out, its base is still the winner
    assert not run.result.consensus and run.exit_code == 2
    assert run.result.details["winner"] == aliases["arena_good"]
    assert "+    return a + b" in run.result.final_answer
    apply_session(find_session(run.session_id))
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_moot_stop_cancels_a_running_session_and_finished_agents_stay_selectable(
    repo: Path, agents_file: Path, editor: Path, tmp_path: Path
) -> None:
    hold = tmp_path / "hold"
    env = {**os.environ, "EDITOR_HOLD": str(hold)}
    toml = tmp_path / "moot.toml"
    toml.write_text(
        f'protocol = "pick"\nseed = 5\n[[agents]]\nmodel = "cli:editor"\n'
        f'options = {{ command = "{editor}", output = "text" }}\n'
        f'[[agents]]\nmodel = "scripted:{agents_file}#good"\n[code]\nrepo = "{repo}"\n'
    )
    process = subprocess.Popen(
        [MOOT, "run", TASK, "--config", str(toml)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_until(hold.exists, "the editor to start", alive=lambda: process.poll() is None)
    editor_pid = int(hold.read_text())
    folder = find_session(None)
    # the finished agent this test selects after the stop: its answer is in the journal first
    wait_for_journal(
        folder.path,
        _asked_by("good", folder),
        "the API agent's ask in the journal",
        alive=lambda: process.poll() is None,
    )
    stopped = subprocess.run([MOOT, "stop", folder.id], capture_output=True, text=True, timeout=30)
    assert stopped.returncode == 0 and f"process {process.pid}" in stopped.stdout
    assert process.wait(30) == 130
    wait_until(lambda: not _running(editor_pid), "the agent's process to end with the run")
    with pytest.raises(ProcessLookupError):  # the agent's process was ended with the run
        os.kill(editor_pid, 0)
    meta = json.loads(folder.session_json.read_text())
    good = next(a for a, spec in meta["aliases"].items() if spec.endswith("#good"))
    done = apply_session(folder, good)
    assert done.alias == good
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_doctor_reports_and_prunes_worktrees_whose_session_is_gone(
    repo: Path, agents_file: Path, isolated: Path
) -> None:
    run = api.start(
        TASK,
        config([f"scripted:{agents_file}#good"], repo, pick={"by": "none"}),
        sleep=no_sleep,
    )
    # a worktree root outside the session folder, so the worktrees outlive the folder
    root = isolated.parent / "elsewhere"
    code = {"repo": str(repo), "worktree_root": str(root)}
    other = api.start(
        TASK,
        config([f"scripted:{agents_file}#good"], repo, pick={"by": "none"}, code=code),
        sleep=no_sleep,
    )
    shutil.rmtree(other.folder)
    report = subprocess.run(
        [MOOT, "doctor", "--models", f"scripted:{agents_file}#good"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert f"stray: session {other.session_id}" in report.stdout
    assert run.session_id not in report.stdout  # its folder exists: not a stray
    assert "moot doctor --prune" in report.stdout
    pruned = subprocess.run(
        [MOOT, "doctor", "--prune"], cwd=repo, capture_output=True, text=True, timeout=60
    )
    assert pruned.returncode == 0 and "pruned 1 worktree" in pruned.stdout
    listed = sh(repo, "worktree", "list")
    assert other.session_id not in listed and run.session_id in listed
    assert strays(repo) == []


def test_the_live_board_shows_each_agents_diff_stats_and_verification(
    repo: Path, agents_file: Path
) -> None:
    specs = [f"scripted:{agents_file}#{name}" for name in ("good", "wrong")]
    run = api.start(TASK, config(specs, repo, pick={"by": "none"}), sleep=no_sleep)
    env = {**os.environ, "COLUMNS": "200"}
    shown = subprocess.run(
        [MOOT, "status", run.session_id], capture_output=True, text=True, env=env, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    assert "Change" in shown.stdout
    assert "1 files +1 -1; verify 1/1" in shown.stdout  # the good change
    assert "1 files +1 -1; verify 0/1" in shown.stdout  # the wrong one


def test_the_live_view_stops_drawing_while_the_user_picks() -> None:
    import io

    from rich.console import Console

    from moot.display.live import LiveView
    from moot.types import Event, EventKind

    out = io.StringIO()
    face = LiveView(Console(file=out, force_terminal=True, width=100), auto_refresh=False)
    meta = {"session_id": "s", "protocol": "pick", "task": "t", "aliases": {"agent_a": "x:y"}}
    with face:
        face(Event(kind=EventKind.OPENED, data={"meta": meta, "past": []}, ts=1.0))
        assert face._live.is_started
        with face.paused():
            assert not face._live.is_started
            face(Event(kind=EventKind.RUN_STARTED, data={"pid": 1}, ts=2.0))
            assert not face._live.is_started  # an event while the user types draws nothing
        assert face._live.is_started


def test_repo_without_a_value_is_the_current_repository_and_verify_has_a_timeout(
    repo: Path, agents_file: Path
) -> None:
    toml = repo.parent / "code.toml"
    toml.write_text('[code]\nrepo = "unused"\nverify_timeout = 0.5\n')
    args = [MOOT, "run", TASK, "--protocol", "pick", "--pick", "none", "--config", str(toml)]
    args += ["--models", f"scripted:{agents_file}#good", "--verify", "sleep 30", "--repo"]
    started = time.monotonic()
    done = subprocess.run(args, cwd=repo / "..", capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "is not inside a git repository" in done.stderr
    done = subprocess.run(args, cwd=repo, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr  # no winner picked: --pick none
    assert time.monotonic() - started < 20  # the verify command was killed at its timeout
    session = done.stdout.split("Session ", 1)[1].split(":", 1)[0]
    result = json.loads(find_session(session).result_json.read_text())
    assert result["details"]["winner"] is None
    (check,) = next(iter(result["details"]["code"].values()))["checks"]
    assert check["timed_out"] is True and check["command"] == "sleep 30"
    assert "verify 0/1" in done.stdout
    assert (
        Path(json.loads(find_session(session).session_json.read_text())["config"]["code"]["repo"])
        == repo.resolve()
    )


def test_a_verify_command_that_times_out_leaves_no_process_behind(
    repo: Path, agents_file: Path, tmp_path: Path
) -> None:
    pidfile = tmp_path / "escaped.pid"
    command = f"setsid sleep 300 & echo $! > {pidfile}; sleep 30"
    code = {"repo": str(repo), "verify_commands": [command], "verify_timeout": 1.0}
    run = api.start(
        TASK,
        config([f"scripted:{agents_file}#good"], repo, pick={"by": "none"}, code=code),
        sleep=no_sleep,
    )
    (check,) = next(iter(run.result.details["code"].values()))["checks"]
    assert check["timed_out"] is True
    escaped = int(pidfile.read_text())
    wait_until(
        lambda: not _alive(escaped), "the verify command's setsid'd child to end after its timeout"
    )


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_a_protocol_without_code_tasks_refuses_repo(repo: Path, agents_file: Path) -> None:
    args = [MOOT, "run", TASK, "--protocol", "court", "--repo", str(repo)]
    for _ in range(2):
        args += ["--models", f"scripted:{agents_file}#good"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "the court protocol does not run code tasks (--repo)" in done.stderr
    assert "arena" in done.stderr and "pick" in done.stderr


def test_moot_run_from_inside_the_repository_keeps_its_folder_out_of_git(
    repo: Path, agents_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the reviewer's setup: moot's home in the repository itself (an older moot's default,
    # `.moot/` under the working directory), `moot run ... --repo .` there
    monkeypatch.setenv("MOOT_HOME", str(repo / ".moot"))
    monkeypatch.chdir(repo)
    status = sh(repo, "status", "--porcelain", "--untracked-files=all")
    spec = f"scripted:{agents_file}#good"
    runs = [api.start(TASK, config([spec], repo, pick={"by": "none"}), sleep=no_sleep)]
    runs.append(api.start(TASK, config([spec], repo, pick={"by": "none"}), sleep=no_sleep))
    first, second = (r.folder for r in runs)
    assert first.is_relative_to(repo / ".moot") and second.is_relative_to(repo / ".moot")
    assert sh(repo, "status", "--porcelain", "--untracked-files=all") == status
    baseline = f"refs/moot/{second.name}/baseline"
    listed = sh(repo, "ls-tree", "-r", "--name-only", baseline).split()
    assert not [p for p in listed if p.startswith(".moot")]
    tree = second / "worktrees" / "agent_a"
    assert not (tree / ".moot").exists() and (tree / "untracked.txt").exists()


def test_apply_of_an_agent_without_a_change_says_so(repo: Path, agents_file: Path) -> None:
    specs = [f"scripted:{agents_file}#good", f"scripted:{agents_file}#stale"]
    run = api.start(TASK, config(specs, repo, pick={"by": "none"}), sleep=no_sleep)
    stale = by_spec(run)["stale"]
    before = state(repo)
    with pytest.raises(MootError) as failed:
        apply_session(find_session(run.session_id), stale)
    assert str(failed.value).startswith(
        f"{stale} made no change (it failed: its diff did not apply"
    )
    assert str(failed.value).endswith("; nothing to apply")
    assert state(repo) == before


def test_apply_takes_the_agent_as_the_reports_name_it(repo: Path, agents_file: Path) -> None:
    """The outputs say 'Agent A'; `moot apply --agent "Agent A"` means agent_a."""
    specs = [f"scripted:{agents_file}#good", f"scripted:{agents_file}#wrong"]
    run = api.start(TASK, config(specs, repo, pick={"by": "none"}), sleep=no_sleep)
    good = by_spec(run)["good"]
    label = good.replace("_", " ").title()  # agent_b -> Agent B
    done = apply_session(find_session(run.session_id), label)
    assert done.alias == good
    assert (repo / "calc.py").read_text() == CALC.replace("a - b", "a + b")


def test_apply_when_no_agent_has_a_change_suggests_none(repo: Path, agents_file: Path) -> None:
    specs = [f"scripted:{agents_file}#stale", f"scripted:{agents_file}#stale"]
    run = api.start(TASK, config(specs, repo, pick={"by": "none"}), sleep=no_sleep)
    assert run.exit_code != 0
    with pytest.raises(MootError) as failed:
        apply_session(find_session(run.session_id))
    message = str(failed.value)
    assert f"no agent of session {run.session_id} made a change" in message
    assert "--agent" not in message and "agent_a" not in message.split("change", 1)[1]


def test_a_failed_session_removes_the_worktrees_that_hold_no_change(
    repo: Path, agents_file: Path
) -> None:
    specs = [f"scripted:{agents_file}#stale", f"scripted:{agents_file}#stale"]
    args = [MOOT, "run", TASK, "--protocol", "pick", "--pick", "none", "--seed", "3"]
    for spec in specs:
        args += ["--models", spec]
    done = subprocess.run([*args, "--repo", str(repo)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    session = done.stdout.split("Session ", 1)[1].split(":", 1)[0]
    assert "removed the worktrees that held no change (agent_a, agent_b)" in done.stdout
    assert f"moot clean {session}" in done.stdout
    assert len(sh(repo, "worktree", "list", "--porcelain").strip().split("\n\n")) == 1
    assert sh(repo, "for-each-ref", "refs/heads/moot/") == ""
    assert live_worktrees(find_session(session)) == 0
    cleaned = clean(find_session(session))
    assert cleaned.refs == (f"refs/moot/{session}/baseline",)


def test_a_failed_session_keeps_a_worktree_whose_change_can_be_applied(
    repo: Path, tmp_path: Path
) -> None:
    from moot.code.workspace import CodeWorkspace
    from moot.config import CodeSettings

    folder = tmp_path / "session"
    workspace = CodeWorkspace(CodeSettings(repo=str(repo)), "s1", folder)
    workspace.prepare(["agent_a", "agent_b", "agent_c"])
    (folder / "worktrees" / "agent_b" / "calc.py").write_text("def add(a, b):\n    return 0\n")
    assert workspace.tidy("interrupted") is None  # a resume needs them all
    assert workspace.tidy("no_consensus") is None  # a change exists: all stay, as before
    note = workspace.tidy("failed")
    assert note is not None and "held no change (agent_a, agent_c)" in note
    assert "remain (agent_b): apply one with `moot apply s1 --agent agent_b`" in note
    assert sorted(p.name for p in (folder / "worktrees").iterdir() if p.is_dir()) == ["agent_b"]
    assert sh(repo, "for-each-ref", "--format=%(refname)", "refs/heads/moot/").split() == [
        "refs/heads/moot/s1/agent_b"
    ]
    workspace.prepare(["agent_a", "agent_b", "agent_c"])  # a resume makes them again
    assert (folder / "worktrees" / "agent_a" / "calc.py").read_text() == CALC
    assert "return 0" in (folder / "worktrees" / "agent_b" / "calc.py").read_text()


def test_a_revision_of_the_same_size_in_the_same_second_is_verified_as_itself(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python trusts a .pyc while its source keeps its size and its mtime to the second: the
    fix of `a * b` into `a + b` right after a check used to be verified as the old code."""
    from moot.code.workspace import CodeWorkspace
    from moot.config import CodeSettings

    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # as most machines have it
    folder = tmp_path / "session"
    workspace = CodeWorkspace(CodeSettings(repo=str(repo), verify_commands=[VERIFY]), "s1", folder)
    workspace.prepare(["agent_a"])
    source = folder / "worktrees" / "agent_a" / "calc.py"
    source.write_text("def add(a, b):\n    return a * b\n")
    before = source.stat()
    assert [r.exit_code for r in asyncio.run(workspace.verify("agent_a"))] == [1]
    source.write_text("def add(a, b):\n    return a + b\n")
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert [r.exit_code for r in asyncio.run(workspace.verify("agent_a"))] == [0]
    assert not list(source.parent.rglob("__pycache__"))  # nothing of the check in the change


def test_every_pick_outcome_says_how_far_to_trust_it_and_the_report_agrees(
    repo: Path, agents_file: Path
) -> None:
    specs = [f"scripted:{agents_file}#{name}" for name in ("good", "wrong", "stale")]
    chosen = api.start(TASK, config(specs, repo), sleep=no_sleep, chooser=choose_first)
    aliases = by_spec(chosen)
    first = sorted(a for a in aliases.values() if a != aliases["stale"])[0]
    passed = "1/1" if first == aliases["good"] else "0/1"
    label = "Agent " + first.rsplit("_", 1)[-1].upper()
    stale = "Agent " + aliases["stale"].rsplit("_", 1)[-1].upper()
    trust = chosen.result.trust
    assert trust.startswith(f"A human chose {label}'s change; its verify commands passed {passed}.")
    assert f"{stale} failed: its diff did not apply twice" in trust
    report = (chosen.folder / "report.md").read_text()
    assert f"**How far to trust it:** {trust}" in report
    assert f"**Status:** Change chosen: you picked {label}" in report
    assert f"**Chosen change:** {label}" in report and "Consensus" not in report
    assert trust in (chosen.folder / "report.html").read_text().replace("&#x27;", "'")

    none = api.start(TASK, config(specs, repo, pick={"by": "none"}), sleep=no_sleep)
    assert none.result.trust.startswith("No change was chosen; 2 of the 3 agents made a usable")
    report = (none.folder / "report.md").read_text()
    assert "**Status:** No change chosen: no winner picked" in report
    assert "**Chosen change:** none" in report and "Consensus" not in report


def test_the_pick_projection_bounds_a_run_where_diffs_are_asked_again(
    repo: Path, agents_file: Path, editor: Path, tmp_path: Path
) -> None:
    """`--dry-run` for pick: an API agent may be asked twice (its diff once more with git's
    error), a CLI agent once, the judge once; a run where two agents need the second ask
    reaches those bounds."""
    cli_agent = {"model": "cli:editor", "options": {"command": str(editor), "output": "text"}}
    specs = [cli_agent, *(f"scripted:{agents_file}#{name}" for name in ("good", "chatty", "stale"))]
    judge = f"scripted:{agents_file}#judge"
    cfg = config(specs, repo, pick={"by": "judge", "judge": judge})
    projected = estimate(resolve(cfg), TASK)
    assert projected is not None
    most = {line.model: line.most for line in projected.lines}
    assert most == {
        "cli:editor": 1,
        f"scripted:{agents_file}#good": 2,
        f"scripted:{agents_file}#chatty": 2,
        f"scripted:{agents_file}#stale": 2,
        judge: 1,
    }
    assert projected.calls == (5, 8)
    shown = render(projected)
    assert "cli:editor: 1 call, up to" in shown and "#good: 1-2 calls, up to" in shown
    run = api.start(TASK, cfg, sleep=no_sleep)
    asked = {u.model: u.calls for u in run.result.agents.values()}
    asked[judge] = sum(1 for e in log(tmp_path) if e["agent"] == "judge")
    assert all(asked[model] <= bound for model, bound in most.items()), asked
    # the diff-less and the stale agent were asked again: their bound is reached
    assert asked[f"scripted:{agents_file}#chatty"] == asked[f"scripted:{agents_file}#stale"] == 2


def test_the_choice_lists_agents_as_the_reports_name_them_and_takes_either_name(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio
    import io

    from moot.engine.choice import read_choice

    monkeypatch.setattr(sys, "stdin", io.StringIO("Agent X\nagent b\n"))
    chosen = asyncio.run(read_choice("Which change do you pick?", ["agent_a", "agent_b"]))
    assert chosen == "agent_b"  # journaled as the alias
    shown = capsys.readouterr().err
    assert "  1. Agent A\n  2. Agent B\n" in shown and "agent_a" not in shown
    assert "'Agent X' is not one of the choices" in shown
    monkeypatch.setattr(sys, "stdin", io.StringIO("agent_a\n"))
    assert asyncio.run(read_choice("Pick", ["agent_a", "agent_b"])) == "agent_a"
