"""One worktree per agent: created, listed, cleaned, and found again after a crash."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Literal

from msgspec import Struct

from moot.code._git import git
from moot.code._manifest import (
    Entry,
    Manifest,
    delete_manifest,
    read_manifest,
    read_manifests,
    write_manifest,
)
from moot.code._repo import Repo, check_name
from moot.code._snapshot import Baseline, state_commit
from moot.errors import WorkspaceError

__all__ = [
    "Cleaned",
    "Stray",
    "Worktree",
    "branch_name",
    "clean_session",
    "create_worktrees",
    "find_strays",
    "hide_from_git",
    "list_worktrees",
    "remove_worktree",
]

WorktreeState = Literal["ready", "creating", "missing"]

# What prepare_root writes so a worktree root inside the user's repository ignores itself.
_SELF_IGNORE = "# moot's agent worktrees: not part of this repository\n*\n"
# What hide_from_git writes into moot's home or sessions folder inside a repository.
_SELF_IGNORE_HOME = "# moot's sessions: not part of this repository\n*\n"


class Worktree(Struct, frozen=True):
    """An agent's worktree. `baseline`: the commit it started at, which its change is measured
    against (the session's baseline, or the base it was started from). `state`: `ready`
    (usable), `creating` (a crash interrupted its creation; `create_worktrees` redoes it) or
    `missing` (recorded, but git or the disk no longer has it)."""

    session: str
    alias: str
    path: Path
    branch: str
    baseline: str
    state: WorktreeState = "ready"


class Cleaned(Struct, frozen=True):
    """What `clean_session` removed."""

    worktrees: tuple[Path, ...]
    branches: tuple[str, ...]
    refs: tuple[str, ...]


class Stray(Struct, frozen=True):
    """Leftovers of a session moot can no longer use: its folder is gone, or no manifest names
    it. `clean_session(repo, stray.session)` removes them."""

    session: str
    reason: str
    worktrees: tuple[Path, ...]
    branches: tuple[str, ...]
    refs: tuple[str, ...]


class _Listed(Struct, frozen=True):
    path: Path
    branch: str | None
    locked: bool


def branch_name(session: str, alias: str) -> str:
    return f"moot/{session}/{alias}"


def _git_worktrees(repo: Repo) -> list[_Listed]:
    """`git worktree list`, parsed (NUL-separated, so any path survives)."""
    raw = git(["worktree", "list", "--porcelain", "-z"], cwd=repo.root).stdout
    listed: list[_Listed] = []
    for record in raw.decode("utf-8", "surrogateescape").split("\0\0"):
        fields = [f for f in record.split("\0") if f]
        if not fields or not fields[0].startswith("worktree "):
            continue
        path = Path(fields[0].removeprefix("worktree "))
        branch = next((f[7:] for f in fields if f.startswith("branch ")), None)
        locked = any(f == "locked" or f.startswith("locked ") for f in fields)
        listed.append(_Listed(path=path, branch=branch, locked=locked))
    return listed


def _refs(repo: Repo, prefix: str) -> list[str]:
    out = git(["for-each-ref", "--format=%(refname)", prefix], cwd=repo.root).text
    return [line for line in out.splitlines() if line]


def hide_from_git(repo: Repo, folder: Path) -> bool:
    """Make moot's own `folder` (its home or sessions folder) invisible to the user's `git
    status` and to later baselines when it lies inside the work tree: a `.gitignore` of `*` in
    the folder itself, as virtualenvs and tool caches do. That keeps the user's `.gitignore`
    and `.git/info/exclude` untouched and travels with the folder (moved or deleted, nothing is
    left behind). An existing `.gitignore` there is the user's: left alone. True if written."""
    folder = folder.resolve()
    if folder == repo.root or not folder.is_relative_to(repo.root) or not folder.is_dir():
        return False
    marker = folder / ".gitignore"
    if marker.exists():
        return False
    marker.write_text(_SELF_IGNORE_HOME, encoding="utf-8")
    return True


def _prepare_root(repo: Repo, root: Path) -> Path:
    """Create the root; if it lies inside the user's work tree, make it ignore itself, so the
    user's `git status` and later baselines never see the worktrees."""
    root = root.expanduser().resolve()
    if root.is_relative_to(repo.common_dir) or root.is_relative_to(repo.git_dir):
        raise WorkspaceError(f"the worktree root {root} is inside git's own folder; choose another")
    root.mkdir(parents=True, exist_ok=True)
    if root.is_relative_to(repo.root):
        marker = root / ".gitignore"
        if not marker.exists():
            marker.write_text(_SELF_IGNORE, encoding="utf-8")
        probe = git(["check-ignore", "-q", str(root / "probe")], cwd=repo.root, check=False)
        if probe.returncode != 0:
            raise WorkspaceError(
                f"the worktree root {root} is inside the repository and git does not ignore it"
                " (a negated .gitignore pattern?); choose a root outside the repository"
            )
    return root


def _teardown(repo: Repo, path: Path, branch: str, known: list[_Listed]) -> None:
    """Remove one worktree however far its creation got. `path` was created by moot (the
    manifest named it before it existed), so deleting what is left of it is safe."""
    if any(w.path == path for w in known):
        # -f -f: also a worktree left locked ("initializing") by a crash inside worktree add.
        removed = git(["worktree", "remove", "-f", "-f", str(path)], cwd=repo.root, check=False)
        if removed.returncode != 0:
            # a remove killed half way (its .git file already gone): git refuses it; delete
            # what is left and let git forget the worktree it can no longer find
            shutil.rmtree(path, ignore_errors=True)
            git(["worktree", "prune"], cwd=repo.root)
    if path.exists():
        shutil.rmtree(path)
    git(["update-ref", "-d", f"refs/heads/{branch}"], cwd=repo.root, check=False)


def _checkout(repo: Repo, baseline: Baseline) -> str:
    """The commit a new worktree checks out: the user's HEAD when the baseline holds nothing
    more (a clean tree: its tree is HEAD's, so commits made on the worktree's branch sit right
    on the user's history, not on an empty baseline commit), else the baseline commit. Either
    way its change is measured against the baseline."""
    head_tree = git(["rev-parse", baseline.head + "^{tree}"], cwd=repo.root).text
    return baseline.head if head_tree == baseline.tree else baseline.commit


def create_worktrees(
    repo: Repo,
    baseline: Baseline,
    root: Path,
    aliases: list[str],
    *,
    start_from: Path | None = None,
) -> list[Worktree]:
    """A worktree per alias at `root/<alias>`, on branch `moot/<session>/<alias>`, checked out
    at the baseline commit. `root` holds this session's worktrees only (the session folder's
    `worktrees/`, or `<configured root>/<session>`); `clean_session` removes it once empty.

    Files are the user's working files as git sees them: ignored files, empty folders and
    permission bits other than the executable one are not reproduced.

    `start_from`: another worktree of the session whose current working state (its commits,
    staged, unstaged and untracked files) new worktrees start at instead (`state_commit`),
    recorded in the manifest as their base so a resume finds it again.

    Idempotent across a crash: a worktree already `ready` is kept as it is (with the agent's
    work in it); one whose creation was interrupted is removed and made again at the start it
    recorded."""
    session = baseline.session
    for alias in aliases:
        check_name("alias", alias)
    if len(set(aliases)) != len(aliases):
        raise WorkspaceError(f"agent aliases must be distinct, got {aliases}")
    manifest = read_manifest(repo, session)
    if manifest is None or manifest.baseline != baseline.commit:
        raise WorkspaceError(
            f"session {session} has no baseline {baseline.commit[:12]} in {repo.root}; take the"
            " baseline first"
        )
    root = _prepare_root(repo, root)
    manifest = Manifest(
        session=manifest.session,
        session_dir=manifest.session_dir,
        root=str(root),
        baseline=manifest.baseline,
        worktrees=manifest.worktrees,
    )
    write_manifest(repo, manifest)
    made = []
    checkout = _checkout(repo, baseline)
    for alias in aliases:
        path = root / alias
        branch = branch_name(session, alias)
        known = _git_worktrees(repo)
        entry = manifest.worktrees.get(alias)
        listed = next((w for w in known if w.path == path), None)
        if entry is not None and entry.state == "ready" and listed is not None:
            if listed.branch == f"refs/heads/{branch}" and not listed.locked:
                made.append(Worktree(session, alias, path, branch, entry.base or baseline.commit))
                continue
        if entry is not None:  # its start as recorded: a resume must not take a new snapshot
            base = entry.base
            _teardown(repo, Path(entry.path), entry.branch, known)
        elif path.exists() or listed is not None:
            raise WorkspaceError(
                f"{path} already exists and moot did not make it; move it away or choose"
                " another worktree root"
            )
        else:
            base = state_commit(start_from) if start_from is not None else None
        manifest = manifest.with_entry(Entry(alias, str(path), branch, "creating", base))
        write_manifest(repo, manifest)
        try:
            git(
                ["worktree", "add", "--quiet", "-b", branch, str(path), base or checkout],
                cwd=repo.root,
            )
        except WorkspaceError:
            _teardown(repo, path, branch, _git_worktrees(repo))
            write_manifest(repo, manifest.without(alias))
            raise
        manifest = manifest.with_entry(Entry(alias, str(path), branch, "ready", base))
        write_manifest(repo, manifest)
        made.append(Worktree(session, alias, path, branch, base or baseline.commit))
    return made


def list_worktrees(repo: Repo, session: str) -> list[Worktree]:
    """The session's recorded worktrees, each with its state as git and the disk show it."""
    manifest = read_manifest(repo, session)
    if manifest is None:
        return []
    known = {w.path: w for w in _git_worktrees(repo)}
    found = []
    for alias, entry in sorted(manifest.worktrees.items()):
        path = Path(entry.path)
        listed = known.get(path)
        state: WorktreeState = entry.state
        if listed is None or not path.is_dir():
            state = "missing" if entry.state == "ready" else "creating"
        elif listed.locked:
            state = "creating"
        start = entry.base or manifest.baseline or ""
        found.append(Worktree(session, alias, path, entry.branch, start, state))
    return found


def remove_worktree(repo: Repo, session: str, alias: str) -> bool:
    """Remove one of the session's worktrees and its branch (a tournament's losing candidate),
    then its manifest entry (last, so a crash on the way leaves it for `clean_session`). The
    baseline and the other worktrees stay. False when the session records no such worktree.
    Safe to repeat."""
    check_name("alias", alias)
    manifest = read_manifest(repo, session)
    entry = manifest.worktrees.get(alias) if manifest is not None else None
    if manifest is None or entry is None:
        return False
    _teardown(repo, Path(entry.path), entry.branch, _git_worktrees(repo))
    write_manifest(repo, manifest.without(alias))
    return True


def _session_of(name: str, prefix: str) -> str:
    return name.removeprefix(prefix).split("/", 1)[0]


def clean_session(repo: Repo, session: str) -> Cleaned:
    """Remove every worktree, branch and ref of the session, and its manifest (last, so a crash
    while cleaning leaves something to clean again). Safe to repeat."""
    check_name("session", session)
    manifest = read_manifest(repo, session)
    branch_prefix = f"refs/heads/{branch_name(session, '')}"
    known = _git_worktrees(repo)
    paths: dict[Path, str] = {}
    if manifest is not None:
        for entry in manifest.worktrees.values():
            paths[Path(entry.path)] = entry.branch
    for listed in known:
        if listed.branch is not None and listed.branch.startswith(branch_prefix):
            paths.setdefault(listed.path, listed.branch.removeprefix("refs/heads/"))
    # Listed before the teardown below deletes the recorded branches, so the report names them.
    branches = _refs(repo, branch_prefix)
    refs = _refs(repo, f"refs/moot/{session}/")
    for path, branch in paths.items():
        recorded = manifest is not None and str(path) in {
            e.path for e in manifest.worktrees.values()
        }
        if recorded:
            _teardown(repo, path, branch, known)
        else:
            # Not ours by record, but on a moot branch of this session: let git remove what it
            # knows, and nothing more.
            git(["worktree", "remove", "-f", "-f", str(path)], cwd=repo.root)
    for ref in [*branches, *refs]:
        git(["update-ref", "-d", ref], cwd=repo.root)
    if manifest is not None and manifest.root is not None and Path(manifest.root).is_dir():
        root = Path(manifest.root)
        marker = root / ".gitignore"
        if marker.is_file() and marker.read_text(encoding="utf-8") == _SELF_IGNORE:
            if {p.name for p in root.iterdir()} == {".gitignore"}:
                marker.unlink()
        if not any(root.iterdir()):
            root.rmdir()
    delete_manifest(repo, session)
    return Cleaned(
        worktrees=tuple(paths),
        branches=tuple(b.removeprefix("refs/heads/") for b in branches),
        refs=tuple(refs),
    )


def find_strays(repo: Repo) -> list[Stray]:
    """Sessions whose worktrees, branches or refs remain although moot can no longer use them:
    the session folder recorded in the manifest is gone (or, without one, the worktree root),
    or git holds `moot/` branches, worktrees or refs that no manifest names (a crash between
    git's step and ours, or a manifest deleted by hand)."""
    manifests = {m.session: m for m in read_manifests(repo)}
    worktrees: dict[str, list[Path]] = {}
    for listed in _git_worktrees(repo):
        if listed.branch is not None and listed.branch.startswith("refs/heads/moot/"):
            worktrees.setdefault(_session_of(listed.branch, "refs/heads/moot/"), []).append(
                listed.path
            )
    branches: dict[str, list[str]] = {}
    for ref in _refs(repo, "refs/heads/moot/"):
        branches.setdefault(_session_of(ref, "refs/heads/moot/"), []).append(ref[11:])
    refs: dict[str, list[str]] = {}
    for ref in _refs(repo, "refs/moot/"):
        refs.setdefault(_session_of(ref, "refs/moot/"), []).append(ref)
    strays = []
    for session in sorted(set(manifests) | set(worktrees) | set(branches) | set(refs)):
        manifest = manifests.get(session)
        if manifest is None:
            reason = "no moot manifest names it"
        elif manifest.session_dir is not None and not Path(manifest.session_dir).exists():
            reason = f"its session folder {manifest.session_dir} is gone"
        elif manifest.session_dir is None and (
            manifest.root is not None and not Path(manifest.root).exists()
        ):
            reason = f"its worktree root {manifest.root} is gone"
        else:
            continue
        recorded = [Path(e.path) for e in manifest.worktrees.values()] if manifest else []
        all_paths = list(dict.fromkeys([*recorded, *worktrees.get(session, [])]))
        strays.append(
            Stray(
                session=session,
                reason=reason,
                worktrees=tuple(all_paths),
                branches=tuple(branches.get(session, [])),
                refs=tuple(refs.get(session, [])),
            )
        )
    return strays
