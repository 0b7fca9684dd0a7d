"""`moot show` on a terminal: a report longer than the screen goes through the pager (MOOT_PAGER,
else PAGER), unless --no-pager; piped, it is printed and no pager runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from moot.display.pager import pager_command
from tests.display.test_display import _moot_on_a_terminal
from tests.scripts import Debate, start

PAGER = "import sys, pathlib; pathlib.Path(sys.argv[1]).write_bytes(sys.stdin.buffer.read())"


@pytest.fixture
def fake_pager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pager that writes what it is given to a file (the file exists once it ran)."""
    script = tmp_path / "pager.py"
    script.write_text(PAGER)
    paged = tmp_path / "paged.txt"
    monkeypatch.setenv("MOOT_PAGER", f"{sys.executable} {script} {paged}")
    monkeypatch.setenv("PAGER", "false")  # MOOT_PAGER wins
    return paged


def test_a_long_report_on_a_terminal_goes_through_the_pager(
    fake_pager: Path, isolated: Path
) -> None:
    start("What is 6 times 7?", Debate().config())
    raw, _ = _moot_on_a_terminal(["show"], isolated, rows=24, columns=80, tty="stdout")
    paged = fake_pager.read_text()
    assert "Agent A" in paged and paged.count("\n") > 24
    assert "Agent A" not in raw  # the terminal itself got none of it


def test_no_pager_prints_it_all_on_the_terminal(fake_pager: Path, isolated: Path) -> None:
    start("What is 6 times 7?", Debate().config())
    raw, _ = _moot_on_a_terminal(
        ["show", "--no-pager"], isolated, rows=24, columns=80, tty="stdout"
    )
    assert not fake_pager.exists()
    assert "Agent A" in raw and raw.count("\n") > 24


def test_a_report_that_fits_the_screen_is_printed(fake_pager: Path, isolated: Path) -> None:
    start("What is 6 times 7?", Debate().config())
    raw, _ = _moot_on_a_terminal(["show"], isolated, rows=500, columns=200, tty="stdout")
    assert not fake_pager.exists() and "Agent A" in raw


def test_piped_show_never_pages(fake_pager: Path, isolated: Path) -> None:
    start("What is 6 times 7?", Debate().config())
    out = subprocess.run(
        [sys.executable, "-c", "from moot.cli import main; main()", "show"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert not fake_pager.exists()
    assert "Agent A" in out and out.count("\n") > 24


def test_the_pager_is_moot_pager_then_pager_then_less(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOOT_PAGER", raising=False)
    monkeypatch.delenv("PAGER", raising=False)
    assert pager_command() == ["less"]
    monkeypatch.setenv("PAGER", "most -s")
    assert pager_command() == ["most", "-s"]
    monkeypatch.setenv("MOOT_PAGER", "cat")
    assert pager_command() == []
