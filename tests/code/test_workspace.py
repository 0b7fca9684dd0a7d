"""moot.code against real git repositories built by each test.

Every assertion about the user's repository is made with git run directly (not through the
library), and "untouched" means byte for byte: files, modes, symlinks, the index file, status,
stash list, branches and HEAD."""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moot.code import (
    Baseline,
    Repo,
    Worktree,
    apply_patch,
    apply_to_user_tree,
    clean_session,
    create_worktrees,
    find_strays,
    list_worktrees,
    load_baseline,
    open_repo,
    remove_worktree,
    repo_context,
    resolve_in_repo,
    save_patch,
    take_baseline,
    worktree_change,
)
from moot.code._hunks import recount
from moot.errors import WorkspaceError

SESSION = "20261123-150000-abc123"
BINARY = bytes(range(256)) * 4


@pytest.fixture(autouse=True)
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A known identity and no global or system git config from the machine running the tests."""
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Test User")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "test@example.invalid")


def sh(cwd: Path, *args: str, input: bytes | None = None) -> str:
    done = subprocess.run(
        ["git", "--no-optional-locks", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode()


def write(path: Path, content: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)


def files(root: Path, *, skip: tuple[str, ...] = ()) -> dict[str, tuple[str, bytes]]:
    """Every file under root (outside .git) as (kind/mode, content); symlinks by target."""
    found: dict[str, tuple[str, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if name == ".git" or rel.startswith(skip):
                continue
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path).encode())
            else:
                found[rel] = (oct(path.stat().st_mode & 0o777), path.read_bytes())
    return found


def user_state(repo: Path) -> dict[str, object]:
    """What the user would notice changing, byte for byte."""
    return {
        "status": sh(repo, "status", "--porcelain=v2", "--branch", "--untracked-files=all"),
        "ignored": sh(repo, "status", "--porcelain=v2", "--ignored", "--untracked-files=all"),
        "stash": sh(repo, "stash", "list"),
        "branches": sh(repo, "for-each-ref", "refs/heads", "refs/remotes", "refs/tags"),
        "head": sh(repo, "symbolic-ref", "HEAD") + sh(repo, "rev-parse", "HEAD"),
        "index": (repo / ".git" / "index").read_bytes(),
        "files": files(repo),
    }


def commit_all(repo: Path, message: str) -> None:
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", message)


@pytest.fixture
def clean_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    sh(tmp_path, "init", "-q", "-b", "main", str(repo))
    write(repo / ".gitignore", "*.log\nbuild/\n")
    write(repo / "tracked.txt", "one\ntwo\nthree\n")
    write(repo / "staged.txt", "staged base\n")
    write(repo / "both.txt", "both base\n")
    write(repo / "gone.txt", "to be deleted\n")
    write(repo / "run.sh", "#!/bin/sh\necho hi\n")
    write(repo / "image.bin", BINARY)
    write(repo / "lib" / "deep.py", "".join(f"line {i}\n" for i in range(1, 31)))
    commit_all(repo, "initial")
    return repo


@pytest.fixture
def dirty_repo(clean_repo: Path) -> Path:
    """Staged, unstaged (a file staged and then edited again), deleted, a mode change,
    untracked (a file, a folder, a symlink) and ignored files, plus a stash entry."""
    repo = clean_repo
    write(repo / "stashed.txt", "in the stash\n")
    sh(repo, "stash", "push", "-q", "--include-untracked")
    write(repo / "staged.txt", "staged change\n")
    write(repo / "added.txt", "new and staged\n")
    sh(repo, "add", "staged.txt", "added.txt")
    write(repo / "both.txt", "both staged\n")
    sh(repo, "add", "both.txt")
    write(repo / "both.txt", "both staged then edited\n")
    write(repo / "tracked.txt", "one\nTWO\nthree\n")
    (repo / "gone.txt").unlink()
    (repo / "run.sh").chmod(0o755)
    write(repo / "untracked.txt", "untracked\n")
    write(repo / "newdir" / "nested.txt", "untracked in a folder\n")
    (repo / "link").symlink_to("tracked.txt")
    write(repo / "debug.log", "ignored\n")
    write(repo / "build" / "out.o", b"\x00ignored")
    return repo


def start(
    repo_path: Path, tmp_path: Path, aliases: list[str]
) -> tuple[Repo, Baseline, list[Worktree]]:
    repo = open_repo(repo_path)
    folder = tmp_path / "session"
    folder.mkdir(exist_ok=True)
    baseline = take_baseline(repo, SESSION, session_dir=folder)
    return repo, baseline, create_worktrees(repo, baseline, folder / "worktrees", aliases)


def moot_leftovers(repo: Path) -> dict[str, str]:
    return {
        "worktrees": sh(repo, "worktree", "list", "--porcelain"),
        "refs": sh(repo, "for-each-ref", "refs/moot/", "refs/heads/moot/"),
    }


# --- baseline and worktrees ---------------------------------------------------------------


def test_dirty_state_is_reproduced_in_every_worktree_and_the_user_repo_is_untouched(
    dirty_repo: Path, tmp_path: Path
) -> None:
    before = user_state(dirty_repo)
    repo, baseline, trees = start(dirty_repo, tmp_path, ["agent_a", "agent_b", "agent_c"])

    expected = files(dirty_repo, skip=("debug.log", "build/"))
    assert "untracked.txt" in expected and expected["link"] == ("link", b"tracked.txt")
    assert expected["run.sh"][0] == "0o755" and "gone.txt" not in expected
    for tree in trees:
        assert files(tree.path) == expected, tree.alias
        assert sh(tree.path, "status", "--porcelain") == ""  # the agent sees only its own edits
        assert (
            sh(tree.path, "symbolic-ref", "HEAD").strip()
            == f"refs/heads/moot/{SESSION}/{tree.alias}"
        )
        assert sh(tree.path, "rev-parse", "HEAD").strip() == baseline.commit
    assert not (trees[0].path / "debug.log").exists()
    assert sh(dirty_repo, "rev-parse", f"{baseline.commit}^").strip() == baseline.head

    after = user_state(dirty_repo)
    branches = after.pop("branches")
    assert {k: v for k, v in before.items() if k != "branches"} == after
    user_branches = [b for b in str(branches).splitlines() if "moot/" not in b]
    assert "\n".join(user_branches) + "\n" == before["branches"]
    assert load_baseline(repo, SESSION) == baseline


def test_a_same_size_edit_in_the_same_second_as_git_add_is_not_missed(
    clean_repo: Path, tmp_path: Path
) -> None:
    """Racy git: stat data alone cannot tell this edit apart, only the index's own mtime can."""
    sh(clean_repo, "config", "core.checkStat", "minimal")  # compare mtime and size only
    moment = time.time() - 100
    tracked = clean_repo / "tracked.txt"
    os.utime(tracked, (moment, moment))
    sh(clean_repo, "add", "tracked.txt")  # the index entry records that mtime
    tracked.write_text("one\nTWO\nthree\n")  # same size as before
    os.utime(tracked, (moment, moment))
    os.utime(clean_repo / ".git" / "index", (moment, moment))

    _, _, (a,) = start(clean_repo, tmp_path, ["a"])

    assert (a.path / "tracked.txt").read_text() == "one\nTWO\nthree\n"


