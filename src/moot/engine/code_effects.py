"""A code task's effects, as the Session offers them to protocols (`change`, `apply_diff`,
`verify`, `add_worktree`, `prune_worktree`, `commit`, `run_in`, `publish_branch`,
`code_context`, `ask_in`): each computed in the session's workspace (code/workspace.py) on a
live run, journaled once by the session as a `code` event, and read back as its typed record
(code/changes.py) on resume and replay, which touch nothing. `CodeTask` is the Session's face
of them (the Session inherits it); `CodeEffects` does the work. Also where a CLI coding agent's
call runs: its worktree, or a read-only sandbox.

Nothing here is imported by a question: the git plumbing and the records load when used.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from moot.code.changes import ApplyResult, CodeChange, VerifyRun
    from moot.code.workspace import CodeWorkspace

__all__ = ["CodeEffects", "CodeTask", "Compute", "Once"]

Compute = Callable[[], Awaitable[Any]]
# The session's journaling of one code effect: (step, what, agent, compute, tree) -> the
# journaled JSON result (`Session._once`).
Once = Callable[[str, str, str | None, Compute, str | None], Awaitable[Any]]


class CodeEffects:
    """The code effects of one session over its `workspace` (None: a question, whose resume
    or replay may still read a recorded effect back). `once` journals an effect, `signal`
    tells the faces, `sandbox` is where a CLI agent without a worktree runs (a judge)."""

    def __init__(
        self,
        workspace: CodeWorkspace | None,
        *,
        once: Once,
        signal: Callable[..., None],
        sandbox: Path,
    ) -> None:
        self._code = workspace
        self._once = once
        self._signal = signal
        self._sandbox = sandbox
        self._context: asyncio.Future[Any] | None = None  # the repository context, once
        self._worktree_at: dict[str, str] = {}  # step -> the worktree a CLI agent works in
        self._reading: set[str] = set()  # steps whose CLI agent only reads its worktree

    def _workspace(self) -> CodeWorkspace:
        """The workspace an effect computes in: only a session with a repository computes
        one (its resume or replay reads a recorded effect back without it)."""
        if self._code is None:
            raise RuntimeError("a code effect in a session without a repository")
        return self._code

    def call_tree(self, alias: str, step: str) -> tuple[str, bool]:
        """Where a CLI coding agent's call for `step` runs, and whether read-only: its own
        worktree, or the one the protocol named (`ask_in`); an agent with none (a judge, an
        arbiter) runs in the session's sandbox, never the user's folder, and judges there
        with its CLI's read-only arguments."""
        tree = self._workspace().path(self._worktree_at.get(step, alias))
        if tree.is_dir():
            return str(tree), step in self._reading
        self._sandbox.mkdir(exist_ok=True)
        return str(self._sandbox), True

    def work_in(self, tree: str, step: str, *, read_only: bool = False) -> None:
        """The CLI coding agent asked at `step` works in worktree `tree` (`Session.ask_in`),
        with its CLI's read-only arguments when `read_only` (an explorer that reads it)."""
        self._worktree_at[step] = tree
        if read_only:
            self._reading.add(step)

    async def change(self, alias: str, step: str, tree: str | None) -> CodeChange:
        where = tree or alias

        async def compute() -> Any:
            found = await asyncio.to_thread(self._workspace().change, where)
            return found.model_dump(mode="json")

        found = await self._once(step, "change", alias, compute, where)
        from moot.code.changes import CodeChange

        return CodeChange.model_validate(found)

    async def apply_diff(self, alias: str, diff: str, step: str, tree: str | None) -> ApplyResult:
        where = tree or alias

        async def compute() -> Any:
            done = await asyncio.to_thread(self._workspace().apply, where, diff)
            return done.model_dump(mode="json")

        found = await self._once(step, "apply", alias, compute, where)
        from moot.code.changes import ApplyResult

        return ApplyResult.model_validate(found)

    async def verify(self, alias: str, step: str, tree: str | None) -> list[VerifyRun]:
        if self._code is None or not self._code.settings.verify_commands:
            return []
        where = tree or alias

        async def compute() -> Any:
            self._signal(
                "shell_started", step, command="; ".join(self._workspace().settings.verify_commands)
            )
            runs = await self._workspace().verify(where)
            return [r.model_dump(mode="json") for r in runs]

        found = await self._once(step, "verify", alias, compute, where)
        from moot.code.changes import VerifyRun

        return [VerifyRun.model_validate(r) for r in found]

    async def add_worktree(self, name: str, step: str, base: str | None) -> None:
        async def compute() -> Any:
            await asyncio.to_thread(self._workspace().add, name, base)
            return name

        await self._once(step, "worktree", None, compute, name)

    async def commit(self, tree: str, message: str, step: str) -> str:
        async def compute() -> Any:
            return await asyncio.to_thread(self._workspace().commit, tree, message)

        return str(await self._once(step, "commit", None, compute, tree))

    async def run_in(self, tree: str, command: str, step: str, timeout: float | None) -> VerifyRun:
        async def compute() -> Any:
            self._signal("shell_started", step, command=command)
            run = await self._workspace().run(tree, command, timeout)
            return run.model_dump(mode="json")

        found = await self._once(step, "run", None, compute, tree)
        from moot.code.changes import VerifyRun

        return VerifyRun.model_validate(found)

    async def publish_branch(self, tree: str, branch: str, step: str) -> str:
        async def compute() -> Any:
            return await asyncio.to_thread(self._workspace().publish, tree, branch)

        return str(await self._once(step, "publish", None, compute, tree))

    def worktree_path(self, name: str) -> str:
        if self._code is None:
            raise RuntimeError("worktree_path in a session without a repository")
        return self._code.tree_path(name)

    async def prune_worktree(self, name: str, step: str) -> None:
        async def compute() -> Any:
            await asyncio.to_thread(self._workspace().remove, name)
            return name

        await self._once(step, "prune", None, compute, name)

    async def context(self) -> str:
        """One journaled step per session, shared by every agent that asks for it."""

        async def compute() -> Any:
            return await asyncio.to_thread(self._workspace().context)

        if self._context is None:
            self._context = asyncio.ensure_future(
                self._once("code/context", "context", None, compute, None)
            )
        return str(await self._context)


