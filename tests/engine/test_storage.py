"""A sessions folder that cannot be written (issue 30): read-only, full, or a file in its path.

`moot run` and `moot resume` there print one clear line naming the path and exit 1, never a
traceback. A disk that fills up mid-run ends the run with the journal intact up to its last
complete line, and `moot resume` once space is back finishes it without asking a recorded step
again. Optional copies (rounds/, state.json, the reports) that cannot be written are a warning.

Real file systems where the sandbox allows: a small tmpfs mounted in a user and mount namespace
of its own (`unshare -rm`), enlarged or remounted read-only between the commands of one script.
Where that is refused, those tests skip; the short-write tests patch `os.write` instead.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from moot.engine.journal import Journal
from moot.errors import StorageError
from moot.types import Event, EventKind
from tests.engine.test_crash import AGENTS, MOOT, Home, asked_steps, journal_lines, make_home
from tests.scripts import Debate, events, start

TIMEOUT = 120


# -- a tmpfs of our own -----------------------------------------------------------------------
def _can_mount() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = "d=$(mktemp -d) && mount -t tmpfs -o size=16k tmpfs $d && umount $d; rmdir $d"
    done = subprocess.run(["unshare", "-rm", "sh", "-c", probe], capture_output=True, timeout=30)
    return done.returncode == 0


CAN_MOUNT = _can_mount()
needs_mount = pytest.mark.skipif(not CAN_MOUNT, reason="no user namespace to mount a tmpfs in")


def in_namespace(home: Home, script: list[str]) -> None:
    """Run `script` (shell lines) in a mount namespace of its own, where `$HOME_DIR` is the
    MOOT_HOME mount point and `$OUT` a folder outside it that outlives the namespace."""
    env = {**home.env(), "HOME_DIR": str(home.home), "OUT": str(home.root)}
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "set -u\n" + "\n".join(script)],
        env=env,
        cwd=home.root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr


def moot_line(name: str, args: list[str]) -> str:
    """Shell for a moot command whose stdout, stderr and exit code land in $OUT/NAME.*."""
    command = " ".join(shlex.quote(a) for a in [MOOT, *args])
    return f'{command} >"$OUT/{name}.out" 2>"$OUT/{name}.err"; echo $? >"$OUT/{name}.rc"'


def outcome(home: Home, name: str) -> tuple[int, str]:
    rc = int((home.root / f"{name}.rc").read_text())
    return rc, (home.root / f"{name}.err").read_text()


def one_clear_line(stderr: str, *needles: str, warnings: bool = False) -> None:
    """stderr is one error line holding `needles`, no traceback; with `warnings`, lines saying
    that an optional copy could not be written may come before it."""
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    if warnings:
        assert all(line.startswith("warning: ") for line in lines[:-1]), stderr
        lines = lines[-1:]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("moot: error: cannot write "), stderr
    for needle in needles:
        assert needle in lines[0], stderr


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("agents") / "storage_agents.py"
    path.write_text(AGENTS, encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path, agents: Path) -> Home:
    made = make_home(tmp_path / "case", agents)
    made.home.mkdir()
    return made


# -- a file where a folder should be (no mount needed) ------------------------------------------
def test_a_file_in_moot_home_is_one_clear_error(home: Home) -> None:
    blocker = home.root / "blocker"
    blocker.write_text("a file, not a folder\n")
    env = home.env(MOOT_HOME=str(blocker / "home"))
    done = subprocess.run(
        home.run_args(), env=env, cwd=home.root, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 1
    # the file in the way named, not the system's "Not a directory"
    one_clear_line(
        done.stderr, str(blocker / "home" / "sessions"), "MOOT_HOME", f"{blocker} is a file"
    )
    assert home.calls() == []  # nothing was asked


# -- read-only ------------------------------------------------------------------------------
@needs_mount
def test_read_only_moot_home_run_is_one_clear_error(home: Home) -> None:
    in_namespace(
        home,
        [
            'mount -t tmpfs -o size=256k,ro tmpfs "$HOME_DIR"',
            moot_line("run", home.run_args()[1:]),
        ],
    )
    rc, stderr = outcome(home, "run")
    assert rc == 1
    one_clear_line(stderr, str(home.home / "sessions"), "Read-only file system", "MOOT_HOME")
    assert home.calls() == []


@needs_mount
def test_read_only_moot_home_resume_is_one_clear_error(home: Home) -> None:
    """A session run in a folder that is read-only by the time of `moot resume`."""
    in_namespace(
        home,
        [
            'mount -t tmpfs -o size=2m tmpfs "$HOME_DIR"',
            moot_line("run", home.run_args()[1:]),
            'mount -o remount,ro "$HOME_DIR"',
            moot_line("resume", ["resume", "-q"]),
        ],
    )
    assert outcome(home, "run")[0] == 0
    rc, stderr = outcome(home, "resume")
    assert rc == 1
    one_clear_line(stderr, str(home.home / "sessions"), "Read-only file system")


# -- full -----------------------------------------------------------------------------------
@needs_mount
@pytest.mark.parametrize("size", ["24k", "56k", "96k", "128k"])
def test_full_disk_mid_run_ends_cleanly_and_resumes_once_space_returns(
    home: Home, size: str
) -> None:
    """The tmpfs fills up at some point of the run (which, depends on its size): the run ends
    with one clear error naming the journal and the resume command; the journal holds whole
    lines only; after the tmpfs is enlarged, `moot resume` finishes the session and asks no
    step the journal held again."""
    in_namespace(
        home,
        [
            f'mount -t tmpfs -o size={size} tmpfs "$HOME_DIR"',
            moot_line("run", home.run_args()[1:]),
            'cp -r "$HOME_DIR/sessions" "$OUT/failed"',
            'mount -o remount,size=4m "$HOME_DIR"',
            moot_line("resume", ["resume", "-q"]),
            'cp -r "$HOME_DIR/sessions" "$OUT/resumed"',
        ],
    )
    rc, stderr = outcome(home, "run")
    assert rc == 1, stderr
    one_clear_line(stderr, "No space left on device", "moot resume", warnings=True)
    [failed] = (home.root / "failed").iterdir()
    assert f"moot resume {failed.name}" in stderr
    raw = (failed / "events.jsonl").read_bytes()
    assert raw.endswith(b"\n")  # whole lines only: the failed one was undone
    journal, repair = Journal.open(failed / "events.jsonl", repair=False)
    assert repair is None
    recorded = [e.step for e in journal.events if e.kind == EventKind.ASK]
    calls_before = home.calls()
    assert recorded  # it stopped mid-run, with answers journaled (3, 6, 9 and 16 of 17)

    rc, stderr = outcome(home, "resume")
    assert rc == 0, stderr
    [resumed] = (home.root / "resumed").iterdir()
    result = json.loads((resumed / "result.json").read_text())
    assert result["status"] == "consensus"
    asked_after = home.calls()[len(calls_before) :]
    assert not set(asked_after) & set(recorded), (recorded, asked_after)
    assert sorted(set(home.calls())) == sorted(asked_steps(journal_lines(resumed)))


# -- short writes (os.write patched) -------------------------------------------------------
def _event(n: int) -> Event:
    return Event(kind=EventKind.NOTE, step=f"s{n}", data={"text": "x" * 300}, ts=1.0)


def test_a_short_write_is_completed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """os.write may write fewer bytes than given: append writes the rest."""
    path = tmp_path / "events.jsonl"
    journal, _ = Journal.open(path)
    journal.append(_event(0))
    real_write = os.write

    def short(fd: int, data: Any) -> int:
        return real_write(fd, bytes(data[:7]))  # a few bytes a call

    monkeypatch.setattr(os, "write", short)
    journal.append(_event(1))
    journal.append(_event(2))
    monkeypatch.setattr(os, "write", real_write)
    journal.close()
    again, repair = Journal.open(path, repair=False)
    assert repair is None
    assert [e.step for e in again.events] == ["s0", "s1", "s2"]


def test_a_failed_write_is_undone_and_ends_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Part of a line lands, then the disk is full: the part is cut, a StorageError says how to
    resume, and the journal takes no more lines (which would follow a torn one)."""
    folder = tmp_path / "20260101-000000-abcdef"
    folder.mkdir()
    path = folder / "events.jsonl"
    journal, _ = Journal.open(path)
    journal.append(_event(0))
    size = path.stat().st_size
    real_write = os.write
    calls = []

    def filling(fd: int, data: Any) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[:50]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", filling)
    with pytest.raises(StorageError) as failed:
        journal.append(_event(1))
    message = str(failed.value)
    assert str(path) in message and "No space left on device" in message
    assert f"moot resume {folder.name}" in message
    assert path.stat().st_size == size  # the 50 bytes were cut
    monkeypatch.setattr(os, "write", real_write)
    with pytest.raises(StorageError):  # even with space back: this run is over
        journal.append(_event(2))
    journal.close()
    again, repair = Journal.open(path)
    assert repair is None
    assert [e.step for e in again.events] == ["s0"]
    again.append(_event(1))  # the next run goes on from there
    again.close()
    assert [e.step for e in Journal.open(path)[0].events] == ["s0", "s1"]


