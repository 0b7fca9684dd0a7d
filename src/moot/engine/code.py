"""Code tasks in the engine: the session's workspace (one git worktree per agent, moot.workspace)
and the journaled records of what happened in it.

Protocols never see git: they call the Session's code effects (`change`, `apply_diff`,
`verify`, `code_context`), whose results are the records below, journaled as `code` events.
Only a live run touches git; resume and replay read the records back.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from moot.config import CodeSettings
from moot.errors import WorkspaceError
from moot.models.cli_process import run_process
from moot.workspace import (
    Baseline,
    Repo,
    Worktree,
    apply_patch,
    clean_session,
    create_worktrees,
    load_baseline,
    open_repo,
    repo_context,
    save_patch,
    take_baseline,
)

__all__ = [
    "ApplyResult",
    "CodeChange",
    "CodeWorkspace",
    "VerifyRun",
    "check_repo",
    "worktree_root",
]


class CodeChange(BaseModel):
    """An agent's change against the baseline, as `git apply` takes it (text: undecodable
    bytes replaced; the session folder's `.patch` file holds the exact bytes)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    patch: str
    files: int
    insertions: int
    deletions: int
    paths: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.patch

    @property
    def stats(self) -> str:
        return f"{self.files} file(s), +{self.insertions} -{self.deletions}"


class ApplyResult(BaseModel):
    """Whether a model's diff applied in its worktree; if not, git's explanation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    applied: bool
    error: str = ""


class VerifyRun(BaseModel):
    """One verify command run in a worktree: its exit status and the tail of its output."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str
    exit_code: int
    timed_out: bool
    seconds: float
    tail: str  # the last characters of stdout then stderr
    cut: bool  # the output was longer than the tail

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def status(self) -> str:
        if self.timed_out:
            return "timed out"
        return "passed" if self.exit_code == 0 else f"failed (exit code {self.exit_code})"


def check_repo(settings: CodeSettings) -> CodeSettings:
    """Validate the repository before anything is created (not a repository, no commit, a
    path outside it: `WorkspaceError`); the settings with `repo` made absolute, as the
    session's config records it."""
    repo = open_repo(Path(settings.repo).expanduser())
    return settings.model_copy(update={"repo": str(repo.root)})


def worktree_root(settings: CodeSettings, session: str, folder: Path) -> Path:
    """Where a session's worktrees go: `<configured root>/<session>`, or `<folder>/worktrees`."""
    if settings.worktree_root:
        return Path(settings.worktree_root).expanduser().resolve() / session
    return folder / "worktrees"


@dataclass
class CodeWorkspace:
    """The worktrees of one session. Building it touches nothing; `prepare` (live runs only)
    takes the baseline, or finds it again on resume, and makes the worktrees that are missing."""

    settings: CodeSettings
    session: str
    folder: Path
    _repo: Repo | None = field(default=None, repr=False)
    _baseline: Baseline | None = field(default=None, repr=False)
    _trees: dict[str, Worktree] = field(default_factory=dict, repr=False)

    @property
    def root(self) -> Path:
        return worktree_root(self.settings, self.session, self.folder)

    def path(self, alias: str) -> Path:
        return self.root / alias

    def patch_file(self, alias: str) -> Path:
        return self.folder / "patches" / f"{alias}.patch"

    def verify_file(self, alias: str) -> Path:
        return self.folder / "patches" / f"{alias}.verify.txt"

    def prepare(self, aliases: list[str]) -> None:
        """Baseline (taken once) and a worktree per alias; safe to repeat after a crash."""
        repo = open_repo(self.settings.repo)
        baseline = load_baseline(repo, self.session)
        fresh = baseline is None
        if baseline is None:
            baseline = take_baseline(repo, self.session, session_dir=self.folder)
        try:
            if fresh and self.settings.context:  # a --context glob that matches nothing
                self._repo, self._baseline = repo, baseline
                self.context()
            trees = create_worktrees(repo, baseline, self.root, aliases)
        except WorkspaceError:
            if fresh:  # a new session that cannot start leaves nothing behind
                clean_session(repo, self.session)
            raise
        self._repo, self._baseline = repo, baseline
        self._trees = {t.alias: t for t in trees}

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
        dies, the whole process tree ends, setsid'd or double-forked children included."""
        cwd = str(self._tree(alias).path)
        keep = self.settings.output_tail_chars
        runs = []
        for command in self.settings.verify_commands:
            done = await run_process(
                ["/bin/sh", "-c", command],
                stdin=None,
                timeout=self.settings.verify_timeout,
                cwd=cwd,
            )
            stdout = done.stdout.decode("utf-8", "replace")
            output = stdout + ("\n" + done.stderr if done.stderr.strip() else "")
            runs.append(
                VerifyRun(
                    command=command,
                    exit_code=-1 if done.exit_code is None else done.exit_code,
                    timed_out=done.timed_out,
                    seconds=round(done.duration, 3),
                    tail=output[-keep:],
                    cut=len(output) > keep or done.overflow,
                )
            )
        await asyncio.to_thread(self._save_verify, alias, runs)
        return runs

    def _save_verify(self, alias: str, runs: list[VerifyRun]) -> None:
        path = self.verify_file(alias)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "\n\n".join(
            f"$ {r.command}\n[{r.status}, {r.seconds:g}s{', output cut' if r.cut else ''}]\n"
            + r.tail
            for r in runs
        )
        path.write_text(text + "\n", encoding="utf-8")