def test_clean_removes_every_worktree_branch_and_ref(dirty_repo: Path, tmp_path: Path) -> None:
    before = user_state(dirty_repo)
    before_git = moot_leftovers(dirty_repo)
    repo, baseline, trees = start(dirty_repo, tmp_path, ["a", "b"])
    write(trees[0].path / "tracked.txt", "agent edit\n")
    assert apply_patch(
        trees[1], "--- a/added.txt\n+++ b/added.txt\n@@ -1 +1 @@\n-new and staged\n+b\n"
    ).applied
    save_patch(trees[0], tmp_path / "session" / "a.patch")
    repo_context(repo, baseline, ["**"], budget_tokens=1000)
    assert [w.alias for w in list_worktrees(repo, SESSION)] == ["a", "b"]
    during = user_state(dirty_repo)
    assert {k: v for k, v in during.items() if k != "branches"} == {
        k: v for k, v in before.items() if k != "branches"
    }

    cleaned = clean_session(repo, SESSION)

    assert sorted(cleaned.branches) == [f"moot/{SESSION}/a", f"moot/{SESSION}/b"]
    assert cleaned.refs == (f"refs/moot/{SESSION}/baseline",)
    assert moot_leftovers(dirty_repo) == before_git
    assert user_state(dirty_repo) == before
    assert not any(t.path.exists() for t in trees)
    assert list_worktrees(repo, SESSION) == [] and load_baseline(repo, SESSION) is None
    assert clean_session(repo, SESSION).worktrees == ()  # repeating is harmless


def test_worktree_root_inside_the_repository_stays_invisible_to_git(
    dirty_repo: Path, tmp_path: Path
) -> None:
    before = user_state(dirty_repo)
    repo = open_repo(dirty_repo)
    baseline = take_baseline(repo, SESSION)
    root = dirty_repo / ".moot" / "sessions" / SESSION / "worktrees"
    trees = create_worktrees(repo, baseline, root, ["a"])
    write(trees[0].path / "agent.txt", "agent work\n")

    assert user_state(dirty_repo)["status"] == before["status"]
    # A later session's baseline does not swallow the first session's worktrees.
    later = take_baseline(repo, "second")
    assert later.tree == baseline.tree

    clean_session(repo, SESSION)
    clean_session(repo, "second")
    assert not root.exists()


def test_a_baseline_leaves_out_moot_sessions_inside_the_repository(
    dirty_repo: Path, tmp_path: Path
) -> None:
    # an older moot left `.moot/sessions` in the repository, with no .gitignore of its own
    write(dirty_repo / ".moot" / "sessions" / "earlier" / "events.jsonl", "{}\n")
    folder = dirty_repo / ".moot" / "sessions" / SESSION
    write(folder / "meta.json", "{}\n")
    repo = open_repo(dirty_repo)
    baseline = take_baseline(repo, SESSION, session_dir=folder)
    listed = sh(dirty_repo, "ls-tree", "-r", "--name-only", baseline.commit).split()
    assert "untracked.txt" in listed and not [p for p in listed if p.startswith(".moot")]
    (tree,) = create_worktrees(repo, baseline, folder / "worktrees", ["a"])
    assert not (tree.path / ".moot").exists()
    # applying later leaves the sessions out of the user's state as well: no three-way needed
    write(tree.path / "feature.py", "x = 1\n")
    applied = apply_to_user_tree(repo, baseline, worktree_change(tree).patch)
    assert not applied.three_way and (dirty_repo / "feature.py").read_text() == "x = 1\n"


