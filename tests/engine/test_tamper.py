"""Tampering evidence outside the journal (engine/evidence.py): result.json and the reports
remember how long the journal was, the begin event covers session.json, and a signed session
stays signed unless its user says otherwise. `moot show` refuses a tampered session, `moot
resume` refuses to continue it unless told to go on knowingly, and journals that it was.

Sessions are made by `moot run` in this process with the scripted agents of test_journal.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from moot.engine.journal import Journal, canonical_json
from moot.engine.store import SessionFolder
from tests.engine.test_journal import (
    AGENTS,
    LINES_IN_A_FULL_RUN,
    cli,
    finished_session,
    read_lines,
    rechain,
    seal,
    write_records,
)
from tests.engine.test_journal_head import refused, strip_hmacs

LINES = LINES_IN_A_FULL_RUN


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


def cut_and_reseal(folder: SessionFolder, keep: int) -> None:
    """Cut the journal to its first `keep` lines and write the head to match, as someone who
    can rewrite an unsigned session's folder can."""
    lines = read_lines(folder)[:keep]
    folder.events.write_bytes(b"".join(lines))
    seal(folder, lines)


def warnings(folder: SessionFolder) -> list[dict[str, Any]]:
    return [json.loads(line)["data"] for line in read_lines(folder) if b'"kind":"warning"' in line]


def asks(folder: SessionFolder) -> int:
    return sum(b'"kind":"ask"' in line for line in read_lines(folder))


