"""One home for sessions, cache and prices (issue 24): `$MOOT_HOME`, else the platform's user
data folder, so `moot list`, show, status and resume find a session from any directory;
sessions an older moot left in `./.moot/` are still found, and `moot move-sessions` moves them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from moot.engine.cache import default_cache_path
from moot.engine.store import list_sessions, sessions_root
from moot.models.pricing import user_prices_path
from tests.cli.test_cli import moot, scripted_run
from tests.scripts import Debate, verdict


def _run(capsys: pytest.CaptureFixture[str]) -> str:
    debate = Debate(verdicts=[verdict("CONSENSUS", 9, base="Agent B")])
    code, _, err = scripted_run(capsys, debate)
    assert code == 0, err
    (folder,) = list_sessions()
    return folder.id


def test_without_moot_home_everything_lives_in_the_user_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("MOOT_HOME")
    data = Path(os.environ["XDG_DATA_HOME"]) / "moot"
    assert sessions_root() == data / "sessions"
    assert default_cache_path() == data / "cache.sqlite"
    assert user_prices_path() == data / "prices.toml"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    session = _run(capsys)
    assert (data / "sessions" / session / "events.jsonl").is_file()
    assert not (tmp_path / "a" / ".moot").exists()
    monkeypatch.chdir(tmp_path / "b")  # another directory finds it
    code, out, _ = moot(capsys, "list")
    assert code == 0 and session in out
    code, out, _ = moot(capsys, "show", session)
    assert code == 0 and "42" in out


def test_an_older_moots_sessions_are_found_and_moved_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / ".moot"))  # the old default layout
    old_session = _run(capsys)
    (tmp_path / ".moot" / "prices.toml").write_text('["openai:x"]\ninput = 1\noutput = 2\n')
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    code, out, err = moot(capsys, "list")
    assert "1 sessions of an older moot are in" in err and "moot move-sessions" in err
    code, out, _ = moot(capsys, "show", old_session)  # still found where it is
    assert code == 0 and "42" in out
    code, out, err = moot(capsys, "move-sessions")
    assert code == 0, err
    assert f"moved {old_session}" in out and "1 moved to" in out
    assert [f.id for f in list_sessions()] == [old_session]
    assert (tmp_path / "home" / "prices.toml").is_file()
    assert not (tmp_path / ".moot" / "sessions" / old_session).exists()
    code, out, err = moot(capsys, "list")
    assert old_session in out and "older moot" not in err
    code, out, _ = moot(capsys, "resume", old_session)  # resumable from its new place
    assert code == 0


def test_a_running_session_is_not_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / ".moot"))
    session = _run(capsys)
    (folder,) = list_sessions()
    lock = folder.acquire()  # another process runs it
    try:
        monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
        code, out, err = moot(capsys, "move-sessions")
    finally:
        lock.release()
    assert code == 0 and f"kept {session}: session {session} is being run" in err
    assert "0 moved" in out and folder.path.is_dir()


def test_move_sessions_refuses_what_is_not_a_folder(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = moot(capsys, "move-sessions", "nowhere")
    assert code == 1 and "is not a folder" in err
