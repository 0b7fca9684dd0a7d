"""Paths and filters of the commands that read sessions (a new user's tryout): a report written
under a file, a status that is none, and a moot home that is a file are each named, not taken
for a missing folder or an empty list."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli import moot, scripted_run
from tests.scripts import Debate


def _session(capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = scripted_run(capsys, Debate())
    assert code in (0, 2), err
    return out.split("Session ", 1)[1].split(":", 1)[0]


@pytest.mark.parametrize("under", ["x.html", "sub/x.html"])
@pytest.mark.parametrize("flag", ["--html", "--md"])
def test_export_under_a_file_says_it_is_a_file(
    under: str, flag: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session = _session(capsys)
    afile = tmp_path / "afile"
    afile.write_text("mine\n", encoding="utf-8")
    target = afile / under
    code, _, err = moot(capsys, "export", session, flag, str(target))
    assert code == 1
    assert f"cannot write {target}: {afile} is a file, not a folder" in err, err
    assert "does not exist" not in err
    assert afile.read_text(encoding="utf-8") == "mine\n"


def test_list_refuses_a_status_that_is_none_naming_the_valid_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    session = _session(capsys)
    code, _, err = moot(capsys, "list", "--status", "bogus")
    assert code == 1  # a usage error, as every bad choice of moot's options
    assert "--status" in err and "no such status: 'bogus'" in err
    for status in ("consensus", "no_consensus", "paused", "failed", "interrupted", "running"):
        assert status in err
    code, out, err = moot(capsys, "list", "--status", "No consensus", "--status", "consensus")
    assert code == 0 and session in out, err


@pytest.mark.parametrize("home", ["afile", "afile/below"])
def test_a_file_as_moots_home_is_named_by_every_reader(
    home: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("mine\n", encoding="utf-8")
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / home))
    readers = [["list"], ["list", "--json"], ["show"], ["status"], ["replay"], ["stats"]]
    for args in [*readers, ["export", "--md", str(tmp_path / "r.md")], ["show", "20260101"]]:
        code, out, err = moot(capsys, *args)
        assert code == 1, (args, out)
        assert f"{afile} is a file, not a folder" in err and "set MOOT_HOME to a folder" in err
        assert "no session" not in out + err, args
    assert afile.read_text(encoding="utf-8") == "mine\n"


def test_the_cache_under_a_home_that_is_a_file_names_the_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """It said "[Errno 17] File exists" of the folder it wanted to make, and gave no fix."""
    afile = tmp_path / "afile"
    afile.write_text("mine\n", encoding="utf-8")
    monkeypatch.setenv("MOOT_HOME", str(afile))
    code, _, err = moot(capsys, "cache", "stats")
    assert code == 1 and "Errno" not in err, err
    assert f"{afile} is a file, not a folder. Move it, or set MOOT_HOME to a folder" in err
    assert afile.read_text(encoding="utf-8") == "mine\n"
