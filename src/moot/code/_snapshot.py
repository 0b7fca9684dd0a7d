"""Snapshots of a working state as git trees, and the session's baseline commit."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from msgspec import Struct

from moot.code._git import MOOT_IDENTITY, git
from moot.code._manifest import Manifest, read_manifest, write_manifest
from moot.code._repo import Repo, check_name
from moot.errors import WorkspaceError

__all__ = [
    "Baseline",
    "baseline_ref",
    "load_baseline",
    "moot_folders",
    "snapshot_tree",
    "state_commit",
    "take_baseline",
    "worktree_tree",
]


class Baseline(Struct, frozen=True):
    """The user's exact working state when the session started, as a commit.

    `commit`'s tree holds HEAD plus staged, unstaged and untracked-not-ignored files (the
    working-tree version of each file); its parent is the user's HEAD at that moment."""

    session: str
    commit: str
    tree: str
    head: str

    @property
    def ref(self) -> str:
        return baseline_ref(self.session)


def baseline_ref(session: str) -> str:
    return f"refs/moot/{session}/baseline"


def moot_folders(repo: Repo, session_dir: Path | str | None) -> list[Path]:
    """moot's own folders that lie inside the work tree, which a snapshot must leave out: the
    folder holding the session folders (`.moot/sessions` when moot runs from inside the
    repository), so one session's baseline never holds an earlier session's files or its own.
    A folder that is the work tree itself or above it is never left out."""
    if session_dir is None:
        return []
    folder = Path(session_dir).resolve()
    found = []
    for candidate in (folder.parent, folder):
        if candidate != repo.root and candidate.is_relative_to(repo.root):
            found.append(candidate)
            break
    return found


def snapshot_tree(
    work_tree: Path, index: Path, exclude: Sequence[Path] = ()
) -> tuple[str, list[str]]:
    """Write the working state of `work_tree` as a tree, returning it and its gitlink paths.
    Untracked files under the `exclude` folders (moot's own, see `moot_folders`) are left out.

    The real index is never written: we copy it (so git reuses its stat data instead of hashing
    every file again) to a temporary file, point GIT_INDEX_FILE at the copy and `add -A` there.
    Only new objects reach the repository's object store; they are unreachable until a ref
    names them, and gc drops them in time."""
    with tempfile.TemporaryDirectory(prefix="moot-index-") as scratch:
        temp_index = Path(scratch) / "index"
        env = {"GIT_INDEX_FILE": str(temp_index)}
        if index.exists():
            # copy2 keeps the index's mtime: git trusts an entry's stat data only if the file
            # is older than the index, and a fresh mtime would hide a same-size edit made in
            # the same second as the last `git add` ("racy git").
            shutil.copy2(index, temp_index)
        else:
            git(["read-tree", "HEAD"], cwd=work_tree, env=env)
        skip = [
            f":(top,exclude,literal){p.relative_to(work_tree).as_posix()}"
            for p in exclude
            # git refuses a pathspec naming an ignored folder, and add -A skips it anyway
            if git(["check-ignore", "-q", str(p / "probe")], cwd=work_tree, check=False).returncode
        ]
        git(["add", "-A", "--", ":/", *skip], cwd=work_tree, env=env)
        tree = git(["write-tree"], cwd=work_tree, env=env).text
        staged = git(["ls-files", "-s", "-z"], cwd=work_tree, env=env).stdout
    gitlinks = []
    for record in staged.split(b"\0"):
        if record.startswith(b"160000 "):
            gitlinks.append(record.split(b"\t", 1)[1].decode("utf-8", "replace"))
    return tree, gitlinks


def worktree_tree(work_tree: Path) -> str:
    """The working state of one of moot's worktrees as a tree, its own index only copied (safe
    while an agent works in it)."""
    index = git(["rev-parse", "--path-format=absolute", "--git-path", "index"], cwd=work_tree).text
    tree, _ = snapshot_tree(work_tree, Path(index))
    return tree


