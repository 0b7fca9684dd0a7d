"""The Session's effects for a feature pipeline (issue 22), against real git repositories:
worktrees started from another's work, commits on a worktree's branch, the user's commands run
in a worktree, a branch published for the user, and a code session run inside another
session's worktree. Each effect is journaled once; a resume reads it back without git."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from moot.code import clean_session, find_strays, list_worktrees, open_repo
from moot.code._manifest import read_manifest
from moot.code.workspace import CodeWorkspace
from moot.config import CodeSettings, EngineConfig, Limits
from moot.engine.journal import Journal
from moot.engine.session import Session
from moot.engine.store import SessionFolder
from moot.errors import ReplayIncomplete, WorkspaceError

T = TypeVar("T")
CALC = "def add(a, b):\n    return a - b\n"


def sh(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "--no-optional-locks", *args], cwd=cwd, capture_output=True, check=True
    )
    return done.stdout.decode()


@pytest.fixture(autouse=True)
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No global or system git config, and no identity in the environment: a commit's author
    is whatever moot chose."""
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{who}_NAME", raising=False)
        monkeypatch.delenv(f"GIT_{who}_EMAIL", raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository in a dirty state: staged, unstaged, untracked and ignored files."""
    root = tmp_path / "project"
    root.mkdir()
    sh(root, "init", "-q", "-b", "main")
    sh(root, "config", "user.name", "Repo Owner")
    sh(root, "config", "user.email", "owner@example.invalid")
    (root / "calc.py").write_text(CALC)
    (root / "README.md").write_text("calc\n")
    (root / "old.txt").write_text("to be deleted\n")
    (root / ".gitignore").write_text(".env\n")
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "first")
    sh(root, "config", "--unset", "user.name")
    sh(root, "config", "--unset", "user.email")
    (root / "staged.txt").write_text("staged\n")
    sh(root, "add", "staged.txt")
    (root / "README.md").write_text("calc, unstaged edit\n")
    (root / "untracked.txt").write_text("untracked\n")
    (root / ".env").write_text("SECRET=1\n")
    return root


def open_session(
    folder: Path, repo: Path, *, prepare: bool = True, fresh_journal: bool = False
) -> Session:
    """A live code session over `repo` in `folder` (its id: the folder's name). `prepare`:
    take the baseline or find it again, as a live run does; without it the workspace is as a
    replay has it, and any git it needs fails. `fresh_journal`: the journal starts empty (a
    crash between git's step and its record)."""
    folder.mkdir(parents=True, exist_ok=True)
    store = SessionFolder(folder)
    if fresh_journal:  # a journal of its own: the session's is sealed at its length
        journal, _ = Journal.open(folder / "lost.jsonl", head=folder / "lost-head.json")
    else:
        journal, _ = Journal.open(store.events)
    settings = CodeSettings(repo=str(repo), verify_timeout=30)
    workspace = CodeWorkspace(settings, store.id, folder)
    if prepare:
        workspace.prepare([])
    return Session(
        folder=store,
        journal=journal,
        task="a feature",
        seed=1,
        agents=[],
        engine=EngineConfig(),
        limits=Limits(),
        code=workspace,
    )


def run(awaitable: Awaitable[T]) -> T:
    async def wait() -> T:
        return await awaitable

    return asyncio.run(wait())


def code_events(session: Session) -> list[dict[str, Any]]:
    return [{"step": e.step, **e.data} for e in session.journal.events if e.kind.value == "code"]


def test_a_worktree_started_from_another_starts_at_its_exact_work_and_owns_its_change(
    repo: Path, tmp_path: Path
) -> None:
    s = open_session(tmp_path / "s1", repo)
    run(s.add_worktree("t1", step="add/t1"))
    t1 = Path(s.worktree_path("t1"))
    (t1 / "calc.py").write_text(CALC.replace("a - b", "a + b"))  # unstaged
    (t1 / "new.py").write_text("NEW = 1\n")  # untracked
    (t1 / "old.txt").unlink()  # deleted
    (t1 / "staged.py").write_text("S = 1\n")
    sh(t1, "add", "staged.py")
    (t1 / ".env").write_text("IGNORED=1\n")  # ignored: no part of the state
    run(s.add_worktree("t2", step="add/t2", base="t1"))
    t2 = Path(s.worktree_path("t2"))
    assert (t2 / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    assert (t2 / "new.py").read_text() == "NEW = 1\n"
    assert (t2 / "staged.py").read_text() == "S = 1\n"
    assert not (t2 / "old.txt").exists() and not (t2 / ".env").exists()
    assert (t2 / "untracked.txt").read_text() == "untracked\n"  # the user's, via the baseline
    assert run(s.change("t2", step="change/t2/0")).empty
    (t2 / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    own = run(s.change("t2", step="change/t2/1"))
    assert own.paths == ("calc.py",) and "-    return a + b" in own.patch
    t1_change = run(s.change("t1", step="change/t1"))
    assert set(t1_change.paths) == {"calc.py", "new.py", "old.txt", "staged.py"}
    # t1 was left as it was: its index and files, its HEAD at the baseline
    assert sh(t1, "diff", "--cached", "--name-only").split() == ["staged.py"]
    # a worktree started from a clean one starts at its HEAD itself, no snapshot commit
    run(s.add_worktree("t3", step="add/t3", base="t2"))
    run(s.commit("t2", "t2's work", step="commit/t2"))
    run(s.add_worktree("t4", step="add/t4", base="t2"))
    head_t2 = sh(t2, "rev-parse", "HEAD").strip()
    assert sh(Path(s.worktree_path("t4")), "rev-parse", "HEAD").strip() == head_t2
    manifest = read_manifest(open_repo(repo), "s1")
    assert manifest is not None and manifest.worktrees["t4"].base == head_t2
    assert manifest.worktrees["t1"].base is None  # at the baseline, as before
    with pytest.raises(WorkspaceError, match="nope has no worktree"):
        run(s.add_worktree("t5", step="add/t5", base="nope"))


def test_one_working_state_is_one_base_whenever_it_is_taken(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two worktrees started from the same state share their base commit even when the
    clock moved between them (a busy machine crossing a second made them differ)."""
    s = open_session(tmp_path / "s1", repo)
    run(s.add_worktree("t1", step="add/t1"))
    (Path(s.worktree_path("t1")) / "calc.py").write_text(CALC.replace("a - b", "a + b"))
    monkeypatch.setenv("GIT_COMMITTER_DATE", "@1700000000 +0000")
    run(s.add_worktree("t2", step="add/t2", base="t1"))
    monkeypatch.setenv("GIT_COMMITTER_DATE", "@1800000000 +0000")
    run(s.add_worktree("t3", step="add/t3", base="t1"))
    manifest = read_manifest(open_repo(repo), "s1")
    assert manifest is not None
    base = manifest.worktrees["t2"].base
    assert base is not None and base == manifest.worktrees["t3"].base


def test_tasks_chained_on_an_integration_worktree_each_hold_only_their_own_edit(
    repo: Path, tmp_path: Path
) -> None:
    """The pipeline's shape: each task starts from the integration worktree, whose winner is
    committed there, so the next task sees it and its own change holds only its edit."""
    s = open_session(tmp_path / "s1", repo)
    run(s.add_worktree("main", step="add/main"))
    run(s.add_worktree("t1", step="add/t1", base="main"))
    t1 = Path(s.worktree_path("t1"))
    (t1 / "calc.py").write_text(CALC.replace("a - b", "a + b"))
    first = run(s.change("t1", step="change/t1"))
    assert run(s.apply_diff("main", first.patch, step="apply/main/t1")).applied
    one = run(s.commit("main", "task 1: add() sums", step="commit/main/t1"))
    run(s.add_worktree("t2", step="add/t2", base="main"))
    t2 = Path(s.worktree_path("t2"))
    assert "a + b" in (t2 / "calc.py").read_text()  # sees task 1's commit
    assert sh(t2, "rev-parse", "HEAD").strip() == one  # started at it, no snapshot needed
    (t2 / "sub.py").write_text("def sub(a, b):\n    return a - b\n")
    second = run(s.change("t2", step="change/t2"))
    assert second.paths == ("sub.py",)
    assert run(s.apply_diff("main", second.patch, step="apply/main/t2")).applied
    two = run(s.commit("main", "task 2: sub()", step="commit/main/t2"))
    main = Path(s.worktree_path("main"))
    log = sh(main, "log", "--format=%H %s", "-3").splitlines()
    assert log[:2] == [f"{two} task 2: sub()", f"{one} task 1: add() sums"]
    assert log[2].endswith("moot baseline of session s1")
    # main's change still runs from the baseline: both commits are part of it
    assert set(run(s.change("main", step="change/main")).paths) == {"calc.py", "sub.py"}
    assert run(s.change("t2", step="change/t2/again")).paths == ("sub.py",)


def test_commit_takes_new_and_deleted_files_but_not_ignored_ones_under_the_right_author(
    repo: Path, tmp_path: Path
) -> None:
    s = open_session(tmp_path / "s1", repo)
    run(s.add_worktree("t1", step="add/t1"))
    t1 = Path(s.worktree_path("t1"))
    head = sh(t1, "rev-parse", "HEAD").strip()
    assert run(s.commit("t1", "nothing yet", step="commit/0")) == head  # nothing: HEAD, no error
    (t1 / "new.py").write_text("NEW = 1\n")
    (t1 / "old.txt").unlink()
    (t1 / ".env").write_text("IGNORED=1\n")
    message = "feat: a new module\n\n  # kept as written, comment-like line included\n"
    sha = run(s.commit("t1", message, step="commit/1"))
    assert sh(t1, "rev-parse", "HEAD").strip() == sha != head
    assert sh(t1, "rev-parse", "HEAD~1").strip() == head
    assert sh(t1, "status", "--porcelain") == ""
    raw = sh(t1, "cat-file", "commit", sha)
    assert raw.split("\n\n", 1)[1] == message  # byte for byte
    assert sh(t1, "diff", "--name-status", "HEAD~1", "HEAD").split() == [
        "A",
        "new.py",
        "D",
        "old.txt",
    ]
    assert sh(t1, "log", "-1", "--format=%an <%ae> %cn <%ce>").strip() == (
        "moot <moot@localhost> moot <moot@localhost>"
    )
    assert sh(t1, "symbolic-ref", "HEAD").strip() == "refs/heads/moot/s1/t1"  # on its branch
    sh(repo, "config", "user.name", "Repo Owner")
    sh(repo, "config", "user.email", "owner@example.invalid")
    (t1 / "more.py").write_text("MORE = 1\n")
    run(s.commit("t1", "more", step="commit/2"))
    assert sh(t1, "log", "-1", "--format=%an <%ae> %cn <%ce>").strip() == (
        "Repo Owner <owner@example.invalid> Repo Owner <owner@example.invalid>"
    )
    assert sh(repo, "status", "--porcelain", "--untracked-files=no").split() == [
        "M",
        "README.md",
        "A",
        "staged.txt",
    ]  # the user's own tree and index: as they were
    assert [e["what"] for e in code_events(s)] == ["worktree", "commit", "commit", "commit"]
    assert code_events(s)[2] == {
        "step": "commit/1",
        "what": "commit",
        "agent": None,
        "tree": "t1",
        "result": sha,
    }


def test_a_commit_repeated_after_a_crash_before_its_record_returns_the_same_commit(
    repo: Path, tmp_path: Path
) -> None:
    s = open_session(tmp_path / "s1", repo)
    run(s.add_worktree("t1", step="add/t1"))
    t1 = Path(s.worktree_path("t1"))
    (t1 / "calc.py").write_text(CALC.replace("a - b", "a + b"))
    sha = run(s.commit("t1", "task 1", step="commit/t1"))
    count = sh(t1, "rev-list", "--count", "HEAD")
    # The journal lost the record (the crash fell between git's step and ours): the resume
    # computes the effect again, on the worktree the crash left.
    again = open_session(tmp_path / "s1", repo, fresh_journal=True)
    run(again.add_worktree("t1", step="add/t1"))  # kept as it is
    assert run(again.commit("t1", "task 1", step="commit/t1")) == sha
    assert sh(t1, "rev-list", "--count", "HEAD") == count


def test_run_in_runs_the_users_command_in_the_worktree_like_a_verify_command(
    repo: Path, tmp_path: Path
) -> None:
    s = open_session(tmp_path / "s1", repo)
    run(s.add_worktree("t1", step="add/t1"))
    t1 = Path(s.worktree_path("t1"))
    seen: list[str] = []
    s.subscribe(lambda e: seen.append(e.kind.value))
    script = "import calc, os; print(os.getcwd()); print(calc.add(2, 3)); raise SystemExit(4)"
    done = run(s.run_in("t1", f'{sys.executable} -c "{script}"', step="run/1"))
    assert done.exit_code == 4 and not done.timed_out
    assert done.tail.splitlines()[:2] == [str(t1), "-1"]
    assert "shell_started" in seen
    assert not list(t1.rglob("__pycache__"))  # the bytecode went elsewhere
    slow = run(s.run_in("t1", "sleep 20", step="run/2", timeout=0.5))
    assert slow.timed_out and slow.seconds < 10
    recorded = [e for e in code_events(s) if e["what"] == "run"]
    assert [(e["step"], e["tree"], e["result"]["exit_code"]) for e in recorded] == [
        ("run/1", "t1", 4),
        ("run/2", "t1", slow.exit_code),
    ]


def test_publish_creates_then_fast_forwards_a_branch_that_outlives_the_session(
    repo: Path, tmp_path: Path
) -> None:
    s = open_session(tmp_path / "s1", repo)
    run(s.add_worktree("main", step="add/main"))
    main = Path(s.worktree_path("main"))
    (main / "a.py").write_text("A = 1\n")
    one = run(s.commit("main", "one", step="commit/1"))
    assert run(s.publish_branch("main", "feature/calc", step="publish/1")) == one
    assert sh(repo, "rev-parse", "refs/heads/feature/calc").strip() == one
    (main / "b.py").write_text("B = 1\n")
    two = run(s.commit("main", "two", step="commit/2"))
    assert run(s.publish_branch("main", "feature/calc", step="publish/2")) == two
    assert run(s.publish_branch("main", "feature/calc", step="publish/3")) == two  # again
    assert sh(repo, "rev-parse", "refs/heads/feature/calc").strip() == two
    assert sh(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/main"  # user's checkout
    cleaned = clean_session(open_repo(repo), "s1")
    assert "feature/calc" not in cleaned.branches
    assert sh(repo, "rev-parse", "refs/heads/feature/calc").strip() == two
    assert sh(repo, "show", "feature/calc:b.py") == "B = 1\n"
    assert find_strays(open_repo(repo)) == []


def test_publish_refuses_to_clobber_a_branch_or_to_use_moots_namespace(
    repo: Path, tmp_path: Path
) -> None:
    s = open_session(tmp_path / "s1", repo)
    run(s.add_worktree("main", step="add/main"))
    main = Path(s.worktree_path("main"))
    (main / "a.py").write_text("A = 1\n")
    run(s.commit("main", "one", step="commit/1"))
    user_head = sh(repo, "rev-parse", "HEAD").strip()
    who = ["-c", "user.name=U", "-c", "user.email=u@example.invalid"]
    mine = sh(repo, *who, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "mine").strip()
    sh(repo, "branch", "mine", mine)  # the user's work, not in the worktree's history
    with pytest.raises(WorkspaceError) as refused:
        run(s.publish_branch("main", "mine", step="publish/mine"))
    message = str(refused.value)
    assert "branch mine exists" in message and "git branch -m mine mine-old" in message
    assert sh(repo, "rev-parse", "refs/heads/mine").strip() == mine  # untouched
    for name in ("moot/s1/x", "moot"):
        with pytest.raises(WorkspaceError, match="moot's own namespace"):
            run(s.publish_branch("main", name, step=f"publish/{name}"))
    with pytest.raises(WorkspaceError, match="not a valid branch name"):
        run(s.publish_branch("main", "bad..name", step="publish/bad"))
    # the user's checked-out branch, even where a fast-forward: its files would lag behind it
    sh(repo, "branch", "-f", "behind", user_head)
    sh(repo, "stash", "-q", "-u")
    sh(repo, "switch", "-q", "behind")
    with pytest.raises(WorkspaceError, match="behind is checked out in"):
        run(s.publish_branch("main", "behind", step="publish/behind"))
    assert sh(repo, "rev-parse", "refs/heads/behind").strip() == user_head
    assert not [e for e in code_events(s) if e["what"] == "publish"]  # a refusal is no result


def test_a_resume_reads_every_effect_back_without_git_and_replay_refuses_a_missing_one(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def pipeline(s: Session) -> list[object]:
        await s.add_worktree("main", step="add/main")
        await s.add_worktree("t1", step="add/t1", base="main")
        if s.code is not None and s.code._repo is not None:  # the live run edits
            (Path(s.worktree_path("t1")) / "x.py").write_text("X = 1\n")
        change = await s.change("t1", step="change/t1")
        sha = await s.commit("t1", "task 1", step="commit/t1")
        done = await s.run_in("t1", "cat x.py", step="run/t1")
        published = await s.publish_branch("t1", "feature/x", step="publish/t1")
        return [change, sha, done, published]

    live = open_session(tmp_path / "s1", repo)
    first = run(pipeline(live))
    recorded = len(live.journal.events)
    clean_session(open_repo(repo), "s1")  # nothing left in git to read from
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))  # and no git to run
    resumed = open_session(tmp_path / "s1", repo, prepare=False)
    assert run(pipeline(resumed)) == first
    assert len(resumed.journal.events) == recorded  # nothing journaled twice
    with pytest.raises(WorkspaceError, match="live run only"):
        resumed.worktree_path("t1")
    monkeypatch.undo()
    replay = open_session(tmp_path / "s1", repo, prepare=False)
    replay.mode = "replay"

    async def further(s: Session) -> None:
        await pipeline(s)
        await s.commit("t1", "task 2", step="commit/t1/2")

    with pytest.raises(ReplayIncomplete):
        run(further(replay))


def test_a_resume_finds_a_based_worktree_again_and_remakes_a_half_made_one_at_its_base(
    repo: Path, tmp_path: Path
) -> None:
    s = open_session(tmp_path / "s1", repo)
    run(s.add_worktree("t1", step="add/t1"))
    t1 = Path(s.worktree_path("t1"))
    (t1 / "calc.py").write_text(CALC.replace("a - b", "a + b"))
    run(s.add_worktree("t2", step="add/t2", base="t1"))
    run(s.add_worktree("t3", step="add/t3", base="t1"))
    t2 = Path(s.worktree_path("t2"))
    (t2 / "t2.py").write_text("T2 = 1\n")
    (t1 / "later.py").write_text("LATER = 1\n")  # after t2 and t3 started: in neither
    repo_ = open_repo(repo)
    manifest = read_manifest(repo_, "s1")
    assert manifest is not None
    base = manifest.worktrees["t3"].base
    assert base is not None and base == manifest.worktrees["t2"].base
    # a crash inside t3's creation: recorded as creating, git's worktree gone
    path = repo_.manifests / "s1.json"
    raw = json.loads(path.read_text())
    raw["worktrees"]["t3"]["state"] = "creating"
    path.write_text(json.dumps(raw))
    sh(repo, "worktree", "remove", "-f", str(Path(s.worktree_path("t3"))))
    resumed = CodeWorkspace(CodeSettings(repo=str(repo)), "s1", tmp_path / "s1")
    resumed.prepare([])  # finds t1, t2 again and remakes t3 at its recorded base
    assert resumed.change("t2").paths == ("t2.py",)
    t3 = Path(resumed.tree_path("t3"))
    assert sh(t3, "rev-parse", "HEAD").strip() == base
    assert "a + b" in (t3 / "calc.py").read_text() and not (t3 / "later.py").exists()
    assert resumed.change("t3").empty
    assert {t.alias: t.baseline for t in list_worktrees(repo_, "s1")}["t3"] == base


def test_a_manifest_written_before_bases_existed_still_loads(repo: Path, tmp_path: Path) -> None:
    s = open_session(tmp_path / "s1", repo)
    run(s.add_worktree("t1", step="add/t1"))
    repo_ = open_repo(repo)
    path = repo_.manifests / "s1.json"
    raw = json.loads(path.read_text())
    for entry in raw["worktrees"].values():
        del entry["base"]
    path.write_text(json.dumps(raw))
    manifest = read_manifest(repo_, "s1")
    assert manifest is not None and manifest.worktrees["t1"].base is None
    (tree,) = list_worktrees(repo_, "s1")
    assert tree.baseline == manifest.baseline and tree.state == "ready"


def test_a_code_session_runs_in_another_sessions_worktree(repo: Path, tmp_path: Path) -> None:
    """The lead runs a child code session whose repository is a worktree of the pipeline's
    session: its baseline is that worktree's work, its worktrees and changes its own."""
    parent = open_session(tmp_path / "parent", repo)
    run(parent.add_worktree("t1", step="add/t1"))
    t1 = Path(parent.worktree_path("t1"))
    assert t1.is_absolute()
    (t1 / "calc.py").write_text(CALC.replace("a - b", "a + b"))  # uncommitted work
    parent_state = sh(t1, "status", "--porcelain=v2", "--branch")

    child = open_session(tmp_path / "child", t1)
    run(child.add_worktree("agent_a", step="add/a"))
    run(child.add_worktree("b", step="add/b", base="agent_a"))
    a = Path(child.worktree_path("agent_a"))
    assert "a + b" in (a / "calc.py").read_text()  # the parent's worktree's work
    (a / "calc.py").write_text(CALC.replace("a - b", "b + a"))
    change = run(child.change("agent_a", step="change/a"))
    assert change.paths == ("calc.py",) and "-    return a + b" in change.patch
    assert run(child.change("b", step="change/b")).empty
    assert run(child.commit("agent_a", "child", step="commit/a")) != ""
    assert sh(t1, "status", "--porcelain=v2", "--branch") == parent_state  # untouched
    assert sh(t1, "symbolic-ref", "HEAD").strip() == "refs/heads/moot/parent/t1"
    assert find_strays(open_repo(repo)) == []
    clean_session(open_repo(t1), "child")
    assert not a.exists()
    assert run(parent.change("t1", step="change/t1")).paths == ("calc.py",)
    assert sh(repo, "for-each-ref", "--format=%(refname)", "refs/heads/moot/").split() == [
        "refs/heads/moot/parent/t1"
    ]
