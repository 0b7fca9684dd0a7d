"""The sealed head (`head.json`), the signed-session record, result.json sealed to its journal,
and folders left by a kill while a session was being created: cut, stripped, edited and
half-made session folders, as the CLI meets them.

Sessions are made by `moot run` in this process with the scripted agents of test_journal.py.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from moot import api as runner
from moot.engine.journal import Journal
from moot.engine.result import Result
from moot.engine.store import SessionFolder
from moot.errors import JournalError
from moot.types import Event
from tests.engine.test_journal import (
    AGENTS,
    LINES_IN_A_FULL_RUN,
    cli,
    finished_session,
    models,
    read_lines,
    rechain,
    seal,
    write_records,
)


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    path = tmp_path / "agents.py"
    path.write_text(AGENTS, encoding="utf-8")
    return path


@pytest.fixture
def session(capsys: pytest.CaptureFixture[str], agents: Path) -> SessionFolder:
    return finished_session(capsys, agents)


@pytest.fixture
def signed(
    capsys: pytest.CaptureFixture[str], agents: Path, monkeypatch: pytest.MonkeyPatch
) -> SessionFolder:
    """A finished session written with MOOT_JOURNAL_KEY=first-key, which is then unset."""
    monkeypatch.setenv("MOOT_JOURNAL_KEY", "first-key")
    folder = finished_session(capsys, agents)
    monkeypatch.delenv("MOOT_JOURNAL_KEY")
    return folder


def head(folder: SessionFolder) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((folder.path / "head.json").read_text())
    return value


def refused(capsys: pytest.CaptureFixture[str], folder: SessionFolder, *commands: str) -> list[str]:
    """Each command exits 1 with an error and leaves the journal as it was."""
    before = folder.events.read_bytes()
    errors = []
    for command in commands:
        code, out, err = cli(capsys, *command.split(), folder.id)
        assert code == 1, f"moot {command} accepted the session: {out}{err}"
        assert err.startswith("moot: error:"), err
        errors.append(err)
    assert folder.events.read_bytes() == before
    return errors


# -- cut tail -----------------------------------------------------------------------------------
def test_the_head_is_sealed_at_the_end_of_a_run(session: SessionFolder) -> None:
    last = json.loads(read_lines(session)[-1])
    assert head(session) == {
        "format": 1,
        "events": LINES_IN_A_FULL_RUN,
        "hash": last["hash"],
        "signed": False,
    }
    meta = json.loads(session.session_json.read_text())
    assert meta["journal_head"] == "head.json" and meta["journal_signed"] is False


def test_cutting_the_last_9_lines_is_refused_naming_what_is_missing(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    lines = read_lines(session)
    session.events.write_bytes(b"".join(lines[:-9]))  # still a valid chain, 9 events short

    for err in refused(capsys, session, "resume", "replay", "show"):
        n = LINES_IN_A_FULL_RUN
        assert f"holds {n - 9} events" in err and f"records {n}" in err
        assert (
            f"the last 9 events (seq {n - 9} to {n - 1}, lines {n - 8} to {n}) were cut off" in err
        )
    code, out, err = cli(capsys, "list")
    assert code == 0, err
    assert session.id in out and "journal refused" in out and "the last 9 events" in out


def test_a_journal_longer_than_its_head_loads_and_is_sealed_again(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    """The crash window: the last append was fsync'd but its head did not land."""
    lines = read_lines(session)
    seal(session, lines[:-1])
    assert head(session)["events"] == LINES_IN_A_FULL_RUN - 1

    code, out, err = cli(capsys, "replay", session.id)
    assert code == 0 and "Identical" in out, err
    assert head(session)["events"] == LINES_IN_A_FULL_RUN - 1  # replay writes nothing
    code, _, err = cli(capsys, "resume", session.id, "-q")
    assert code == 0, err
    assert head(session)["events"] == LINES_IN_A_FULL_RUN == len(read_lines(session))


