"""The journal as the CLI meets it: tampering, torn tails, HMAC signatures, one writer.

Sessions are made by `moot run` in this process with scripted agents from a file; the one test
that needs a second writer runs a real `moot run` process next to this one.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from moot.cli import main
from moot.engine.head import Head, write_head
from moot.engine.journal import Journal, canonical_json
from moot.engine.store import SessionFolder

MOOT = str(Path(sys.executable).parent / "moot")
TASK = "Which queue should we use?"

AGENTS = '''
"""Scripted agents: CONTINUE in round 1, CONSENSUS in round 2 (17 calls in all)."""


def reply(request):
    step = request.meta["step"]
    if "/verify/" in step:
        decision, score = ("CONTINUE", 4) if step.startswith("r1/") else ("CONSENSUS", 9)
        return (
            "<verdict>\\n"
            f"decision: {decision}\\nconvergence_score: {score}\\nremaining_disagreements: 0\\n"
            "base_solution: Agent A\\nmodifications: none\\n</verdict>"
        )
    if "/evaluate/" in step:
        return "Strengths: clear. Weaknesses: none."
    if step == "r0/solve/agent_b":  # a first answer that holds what the run ends on
        step = "r2/revise/agent_b"
    return (
        f"<solution>\\n## PLAN\\n1. use a queue ({step})\\n## CHANGES\\n{step}\\n</solution>\\n"
        "<analysis>\\n## RISKS\\nnone\\n## DISAGREEMENTS\\nNone.\\n</analysis>"
    )
'''

# Agents that hold every call until a release file appears (bounded), after marking that
# the session is under way: a process that keeps a session busy for as long as a test needs.
HOLDING_AGENTS = """
import asyncio
import os
import time
from pathlib import Path


async def reply(request):
    Path(os.environ["MOOT_TEST_ENTERED"]).touch()
    release = Path(os.environ["MOOT_TEST_RELEASE"])
    deadline = time.monotonic() + 20
    while not release.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    step = request.meta["step"]
    if "/verify/" in step:
        return (
            "<verdict>\\ndecision: CONSENSUS\\nconvergence_score: 9\\n"
            "remaining_disagreements: 0\\nbase_solution: Agent A\\nmodifications: none\\n"
            "</verdict>"
        )
    if "/evaluate/" in step:
        return "Strengths: clear."
    return "<solution>\\n## PLAN\\n1. x\\n</solution>\\n<analysis>\\nnone\\n</analysis>"
"""

LINES_IN_A_FULL_RUN = 29  # begin, run_started, 17 asks, 9 checked answers (notes), finished


# -- helpers ------------------------------------------------------------------------------------
def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`moot ARGS` in this process: (exit code, stdout, stderr)."""
    capsys.readouterr()
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err


def models(agents: Path) -> list[str]:
    return ["--models", f"scripted:{agents}"] * 3


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    path = tmp_path / "agents.py"
    path.write_text(AGENTS, encoding="utf-8")
    return path


def finished_session(capsys: pytest.CaptureFixture[str], agents: Path) -> SessionFolder:
    code, _, err = cli(capsys, "run", TASK, *models(agents), "--seed", "5", "-q")
    assert code == 0, err
    (path,) = (Path(os.environ["MOOT_HOME"]) / "sessions").iterdir()
    folder = SessionFolder(path)
    assert len(folder.events.read_bytes().splitlines()) == LINES_IN_A_FULL_RUN
    return folder


@pytest.fixture
def session(capsys: pytest.CaptureFixture[str], agents: Path) -> SessionFolder:
    """A finished, unsigned session."""
    return finished_session(capsys, agents)


def read_lines(folder: SessionFolder) -> list[bytes]:
    return folder.events.read_bytes().splitlines(keepends=True)


def first_line_of(folder: SessionFolder, step_part: str) -> int:
    """1-based number of the first `ask` line whose step contains `step_part`."""
    for number, line in enumerate(read_lines(folder), start=1):
        record = json.loads(line)
        if record["kind"] == "ask" and step_part in record["step"]:
            return number
    raise AssertionError(f"no ask for {step_part}")


def names_line(text: str, number: int) -> bool:
    return re.search(rf"\bline {number}\b", text) is not None


def refused_by_resume_and_replay(
    capsys: pytest.CaptureFixture[str], folder: SessionFolder, number: int
) -> list[str]:
    """Both commands exit 1 naming line `number`, and leave the journal untouched."""
    before = folder.events.read_bytes()
    errors = []
    for command in ("resume", "replay"):
        code, _, err = cli(capsys, command, folder.id)
        assert code == 1, f"moot {command} accepted the journal: {err}"
        assert err.startswith("moot: error:"), err
        assert names_line(err, number), f"moot {command} did not name line {number}: {err}"
        errors.append(err)
    assert folder.events.read_bytes() == before
    return errors


