"""The pipeline tests' git identity and tiny repository (tests/pipeline/scripts.py's calc)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.code import test_code_tasks as base
from tests.pipeline import scripts


@pytest.fixture(autouse=True)
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base.git_env.__wrapped__(tmp_path, monkeypatch)  # type: ignore[attr-defined]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    base.sh(root, "init", "-q", "-b", "main")
    (root / "calc.py").write_text(scripts.CALC)
    (root / "tests" / "test_calc.py").write_text(scripts.CALC_TEST)
    (root / ".gitignore").write_text("__pycache__/\n")
    base.sh(root, "add", "-A")
    base.sh(root, "commit", "-q", "-m", "first")
    return root