def test_create_is_idempotent_and_keeps_an_agents_work(dirty_repo: Path, tmp_path: Path) -> None:
    repo, baseline, trees = start(dirty_repo, tmp_path, ["a"])
    write(trees[0].path / "work.txt", "keep me\n")
    again = create_worktrees(repo, baseline, tmp_path / "session" / "worktrees", ["a", "b"])
    assert (again[0].path / "work.txt").read_text() == "keep me\n"
    assert [w.state for w in list_worktrees(repo, SESSION)] == ["ready", "ready"]


# --- changes and patches ------------------------------------------------------------------


def test_change_is_the_diff_against_the_baseline_binary_included(
    dirty_repo: Path, tmp_path: Path
) -> None:
    _, _, (a, b) = start(dirty_repo, tmp_path, ["a", "b"])
    assert worktree_change(a).empty
    write(a.path / "tracked.txt", "one\nTWO\n3\nfour\n")  # +2 -1 against the baseline
    write(a.path / "fresh" / "module.py", "x = 1\ny = 2\nz = 3\n")
    (a.path / "untracked.txt").unlink()
    write(a.path / "image.bin", BINARY[::-1])
    sh(a.path, "add", "fresh")  # staged or committed makes no difference to the change
    sh(a.path, "commit", "-q", "-m", "an agent that commits")

    change = save_patch(a, tmp_path / "session" / "a.patch")

    assert sorted(change.paths) == [
        "fresh/module.py",
        "image.bin",
        "tracked.txt",
        "untracked.txt",
    ]
    assert (change.stats.files, change.stats.insertions, change.stats.deletions) == (4, 5, 2)
    assert (tmp_path / "session" / "a.patch").read_bytes() == change.patch
    assert b"GIT binary patch" in change.patch
    # The saved patch reproduces agent a's files exactly in agent b's worktree.
    assert apply_patch(b, (tmp_path / "session" / "a.patch").read_bytes()).applied
    assert files(b.path) == files(a.path)


GOOD_DIFF = """Here is the fix:
--- a/tracked.txt
+++ b/tracked.txt
@@ -1,3 +1,3 @@
 one
-TWO
+two, fixed
 three
--- /dev/null
+++ b/docs/notes.md
@@ -0,0 +1,9 @@
+# Notes
+written by the model"""


def test_a_models_diff_applies_with_wrong_counts_and_no_final_newline(
    dirty_repo: Path, tmp_path: Path
) -> None:
    _, _, (a,) = start(dirty_repo, tmp_path, ["a"])
    result = apply_patch(a, GOOD_DIFF)
    assert result.applied, result.error
    assert (a.path / "tracked.txt").read_text() == "one\ntwo, fixed\nthree\n"
    assert (a.path / "docs" / "notes.md").read_text() == "# Notes\nwritten by the model\n"
    assert worktree_change(a).stats.files == 2


def test_a_diff_applied_already_applies_again_changing_nothing(
    dirty_repo: Path, tmp_path: Path
) -> None:
    """A kill after `git apply` but before the engine journaled it: the resume applies the
    same diff to a worktree that holds it already, and must not fail where the first try
    succeeded (issue 22's crash trials found it)."""
    _, _, (a,) = start(dirty_repo, tmp_path, ["a"])
    assert apply_patch(a, GOOD_DIFF).applied
    held = files(a.path)
    again = apply_patch(a, GOOD_DIFF)
    assert again.applied, again.error
    assert files(a.path) == held
    half = "--- a/tracked.txt\n+++ b/tracked.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
    assert not apply_patch(a, half).applied  # neither applied nor applying: still refused


