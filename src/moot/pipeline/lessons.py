"""Lessons per repository (seed 004's knowledge.jsonl and rejected_lessons.jsonl): what a gate, a
reviewer or a retry taught, kept under `$MOOT_HOME/lessons/`, one file per repository, ranked
by how often it was learnt (then how recently), deduplicated by its normalised text, with a
block list of lessons the user rejected (`moot lessons --reject N`), which are never learnt
again. Later plans' architect and developers are offered the top ones.

The pipeline reads and writes them through journaled effects, so a resumed or replayed session
sees the lessons it saw live."""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any

from filelock import FileLock

from moot.engine.store import sessions_root
from moot.files import atomic_write

__all__ = ["OFFERED", "learn", "lessons_dir", "ranked", "reject"]

OFFERED = 8  # lessons offered to a prompt
_MAX_CHARS = 300
_SPACES = re.compile(r"\s+")


def lessons_dir() -> Path:
    return sessions_root().parent / "lessons"


def _files(repo: str) -> tuple[Path, Path]:
    key = hashlib.sha256(str(Path(repo).resolve()).encode()).hexdigest()[:16]
    folder = lessons_dir()
    return folder / f"{key}.jsonl", folder / f"{key}.rejected.jsonl"


def _normal(text: str) -> str:
    return _SPACES.sub(" ", text).strip().casefold()


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    rows = []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a torn or hand-edited line is skipped, not fatal
        if isinstance(row, dict) and isinstance(row.get("text"), str):
            rows.append(row)
    return rows


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def _best_first(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Most often learnt first, then most recent."""
    return sorted(rows, key=lambda r: (-int(r.get("hits", 1)), -float(r.get("last", 0))))


def ranked(repo: str, limit: int = OFFERED) -> list[str]:
    """The repository's lessons, best first."""
    kept, _ = _files(repo)
    return [str(r["text"]) for r in _best_first(_read(kept))[:limit]]


def learn(repo: str, texts: list[str], source: str) -> list[str]:
    """Add lessons (a known one gains a hit; a rejected one is ignored); returns the new ones."""
    kept, rejected = _files(repo)
    kept.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(kept) + ".lock", thread_local=False):
        blocked = {_normal(str(r["text"])) for r in _read(rejected)}
        rows = _read(kept)
        index = {_normal(str(r["text"])): r for r in rows}
        added = []
        now = time.time()
        for text in texts:
            text = _SPACES.sub(" ", text).strip()[:_MAX_CHARS]
            key = _normal(text)
            if not key or key in blocked:
                continue
            if key in index:
                row = index[key]
                row["hits"] = int(row.get("hits", 1)) + 1
                row["last"] = now
            else:
                row = {"text": text, "hits": 1, "first": now, "last": now, "source": source}
                rows.append(row)
                index[key] = row
                added.append(text)
        _write(kept, rows)
    return added


def reject(repo: str, number: int) -> str:
    """Move lesson `number` (1-based, as `ranked` lists them) to the block list; its text."""
    kept, rejected = _files(repo)
    with FileLock(str(kept) + ".lock", thread_local=False):
        rows = sorted(_read(kept), key=lambda r: (-int(r.get("hits", 1)), -float(r.get("last", 0))))
        if not 1 <= number <= len(rows):
            raise IndexError(f"there is no lesson {number}: the repository has {len(rows)}")
        gone = rows.pop(number - 1)
        _write(kept, rows)
        _write(rejected, [*_read(rejected), {"text": gone["text"], "rejected": time.time()}])
    return str(gone["text"])
