"""Repository context for agents that cannot read the worktree themselves (API and local models).

Files are read from the baseline commit, not the disk: what the model sees is exactly what the
agents start from, ignored files (secrets, build output) never reach a prompt, and a symlink
cannot lead outside the repository (its blob is the link text).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from msgspec import Struct

from moot.code._git import git
from moot.code._repo import Repo
from moot.code._snapshot import Baseline
from moot.errors import WorkspaceError
from moot.types import estimate_tokens

__all__ = ["ContextFile", "RepoContext", "repo_context"]

# git's own test for binary content: a NUL byte in the first 8000 bytes.
_BINARY_PROBE = 8000


class ContextFile(Struct, frozen=True):
    path: str
    text: str


class RepoContext(Struct, frozen=True):
    """Files chosen by the globs, whole, in order, within the budget; or, with no glob, the
    list of the repository's files. `omitted` names files matched but left out: binary, or
    past the budget."""

    files: tuple[ContextFile, ...]
    listing: tuple[str, ...]
    omitted: tuple[str, ...]
    tokens: int

    def render(self) -> str:
        """A plain rendering for a prompt: each file under a `=== path ===` line."""
        parts = [f"=== {f.path} ===\n{f.text}" for f in self.files]
        if self.listing:
            parts.append("Files in the repository:\n" + "\n".join(self.listing))
        if self.omitted:
            parts.append("Left out (binary or over the context budget): " + ", ".join(self.omitted))
        return "\n\n".join(parts)


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """`*` and `?` stay within one folder, `**` crosses folders, the rest is literal."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


def _relative_glob(repo: Repo, pattern: str) -> str:
    """The glob relative to the repository's top; WorkspaceError if it points outside."""
    given = pattern
    if posixpath.isabs(pattern):
        root = repo.root.as_posix().rstrip("/") + "/"
        if not pattern.startswith(root):
            raise WorkspaceError(
                f"--context {given!r} is outside the repository {repo.root}; name files inside it"
            )
        pattern = pattern[len(root) :]
    normal = posixpath.normpath(pattern)
    if normal == ".." or normal.startswith("../"):
        raise WorkspaceError(
            f"--context {given!r} is outside the repository {repo.root}; name files inside it"
        )
    return "**" if normal == "." else normal


def _read_blobs(repo: Repo, commit: str, paths: list[str]) -> dict[str, bytes]:
    """Every path's content at `commit`, through one `git cat-file --batch`."""
    if not paths:
        return {}
    request = "".join(f"{commit}:{p}\n" for p in paths).encode("utf-8", "surrogateescape")
    raw = git(["cat-file", "--batch"], cwd=repo.root, input=request).stdout
    found: dict[str, bytes] = {}
    at = 0
    for path in paths:
        end = raw.index(b"\n", at)
        header = raw[at:end].split()
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":  # "missing", or a submodule's commit
            continue
        size = int(header[2])
        found[path] = raw[at : at + size]
        at += size + 1
    return found


def repo_context(
    repo: Repo, baseline: Baseline, globs: Sequence[str], *, budget_tokens: int
) -> RepoContext:
    """The context an API model gets with a code task, within `budget_tokens`.

    With globs (`src/**/*.py`, `README.md`), the files they match at the baseline, whole, in
    glob order then path order, until the budget is spent; a glob matching nothing or pointing
    outside the repository raises `WorkspaceError`. Without globs, the file listing, cut to
    the budget."""
    listed = git(["ls-tree", "-r", "-z", "--name-only", baseline.commit], cwd=repo.root).stdout
    all_paths = [p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p]
    if not globs:
        listing: list[str] = []
        used = 0
        for path in all_paths:
            cost = estimate_tokens(path + "\n")
            if used + cost > budget_tokens:
                listing.append(f"... and {len(all_paths) - len(listing)} more files")
                break
            listing.append(path)
            used += cost
        return RepoContext(files=(), listing=tuple(listing), omitted=(), tokens=used)
    chosen: list[str] = []
    for pattern in globs:
        regex = _glob_regex(_relative_glob(repo, pattern))
        matched = [p for p in all_paths if regex.fullmatch(p)]
        if not matched:
            raise WorkspaceError(
                f"--context {pattern!r} matches no file of the repository at the session's start"
            )
        chosen.extend(p for p in matched if p not in chosen)
    blobs = _read_blobs(repo, baseline.commit, chosen)
    files: list[ContextFile] = []
    omitted: list[str] = []
    used = 0
    for path in chosen:
        data = blobs.get(path)
        if data is None or b"\0" in data[:_BINARY_PROBE]:
            omitted.append(path)
            continue
        text = data.decode("utf-8", errors="replace")
        cost = estimate_tokens(text)
        if used + cost > budget_tokens:
            omitted.append(path)
            continue
        files.append(ContextFile(path, text))
        used += cost
    return RepoContext(files=tuple(files), listing=(), omitted=tuple(omitted), tokens=used)