class CodeTask:
    """A code task's effects as Session methods (`s.change(...)`, `s.commit(...)`): each
    delegates to the session's `CodeEffects`, which journals it once through the Session."""

    _effects: CodeEffects

    async def change(self, alias: str, *, step: str, tree: str | None = None) -> CodeChange:
        """The agent's worktree change against the baseline now (saved as its .patch).
        `tree`: a worktree the protocol added (`add_worktree`) that the agent worked in."""
        return await self._effects.change(alias, step, tree)

    async def apply_diff(
        self, alias: str, diff: str, *, step: str, tree: str | None = None
    ) -> ApplyResult:
        """Apply a model's unified diff in the agent's worktree, or `tree` (all or nothing)."""
        return await self._effects.apply_diff(alias, diff, step, tree)

    async def verify(self, alias: str, *, step: str, tree: str | None = None) -> list[VerifyRun]:
        """The verify commands in the agent's worktree, or `tree`; [] when none are set."""
        return await self._effects.verify(alias, step, tree)

    async def add_worktree(self, name: str, *, step: str, base: str | None = None) -> None:
        """A new worktree `name` at the session's baseline, for a protocol's own candidates
        (refine's `b` and `ab`), separate from the agents' worktrees; or at worktree `base`'s
        current work, its change then measured against that. Journaled; on a resume the
        workspace finds it again as the crash left it."""
        await self._effects.add_worktree(name, step, base)

    async def commit(self, tree: str, message: str, *, step: str) -> str:
        """Commit all of worktree `tree`'s work on its branch; the commit (HEAD if none)."""
        return await self._effects.commit(tree, message, step)

    async def run_in(
        self, tree: str, command: str, *, step: str, timeout: float | None = None
    ) -> VerifyRun:
        """One of the user's commands in worktree `tree`, run as a verify command is."""
        return await self._effects.run_in(tree, command, step, timeout)

    async def publish_branch(self, tree: str, branch: str, *, step: str) -> str:
        """Point the user's branch `branch` at `tree`'s HEAD (create or fast-forward only)."""
        return await self._effects.publish_branch(tree, branch, step)

    def worktree_path(self, name: str) -> str:
        """The absolute path of worktree `name` (a live run only: not journaled)."""
        return self._effects.worktree_path(name)

    async def prune_worktree(self, name: str, *, step: str) -> None:
        """Remove worktree `name` and its branch for good (a losing candidate, or an agent's
        worktree the protocol does not use); its `.patch` file stays in the session folder."""
        await self._effects.prune_worktree(name, step)

    async def code_context(self) -> str:
        """The repository context API models get (files by --context, or a listing): one
        journaled step per session, shared by every agent that asks for it."""
        return await self._effects.context()
