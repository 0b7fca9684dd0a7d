"""A QA gate plugin as a package would offer it (`moot.gates` entry point): every Python file a
change adds must say its licence."""

from __future__ import annotations

from pathlib import Path


def licence(worktree: Path, patch: str) -> tuple[bool, str]:
    added = [line[6:] for line in patch.splitlines() if line.startswith("+++ b/")]
    missing = [
        name
        for name in added
        if name.endswith(".py") and "SPDX" not in (worktree / name).read_text(encoding="utf-8")
    ]
    return not missing, "".join(f"{name}: no SPDX licence line\n" for name in missing)


def broken(worktree: Path, patch: str) -> tuple[bool, str]:
    raise RuntimeError("the licence server is down")
