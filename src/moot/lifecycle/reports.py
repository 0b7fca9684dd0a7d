"""A finished run's reports written by a detached writer, so `moot run` exits the moment its
outcome is printed (issue 23: rendering report.md and report.html took 0.1-0.2 s after it).

`mark` leaves `reports.pending` in the session folder before the outcome is shown; `detach`
starts the writer (`python -m moot.lifecycle.reports FOLDER`, a session of its own, so a
Ctrl-C in the terminal does not reach it) and records its pid there; the writer renders both
reports from result.json and the journal, as `moot export` would, and removes the marker.
`wait` is what `moot show` and `moot resume` do first: while a live writer holds the marker,
they wait for it. A writer that died (killed, or the machine went down) leaves a marker whose
pid is gone: nothing waits for it, and `moot resume` writes the reports again."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

__all__ = ["PENDING", "detach", "mark", "wait"]

PENDING = "reports.pending"
WAIT = 60.0  # seconds: a writer renders in well under one; a longer one is stuck
STARTING = 5.0  # seconds an empty marker (its writer not started yet) is waited for


def mark(folder: Path) -> bool:
    """Say the reports are coming; False if the folder cannot take the marker."""
    try:
        (folder / PENDING).write_text("", encoding="utf-8")
    except OSError:
        return False
    return True


def detach(folder: Path) -> bool:
    """Start the writer of `folder`'s reports (`mark` first); False if it could not start, and
    the caller writes them itself."""
    package_root = str(Path(__file__).resolve().parents[2])  # the folder moot imports from
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, path]))}
    try:
        pid = os.posix_spawn(
            sys.executable,
            [sys.executable, "-m", "moot.lifecycle.reports", str(folder)],
            env,
            file_actions=[(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)],
            setsid=True,
        )
        (folder / PENDING).write_text(str(pid), encoding="utf-8")
    except OSError:
        (folder / PENDING).unlink(missing_ok=True)
        return False
    return True


def _writing(marker: Path) -> bool:
    """Whether a writer may still be writing the reports `marker` announces."""
    try:
        text = marker.read_text(encoding="utf-8").strip()
        if not text:  # marked, the writer not started yet (or the run died in between)
            return time.time() - marker.stat().st_mtime < STARTING
    except OSError:
        return False  # gone: written
    try:
        os.kill(int(text), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return _alive(int(text))


def _alive(pid: int) -> bool:
    """Whether `pid`, which os.kill found, still runs: a dead writer is a zombie until its
    parent reaps it (this process, or an init that may never do it)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not ours
        try:
            stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
        except OSError:
            return True  # no /proc: os.kill said it exists
        return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")
    return done == 0


def wait(folder: Path, timeout: float = WAIT) -> None:
    """Wait while a detached writer is writing `folder`'s reports (at most `timeout`)."""
    marker = folder / PENDING
    deadline = time.monotonic() + timeout
    while _writing(marker) and time.monotonic() < deadline:
        time.sleep(0.01)


def _write(folder: Path) -> None:
    from moot import report
    from moot.engine.journal import Journal, key_from_env
    from moot.engine.result import Result
    from moot.engine.store import SessionFolder

    session = SessionFolder(folder)
    try:
        journal, _ = Journal.open(session.events, key_from_env(), repair=False)
        result = Result.read(session.result_json.read_text(encoding="utf-8"))
        report.write_reports(session, result, journal.events)
    finally:
        (folder / PENDING).unlink(missing_ok=True)


if __name__ == "__main__":
    _write(Path(sys.argv[1]))
