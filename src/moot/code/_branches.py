"""A worktree's work as commits on its branch, and a branch of the user's made to point at it."""

from __future__ import annotations

from moot.code._git import MOOT_IDENTITY, git
from moot.code._repo import Repo
from moot.code._worktrees import Worktree, _git_worktrees
from moot.errors import WorkspaceError

__all__ = ["commit_worktree", "publish_branch"]


def _identity(worktree: Worktree) -> dict[str, str]:
    """The repository's configured user.name and user.email when both are set, else moot's."""
    found = [
        git(["config", "--get", key], cwd=worktree.path, check=False).text.strip()
        for key in ("user.name", "user.email")
    ]
    if not all(found):
        return MOOT_IDENTITY
    name, email = found
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


def _head(worktree: Worktree) -> str:
    return git(["rev-parse", "--verify", "HEAD^{commit}"], cwd=worktree.path).text


def commit_worktree(worktree: Worktree, message: str) -> str:
    """Commit everything in the worktree (new, edited and deleted files; ignored files not) on
    its branch, and return the commit. Nothing to commit: HEAD, unchanged. So a repeat after a
    crash between the commit and its record returns the commit already made.

    Plumbing rather than `git commit`: the message is stored exactly as given (it reaches git
    on stdin), and no hook, template, cleanup or signing of the user's config applies."""
    path = worktree.path
    head = _head(worktree)
    git(["add", "-A", "--", ":/"], cwd=path)
    tree = git(["write-tree"], cwd=path).text
    if tree == git(["rev-parse", head + "^{tree}"], cwd=path).text:
        return head
    commit = git(
        ["commit-tree", "--no-gpg-sign", tree, "-p", head],
        cwd=path,
        input=message.encode("utf-8"),
        env=_identity(worktree),
    ).text
    # HEAD is the worktree's branch: moving it from `head` only, so a concurrent move fails.
    git(["update-ref", "-m", "moot: commit", "HEAD", commit, head], cwd=path)
    return commit


def _check_branch(repo: Repo, branch: str) -> None:
    if branch == "moot" or branch.startswith("moot/"):
        raise WorkspaceError(
            f"the branch {branch!r} is in moot's own namespace (moot/), which `moot clean`"
            " removes with its session; publish under another name"
        )
    valid = git(["check-ref-format", f"refs/heads/{branch}"], cwd=repo.root, check=False)
    if branch.startswith("-") or branch == "HEAD" or valid.returncode != 0:
        raise WorkspaceError(f"{branch!r} is not a valid branch name; choose another")


def publish_branch(repo: Repo, worktree: Worktree, branch: str) -> str:
    """Make `refs/heads/<branch>` point at the worktree's HEAD commit, and return it: created,
    or fast-forwarded. A branch whose commit is not in the worktree's history, or one checked
    out in some worktree (its files would no longer match it), is refused untouched: moot never
    clobbers the user's work. Outside moot's namespace, it outlives the session."""
    _check_branch(repo, branch)
    head = _head(worktree)
    ref = f"refs/heads/{branch}"
    found = git(["rev-parse", "--verify", "-q", ref + "^{commit}"], cwd=repo.root, check=False)
    old = found.text if found.returncode == 0 else ""
    if old == head:
        return head
    if old:
        ahead = git(["merge-base", "--is-ancestor", old, head], cwd=repo.root, check=False)
        if ahead.returncode != 0:
            raise WorkspaceError(
                f"the branch {branch} exists at {old[:12]}, which is not in the history of"
                f" moot's result ({head[:12]}, worktree {worktree.alias}); moot does not"
                f" overwrite it: rename or delete it (git branch -m {branch} {branch}-old),"
                " or publish under another name"
            )
    holder = next((w for w in _git_worktrees(repo) if w.branch == ref), None)
    if holder is not None:
        raise WorkspaceError(
            f"the branch {branch} is checked out in {holder.path}; moving it would leave that"
            " checkout's files behind it: switch that checkout to another branch, or publish"
            " under another name"
        )
    git(["update-ref", "-m", "moot: publish", ref, head, old], cwd=repo.root)
    return head