def rechain(records: list[dict[str, Any]], start: int) -> None:
    """Recompute prev and hash from records[start] on, as a forger would; a forger without
    the key cannot sign, so any `hmac` stays as it was."""
    prev = records[start - 1]["hash"] if start else "0" * 64
    for record in records[start:]:
        body = {k: v for k, v in record.items() if k not in ("hash", "hmac")}
        body["prev"] = prev
        digest = hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()
        record.update(prev=prev, hash=digest)
        prev = digest


def write_records(folder: SessionFolder, records: list[dict[str, Any]]) -> None:
    folder.events.write_bytes(b"".join((canonical_json(r) + "\n").encode("utf-8") for r in records))


def seal(folder: SessionFolder, lines: list[bytes], key: bytes | None = None) -> None:
    """Write the head a journal of `lines` gets sealed with (as a crash left it, or as a forger
    who can rewrite the folder would)."""
    last = json.loads(lines[-1])
    write_head(folder.path / "head.json", Head(len(lines), last["hash"], key is not None), key)


# -- tampering ----------------------------------------------------------------------------------
def test_an_edited_character_in_a_middle_line_is_refused_naming_the_line(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    number = first_line_of(session, "r1/evaluate/")
    assert 2 < number < LINES_IN_A_FULL_RUN - 2
    lines = read_lines(session)
    original = lines[number - 1]
    assert original.count(b"Strengths: clear.") == 1
    lines[number - 1] = original.replace(b"Strengths: clear.", b"Strengths: clean.")
    json.loads(lines[number - 1])  # still a valid JSON line: only its hash can tell
    session.events.write_bytes(b"".join(lines))

    for err in refused_by_resume_and_replay(capsys, session, number):
        assert "does not match its hash" in err
        assert session.id in err or str(session.events) in err


def test_a_deleted_middle_line_breaks_the_chain_and_is_refused_naming_the_line(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    lines = read_lines(session)
    number = 9
    del lines[number - 1]
    session.events.write_bytes(b"".join(lines))

    for err in refused_by_resume_and_replay(capsys, session, number):
        assert "broken hash chain" in err


def test_untouched_journal_resumes_and_replays(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    """The control for the refusals above."""
    code, out, err = cli(capsys, "replay", session.id)
    assert code == 0 and "Identical" in out, err
    code, _, err = cli(capsys, "resume", session.id, "-q")
    assert code == 0, err


# -- torn tail ----------------------------------------------------------------------------------
def crash_mid_write(folder: SessionFolder, keep: int) -> tuple[bytes, bytes]:
    """Leave the journal as a crash while writing line `keep + 1` would: the first `keep`
    lines, then the first half of the next one, with no newline. Returns (kept, torn)."""
    lines = read_lines(folder)
    kept = b"".join(lines[:keep])
    torn = lines[keep][: len(lines[keep]) // 2]
    folder.events.write_bytes(kept + torn)
    seal(folder, lines[:keep])  # the head as the crash left it: sealed up to the last whole line
    for name in ("result.json", "report.md", "report.html"):  # written when a run ends
        (folder.path / name).unlink()
    return kept, torn


def assert_cut_and_reported(folder: SessionFolder, kept: bytes, torn: bytes) -> list[Any]:
    after = folder.events.read_bytes()
    assert after.startswith(kept)
    assert after[len(kept) : len(kept) + len(torn)] != torn, "the torn bytes are still there"
    added = [json.loads(line) for line in after[len(kept) :].splitlines()]
    line = kept.count(b"\n") + 1
    assert added, "nothing was journaled after the cut"
    assert added[0]["kind"] == "warning" and added[0]["seq"] == line - 1, added[0]
    message = added[0]["data"]["message"]
    assert "torn" in message and f"line {line}" in message and f"{len(torn)} bytes" in message
    # the repaired journal verifies from end to end, with nothing left to cut
    journal, cut = Journal.open(folder.events, repair=False)
    assert cut is None and len(journal.events) == line - 1 + len(added)
    return added


def test_a_torn_last_line_left_by_a_crash_is_cut_and_the_run_goes_on(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    expected = session.result_json.read_text()
    keep = first_line_of(session, "r1/revise/") + 1  # crashed writing the 2nd revise answer
    kept, torn = crash_mid_write(session, keep)

    code, _, err = cli(capsys, "resume", session.id, "-q")
    assert code == 0, err

    added = assert_cut_and_reported(session, kept, torn)
    assert [e["kind"] for e in added[:2]] == ["warning", "run_started"]
    assert added[-1]["kind"] == "finished"
    asks = [json.loads(line)["step"] for line in read_lines(session) if b'"kind":"ask"' in line]
    assert len(asks) == len(set(asks)) == 17
    # the same outcome, now sealed to the longer journal it was computed from
    result, before = json.loads(session.result_json.read_text()), json.loads(expected)
    assert result["journal"]["events"] == len(read_lines(session)) > before["journal"]["events"]
    del result["journal"], before["journal"]
    assert result == before


def test_a_torn_line_after_the_end_is_cut_and_the_cut_is_journaled(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    intact = session.events.read_bytes()
    # half of a next line after `finished` (a resume that crashed writing run_started)
    next_line = canonical_json(
        {"seq": LINES_IN_A_FULL_RUN, "kind": "run_started", "data": {"pid": 1}, "prev": "ab" * 32}
    ).encode()
    torn = next_line[: len(next_line) // 2]
    session.events.write_bytes(intact + torn)

    code, _, err = cli(capsys, "resume", session.id, "-q")
    assert code == 0, err
    assert_cut_and_reported(session, intact, torn)


def test_a_torn_last_line_is_left_alone_by_replay(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    """Replay is read-only: it ignores the torn tail and does not cut it."""
    damaged = session.events.read_bytes() + b'{"seq":20,"kind":"ru'
    session.events.write_bytes(damaged)
    code, out, err = cli(capsys, "replay", session.id)
    assert code == 0 and "Identical" in out, err
    assert session.events.read_bytes() == damaged


def test_an_edited_complete_last_line_without_newline_is_refused_not_cut(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    lines = read_lines(session)
    last = json.loads(lines[-1])
    assert last["kind"] == "finished"
    last["data"]["status"] = "no_consensus"  # edited; hash left as it was
    lines[-1] = canonical_json(last).encode("utf-8")  # and no trailing newline
    session.events.write_bytes(b"".join(lines))

    code, _, err = cli(capsys, "resume", session.id, "-q")
    assert code == 1, "an edited last line was cut as if torn, and the session resumed"
    assert names_line(err, LINES_IN_A_FULL_RUN)


# -- HMAC ---------------------------------------------------------------------------------------
@pytest.fixture
def signed(
    capsys: pytest.CaptureFixture[str], agents: Path, monkeypatch: pytest.MonkeyPatch
) -> SessionFolder:
    """A finished session written with MOOT_JOURNAL_KEY=first-key (still set)."""
    monkeypatch.setenv("MOOT_JOURNAL_KEY", "first-key")
    folder = finished_session(capsys, agents)
    for line in read_lines(folder):
        record = json.loads(line)
        expected = hmac.new(b"first-key", record["hash"].encode(), hashlib.sha256).hexdigest()
        assert record["hmac"] == expected
    return folder


def test_signed_journal_resumes_with_its_key(
    capsys: pytest.CaptureFixture[str], signed: SessionFolder
) -> None:
    code, _, err = cli(capsys, "resume", signed.id, "-q")
    assert code == 0, err
    assert all("hmac" in json.loads(line) for line in read_lines(signed))


def test_signed_journal_with_a_different_key_is_refused(
    capsys: pytest.CaptureFixture[str], signed: SessionFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_JOURNAL_KEY", "second-key")
    for err in refused_by_resume_and_replay(capsys, signed, 1):
        assert "HMAC" in err


def test_signed_journal_without_a_key_is_refused(
    capsys: pytest.CaptureFixture[str], signed: SessionFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MOOT_JOURNAL_KEY")
    for err in refused_by_resume_and_replay(capsys, signed, 1):
        assert "signed" in err and "MOOT_JOURNAL_KEY" in err


def test_unsigned_journal_is_refused_when_a_key_is_set(
    capsys: pytest.CaptureFixture[str], session: SessionFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a key set, a journal whose signatures were stripped (or never made) is not trusted."""
    monkeypatch.setenv("MOOT_JOURNAL_KEY", "first-key")
    for err in refused_by_resume_and_replay(capsys, session, 1):
        assert "no HMAC" in err


def forge(folder: SessionFolder, number: int) -> None:
    """Edit line `number`'s data, then recompute its hash and every later prev and hash."""
    records = [json.loads(line) for line in read_lines(folder)]
    record = records[number - 1]
    text = record["data"]["completion"]["text"]
    assert "Strengths: clear." in text
    record["data"]["completion"]["text"] = text.replace("clear.", "wrong, use my queue.")
    rechain(records, number - 1)
    write_records(folder, records)
    seal(folder, read_lines(folder))  # without the key, the head cannot be signed


def test_forged_line_with_consistent_hashes_is_refused_because_of_the_hmac(
    capsys: pytest.CaptureFixture[str], signed: SessionFolder
) -> None:
    number = first_line_of(signed, "r1/evaluate/")
    forge(signed, number)
    for err in refused_by_resume_and_replay(capsys, signed, number):
        assert "wrong HMAC" in err
        assert "does not match its hash" not in err and "broken hash chain" not in err


def test_forged_line_with_its_hmac_stripped_is_refused(
    capsys: pytest.CaptureFixture[str], signed: SessionFolder
) -> None:
    number = first_line_of(signed, "r1/evaluate/")
    forge(signed, number)
    records = [json.loads(line) for line in read_lines(signed)]
    del records[number - 1]["hmac"]
    write_records(signed, records)
    for err in refused_by_resume_and_replay(capsys, signed, number):
        assert "no HMAC" in err


def test_the_same_forgery_passes_without_a_key(session: SessionFolder) -> None:
    """The control: in an unsigned journal a forger who recomputes the chain is not caught, so
    it is the HMAC, not the hash chain, that refuses the forged line above."""
    number = first_line_of(session, "r1/evaluate/")
    forge(session, number)
    journal, cut = Journal.open(session.events, repair=False)
    assert cut is None
    assert "wrong, use my queue." in journal.events[number - 1].data["completion"]["text"]


# -- one writer ---------------------------------------------------------------------------------
@pytest.fixture
def running(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A real `moot run` process, paused inside its first model calls until released."""
    agents = tmp_path / "holding_agents.py"
    agents.write_text(HOLDING_AGENTS, encoding="utf-8")
    entered, release = tmp_path / "entered", tmp_path / "release"
    env = {**os.environ, "MOOT_TEST_ENTERED": str(entered), "MOOT_TEST_RELEASE": str(release)}
    env.pop("MOOT_JOURNAL_KEY", None)
    args = [MOOT, "run", TASK, *models(agents), "--seed", "5", "-q", "--rounds", "1"]
    with subprocess.Popen(
        args, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as child:
        try:
            deadline = time.monotonic() + 20
            while not entered.exists():
                assert child.poll() is None, child.communicate()
                assert time.monotonic() < deadline, "the holding process never asked a model"
                time.sleep(0.01)
            (path,) = (Path(os.environ["MOOT_HOME"]) / "sessions").iterdir()
            yield {"child": child, "folder": SessionFolder(path), "release": release}
        finally:
            release.touch()
            try:
                child.communicate(timeout=30)
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait(timeout=10)


def test_resume_fails_at_once_while_another_process_runs_the_session(
    capsys: pytest.CaptureFixture[str], running: dict[str, Any]
) -> None:
    child: subprocess.Popen[str] = running["child"]
    folder: SessionFolder = running["folder"]
    before = folder.events.read_bytes()
    assert before.count(b"\n") == 2  # begin, run_started: the holder is waiting on its models

    started = time.monotonic()
    code, _, err = cli(capsys, "resume", folder.id)
    elapsed = time.monotonic() - started

    assert code == 1
    assert elapsed < 2.0, f"resume waited {elapsed:.1f}s for the lock instead of failing"
    assert f"session {folder.id}" in err and "another process" in err
    assert f"pid {child.pid}" in err
    assert folder.events.read_bytes() == before
    assert child.poll() is None  # the holder was not disturbed

    # status reads state.json only, so it works while the session is held
    code, out, err = cli(capsys, "status", folder.id)
    assert code == 0, err
    assert folder.id in out and "running" in out and "stopped unexpectedly" not in out

    # once the holder is done the lock is free again
    running["release"].touch()
    assert child.wait(timeout=30) == 0
    code, _, err = cli(capsys, "resume", folder.id, "-q")
    assert code == 0, err


def test_resume_is_refused_while_the_lock_is_held_in_this_process(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    before = session.events.read_bytes()
    lock = SessionFolder(session.path).acquire()
    try:
        started = time.monotonic()
        code, _, err = cli(capsys, "resume", session.id)
        assert time.monotonic() - started < 2.0
        assert code == 1 and "another process" in err and session.id in err
        assert session.events.read_bytes() == before

        code, out, _ = cli(capsys, "status", session.id)
        assert code == 0 and "consensus" in out
    finally:
        lock.release()
    code, _, err = cli(capsys, "resume", session.id, "-q")
    assert code == 0, err
