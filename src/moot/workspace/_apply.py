"""`moot apply`: the chosen change, brought into the user's own tree."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from moot.errors import WorkspaceError
from moot.workspace._diff import DiffStats, diff_trees, normalize_patch
from moot.workspace._git import MOOT_IDENTITY, git
from moot.workspace._repo import Repo
from moot.workspace._snapshot import Baseline, snapshot_tree

__all__ = ["Applied", "apply_to_user_tree"]


@dataclass(frozen=True)
class Applied:
    """What `apply_to_user_tree` did. `three_way` is true when the user's files had changed
    since the baseline and the change was merged into them; `commit` is the new commit's id
    when one was asked for."""

    paths: tuple[str, ...]
    stats: DiffStats
    three_way: bool
    commit: str | None = None


def _patched_tree(repo: Repo, baseline: Baseline, patch: bytes) -> str:
    """The baseline tree with the patch applied, built in a scratch index: no file touched."""
    with tempfile.TemporaryDirectory(prefix="moot-apply-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        git(["read-tree", baseline.tree], cwd=repo.root, env=env)
        done = git(["apply", "--cached", "-"], cwd=repo.root, env=env, input=patch, check=False)
        if done.returncode != 0:
            raise WorkspaceError(
                f"the change does not apply to session {baseline.session}'s baseline, so it was"
                f" not made for this repository: {done.stderr.strip()}"
            )
        return git(["write-tree"], cwd=repo.root, env=env).text


def _commit(repo: Repo, tree: str, parent: str, message: str) -> str:
    return git(
        ["commit-tree", tree, "-p", parent],
        cwd=repo.root,
        input=message.encode(),
        env=MOOT_IDENTITY,
    ).text


def _merge(repo: Repo, baseline: Baseline, current: str, patched: str) -> str:
    """Three-way merge of the user's current state and the patched baseline, in git's object
    store only (`merge-tree --write-tree`). Conflicts raise before any file is touched."""
    ours = _commit(repo, current, baseline.commit, "moot: your working state now")
    theirs = _commit(repo, patched, baseline.commit, "moot: the change to apply")
    done = git(
        ["merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", ours, theirs],
        cwd=repo.root,
        check=False,
    )
    fields = done.stdout.decode("utf-8", "replace").split("\0")
    if done.returncode == 1:
        conflicted = sorted({f for f in fields[1:] if f})
        raise WorkspaceError(
            f"not applied: since session {baseline.session} started, your edits to"
            f" {', '.join(conflicted)} conflict with the change. Your files are untouched;"
            " commit or stash your edits and apply again, or apply the session's .patch by hand"
        )
    if done.returncode != 0:
        raise WorkspaceError(f"git merge-tree failed in {repo.root}: {done.stderr.strip()}")
    return fields[0]


def apply_to_user_tree(
    repo: Repo, baseline: Baseline, patch: str | bytes, *, commit_message: str | None = None
) -> Applied:
    """Apply a change made against the session's baseline to the user's working tree.

    If the user's files are as they were at the baseline, the change applies as is. If they
    changed since, the change is merged three-way and applied only when the merge is clean;
    otherwise `WorkspaceError` names the conflicting files and nothing is touched. Only the
    working files change (the index is left alone) unless `commit_message` is given: then the
    files the change touched are staged and committed, with the user's identity and hooks."""
    if commit_message is not None and not commit_message.strip():
        raise WorkspaceError("the commit message is empty; give one, or apply without committing")
    data = normalize_patch(patch)
    patched = _patched_tree(repo, baseline, data)
    if patched == baseline.tree:
        raise WorkspaceError("the change is empty: there is nothing to apply")
    current, _ = snapshot_tree(repo.root, repo.index)
    three_way = current != baseline.tree
    target = _merge(repo, baseline, current, patched) if three_way else patched
    if target == current:
        raise WorkspaceError("your files already contain this change: there is nothing to apply")
    change = diff_trees(repo.root, current, target)
    done = git(["apply", "-"], cwd=repo.root, input=change.patch, check=False)
    if done.returncode != 0:
        raise WorkspaceError(
            "not applied: your files changed while moot was applying the change (nothing was"
            f" modified); try again. git said: {done.stderr.strip()}"
        )
    commit = None
    if commit_message is not None:
        paths = ["--", *change.paths]
        literal = {"GIT_LITERAL_PATHSPECS": "1"}  # a file named `*.py` is that file only
        try:
            git(["add", "-A", *paths], cwd=repo.root, env=literal)
            git(
                ["commit", "--quiet", "-m", commit_message, *paths],
                cwd=repo.root,
                env=literal,
                hooks=True,
            )
        except WorkspaceError as exc:
            raise WorkspaceError(
                f"the change was applied to your files but not committed: {exc}"
            ) from exc
        commit = git(["rev-parse", "HEAD"], cwd=repo.root).text
    return Applied(paths=change.paths, stats=change.stats, three_way=three_way, commit=commit)
