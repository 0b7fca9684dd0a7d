"""The user's repository: validated once, before anything is created."""

from __future__ import annotations

import re
from pathlib import Path

from msgspec import Struct

from moot.code._git import git, git_version
from moot.errors import WorkspaceError

__all__ = ["MIN_GIT", "Repo", "check_name", "open_repo", "resolve_in_repo"]

# merge-tree --write-tree (the three-way check of `moot apply`) and `worktree list -z`.
MIN_GIT = (2, 38)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


class Repo(Struct, frozen=True):
    """A git work tree with at least one commit.

    `root` is the top of the work tree; `git_dir` its (per-worktree) git directory, holding its
    index; `common_dir` the directory shared by all worktrees, holding refs, objects and moot's
    manifests."""

    root: Path
    git_dir: Path
    common_dir: Path

    @property
    def index(self) -> Path:
        return self.git_dir / "index"

    @property
    def manifests(self) -> Path:
        return self.common_dir / "moot" / "sessions"


def check_name(kind: str, name: str) -> str:
    """A session id or alias must be safe as a path component and inside a branch name."""
    if not _NAME.fullmatch(name):
        raise WorkspaceError(
            f"{kind} {name!r} cannot name a worktree branch: use 1-64 letters, digits, '-' or '_',"
            " starting with a letter or digit"
        )
    return name


def open_repo(path: Path | str) -> Repo:
    """Validate `path` as a place code tasks can run, or raise `WorkspaceError` saying why.

    `path` may be any folder inside the work tree; the repository is its top. Nothing is
    created or changed."""
    found = git_version()
    if found < MIN_GIT:
        raise WorkspaceError(
            f"code tasks need git {MIN_GIT[0]}.{MIN_GIT[1]} or newer (found"
            f" {found[0]}.{found[1]}); upgrade git"
        )
    folder = Path(path).expanduser()
    if not folder.exists():
        raise WorkspaceError(f"{folder} does not exist; pass --repo the folder of a git repository")
    if not folder.is_dir():
        raise WorkspaceError(f"{folder} is a file; pass --repo the folder of a git repository")
    folder = folder.resolve()
    probe = git(
        ["rev-parse", "--is-bare-repository", "--is-inside-git-dir"], cwd=folder, check=False
    )
    if probe.returncode != 0:
        raise WorkspaceError(
            f"{folder} is not inside a git repository; run `git init` and commit there, or pass"
            " --repo the folder of an existing repository"
        )
    bare, inside_git_dir = probe.text.split()
    if bare == "true" or inside_git_dir == "true":
        raise WorkspaceError(
            f"{folder} is a git directory, not a work tree; pass --repo the folder where the"
            " project's files are checked out"
        )
    where = git(
        [
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-dir",
            "--git-common-dir",
        ],
        cwd=folder,
    ).text.splitlines()
    root, git_dir, common_dir = (Path(line).resolve() for line in where)
    head = git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd=root, check=False)
    if head.returncode != 0:
        raise WorkspaceError(
            f"the repository {root} has no commit yet; commit once (git add -A && git commit)"
            " so the agents have a baseline to start from"
        )
    return Repo(root=root, git_dir=git_dir, common_dir=common_dir)


def resolve_in_repo(repo: Repo, path: Path | str) -> Path:
    """`path` (relative to the repository's top, or absolute) resolved, symlinks included.

    Raises `WorkspaceError` when it lies outside the work tree or inside the `.git` folder, so a
    context glob or a file named by the user or a model cannot reach elsewhere."""
    given = Path(path).expanduser()
    full = (given if given.is_absolute() else repo.root / given).resolve()
    if not full.is_relative_to(repo.root):
        raise WorkspaceError(f"{path} is outside the repository {repo.root}; name files inside it")
    if (
        full.is_relative_to(repo.git_dir)
        or full.is_relative_to(repo.common_dir)
        or (".git" in full.relative_to(repo.root).parts)
    ):
        raise WorkspaceError(f"{path} is inside git's own folder; name files of the project")
    return full