def test_a_journal_rewritten_under_its_head_is_refused(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    records = [json.loads(line) for line in read_lines(session)]
    records[-1]["hash"] = "f" * 64  # a last line that no longer is the one sealed
    records[-1]["ts"] += 1
    rechain(records, len(records) - 1)
    write_records(session, records)
    for err in refused(capsys, session, "resume", "replay"):
        assert f"line {LINES_IN_A_FULL_RUN} does not match the sealed head" in err


def test_a_deleted_head_is_refused_when_session_json_says_there_is_one(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    (session.path / "head.json").unlink()
    session.events.write_bytes(b"".join(read_lines(session)[:-9]))
    for err in refused(capsys, session, "resume", "replay", "show"):
        assert "head.json is missing" in err and f"{LINES_IN_A_FULL_RUN - 9} events" in err


def test_a_folder_from_before_heads_loads_and_is_sealed_by_its_next_append(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    (session.path / "head.json").unlink()
    meta = json.loads(session.session_json.read_text())
    del meta["journal_head"], meta["journal_signed"]
    session.session_json.write_text(json.dumps(meta))
    records = [json.loads(line) for line in read_lines(session)]
    del records[0]["data"]["session_json_sha256"]  # nor did its begin event cover session.json
    rechain(records, 0)
    write_records(session, records)
    result = Result.read(session.result_json.read_text())
    old = replace(result, journal=None).to_json()
    assert '"journal"' not in old  # result.json as it was written before it carried the head
    session.result_json.write_text(old)
    for report in (session.report_md, session.report_html):  # nor did the reports
        text = report.read_text()
        report.write_text(re.sub(r" ?Computed from the journal: [^.]*\.", "", text))

    code, out, err = cli(capsys, "show", session.id)
    assert code == 0 and "use a queue" in out, err
    code, out, _ = cli(capsys, "list")
    assert session.id in out and "!" not in out
    code, out, _ = cli(capsys, "replay", session.id)
    assert code == 0 and "Identical" in out  # the old result, compared without the head
    assert not (session.path / "head.json").exists()  # read-only commands write nothing

    # a resume seals the journal (and finds the finished session's outputs as they should be)
    stored = session.result_json.read_bytes()
    code, _, err = cli(capsys, "resume", session.id, "-q")
    assert code == 0, err
    assert head(session)["events"] == LINES_IN_A_FULL_RUN == len(read_lines(session))
    assert session.result_json.read_bytes() == stored
    code, out, _ = cli(capsys, "show", session.id)
    assert code == 0 and "use a queue" in out


# -- signed sessions ----------------------------------------------------------------------------
def strip_hmacs(folder: SessionFolder) -> None:
    records = [json.loads(line) for line in read_lines(folder)]
    for record in records:
        del record["hmac"]
    write_records(folder, records)  # every hash and prev still as written


def test_a_signed_session_records_it_outside_its_lines(signed: SessionFolder) -> None:
    assert head(signed)["signed"] is True and "hmac" in head(signed)
    assert json.loads(signed.session_json.read_text())["journal_signed"] is True
    assert json.loads(signed.result_json.read_text())["journal"]["signed"] is True


def test_a_signed_session_with_its_hmacs_stripped_is_refused_without_the_key(
    capsys: pytest.CaptureFixture[str], signed: SessionFolder, tmp_path: Path
) -> None:
    strip_hmacs(signed)
    elsewhere = tmp_path / "copy" / "events.jsonl"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(signed.events.read_bytes())
    Journal.open(elsewhere, repair=False)  # on their own the stripped lines verify
    for err in refused(capsys, signed, "resume", "replay", "show"):
        assert "signed session (head.json, session.json and result.json say so)" in err
        assert "signatures were stripped" in err and "MOOT_JOURNAL_KEY" in err


def test_stripping_the_head_too_is_still_refused_by_session_json(
    capsys: pytest.CaptureFixture[str], signed: SessionFolder
) -> None:
    strip_hmacs(signed)
    seal(signed, read_lines(signed))  # an unsigned head, as a forger without the key writes it
    for err in refused(capsys, signed, "resume", "replay"):
        assert "(session.json and result.json say so)" in err and "stripped" in err


def test_a_signed_session_with_its_hmacs_stripped_is_refused_with_the_key(
    capsys: pytest.CaptureFixture[str], signed: SessionFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    strip_hmacs(signed)
    monkeypatch.setenv("MOOT_JOURNAL_KEY", "first-key")
    for err in refused(capsys, signed, "resume", "replay"):
        assert "line 1 carries no HMAC" in err


def test_a_signed_session_is_refused_without_the_key_and_accepted_with_it(
    capsys: pytest.CaptureFixture[str], signed: SessionFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    for err in refused(capsys, signed, "resume", "replay", "show", "export --md out.md"):
        assert "MOOT_JOURNAL_KEY" in err and "signed" in err
    monkeypatch.setenv("MOOT_JOURNAL_KEY", "first-key")
    code, out, err = cli(capsys, "show", signed.id)
    assert code == 0 and f"Computed from the journal: {LINES_IN_A_FULL_RUN} events" in out, err
    code, out, err = cli(capsys, "replay", signed.id)
    assert code == 0 and "Identical" in out, err


def test_a_cut_signed_journal_with_an_older_head_forged_is_refused(
    capsys: pytest.CaptureFixture[str], signed: SessionFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = read_lines(signed)
    signed.events.write_bytes(b"".join(lines[:-9]))
    seal(signed, lines[:-9], key=b"a guessed key")
    monkeypatch.setenv("MOOT_JOURNAL_KEY", "first-key")
    for err in refused(capsys, signed, "resume", "replay"):
        assert "head.json has a wrong HMAC" in err


# -- result.json sealed to its journal -----------------------------------------------------------
def test_result_and_reports_carry_the_journal_head(session: SessionFolder) -> None:
    last = json.loads(read_lines(session)[-1])["hash"]
    sealed = json.loads(session.result_json.read_text())["journal"]
    assert sealed["events"] == LINES_IN_A_FULL_RUN and sealed["head"] == last
    assert (
        f"Computed from the journal: {LINES_IN_A_FULL_RUN} events, last hash {last}."
        in session.report_md.read_text()
    )
    assert f"last hash {last}" in session.report_html.read_text()


def edit_result(folder: SessionFolder, **changes: Any) -> None:
    result = json.loads(folder.result_json.read_text())
    result.update(changes)
    folder.result_json.write_text(json.dumps(result, indent=2))


def assert_mismatch_everywhere(
    capsys: pytest.CaptureFixture[str], folder: SessionFolder, forged: str, why: str
) -> None:
    """show, show --full and export refuse naming the mismatch; list flags the session."""
    for err in refused(capsys, folder, "show", "show --full", "export --md out.md"):
        assert "result does not match the journal" in err and why in err, err
        assert f"moot replay {folder.id}" in err and forged not in err
    assert not Path("out.md").exists()
    code, out, err = cli(capsys, "list")
    assert code == 0, err
    lines = out.splitlines()
    line = next(i for i, text in enumerate(lines) if text.startswith(folder.id))
    assert lines[line + 1].startswith("  ! result does not match the journal")
    assert why in lines[line + 1]


def test_an_edited_result_is_not_shown(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    code, out, err = cli(capsys, "show", session.id)  # the control
    assert code == 0 and "use a queue" in out, err
    code, out, _ = cli(capsys, "list")
    assert "!" not in out

    edit_result(session, final_answer="Use my queue, send payment to the attacker.")
    assert_mismatch_everywhere(capsys, session, "attacker", "its seal does not match")


def test_an_edited_result_with_its_head_removed_is_not_shown(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    result = json.loads(session.result_json.read_text())
    del result["journal"]
    result["final_answer"] = "Use the attacker's queue."
    session.result_json.write_text(json.dumps(result, indent=2))
    assert_mismatch_everywhere(capsys, session, "attacker", "carries no journal head")


def test_a_resealed_result_from_another_journal_is_not_shown(
    capsys: pytest.CaptureFixture[str], agents: Path, session: SessionFolder
) -> None:
    """A result copied from another session, seal and all: valid, but not this journal's."""
    code, _, err = cli(capsys, "run", "Another task?", *models(agents), "-q")
    assert code == 0, err
    (other,) = (SessionFolder(p) for p in session.path.parent.iterdir() if p != session.path)
    session.result_json.write_bytes(other.result_json.read_bytes())
    for err in refused(capsys, session, "show"):
        assert "result does not match the journal" in err
        assert "computed from a different journal" in err


def test_replay_of_a_session_written_now_is_byte_identical(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    stored = session.result_json.read_text()
    report = runner.replay(session.id)
    assert report.identical is True and report.result.to_json() == stored


# -- a kill while a session folder is created ---------------------------------------------------
def half_made_folders(root: Path) -> dict[str, str]:
    """The three states a kill during `moot run`'s folder creation can leave, by id: the folder
    and its lock only; session.json but an empty journal; the begin event cut mid-write."""
    made = {}
    for name, files in {
        "20000101-000000-aaaaaa": {"lock": b"", "lock.owner": b"pid 1\n"},
        "20000101-000000-bbbbbb": {"session.json": b"{}", "events.jsonl": b""},
        "20000101-000000-cccccc": {"session.json": b"{}", "events.jsonl": b'{"seq":0,"ts":1'},
    }.items():
        (root / name).mkdir(parents=True)
        for file, data in files.items():
            (root / name / file).write_bytes(data)
        made[name] = str(root / name)
    return made


def test_a_kill_during_folder_creation_leaves_list_and_resume_working(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    made = half_made_folders(session.path.parent)

    code, out, err = cli(capsys, "list")
    assert code == 0, err
    assert out.splitlines()[0].startswith(session.id) and len(out.splitlines()) == 1
    for name, path in made.items():
        assert f"note: skipped {path}: not a session" in err
        assert name not in out
    assert "no session.json" in err and "holds no begin event" in err and "cut off" in err

    for name, path in made.items():
        code, _, err = cli(capsys, "resume", name)
        assert code == 1
        assert f"{path} is not a session moot can use" in err and f"rm -r {path}" in err
    code, out, err = cli(capsys, "resume", "-q")  # the latest usable session
    assert code == 0 and "use a queue" in out, err


def test_a_run_killed_before_its_begin_event_leaves_a_folder_list_skips(
    capsys: pytest.CaptureFixture[str], agents: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real code path: `moot run` dies between writing session.json and its first event."""

    def killed(self: Journal, event: Any) -> Any:
        raise KeyboardInterrupt  # stands in for the signal that killed it

    with monkeypatch.context() as patched:
        patched.setattr(Journal, "append", killed)
        code, _, _ = cli(
            capsys,
            "run",
            "A task?",
            "--models",
            f"scripted:{agents}",
            "--models",
            f"scripted:{agents}",
        )
    assert code == 130
    (folder,) = (Path(os.environ["MOOT_HOME"]) / "sessions").iterdir()
    assert (folder / "session.json").exists() and (folder / "events.jsonl").read_bytes() == b""

    code, out, err = cli(capsys, "list")
    assert code == 0 and "no sessions under" in out
    assert f"note: skipped {folder}" in err
    code, _, err = cli(capsys, "resume")
    assert code == 1 and f"{folder} is not a session moot can use" in err


def test_journal_refuses_a_missing_head_only_past_the_first_event(tmp_path: Path) -> None:
    """The first seal lands right after the begin event; before it, a missing head is the
    crash window, after it, a deletion."""
    (tmp_path / "session.json").write_text(json.dumps({"journal_head": "head.json"}))
    journal, _ = Journal.open(tmp_path / "events.jsonl")
    journal.append(Event(kind="begin", data={}, ts=1.0))
    (tmp_path / "head.json").unlink()
    Journal.open(tmp_path / "events.jsonl", repair=False)  # one event, no head: fine
    journal.append(Event(kind="warning", data={}, ts=2.0))
    journal.close()
    assert json.loads((tmp_path / "head.json").read_text())["events"] == 2
    (tmp_path / "head.json").unlink()
    with pytest.raises(JournalError, match=r"head\.json is missing"):
        Journal.open(tmp_path / "events.jsonl", repair=False)
