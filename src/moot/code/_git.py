"""Running git: one function, no shell, a clean environment, errors that name the command."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from msgspec import Struct

from moot.errors import WorkspaceError

__all__ = ["GitResult", "git", "git_version"]

# Variables that would point git at another repository, index or object store than the one we
# name with `cwd` (set, for instance, when moot runs inside a git hook).
_REPO_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)

# Commits moot makes itself (baselines, snapshots) must not depend on the user's identity.
MOOT_IDENTITY = {
    "GIT_AUTHOR_NAME": "moot",
    "GIT_AUTHOR_EMAIL": "moot@localhost",
    "GIT_COMMITTER_NAME": "moot",
    "GIT_COMMITTER_EMAIL": "moot@localhost",
}

# Per-command configuration that keeps our output parseable and our commands side-effect free
# whatever the user's config says: no pager, no prefix tricks that would make diffs unappliable.
_CONFIG = (
    "-c", "core.pager=cat",
    "-c", "diff.noprefix=false",
    "-c", "diff.mnemonicPrefix=false",
    "-c", "diff.external=",
    "-c", "color.ui=false",
)  # fmt: skip


class GitResult(Struct, frozen=True):
    returncode: int
    stdout: bytes
    stderr: str

    @property
    def text(self) -> str:
        """stdout as text, without the trailing newline."""
        return self.stdout.decode("utf-8", errors="replace").rstrip("\n")


def _executable() -> str:
    found = shutil.which("git")
    if found is None:
        raise WorkspaceError("git is not installed or not on PATH; install git to run code tasks")
    return found


def git(
    args: Sequence[str],
    *,
    cwd: Path,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    hooks: bool = False,
    timeout: float = 300.0,
) -> GitResult:
    """Run `git ARGS` in `cwd` and return its output.

    `input` goes to stdin: model text reaches git only this way, never as an argument. With
    `check`, a non-zero exit raises `WorkspaceError` quoting git's own message. The user's hooks
    run only with `hooks` (their own commit): a post-checkout or reference-transaction hook
    must not fire on moot's worktrees and refs."""
    full_env = {k: v for k, v in os.environ.items() if k not in _REPO_VARIABLES}
    full_env.update(
        {
            "LC_ALL": "C",  # git's messages are quoted back to users and models; keep them stable
            "LANGUAGE": "",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",  # never refresh the user's index as a side effect
        }
    )
    if env:
        full_env.update(env)
    no_hooks = () if hooks else ("-c", "core.hooksPath=/dev/null")
    command = [_executable(), *_CONFIG, *no_hooks, *args]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            input=input if input is not None else b"",
            capture_output=True,
            env=full_env,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise WorkspaceError(f"git {args[0]} took longer than {timeout:.0f} s in {cwd}") from exc
    except OSError as exc:
        raise WorkspaceError(f"cannot run git in {cwd}: {exc}") from exc
    result = GitResult(done.returncode, done.stdout, done.stderr.decode("utf-8", "replace"))
    if check and result.returncode != 0:
        message = result.stderr.strip() or result.text.strip() or f"exit status {done.returncode}"
        raise WorkspaceError(f"git {' '.join(args[:2])} failed in {cwd}: {message}")
    return result


@cache
def git_version() -> tuple[int, int]:
    """(major, minor) of the installed git."""
    done = subprocess.run([_executable(), "--version"], capture_output=True, text=True, check=False)
    match = re.search(r"(\d+)\.(\d+)", done.stdout)
    if match is None:
        raise WorkspaceError(f"cannot read git's version from {done.stdout!r}")
    return int(match.group(1)), int(match.group(2))
