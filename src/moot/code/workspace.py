"""Code tasks in the engine: the session's workspace (one git worktree per agent, moot.code)
and the journaled records of what happened in it.

Protocols never see git: they call the Session's code effects (`change`, `apply_diff`,
`verify`, `code_context`), whose results are the records below, journaled as `code` events.
Only a live run touches git; resume and replay read the records back.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

from msgspec import Struct, field
from msgspec.structs import replace

from moot.code import (
    Baseline,
    Repo,
    Worktree,
    apply_patch,
    clean_session,
    commit_worktree,
    create_worktrees,
    hide_from_git,
    list_worktrees,
    load_baseline,
    open_repo,
    publish_branch,
    remove_worktree,
    repo_context,
    save_patch,
    take_baseline,
    worktree_change,
)
from moot.code.changes import ApplyResult, CodeChange, VerifyRun
from moot.config import CodeSettings
from moot.errors import WorkspaceError
from moot.models.cli_process import run_process

__all__ = [
    "ApplyResult",
    "CodeChange",
    "CodeWorkspace",
    "VerifyRun",
    "check_repo",
    "tidy_note",
    "worktree_root",
]


def check_repo(settings: CodeSettings) -> CodeSettings:
    """Validate the repository before anything is created (not a repository, no commit, a
    path outside it: `WorkspaceError`); the settings with `repo` made absolute, as the
    session's config records it."""
    repo = open_repo(Path(settings.repo).expanduser())
    return replace(settings, repo=str(repo.root))


def worktree_root(settings: CodeSettings, session: str, folder: Path) -> Path:
    """Where a session's worktrees go: `<configured root>/<session>`, or `<folder>/worktrees`."""
    if settings.worktree_root:
        return Path(settings.worktree_root).expanduser().resolve() / session
    return folder / "worktrees"


def tidy_note(session: str, removed: list[str], kept: list[str]) -> str | None:
    """What `CodeWorkspace.tidy` did, and how to finish: apply or clean."""
    parts = []
    if removed:
        parts.append(f"moot removed the worktrees that held no change ({', '.join(removed)})")
    if kept:
        first = kept[0]
        parts.append(
            f"worktrees with a change remain ({', '.join(kept)}): apply one with"
            f" `moot apply {session} --agent {first}`, or remove them with `moot clean {session}`"
        )
    elif removed:
        parts.append(f"`moot clean {session}` removes the session's last git ref")
    return "; ".join(parts) + "." if parts else None