# -- a journal shorter than its result.json and reports ------------------------------------------
def test_a_cut_tail_with_its_head_rewritten_is_tampered_for_show_list_and_resume(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    """Issue 30: `show` said 'Incomplete' and `resume` re-asked the cut steps silently."""
    cut_and_reseal(session, 11)
    evidence = session.result_json.read_bytes()

    for err in refused(capsys, session, "show", "resume", "export --md out.md"):
        assert f"session {session.id} is tampered" in err
        assert f"result.json: it was computed from a journal of {LINES_IN_A_FULL_RUN} events" in err
        assert "events.jsonl holds 11" in err and "report.md" in err
        assert f"moot resume {session.id} --accept-tampered" in err
    assert session.result_json.read_bytes() == evidence  # nothing was overwritten
    code, out, err = cli(capsys, "list")
    assert code == 0, err
    assert (
        f"! tampered: result.json: it was computed from a journal of {LINES_IN_A_FULL_RUN} events"
        in out
    )


def test_resume_goes_past_the_evidence_only_when_told_and_journals_it(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    cut_and_reseal(session, 11)
    code, out, err = cli(capsys, "resume", session.id, "-q", "--accept-tampered")
    assert code == 0 and "use a queue" in out, err

    (accepted,) = warnings(session)
    assert accepted["message"].startswith("resumed with --accept-tampered past evidence")
    assert "events.jsonl holds 11" in accepted["message"]
    assert sorted(t.split(":")[0] for t in accepted["accepted_tampering"]) == [
        "report.html",
        "report.md",
        "result.json",
    ]
    assert asks(session) == 17  # the cut steps were asked again
    code, out, err = cli(capsys, "show", session.id)  # the new result matches the journal
    assert code == 0 and "use a queue" in out and "--accept-tampered" in out, err


def test_a_report_alone_still_proves_the_longer_journal(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    cut_and_reseal(session, 11)
    session.result_json.unlink()
    session.report_html.unlink()
    for err in refused(capsys, session, "show", "resume"):
        assert f"is tampered: report.md: it was computed from a journal of {LINES} events" in err
        assert "result.json" not in err


def test_a_rewritten_line_with_the_chain_recomputed_is_tampered(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    """The forgery the chain cannot see in an unsigned session (test_journal.py's control):
    the result computed from the original journal sees it."""
    records = [json.loads(line) for line in read_lines(session)]
    records[5]["ts"] += 1
    rechain(records, 5)
    write_records(session, records)
    seal(session, read_lines(session))
    Journal.open(session.events, repair=False)  # the journal alone verifies
    for err in refused(capsys, session, "show", "resume"):
        assert (
            f"is tampered: result.json: it was computed from a journal whose event {LINES}" in err
        )


def test_a_foreign_or_edited_result_is_not_evidence_about_the_journal(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    """An edited result.json is the result check's mismatch, not tampering of the journal."""
    result = json.loads(session.result_json.read_text())
    result["journal"]["events"] = 99  # its seal no longer holds
    session.result_json.write_text(json.dumps(result))
    (err,) = refused(capsys, session, "show")
    assert "result does not match the journal" in err and "tampered" not in err


# -- session.json covered by the chain -------------------------------------------------------------
def test_the_begin_event_records_the_digest_of_session_json(session: SessionFolder) -> None:
    begin = json.loads(read_lines(session)[0])["data"]
    content = json.loads(session.session_json.read_text())
    expected = hashlib.sha256(canonical_json(content).encode("utf-8")).hexdigest()
    assert begin["session_json_sha256"] == expected


def test_an_edited_session_json_is_tampered_until_a_resume_accepts_it(
    capsys: pytest.CaptureFixture[str], session: SessionFolder
) -> None:
    meta = json.loads(session.session_json.read_text())
    meta["task"] = "Which queue did the attacker pick?"
    session.session_json.write_text(json.dumps(meta, indent=2))

    for err in refused(capsys, session, "show", "resume"):
        assert "is tampered: session.json: it was edited after the session began" in err
    code, _, err = cli(capsys, "resume", session.id, "-q", "--accept-tampered")
    assert code == 0, err
    (accepted,) = warnings(session)
    assert accepted["accepted_tampering"][0].startswith("session.json:")
    code, out, err = cli(capsys, "show", session.id)
    assert code == 0 and "use a queue" in out, err

    meta["task"] = "edited once more"  # a later edit is not covered by the acceptance
    session.session_json.write_text(json.dumps(meta, indent=2))
    (err,) = refused(capsys, session, "show")
    assert "session.json: it was edited" in err


# -- a signed session stripped of its signatures -------------------------------------------------
def unsign_everything(folder: SessionFolder) -> None:
    """Strip every HMAC, say unsigned in session.json, cover that edit in the begin event and
    rechain, then seal an unsigned head: all a forger without the key can rewrite."""
    strip_hmacs(folder)
    meta = json.loads(folder.session_json.read_text())
    meta["journal_signed"] = False
    folder.session_json.write_text(json.dumps(meta, indent=2))
    records = [json.loads(line) for line in read_lines(folder)]
    digest = hashlib.sha256(canonical_json(meta).encode("utf-8")).hexdigest()
    records[0]["data"]["session_json_sha256"] = digest
    rechain(records, 0)
    write_records(folder, records)
    seal(folder, read_lines(folder))


def test_a_signed_session_rewritten_as_unsigned_is_refused_by_its_result(
    capsys: pytest.CaptureFixture[str], signed: SessionFolder
) -> None:
    """Without the key, a resume used to accept it as unsigned, then overwrite the signed
    result.json: the last file that said otherwise."""
    unsign_everything(signed)
    evidence = signed.result_json.read_bytes()
    for err in refused(capsys, signed, "resume", "show", "replay"):
        assert "belongs to a signed session (result.json says so)" in err
        assert "signatures were stripped" in err
        assert f"moot resume {signed.id} --accept-unsigned" in err
    assert signed.result_json.read_bytes() == evidence


def test_a_signed_session_continues_without_its_key_only_when_told(
    capsys: pytest.CaptureFixture[str], signed: SessionFolder
) -> None:
    """The key is lost: the user continues the session unsigned, and the journal says so."""
    lines = read_lines(signed)
    signed.events.write_bytes(b"".join(lines[:-1]))  # a crash before `finished`
    seal(signed, lines[:-1], key=b"first-key")
    for name in ("result.json", "report.md", "report.html"):
        (signed.path / name).unlink()
    (err,) = refused(capsys, signed, "resume")
    assert "line 1 is signed" in err and "--accept-unsigned" in err

    code, out, err = cli(capsys, "resume", signed.id, "-q", "--accept-unsigned")
    assert code == 0 and "use a queue" in out, err
    (accepted,) = warnings(signed)
    assert accepted["accepted_unsigned"] == [
        "head.json",
        "session.json",
        f"{LINES_IN_A_FULL_RUN - 1} of its lines",
    ]
    assert "resumed with --accept-unsigned" in accepted["message"]
    new = [json.loads(line) for line in read_lines(signed)[LINES_IN_A_FULL_RUN - 1 :]]
    assert new and all("hmac" not in record for record in new)
    code, out, err = cli(capsys, "show", signed.id)  # the journal records the choice
    assert code == 0 and "--accept-unsigned" in out, err