def test_a_diff_whose_git_apply_was_killed_half_way_applies_on_the_retry(
    dirty_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`git apply` replaces a file by removing it and writing the new one: a kill in between
    left a worktree without the file, and the resume's apply of the same diff failed ("No such
    file or directory"; the pipeline's crash trials found it). The files a diff touches are
    kept beside the worktree until git is done, and a retry puts them back first."""
    from moot.code import _diff

    _, _, (a,) = start(dirty_repo, tmp_path, ["a"])
    before = files(a.path)
    real = _diff._git_apply

    def killed(worktree: Worktree, data: bytes) -> _diff.PatchResult:
        (worktree.path / "tracked.txt").unlink()  # what git had done when the kill came
        (worktree.path / "docs").mkdir(exist_ok=True)
        (worktree.path / "docs" / "notes.md").write_text("# Notes\n")
        raise KeyboardInterrupt  # stands for SIGKILL: nothing after this line runs

    monkeypatch.setattr(_diff, "_git_apply", killed)
    with pytest.raises(KeyboardInterrupt):
        apply_patch(a, GOOD_DIFF)
    monkeypatch.setattr(_diff, "_git_apply", real)
    assert not (a.path / "tracked.txt").exists()
    result = apply_patch(a, GOOD_DIFF)
    assert result.applied, result.error
    assert (a.path / "tracked.txt").read_text() == "one\ntwo, fixed\nthree\n"
    assert (a.path / "docs" / "notes.md").read_text() == "# Notes\nwritten by the model\n"
    assert {k for k in files(a.path)} == set(before) | {"docs/notes.md"}
    assert not list(a.path.parent.glob(".*apply*"))  # nothing left beside the worktree


def test_a_backup_left_by_another_diff_is_dropped_not_restored(
    dirty_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backup whose diff is not the one applied now belongs to an apply that ended (its
    removal lost in a crash): putting it back would undo journaled work."""
    from moot.code import _diff

    _, _, (a,) = start(dirty_repo, tmp_path, ["a"])
    real = _diff._git_apply

    def killed(worktree: Worktree, data: bytes) -> _diff.PatchResult:
        raise KeyboardInterrupt

    monkeypatch.setattr(_diff, "_git_apply", killed)
    with pytest.raises(KeyboardInterrupt):
        apply_patch(a, GOOD_DIFF)
    monkeypatch.setattr(_diff, "_git_apply", real)
    (a.path / "tracked.txt").write_text("one\ntwo\nthree\nfour\n")  # later, journaled work
    other = "--- a/untracked.txt\n+++ b/untracked.txt\n@@ -1 +1 @@\n-untracked\n+changed\n"
    result = apply_patch(a, other)
    assert result.applied, result.error
    assert (a.path / "tracked.txt").read_text() == "one\ntwo\nthree\nfour\n"
    assert not list(a.path.parent.glob(".*apply*"))


def test_removing_a_worktree_whose_remove_was_killed_half_way_completes(
    clean_repo: Path, tmp_path: Path
) -> None:
    """`git worktree remove` deletes the worktree's .git file first; killed then, git refuses
    a second remove of it, and the prune that a resume repeats never completed."""
    repo, baseline, (a,) = start(clean_repo, tmp_path, ["a"])
    (a.path / ".git").unlink()
    assert remove_worktree(repo, baseline.session, "a")
    assert not a.path.exists()
    listed = subprocess.run(
        ["git", "worktree", "list", "--porcelain"], cwd=clean_repo, capture_output=True, text=True
    ).stdout
    assert str(a.path) not in listed


@pytest.mark.parametrize(
    "diff",
    [
        # An empty context line whose leading space the model dropped, then a remark.
        "--- a/blank.txt\n+++ b/blank.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n\nHope this helps.\n",
        # The same line mid-hunk, with counts that are wrong.
        "--- a/blank.txt\n+++ b/blank.txt\n@@ -1 +1 @@\n-a\n+A\n\n b\n",
    ],
    ids=["trailing", "inside"],
)
def test_a_blank_context_line_without_its_space_still_applies(
    clean_repo: Path, tmp_path: Path, diff: str
) -> None:
    write(clean_repo / "blank.txt", "a\n\nb\n")
    _, _, (a,) = start(clean_repo, tmp_path, ["a"])
    result = apply_patch(a, diff)
    assert result.applied, result.error
    assert (a.path / "blank.txt").read_text() == "A\n\nb\n"


@pytest.mark.parametrize(
    ("diff", "says"),
    [
        ("I could not produce a diff, sorry.", "No valid patches"),
        ("", "empty"),
        # The first file would apply; the second's context is wrong: nothing may change.
        (
            "--- a/staged.txt\n+++ b/staged.txt\n@@ -1 +1 @@\n-staged change\n+changed\n"
            "--- a/tracked.txt\n+++ b/tracked.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n",
            "tracked.txt: patch does not apply",
        ),
        (
            "--- a/lib/deep.py\n+++ b/lib/deep.py\n@@ -1,2 +1,2 @@\n-line 1\n+line one\n"
            " line 2\n@@ -40,1 +40,1 @@\n-line 40\n+line forty\n",
            "patch does not apply",
        ),
        ("--- /dev/null\n+++ b/../escape.txt\n@@ -0,0 +1 @@\n+out\n", "invalid path"),
        ("--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+x\n", "invalid path"),
    ],
    ids=["prose", "empty", "second-file-fails", "bad-hunk", "outside", "into-git"],
)
def test_a_diff_that_does_not_apply_changes_nothing_and_says_why(
    dirty_repo: Path, tmp_path: Path, diff: str, says: str
) -> None:
    _, _, (a,) = start(dirty_repo, tmp_path, ["a"])
    before = files(a.path)
    result = apply_patch(a, diff)
    assert not result.applied
    assert says in result.error
    assert files(a.path) == before
    assert not (tmp_path / "session" / "worktrees" / "escape.txt").exists()


_LINE = st.text(alphabet="-+ ab@", max_size=6).map(lambda t: t + "\n")
_FILE = st.lists(_LINE, min_size=1, max_size=12)


def _counts(diff: bytes) -> list[tuple[int, int]]:
    found = re.findall(rb"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@", diff, re.MULTILINE)
    return [(int(old or 1), int(new or 1)) for old, new in found]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_FILE, _FILE), min_size=1, max_size=3), st.integers(0, 99))
