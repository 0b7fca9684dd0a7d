"""What a new user's walkthrough read at the end of a run and in the listings: a finished
session said to be in round 0 of 1, a finding printed twice, `(s)` plurals, a `--protocol`
filter that names no protocol passing as an empty listing, columns out of line."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from moot.lifecycle.projection import Estimate, Line, render
from tests.cli.test_cli import moot, scripted_run
from tests.scripts import Debate


def _session_id(out: str) -> str:
    return out.split("Session ", 1)[1].split(":", 1)[0]


def test_a_list_filter_by_an_unknown_protocol_is_an_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--protocol nope` exited 0 with "no sessions that match"; `--status bogus` exits 1."""
    code, _, err = moot(capsys, "list", "--protocol", "nope")
    assert code == 1 and "nope" in err and "arena" in err and "tournament" in err
    assert "Traceback" not in err


def test_list_columns_stay_in_line_with_a_tournament_row(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    code, out, _ = scripted_run(capsys, Debate(), "--rounds", "1")
    first = isolated / "sessions" / _session_id(out)
    other = first.with_name(first.name[:-1] + ("0" if first.name[-1] != "0" else "1"))
    shutil.copytree(first, other)
    meta = json.loads((other / "session.json").read_text())
    meta["protocol"] = "tournament"
    (other / "session.json").write_text(json.dumps(meta))
    code, out, _ = moot(capsys, "list")
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith(first.name[:8])]
    assert len(rows) == 2, out
    assert len({row.index("consensus") for row in rows}) == 1, out


def test_plurals_are_words_not_brackets(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "moot.toml"
    config.write_text('[[agents]]\nmodel = "local:smollm2"\n' * 2, encoding="utf-8")
    code, out, _ = moot(capsys, "validate", str(config))
    assert code == 0 and "2 agents" in out and "(s)" not in out


def test_bench_help_says_its_default_protocols(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = moot(capsys, "bench", "--help")
    assert code == 0
    assert "Run every protocol" not in out and "arena" in out.split("Options:")[0]


def _estimate(fewest: int, most: int) -> Estimate:
    line = Line("Agent A", "local:smollm2", fewest, most, 100, 0.0, 0.0, True)
    return Estimate("arena", (line,))


def test_the_token_line_reads_as_a_range_or_one_number() -> None:
    """It said "Tokens: up to 24,576-172,032" and "up to 11,081-11,081"."""
    assert re.search(r"^Tokens: 100-300$", render(_estimate(1, 3)), re.M)
    assert re.search(r"^Tokens: up to 200$", render(_estimate(2, 2)), re.M)
    assert re.search(r"^Cost: \$0\.0000$", render(_estimate(1, 3)), re.M)
