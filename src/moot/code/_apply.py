"""`moot apply`: the chosen change, brought into the user's own tree."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from msgspec import Struct

from moot.code._diff import DiffStats, diff_trees, normalize_patch
from moot.code._git import MOOT_IDENTITY, git
from moot.code._manifest import read_manifest
from moot.code._repo import Repo
from moot.code._snapshot import Baseline, moot_folders, snapshot_tree
from moot.errors import WorkspaceError

__all__ = ["Applied", "apply_to_user_tree"]


class Applied(Struct, frozen=True):
    """What `apply_to_user_tree` did. `three_way` is true when the user's files had changed
    since the baseline and the change was merged into them; `merged` the files both the user
    (since the baseline) and the change edited, whose lines were merged; `commit` is the new
    commit's id when one was asked for."""

    paths: tuple[str, ...]
    stats: DiffStats
    three_way: bool
    commit: str | None = None
    merged: tuple[str, ...] = ()


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


def _in_index(repo: Repo, index: Path, patch: bytes, refusal: str) -> None:
    """Apply `patch` to the index file `index` alone (three-way where the plain apply fails).
    Where it does not apply cleanly, refuse the commit: `refusal`, with the paths left
    conflicted (or git's message when it could not apply at all) in place of its `{}`."""
    env = {"GIT_INDEX_FILE": str(index)}
    done = git(
        ["apply", "--cached", "--3way", "-"], cwd=repo.root, env=env, input=patch, check=False
    )
    if done.returncode == 0:
        return
    unmerged = git(["ls-files", "-u", "-z"], cwd=repo.root, env=env).stdout.decode(
        "utf-8", "replace"
    )
    paths = sorted({r.split("\t", 1)[1] for r in unmerged.split("\0") if "\t" in r})
    conflicts = ", ".join(paths or [done.stderr.strip() or "git apply failed"])
    raise WorkspaceError("not committed, and nothing was changed: " + refusal.format(conflicts))


class _CommitPlan(Struct, frozen=True):
    """Built before any file is touched: the index to commit (HEAD plus the change, nothing of
    the user's uncommitted work) and the user's own index with the change added."""

    commit_index: Path
    user_index: Path
    paths: tuple[str, ...]


def _plan_commit(repo: Repo, patch: bytes, paths: tuple[str, ...], scratch: Path) -> _CommitPlan:
    """Refuse `--commit` when the change cannot stand on HEAD alone (it edits lines of the
    user's uncommitted work), before anything is touched."""
    commit_index, user_index = scratch / "commit-index", scratch / "user-index"
    git(["read-tree", "HEAD"], cwd=repo.root, env={"GIT_INDEX_FILE": str(commit_index)})
    _in_index(
        repo,
        commit_index,
        patch,
        "the change builds on your uncommitted edits ({}), so a commit of the change alone is"
        " impossible. Apply it without --commit, or commit your own changes first and apply again",
    )
    if repo.index.exists():
        shutil.copy2(repo.index, user_index)
    else:
        git(["read-tree", "HEAD"], cwd=repo.root, env={"GIT_INDEX_FILE": str(user_index)})
    _in_index(
        repo,
        user_index,
        patch,
        "the change overlaps what you staged in {}. Apply it without --commit, or commit or"
        " unstage your own changes first",
    )
    return _CommitPlan(commit_index, user_index, paths)


def _commit_change(repo: Repo, plan: _CommitPlan, message: str) -> str:
    """Commit the planned index (the user's identity and hooks), then bring the user's real
    index up to the new HEAD for the change's paths only, so `git status` shows their own
    staged work as before and nothing of the change as staged or reverted."""
    literal = {"GIT_LITERAL_PATHSPECS": "1"}  # a file named `*.py` is that file only
    try:
        git(
            ["commit", "--quiet", "-m", message],
            cwd=repo.root,
            env={"GIT_INDEX_FILE": str(plan.commit_index), **literal},
            hooks=True,
        )
    except WorkspaceError as exc:
        raise WorkspaceError(
            f"the change was applied to your files but not committed: {exc}"
        ) from exc
    entries = git(
        ["ls-files", "-s", "-z", "--", *plan.paths],
        cwd=repo.root,
        env={"GIT_INDEX_FILE": str(plan.user_index), **literal},
    ).stdout.split(b"\0")
    staged = {e.split(b"\t", 1)[1]: e for e in entries if b"\t" in e}
    commit = git(["rev-parse", "HEAD"], cwd=repo.root).text
    gone = b"0 " + b"0" * len(commit) + b"\t"  # mode 0: remove the entry (a deleted file)
    lines = [staged.get(path.encode(), gone + path.encode()) for path in plan.paths]
    try:
        git(["update-index", "-z", "--index-info"], cwd=repo.root, input=b"\0".join(lines) + b"\0")
    except WorkspaceError as exc:
        raise WorkspaceError(
            f"the change was committed as {commit[:12]}, but your index still holds the old"
            f" version of {', '.join(plan.paths)} ({exc}); stage them as you want them"
            " (`git add` or `git reset -- PATH`)"
        ) from exc
    return commit


def apply_to_user_tree(
    repo: Repo, baseline: Baseline, patch: str | bytes, *, commit_message: str | None = None
) -> Applied:
    """Apply a change made against the session's baseline to the user's working tree.

    If the user's files are as they were at the baseline, the change applies as is. If they
    changed since, the change is merged three-way and applied only when the merge is clean;
    otherwise `WorkspaceError` names the conflicting files and nothing is touched. Only the
    working files change (the index is left alone) unless `commit_message` is given: then a
    commit on HEAD holds the change and nothing else (the user's uncommitted work, staged or
    not, stays uncommitted), made with the user's identity and hooks. A change that cannot be
    committed alone (it edits the user's uncommitted lines) is refused before anything is
    touched."""
    if commit_message is not None and not commit_message.strip():
        raise WorkspaceError("the commit message is empty; give one, or apply without committing")
    data = normalize_patch(patch)
    patched = _patched_tree(repo, baseline, data)
    if patched == baseline.tree:
        raise WorkspaceError("the change is empty: there is nothing to apply")
    manifest = read_manifest(repo, baseline.session)
    skip = moot_folders(repo, manifest.session_dir if manifest is not None else None)
    current, _ = snapshot_tree(repo.root, repo.index, skip)
    three_way = current != baseline.tree
    target = _merge(repo, baseline, current, patched) if three_way else patched
    if target == current:
        raise WorkspaceError("your files already contain this change: there is nothing to apply")
    change = diff_trees(repo.root, current, target)
    merged: tuple[str, ...] = ()
    if three_way:  # the files the user edited since the baseline that the change edits too
        theirs = set(diff_trees(repo.root, baseline.tree, patched).paths)
        merged = tuple(
            p for p in diff_trees(repo.root, baseline.tree, current).paths if p in theirs
        )
    with tempfile.TemporaryDirectory(prefix="moot-commit-") as scratch:
        plan = None
        if commit_message is not None:
            own = diff_trees(repo.root, baseline.tree, patched).paths
            plan = _plan_commit(repo, data, own, Path(scratch))
        done = git(["apply", "-"], cwd=repo.root, input=change.patch, check=False)
        if done.returncode != 0:
            raise WorkspaceError(
                "not applied: your files changed while moot was applying the change (nothing"
                f" was modified); try again. git said: {done.stderr.strip()}"
            )
        commit = None
        if plan is not None and commit_message is not None:
            commit = _commit_change(repo, plan, commit_message)
    return Applied(
        paths=change.paths, stats=change.stats, three_way=three_way, commit=commit, merged=merged
    )