def test_recount_restores_hunk_counts_of_multi_file_diffs(
    files: list[tuple[list[str], list[str]]], wrong: int
) -> None:
    """Diffs as models write them (no `diff --git` lines, lines that look like `--- x`), with
    every count replaced by a wrong one, get back exactly the counts difflib wrote."""
    diff = "".join(
        "".join(difflib.unified_diff(old, new, f"a/f{i}", f"b/f{i}"))
        for i, (old, new) in enumerate(files)
    ).encode()
    corrupt = re.sub(
        rb"^(@@ -\d+)(?:,\d+)?( \+\d+)(?:,\d+)? @@",
        rb"\1,%d\2,%d @@" % (wrong, wrong),
        diff,
        flags=re.MULTILINE,
    )
    assert _counts(recount(corrupt)) == _counts(diff)
    assert _counts(recount(diff)) == _counts(diff)


def test_recount_leaves_a_git_diff_as_it_is(dirty_repo: Path, tmp_path: Path) -> None:
    _, _, (a,) = start(dirty_repo, tmp_path, ["a"])
    write(a.path / "lib" / "deep.py", "changed\n" + (a.path / "lib" / "deep.py").read_text())
    write(a.path / "image.bin", BINARY[1:])
    patch = worktree_change(a).patch
    assert recount(patch) == patch


# --- repository context for API models -----------------------------------------------------


def test_context_lists_the_baseline_files_when_no_glob_is_given(dirty_repo: Path) -> None:
    repo = open_repo(dirty_repo)
    baseline = take_baseline(repo, SESSION)
    context = repo_context(repo, baseline, [], budget_tokens=10_000)
    assert set(context.listing) == set(files(dirty_repo, skip=("debug.log", "build/")))
    short = repo_context(repo, baseline, [], budget_tokens=8)
    assert short.listing[-1].startswith("... and ") and len(short.listing) < 5


def test_context_gives_the_chosen_files_as_they_were_at_the_start(dirty_repo: Path) -> None:
    repo = open_repo(dirty_repo)
    baseline = take_baseline(repo, SESSION)
    write(dirty_repo / "tracked.txt", "edited after the session started\n")

    context = repo_context(
        repo, baseline, ["*.txt", "link", "*.bin", "**/*.py"], budget_tokens=10_000
    )

    texts = {f.path: f.text for f in context.files}
    assert texts["tracked.txt"] == "one\nTWO\nthree\n"  # the baseline, unstaged edit included
    assert texts["untracked.txt"] == "untracked\n" and "newdir/nested.txt" not in texts
    assert texts["link"] == "tracked.txt"  # the link itself, not what it points to
    assert texts["lib/deep.py"].startswith("line 1\n")
    assert context.omitted == ("image.bin",)  # binary
    assert "=== lib/deep.py ===\nline 1\n" in context.render()

    tight = repo_context(repo, baseline, ["lib/deep.py", "staged.txt"], budget_tokens=10)
    assert [f.path for f in tight.files] == ["staged.txt"] and tight.omitted == ("lib/deep.py",)


@pytest.mark.parametrize(
    ("glob", "says"),
    [
        ("../*", "outside the repository"),
        ("/etc/passwd", "outside the repository"),
        ("lib/../../x", "outside the repository"),
        ("nothing/*.rs", "matches no file"),
        ("debug.log", "matches no file"),  # ignored files never reach a prompt
    ],
)
def test_context_refuses_globs_outside_or_matching_nothing(
    dirty_repo: Path, glob: str, says: str
) -> None:
    repo = open_repo(dirty_repo)
    baseline = take_baseline(repo, SESSION)
    with pytest.raises(WorkspaceError, match=says):
        repo_context(repo, baseline, [glob], budget_tokens=1000)


# --- applying to the user's tree ----------------------------------------------------------


def _agent_change(repo_path: Path, tmp_path: Path) -> tuple[Repo, Baseline, bytes]:
    """Agent a edits the first and last lines of lib/deep.py, adds a file, deletes one."""
    repo, baseline, (a,) = start(repo_path, tmp_path, ["a"])
    deep = a.path / "lib" / "deep.py"
    lines = deep.read_text().splitlines(keepends=True)
    lines[0], lines[-1] = "LINE 1 by the agent\n", "LINE 30 by the agent\n"
    deep.write_text("".join(lines))
    write(a.path / "feature.py", "def feature():\n    return 42\n")
    (a.path / "image.bin").unlink()
    return repo, baseline, worktree_change(a).patch


def test_apply_onto_an_unchanged_tree_changes_files_only(dirty_repo: Path, tmp_path: Path) -> None:
    repo, baseline, patch = _agent_change(dirty_repo, tmp_path)
    before = user_state(dirty_repo)

    applied = apply_to_user_tree(repo, baseline, patch)

    assert not applied.three_way and applied.commit is None
    assert sorted(applied.paths) == ["feature.py", "image.bin", "lib/deep.py"]
    assert (dirty_repo / "feature.py").read_text() == "def feature():\n    return 42\n"
    assert not (dirty_repo / "image.bin").exists()
    after = user_state(dirty_repo)
    for unchanged in ("index", "head", "stash"):
        assert after[unchanged] == before[unchanged]
    assert (dirty_repo / "untracked.txt").read_text() == "untracked\n"