class CodeWorkspace(Struct):
    """The worktrees of one session. Building it touches nothing; `prepare` (live runs only)
    takes the baseline, or finds it again on resume, and makes the worktrees that are missing."""

    settings: CodeSettings
    session: str
    folder: Path
    _repo: Repo | None = None
    _baseline: Baseline | None = None
    _trees: dict[str, Worktree] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return worktree_root(self.settings, self.session, self.folder)

    def path(self, alias: str) -> Path:
        return self.root / alias

    def patch_file(self, alias: str) -> Path:
        return self.folder / "patches" / f"{alias}.patch"

    def verify_file(self, alias: str) -> Path:
        return self.folder / "patches" / f"{alias}.verify.txt"

    @property
    def _pruned_file(self) -> Path:
        return self.folder / "patches" / "pruned.txt"

    def pruned(self) -> set[str]:
        """The worktrees the protocol removed (a tournament's losers): never made again."""
        try:
            return set(self._pruned_file.read_text(encoding="utf-8").split())
        except FileNotFoundError:
            return set()

    def prepare(self, aliases: list[str]) -> None:
        """Baseline (taken once) and a worktree per alias; safe to repeat after a crash. On a
        resume, the worktrees the protocol added (`add`) come back as they were, and those it
        removed (`remove`) stay removed."""
        repo = open_repo(self.settings.repo)
        baseline = load_baseline(repo, self.session)
        fresh = baseline is None
        if baseline is None:
            self._hide_home(repo)
            baseline = take_baseline(repo, self.session, session_dir=self.folder)
        gone = set() if fresh else self.pruned()
        names = [a for a in aliases if a not in gone]
        if not fresh:  # a protocol's own worktrees, as the manifest recorded them
            names += [
                t.alias
                for t in list_worktrees(repo, self.session)
                if t.alias not in names and t.alias not in gone
            ]
        try:
            if fresh and self.settings.context:  # a --context glob that matches nothing
                self._repo, self._baseline = repo, baseline
                self.context()
            trees = create_worktrees(repo, baseline, self.root, names)
        except WorkspaceError:
            if fresh:  # a new session that cannot start leaves nothing behind
                clean_session(repo, self.session)
            raise
        self._repo, self._baseline = repo, baseline
        self._trees = {t.alias: t for t in trees}

    def _hide_home(self, repo: Repo) -> None:
        """moot run from inside the repository puts `.moot/` there: make it ignore itself
        (the whole `.moot` home, cache included; under another MOOT_HOME only the sessions
        folder, the one part surely moot's) so `git status` stays clean."""
        sessions = self.folder.resolve().parent
        home = sessions.parent
        hide_from_git(repo, home if home.name == ".moot" else sessions)

    def add(self, name: str, base: str | None = None) -> None:
        """One more worktree at the baseline, for a protocol's own candidate (refine's `b` and
        `ab`), or at worktree `base`'s current working state (its change is then measured
        against that state); already there (a resume), it is kept as it is."""
        assert self._repo is not None and self._baseline is not None, "prepare first"
        if name in self.pruned():
            raise WorkspaceError(f"the worktree {name} was removed in this session; use a new name")
        start = self._tree(base).path if base is not None else None
        (tree,) = create_worktrees(self._repo, self._baseline, self.root, [name], start_from=start)
        self._trees[name] = tree

    def remove(self, name: str) -> None:
        """Remove a worktree for good (a losing candidate); its `.patch` file stays. Recorded
        first, so a resume after a crash never makes it again."""
        assert self._repo is not None, "prepare first"
        if name not in self.pruned():
            self._pruned_file.parent.mkdir(parents=True, exist_ok=True)
            with self._pruned_file.open("a", encoding="utf-8") as handle:
                handle.write(name + "\n")
        remove_worktree(self._repo, self.session, name)
        self._trees.pop(name, None)

    def tidy(self, status: str) -> str | None:
        """After a run that ended (not paused or interrupted): when it failed, or no worktree
        holds a change, remove the worktrees that hold none (their branches too), keeping those
        whose change could still be applied. Not recorded as pruned: such a worktree equals
        the baseline, so a resume makes it again as it was. Returns what to tell the user."""
        if self._repo is None or status not in ("failed", "consensus", "no_consensus"):
            return None
        removed: list[str] = []
        try:
            ready = [t for t in list_worktrees(self._repo, self.session) if t.state == "ready"]
            changed = {t.alias for t in ready if worktree_change(t).patch}
            if status != "failed" and changed:
                return None
            for alias in (t.alias for t in ready if t.alias not in changed):
                remove_worktree(self._repo, self.session, alias)
                self._trees.pop(alias, None)
                removed.append(alias)
        except WorkspaceError as exc:  # the outcome stands; the worktrees stay for moot clean
            return f"worktrees not tidied ({exc}); remove them with `moot clean {self.session}`"
        return tidy_note(self.session, removed, sorted(changed))

    def _tree(self, alias: str) -> Worktree:
        tree = self._trees.get(alias)
        if tree is None:
            raise WorkspaceError(f"{alias} has no worktree in this session")
        return tree

    def change(self, alias: str) -> CodeChange:
        """The worktree's change now, also saved as the session folder's `<alias>.patch`."""
        change = save_patch(self._tree(alias), self.patch_file(alias))
        return CodeChange(
            patch=change.text,
            files=change.stats.files,
            insertions=change.stats.insertions,
            deletions=change.stats.deletions,
            paths=change.paths,
        )

    def commit(self, alias: str, message: str) -> str:
        """Commit the worktree's work on its branch (`commit_worktree`); the commit's sha."""
        return commit_worktree(self._tree(alias), message)

    def publish(self, alias: str, branch: str) -> str:
        """Point the user's branch `branch` at the worktree's HEAD (`publish_branch`)."""
        assert self._repo is not None, "prepare first"
        return publish_branch(self._repo, self._tree(alias), branch)

    def tree_path(self, alias: str) -> str:
        """The absolute path of one of the session's worktrees (a live run's)."""
        if self._repo is None:
            raise WorkspaceError("a worktree's path is known in a live run only (not in replay)")
        return str(self._tree(alias).path)

    def apply(self, alias: str, diff: str) -> ApplyResult:
        result = apply_patch(self._tree(alias), diff)
        return ApplyResult(applied=result.applied, error=result.error)

    def context(self) -> str:
        assert self._repo is not None and self._baseline is not None, "prepare first"
        found = repo_context(
            self._repo,
            self._baseline,
            self.settings.context,
            budget_tokens=self.settings.context_budget_tokens,
        )
        return found.render()

    async def verify(self, alias: str) -> list[VerifyRun]:
        """Each verify command in the agent's worktree, one after the other. The commands are
        the user's (config or --verify), never model text. They run under the process
        supervisor the CLI agents use (models/cli_process.py): on a timeout, or if moot itself
        dies, the whole process tree ends, setsid'd or double-forked children included.

        Python keeps its bytecode in a fresh folder of each verification's own: a .pyc in the
        tree is trusted while its source has the same size and the same mtime to the second,
        so a revision of the same length within a second of the last check was verified as the
        code it replaced. (And no __pycache__ lands in the agent's change.)"""
        runs = await self._run(alias, self.settings.verify_commands, None)
        await asyncio.to_thread(self._save_verify, alias, runs)
        return runs

    async def run(self, alias: str, command: str, timeout: float | None = None) -> VerifyRun:
        """One of the user's shell commands (from config, never model text) in the worktree,
        as a verify command runs (default timeout: `verify_timeout`)."""
        (run,) = await self._run(alias, [command], timeout)
        return run

    async def _run(self, alias: str, commands: list[str], timeout: float | None) -> list[VerifyRun]:
        cwd = str(self._tree(alias).path)
        runs = []
        with tempfile.TemporaryDirectory(prefix="moot-pycache-") as pycache:
            env = {**os.environ, "PYTHONPYCACHEPREFIX": pycache}
            for command in commands:
                runs.append(await self._run_one(command, cwd, env, timeout))
        return runs

    async def _run_one(
        self, command: str, cwd: str, env: dict[str, str], timeout: float | None
    ) -> VerifyRun:
        keep = self.settings.output_tail_chars
        done = await run_process(
            ["/bin/sh", "-c", command],
            stdin=None,
            timeout=timeout or self.settings.verify_timeout,
            cwd=cwd,
            env=env,
        )
        stdout = done.stdout.decode("utf-8", "replace")
        output = stdout + ("\n" + done.stderr if done.stderr.strip() else "")
        return VerifyRun(
            command=command,
            exit_code=-1 if done.exit_code is None else done.exit_code,
            timed_out=done.timed_out,
            seconds=round(done.duration, 3),
            tail=output[-keep:],
            cut=len(output) > keep or done.overflow,
        )

    def _save_verify(self, alias: str, runs: list[VerifyRun]) -> None:
        path = self.verify_file(alias)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "\n\n".join(
            f"$ {r.command}\n[{r.status}, {r.seconds:g}s{', output cut' if r.cut else ''}]\n"
            + r.tail
            for r in runs
        )
        path.write_text(text + "\n", encoding="utf-8")