def state_commit(work_tree: Path) -> str:
    """The working state of one of moot's worktrees as a commit: its HEAD when nothing is
    staged, edited or untracked, else a snapshot commit whose parent is HEAD (as a baseline is
    made, and as unreachable until a ref names it).

    The snapshot is dated as HEAD was committed, so one working state is one commit: two
    worktrees started from the same state share their base, whenever each was made."""
    head, when = git(["log", "-1", "--format=%H %ct", "HEAD"], cwd=work_tree).text.split()
    tree = worktree_tree(work_tree)
    if tree == git(["rev-parse", head + "^{tree}"], cwd=work_tree).text:
        return head
    message = f"moot snapshot of {work_tree.name}\n\nHEAD {head} plus the uncommitted work.\n"
    dated = {"GIT_AUTHOR_DATE": f"@{when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000"}
    return git(
        ["commit-tree", "--no-gpg-sign", tree, "-p", head],
        cwd=work_tree,
        input=message.encode(),
        env={**MOOT_IDENTITY, **dated},
    ).text


def _check_submodules(repo: Repo, gitlinks: list[str]) -> None:
    """A worktree checks out a submodule as an empty folder. That reproduces a submodule the
    user has not initialised either, but not one whose files are there: refuse those."""
    held = []
    for relative in gitlinks:
        folder = repo.root / relative
        if folder.is_dir() and any(folder.iterdir()):
            held.append(relative)
    if held:
        raise WorkspaceError(
            f"the repository {repo.root} has checked-out submodules or nested repositories"
            f" ({', '.join(held)}); a worktree cannot hold their files. Run the task in the"
            " submodule's own repository, or add nested repositories to .gitignore"
        )


def take_baseline(repo: Repo, session: str, *, session_dir: Path | None = None) -> Baseline:
    """Record the user's working state as the session's baseline, changing none of it.

    The baseline commit is kept reachable by `refs/moot/<session>/baseline` (outside
    refs/heads, so it is no branch of the user's and gc keeps it). `session_dir` is recorded so
    `find_strays` can tell when the session folder is gone. Raises `WorkspaceError` for a
    checked-out submodule, before any ref is created."""
    check_name("session", session)
    recorded = read_manifest(repo, session)
    # A manifest with neither ref nor worktree is a crash between its write and update-ref:
    # nothing was made from that snapshot, so a new one may replace it.
    interrupted = recorded is not None and not recorded.worktrees
    if load_baseline(repo, session) is not None or (recorded is not None and not interrupted):
        raise WorkspaceError(
            f"session {session} already has a baseline in {repo.root}; use load_baseline to"
            " continue it, or clean it first"
        )
    head = git(["rev-parse", "--verify", "HEAD^{commit}"], cwd=repo.root).text
    tree, gitlinks = snapshot_tree(repo.root, repo.index, moot_folders(repo, session_dir))
    _check_submodules(repo, gitlinks)
    message = f"moot baseline of session {session}\n\nHEAD {head} plus the uncommitted work.\n"
    commit = git(
        ["commit-tree", tree, "-p", head],
        cwd=repo.root,
        input=message.encode(),
        env=MOOT_IDENTITY,
    ).text
    # Manifest first: a crash right after update-ref must not leave a ref no manifest names.
    manifest = Manifest(
        session=session,
        session_dir=str(session_dir.resolve()) if session_dir is not None else None,
        baseline=commit,
    )
    write_manifest(repo, manifest)
    git(["update-ref", baseline_ref(session), commit, ""], cwd=repo.root)
    return Baseline(session=session, commit=commit, tree=tree, head=head)


def load_baseline(repo: Repo, session: str) -> Baseline | None:
    """The session's baseline, or None if it has none (never taken, or cleaned)."""
    check_name("session", session)
    found = git(
        ["rev-parse", "--verify", "-q", baseline_ref(session) + "^{commit}"],
        cwd=repo.root,
        check=False,
    )
    if found.returncode != 0:
        return None
    commit = found.text
    tree, head = git(
        ["rev-parse", commit + "^{tree}", commit + "^1"], cwd=repo.root
    ).text.splitlines()
    return Baseline(session=session, commit=commit, tree=tree, head=head)