def test_apply_merges_into_a_tree_changed_elsewhere(dirty_repo: Path, tmp_path: Path) -> None:
    repo, baseline, patch = _agent_change(dirty_repo, tmp_path)
    deep = dirty_repo / "lib" / "deep.py"
    deep.write_text(deep.read_text().replace("line 15\n", "line 15 edited by the user\n"))
    write(dirty_repo / "tracked.txt", "user kept working\n")
    index_before = (dirty_repo / ".git" / "index").read_bytes()

    applied = apply_to_user_tree(repo, baseline, patch)

    assert applied.three_way
    text = deep.read_text()
    assert text.startswith("LINE 1 by the agent\n") and text.endswith("LINE 30 by the agent\n")
    assert "line 15 edited by the user\n" in text
    assert (dirty_repo / "tracked.txt").read_text() == "user kept working\n"
    assert (dirty_repo / ".git" / "index").read_bytes() == index_before


def test_apply_refuses_a_conflicting_tree_and_touches_nothing(
    dirty_repo: Path, tmp_path: Path
) -> None:
    repo, baseline, patch = _agent_change(dirty_repo, tmp_path)
    deep = dirty_repo / "lib" / "deep.py"
    deep.write_text(deep.read_text().replace("line 1\n", "line 1 rewritten by the user\n"))
    before = user_state(dirty_repo)

    with pytest.raises(WorkspaceError, match=r"lib/deep\.py conflict with the change"):
        apply_to_user_tree(repo, baseline, patch)

    assert user_state(dirty_repo) == before
    assert not (dirty_repo / "feature.py").exists()


