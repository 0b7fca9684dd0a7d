"""`moot migrate`: a crafted format-version-0 session folder (an unchained journal, no
format_version, no context windows) is refused by resume and replay, upgraded with a backup
kept, and then replays, shows and resumes like any current session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from moot.engine.journal import Journal
from moot.engine.store import SessionFolder
from moot.lifecycle.migrate import folder_version
from tests.cli.test_cli import moot
from tests.court_scripts import Court, selects, stubborn
from tests.scripts import start

PG, LITE = "Use Postgres.", "Use SQLite."


def make_v0(folder: Path) -> dict[str, bytes]:
    """Turn a current session folder into what format version 0 wrote."""
    lines = []
    for raw in (folder / "events.jsonl").read_text().splitlines():
        record = json.loads(raw)
        for key in ("prev", "hash", "hmac"):
            record.pop(key, None)
        if record["kind"] == "begin":
            record["data"].pop("format_version")
            record["data"].pop("context_windows")
        lines.append(json.dumps(record) + "\n")
    (folder / "events.jsonl").write_text("".join(lines))
    session = json.loads((folder / "session.json").read_text())
    del session["format_version"], session["context_windows"]
    (folder / "session.json").write_text(json.dumps(session))
    result = json.loads((folder / "result.json").read_text())
    del result["format_version"]
    (folder / "result.json").write_text(json.dumps(result, indent=2))
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.fixture
def old_session() -> tuple[Path, dict[str, Any], dict[str, bytes]]:
    court = Court(
        {"one": stubborn(PG), "two": stubborn(LITE), "three": stubborn(PG)},
        {"j1": selects(PG), "j2": selects(PG), "j3": selects(LITE)},
    )
    run = start("Which database?", court.config(max_agent_rounds=2))
    assert run.exit_code == 2  # the judges' pick: chosen by the judges, not consensus
    current = json.loads((run.folder / "result.json").read_text())
    return run.folder, current, make_v0(run.folder)


def test_an_old_folder_is_refused_then_migrated_and_works(
    old_session: tuple[Path, dict[str, Any], dict[str, bytes]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder, current, old_files = old_session
    session_id = folder.name
    assert folder_version(SessionFolder(folder)) == 0
    for command in ("replay", "resume"):
        code, _, err = moot(capsys, command, session_id)
        assert code == 1 and f"moot migrate {session_id}" in err and "format version 0" in err

    code, out, _ = moot(capsys, "list")
    assert code == 0 and f"older moot; upgrade it with: moot migrate {session_id}" in out

    code, out, _ = moot(capsys, "migrate", session_id)
    assert code == 0, out
    assert "format version 0 -> 1" in out and "byte for byte" in out
    code, out, _ = moot(capsys, "list")
    assert code == 0 and session_id in out and "!" not in out  # its result is sealed now
    backup = folder / "format-v0-backup"
    assert {p.name: p.read_bytes() for p in backup.iterdir()} == {
        name: data for name, data in old_files.items() if name not in ("lock", "lock.owner")
    }

    journal, cut = Journal.open(folder / "events.jsonl", repair=False)  # chained and verified
    assert cut is None and journal.events[0].data["format_version"] == 1
    assert journal.events[0].data["context_windows"] == {
        alias: 128_000 for alias in current["aliases"]
    }
    assert json.loads((folder / "session.json").read_text())["format_version"] == 1
    assert json.loads((folder / "result.json").read_text()) == current

    code, out, _ = moot(capsys, "replay", session_id)
    assert code == 0 and "Identical to the stored result.json" in out
    code, out, _ = moot(capsys, "show", session_id)
    assert code == 0 and PG in out
    code, out, _ = moot(capsys, "resume", session_id)
    assert code == 2 and "already finished" in out  # the session's own exit code
    code, out, _ = moot(capsys, "migrate", session_id)
    assert code == 0 and "at format version 1 already" in out


def test_migrating_with_a_key_signs_the_new_journal(
    old_session: tuple[Path, dict[str, Any], dict[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder, _, _ = old_session
    monkeypatch.setenv("MOOT_JOURNAL_KEY", "sekrit")
    assert moot(capsys, "migrate", folder.name)[0] == 0
    lines = (folder / "events.jsonl").read_text().splitlines()
    assert all("hmac" in json.loads(line) for line in lines)
    assert moot(capsys, "replay", folder.name)[0] == 0
    monkeypatch.delenv("MOOT_JOURNAL_KEY")
    code, _, err = moot(capsys, "replay", folder.name)
    assert code == 1 and "MOOT_JOURNAL_KEY" in err


def test_a_failed_migration_puts_the_old_files_back(
    old_session: tuple[Path, dict[str, Any], dict[str, bytes]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder, _, _ = old_session
    result = json.loads((folder / "result.json").read_text())
    result["not_a_result_field"] = True
    (folder / "result.json").write_text(json.dumps(result))
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    code, _, err = moot(capsys, "migrate", folder.name)
    assert code == 1 and "not_a_result_field" in err and "left as it was" in err
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert after == before
    assert not (folder / "format-v0-backup").exists()
