"""An agent's change as a diff against the baseline; a model's diff applied in its worktree."""

from __future__ import annotations

from pathlib import Path

from msgspec import Struct

from moot.code import _kept
from moot.code._git import git
from moot.code._hunks import recount
from moot.code._snapshot import worktree_tree
from moot.code._worktrees import Worktree
from moot.files import atomic_write
from moot.text import plural

__all__ = [
    "MAX_PATCH_BYTES",
    "Change",
    "DiffStats",
    "PatchResult",
    "apply_patch",
    "diff_trees",
    "normalize_patch",
    "save_patch",
    "worktree_change",
]

# A model's diff larger than this is refused before git sees it.
MAX_PATCH_BYTES = 5 * 1024 * 1024
# git's error text is quoted back to the model; its head says what went wrong.
_MAX_ERROR_CHARS = 4000

# Explicit, so the user's diff.renames or diff.algorithm config cannot change what we produce.
_DIFF = ["diff", "--binary", "--find-renames", "--no-ext-diff", "--no-textconv", "--no-color"]


class DiffStats(Struct, frozen=True):
    """Files touched, lines added and removed (binary files count as touched, 0/0)."""

    files: int = 0
    insertions: int = 0
    deletions: int = 0

    def __str__(self) -> str:
        return f"{plural(self.files, 'file')}, +{self.insertions} -{self.deletions}"


class Change(Struct, frozen=True):
    """A diff against the baseline, applicable with `git apply` (binary files included).

    `paths` names every path touched (both sides of a rename). `patch` is bytes: files are not
    always UTF-8. `text` is for showing it (to a judge, in a report), with undecodable bytes
    replaced."""

    patch: bytes
    stats: DiffStats
    paths: tuple[str, ...]
    tree: str

    @property
    def text(self) -> str:
        return self.patch.decode("utf-8", errors="replace")

    @property
    def empty(self) -> bool:
        return not self.patch


class PatchResult(Struct, frozen=True):
    """Whether a diff applied; if not, git's own explanation, fit to quote in a re-ask."""

    applied: bool
    error: str = ""


def _numstat(cwd: Path, old: str, new: str) -> tuple[DiffStats, tuple[str, ...]]:
    raw = git([*_DIFF, "--numstat", "-z", old, new], cwd=cwd).stdout.decode("utf-8", "replace")
    fields = raw.split("\0")
    files = insertions = deletions = 0
    paths: list[str] = []
    i = 0
    while i < len(fields) and fields[i]:
        added, removed, path = fields[i].split("\t", 2)
        if path:
            paths.append(path)
            i += 1
        else:  # a rename: "added\tremoved\t" then the old and new paths as their own fields
            paths.extend(fields[i + 1 : i + 3])
            i += 3
        files += 1
        insertions += int(added) if added.isdigit() else 0
        deletions += int(removed) if removed.isdigit() else 0
    return DiffStats(files, insertions, deletions), tuple(paths)


def diff_trees(cwd: Path, old: str, new: str) -> Change:
    """The change from tree or commit `old` to `new`, computed in the repository at `cwd`."""
    patch = git([*_DIFF, "--full-index", old, new], cwd=cwd).stdout
    stats, paths = _numstat(cwd, old, new)
    tree = git(["rev-parse", new + "^{tree}"], cwd=cwd).text
    return Change(patch=patch, stats=stats, paths=paths, tree=tree)


def worktree_change(worktree: Worktree) -> Change:
    """What the agent changed in its worktree: every file added, edited or deleted (ignored
    files excepted) against the commit it started at (the baseline, or its base), commits
    made in it included.

    Safe while an agent is still working: the worktree's own index is only copied, never
    written, so an agent's concurrent `git add` cannot meet our lock."""
    return diff_trees(worktree.path, worktree.baseline, worktree_tree(worktree.path))


def save_patch(worktree: Worktree, destination: Path) -> Change:
    """Write the worktree's change to `destination` (a `.patch` file for `git apply`),
    atomically, and return it."""
    change = worktree_change(worktree)
    atomic_write(destination, change.patch)
    return change


def normalize_patch(patch: str | bytes) -> bytes:
    """Bytes ending in a newline: models often drop the last one, which git calls corrupt."""
    data = patch.encode("utf-8") if isinstance(patch, str) else patch
    if data and not data.endswith(b"\n"):
        data += b"\n"
    return data


def _error(stderr: str) -> str:
    text = stderr.strip() or "git apply failed without saying why"
    return text if len(text) <= _MAX_ERROR_CHARS else text[:_MAX_ERROR_CHARS] + "\n[...]"


def _git_apply(worktree: Worktree, data: bytes) -> PatchResult:
    done = git(
        ["apply", "--ignore-whitespace", "--whitespace=nowarn", "-"],
        cwd=worktree.path,
        input=data,
        check=False,
    )
    return PatchResult(True) if done.returncode == 0 else PatchResult(False, _error(done.stderr))


def apply_patch(worktree: Worktree, patch: str | bytes) -> PatchResult:
    """Apply a model's unified diff to the files of the worktree, all or nothing.

    The diff reaches git on stdin only; git itself refuses paths outside the worktree or inside
    `.git`. It is tried as written, then with its hunk line counts recomputed (models rarely
    count right; see `_hunks`); `--ignore-whitespace` forgives context whose whitespace
    drifted. A diff whose result the worktree already holds is applied (nothing to change). On
    failure nothing is changed and `error` holds git's message, to quote back to the model
    once. The files it touches are kept beside the worktree while git runs (`_kept`), so an
    apply killed half way is undone by the next apply of the same diff."""
    data = normalize_patch(patch)
    if not data.strip():
        return PatchResult(False, "the diff is empty: no file would change")
    if len(data) > MAX_PATCH_BYTES:
        return PatchResult(
            False, f"the diff is {len(data)} bytes; the limit is {MAX_PATCH_BYTES} bytes"
        )
    recounted = recount(data)
    # a process killed inside `git apply` of this diff left files half replaced: put them back
    _kept.put_back(worktree, data)
    _kept.keep(worktree, data, [data] if recounted == data else [data, recounted])
    result = _apply_either(worktree, data, recounted)
    _kept.drop(worktree)
    return result


def _apply_either(worktree: Worktree, data: bytes, recounted: bytes) -> PatchResult:
    first = _git_apply(worktree, data)
    if first.applied:
        return first
    second = first if recounted == data else _git_apply(worktree, recounted)
    if not second.applied and _applied_already(worktree, recounted):
        return PatchResult(True)
    # The recounted attempt's error is about content, not about counts the model cannot see.
    return second


def _applied_already(worktree: Worktree, data: bytes) -> bool:
    """Whether the worktree holds the diff's result already (its reverse applies): applying it
    again changes nothing. A process killed after `git apply` but before the engine journaled
    it finds its diff applied on resume, and must not fail where the first try succeeded."""
    done = git(
        ["apply", "--reverse", "--check", "--ignore-whitespace", "--whitespace=nowarn", "-"],
        cwd=worktree.path,
        input=data,
        check=False,
    )
    return done.returncode == 0