# -- optional copies ------------------------------------------------------------------------
def test_optional_copies_that_cannot_be_written_are_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """rounds/, state.json and report.md made unwritable (each a file or folder in the way)
    as the session is created: the run finishes all the same, warning once per kind."""

    def block(folder: Path) -> None:
        (folder / "rounds").write_text("in the way\n")
        (folder / "state.json").mkdir()
        (folder / "report.md").mkdir()

    with caplog.at_level("WARNING", logger="moot"):
        run = start("What is 6 x 7?", Debate().config(), on_created=block)
    assert run.exit_code == 0
    assert run.result.status == "consensus"
    warnings = [e["data"]["message"] for e in events(run.folder) if e["kind"] == "warning"]
    copies = [w for w in warnings if "optional copies" in w]
    assert len(copies) == 1, warnings
    said = [r.getMessage() for r in caplog.records]
    assert sum("state.json" in m for m in said) == 1, said
    assert sum("report.md" in m and "moot export" in m for m in said) == 1, said
    assert (run.folder / "result.json").is_file()


def test_a_result_that_cannot_be_written_says_resume_rebuilds_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The disk fills just as the run ends: the journal holds it all, so the error says that
    `moot resume` writes result.json from the journal; resume then does, asking nothing."""
    from moot import files
    from moot.api import resume

    real = files.atomic_write

    def full_for_results(path: Path, data: str | bytes, *, durable: bool = True) -> None:
        if path.name == "result.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, data, durable=durable)

    monkeypatch.setattr(files, "atomic_write", full_for_results)
    created: list[Path] = []
    with pytest.raises(StorageError) as failed:
        start("What is 6 x 7?", Debate().config(), on_created=created.append)
    folder = created[0]
    assert f"moot resume {folder.name}" in str(failed.value)
    assert "MOOT_HOME" not in str(failed.value)
    monkeypatch.setattr(files, "atomic_write", real)
    again = resume(folder.name)
    assert again.exit_code == 0 and again.model_calls == 0
    assert (folder / "result.json").is_file()
