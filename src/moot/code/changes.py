"""What a code task's effects return, journaled as `code` events: a worktree's change, an
applied diff, a verify run. Plain data: protocols read it (through the Session), and replay
rebuilds it from the journal without touching git."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from moot.text import plural
from moot.types import RunVerdict

__all__ = ["ApplyResult", "CodeChange", "VerifyRun"]


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
        return f"{plural(self.files, 'file')}, +{self.insertions} -{self.deletions}"


class ApplyResult(BaseModel):
    """Whether a model's diff applied in its worktree; if not, git's explanation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    applied: bool
    error: str = ""


class VerifyRun(RunVerdict, BaseModel):
    """One verify command run in a worktree: its exit status and the tail of its output."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str
    exit_code: int
    timed_out: bool
    seconds: float
    tail: str  # the last characters of stdout then stderr
    cut: bool  # the output was longer than the tail