def test_apply_commits_only_the_change_when_asked(dirty_repo: Path, tmp_path: Path) -> None:
    repo, baseline, patch = _agent_change(dirty_repo, tmp_path)
    head = sh(dirty_repo, "rev-parse", "HEAD").strip()

    applied = apply_to_user_tree(repo, baseline, patch, commit_message="Add the feature")

    assert applied.commit == sh(dirty_repo, "rev-parse", "HEAD").strip()
    assert sh(dirty_repo, "log", "-1", "--format=%s%n%P").split() == ["Add", "the", "feature", head]
    committed = sh(dirty_repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(committed) == ["feature.py", "image.bin", "lib/deep.py"]
    assert sh(dirty_repo, "ls-tree", "--name-only", "HEAD", "image.bin") == ""
    # The user's own staged work stays staged, not committed.
    assert sh(dirty_repo, "diff", "--cached", "--name-only").split() == [
        "added.txt",
        "both.txt",
        "staged.txt",
    ]


def test_commit_holds_the_agents_change_and_none_of_the_users_uncommitted_lines(
    clean_repo: Path, tmp_path: Path
) -> None:
    deep = clean_repo / "lib" / "deep.py"
    original = deep.read_text()
    deep.write_text(original + "def g():\n    return 'mine'\n")  # the user's, not committed
    write(clean_repo / "staged.txt", "my staged edit\n")
    sh(clean_repo, "add", "staged.txt")
    repo, baseline, (a,) = start(clean_repo, tmp_path, ["a"])
    agent_deep = a.path / "lib" / "deep.py"
    agent_deep.write_text(agent_deep.read_text().replace("line 1\n", "LINE 1 by the agent\n"))
    patch = worktree_change(a).patch

    applied = apply_to_user_tree(repo, baseline, patch, commit_message="moot: a's change")

    assert applied.commit == sh(clean_repo, "rev-parse", "HEAD").strip()
    committed = sh(clean_repo, "show", "HEAD:lib/deep.py")
    assert committed == original.replace("line 1\n", "LINE 1 by the agent\n")
    assert "def g" not in sh(clean_repo, "show", "HEAD")
    assert sh(clean_repo, "show", "--name-only", "--format=", "HEAD").split() == ["lib/deep.py"]
    # The working file has both; the user's lines are still theirs, uncommitted.
    assert deep.read_text().startswith("LINE 1 by the agent\n")
    assert deep.read_text().endswith("def g():\n    return 'mine'\n")
    assert sh(clean_repo, "diff", "--cached", "--name-only").split() == ["staged.txt"]
    unstaged = sh(clean_repo, "diff", "lib/deep.py")
    assert "+def g():" in unstaged and "agent" not in unstaged


def test_commit_of_a_change_that_builds_on_uncommitted_lines_is_refused_untouched(
    clean_repo: Path, tmp_path: Path
) -> None:
    deep = clean_repo / "lib" / "deep.py"
    deep.write_text(deep.read_text() + "def g():\n    return 'mine'\n")
    repo, baseline, (a,) = start(clean_repo, tmp_path, ["a"])
    agent_deep = a.path / "lib" / "deep.py"
    agent_deep.write_text(agent_deep.read_text().replace("'mine'", "'the agent's'"))
    patch = worktree_change(a).patch
    before = user_state(clean_repo)

    with pytest.raises(WorkspaceError, match=r"builds on your uncommitted edits.*without --commit"):
        apply_to_user_tree(repo, baseline, patch, commit_message="moot: a's change")

    assert user_state(clean_repo) == before
    applied = apply_to_user_tree(repo, baseline, patch)  # without --commit it applies
    assert applied.commit is None and "'the agent's'" in deep.read_text()


def test_apply_twice_and_a_rejected_commit_say_what_happened(
    dirty_repo: Path, tmp_path: Path
) -> None:
    repo, baseline, patch = _agent_change(dirty_repo, tmp_path)
    apply_to_user_tree(repo, baseline, patch)
    with pytest.raises(WorkspaceError, match="already contain this change"):
        apply_to_user_tree(repo, baseline, patch)

    hook = dirty_repo / ".git" / "hooks" / "pre-commit"
    write(hook, "#!/bin/sh\necho 'lint failed' >&2\nexit 1\n")
    hook.chmod(0o755)
    sh(dirty_repo, "checkout", "-q", "--", "lib/deep.py")  # the user undoes part of it
    with pytest.raises(
        WorkspaceError, match=r"applied to your files but not committed.*lint failed"
    ):
        apply_to_user_tree(repo, baseline, patch, commit_message="Add the feature")
    assert (dirty_repo / "lib" / "deep.py").read_text().startswith("LINE 1 by the agent")


def test_apply_refuses_a_change_made_for_another_baseline(dirty_repo: Path, tmp_path: Path) -> None:
    repo, baseline, _ = _agent_change(dirty_repo, tmp_path)
    alien = "--- a/tracked.txt\n+++ b/tracked.txt\n@@ -1 +1 @@\n-nothing like this\n+x\n"
    with pytest.raises(WorkspaceError, match="does not apply to session"):
        apply_to_user_tree(repo, baseline, alien)


# --- crash safety ---------------------------------------------------------------------------

_CREATE = """
import sys
from pathlib import Path
from moot.code import create_worktrees, load_baseline, open_repo
repo = open_repo(sys.argv[1])
create_worktrees(repo, load_baseline(repo, sys.argv[2]), Path(sys.argv[3]), ["a", "b"])
"""


@pytest.fixture
def crashed(clean_repo: Path, tmp_path: Path) -> Iterator[tuple[Repo, Path, Path]]:
    """A real `create_worktrees` killed with SIGKILL while git checks out agent a's files: a
    smudge filter on the last file signals that it runs, then sleeps. Yields the repository,
    the session folder and the worktree root (a configured one, outside the session folder)."""
    write(clean_repo / ".gitattributes", "zz-slow.dat filter=slow\n")
    write(clean_repo / "zz-slow.dat", "slow to check out\n")
    commit_all(clean_repo, "slow file")
    marker = tmp_path / "checking-out"
    sh(clean_repo, "config", "filter.slow.smudge", f"touch '{marker}'; sleep 30; cat")
    repo = open_repo(clean_repo)
    folder = tmp_path / "session"
    folder.mkdir()
    root = tmp_path / "work trees, ü"  # paths reach git as arguments, never through a shell
    take_baseline(repo, SESSION, session_dir=folder)
    process = subprocess.Popen(
        [sys.executable, "-c", _CREATE, str(clean_repo), SESSION, str(root)],
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        while not marker.exists():
            assert process.poll() is None, "create_worktrees ended before the simulated crash"
            assert time.monotonic() < deadline, "git never reached the slow file"
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    sh(clean_repo, "config", "--unset", "filter.slow.smudge")
    yield repo, folder, root


def test_a_crash_mid_creation_leaves_a_half_made_worktree_moot_can_see(
    crashed: tuple[Repo, Path, Path],
) -> None:
    repo, _, root = crashed
    listed = sh(repo.root, "worktree", "list", "--porcelain")
    assert "locked initializing" in listed  # git's own view: half made
    manifest = json.loads((repo.common_dir / "moot" / "sessions" / f"{SESSION}.json").read_text())
    assert manifest["worktrees"]["a"]["state"] == "creating"
    assert [(w.alias, w.state) for w in list_worktrees(repo, SESSION)] == [("a", "creating")]
    assert find_strays(repo) == []  # the session folder exists: resumable, not stray

    baseline = load_baseline(repo, SESSION)
    assert baseline is not None
    trees = create_worktrees(repo, baseline, root, ["a", "b"])

    assert [w.state for w in list_worktrees(repo, SESSION)] == ["ready", "ready"]
    for tree in trees:
        assert (tree.path / "zz-slow.dat").read_text() == "slow to check out\n"
        assert sh(tree.path, "status", "--porcelain") == ""


def test_strays_of_a_crashed_session_whose_folder_is_gone_are_found_and_cleaned(
    crashed: tuple[Repo, Path, Path],
) -> None:
    repo, folder, root = crashed
    half_made = root / "a"
    assert (half_made / ".git").is_file()
    shutil.rmtree(folder)  # the user deleted the session folder

    (stray,) = find_strays(repo)
    assert stray.session == SESSION and "session folder" in stray.reason
    assert stray.worktrees == (half_made,)
    assert stray.branches == (f"moot/{SESSION}/a",)
    assert stray.refs == (f"refs/moot/{SESSION}/baseline",)

    clean_session(repo, stray.session)

    assert find_strays(repo) == []
    assert sh(repo.root, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert sh(repo.root, "for-each-ref", "refs/moot/", "refs/heads/moot/") == ""
    assert not half_made.exists() and not root.exists()


def test_moot_branches_without_a_manifest_are_strays(clean_repo: Path, tmp_path: Path) -> None:
    repo = open_repo(clean_repo)
    sh(clean_repo, "worktree", "add", "-q", "-b", "moot/lost/a", str(tmp_path / "lost-a"))
    (stray,) = find_strays(repo)
    assert (stray.session, stray.worktrees) == ("lost", (tmp_path / "lost-a",))
    assert "no moot manifest" in stray.reason
    clean_session(repo, "lost")
    assert find_strays(repo) == [] and not (tmp_path / "lost-a").exists()


# --- refusals -------------------------------------------------------------------------------


def _nothing_created(repo: Path) -> None:
    assert not (repo / ".git" / "moot").exists()
    assert sh(repo, "for-each-ref", "refs/moot/", "refs/heads/moot/") == ""
    assert sh(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_refusals_name_the_problem_and_the_fix(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorkspaceError, match="not inside a git repository; run `git init`"):
        open_repo(plain)
    with pytest.raises(WorkspaceError, match="does not exist"):
        open_repo(tmp_path / "missing")
    empty = tmp_path / "empty"
    sh(tmp_path, "init", "-q", str(empty))
    with pytest.raises(WorkspaceError, match="has no commit yet; commit once"):
        open_repo(empty)
    with pytest.raises(WorkspaceError, match="git directory, not a work tree"):
        open_repo(empty / ".git")


def test_paths_outside_the_repository_are_refused(clean_repo: Path, tmp_path: Path) -> None:
    repo = open_repo(clean_repo / "lib")  # any folder inside finds the top
    assert repo.root == clean_repo.resolve()
    assert resolve_in_repo(repo, "lib/deep.py") == clean_repo.resolve() / "lib" / "deep.py"
    (clean_repo / "escape").symlink_to(tmp_path)
    for outside in ("../elsewhere.txt", str(tmp_path / "x"), "escape/secret", "lib/../../x"):
        with pytest.raises(WorkspaceError, match="outside the repository"):
            resolve_in_repo(repo, outside)
    with pytest.raises(WorkspaceError, match="inside git's own folder"):
        resolve_in_repo(repo, ".git/config")


def test_a_checked_out_nested_repository_is_refused_before_anything_is_made(
    clean_repo: Path, tmp_path: Path
) -> None:
    nested = clean_repo / "vendor" / "lib"
    sh(tmp_path, "init", "-q", str(nested))
    write(nested / "code.c", "int x;\n")
    commit_all(nested, "nested")
    repo = open_repo(clean_repo)
    with pytest.raises(WorkspaceError, match=r"submodules or nested repositories \(vendor/lib\)"):
        take_baseline(repo, SESSION, session_dir=tmp_path)
    _nothing_created(clean_repo)


def test_an_uninitialised_submodule_is_reproduced_and_a_checked_out_one_refused(
    tmp_path: Path,
) -> None:
    library = tmp_path / "library"
    sh(tmp_path, "init", "-q", str(library))
    write(library / "lib.c", "int lib;\n")
    commit_all(library, "library")
    main = tmp_path / "main"
    sh(tmp_path, "init", "-q", str(main))
    write(main / "main.c", "int main;\n")
    sh(
        main,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(library),
        "vendor/lib",
    )
    commit_all(main, "with a submodule")
    with pytest.raises(WorkspaceError, match=r"checked-out submodules .* \(vendor/lib\)"):
        take_baseline(open_repo(main), SESSION)
    _nothing_created(main)

    clone = tmp_path / "clone"
    sh(tmp_path, "clone", "-q", str(main), str(clone))  # submodule not initialised
    _, _, (a,) = start(clone, tmp_path, ["a"])
    assert (a.path / "vendor" / "lib").is_dir() and not any((a.path / "vendor" / "lib").iterdir())
    assert files(a.path) == files(clone)
    assert worktree_change(a).empty


def test_bad_names_are_refused(clean_repo: Path, tmp_path: Path) -> None:
    repo = open_repo(clean_repo)
    with pytest.raises(WorkspaceError, match="cannot name a worktree branch"):
        take_baseline(repo, "../x")
    baseline = take_baseline(repo, SESSION)
    with pytest.raises(WorkspaceError, match="cannot name a worktree branch"):
        create_worktrees(repo, baseline, tmp_path / "w", ["a b"])
    with pytest.raises(WorkspaceError, match="already has a baseline"):
        take_baseline(repo, SESSION)


def test_a_crash_between_manifest_and_ref_lets_the_baseline_be_taken_again(
    clean_repo: Path,
) -> None:
    repo = open_repo(clean_repo)
    first = take_baseline(repo, SESSION)
    sh(clean_repo, "update-ref", "-d", first.ref)  # as if killed before update-ref
    assert load_baseline(repo, SESSION) is None
    again = take_baseline(repo, SESSION)
    assert load_baseline(repo, SESSION) == again


def test_git_variables_of_a_surrounding_hook_do_not_redirect_moot(
    dirty_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moot run from inside a git hook inherits GIT_DIR and GIT_INDEX_FILE of another repo."""
    other = tmp_path / "other"
    sh(tmp_path, "init", "-q", str(other))
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    repo, _, (a,) = start(dirty_repo, tmp_path, ["a"])
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert repo.root == dirty_repo.resolve()
    assert files(a.path) == files(dirty_repo, skip=("debug.log", "build/"))
    assert not (other / ".git" / "index").exists()


def test_the_workspace_imports_no_protocol_engine_or_face() -> None:
    code = (
        "import json, sys, moot.code;"
        " print(json.dumps([m for m in sys.modules if m.startswith('moot')]))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    upper = ("protocols", "engine", "models", "cli", "display", "report", "api", "runner")
    assert "moot.errors" in json.loads(loaded)
    assert [m for m in json.loads(loaded) if m.split(".")[1:2] and m.split(".")[1] in upper] == []
