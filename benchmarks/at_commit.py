"""Another commit's moot, for the benchmarks that compare this tree with it in one run
(MOOT_BENCH_AGAINST): engine.py (resume) and process.py (first request, 12-agent ratio)."""

from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def source_at(commit: str) -> Iterator[Path]:
    """`commit`'s src/ (from `git archive`), in a temporary folder removed after the block."""
    archive = subprocess.run(
        ["git", "archive", commit, "src"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tempfile.TemporaryDirectory(prefix="moot-bench-at-") as folder:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        yield Path(folder) / "src"
