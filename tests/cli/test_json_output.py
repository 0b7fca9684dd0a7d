"""--json on run, resume, show, status and list (issue 24): one JSON document on stdout that
scripts can read, in the result.json schema where it fits; `moot list` filters."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from moot.engine.result import Result
from moot.engine.store import list_sessions
from moot.types import load
from tests.cli.test_cli import moot, scripted_run
from tests.scripts import Debate, solution, verdict


def _run(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    debate = Debate(verdicts=[verdict("CONSENSUS", 9, base="Agent B")])
    code, out, _ = scripted_run(capsys, debate, *extra)
    return code, out


def test_run_json_is_the_result_and_nothing_else_on_stdout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = _run(capsys, "--json")
    assert code == 0
    data = json.loads(out)  # the whole of stdout is one document
    result = load(data, Result)
    assert result.status == "consensus" and "42" in result.final_answer
    (folder,) = list_sessions()
    assert data == json.loads(folder.result_json.read_text())


def test_show_status_and_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    _run(capsys)
    code, out, _ = moot(capsys, "show", "--json")
    assert code == 0 and json.loads(out)["status"] == "consensus"
    code, out, _ = moot(capsys, "status", "--json")
    status = json.loads(out)
    assert code == 0 and status["status"] == "consensus" and status["resumable"] is False
    assert status["protocol"] == "arena" and status["elapsed"] >= 0
    code, out, _ = moot(capsys, "list", "--json")
    (row,) = json.loads(out)
    assert row["session_id"] == status["session_id"] and row["problem"] is None


def test_json_escapes_what_a_model_could_send_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    hostile = "42 \x1b]52;c;cm0gLXJmIC8=\x07 \u202eevil"
    debate = Debate(answer=lambda agent, step: solution(f"the answer is {hostile}"))
    code, out, _ = moot(capsys, *debate.run_args(), "--json")
    assert code in (0, 2)
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert json.loads(out)["session_id"]


def test_list_filters(capsys: pytest.CaptureFixture[str]) -> None:
    _run(capsys)
    _run(capsys, "--protocol", "vote", "--samples", "1")
    code, out, _ = moot(capsys, "list", "--json", "--protocol", "vote")
    assert [r["protocol"] for r in json.loads(out)] == ["vote"]
    code, out, _ = moot(capsys, "list", "--json", "--limit", "1")
    assert len(json.loads(out)) == 1
    code, out, _ = moot(capsys, "list", "--json", "--status", "no_consensus", "--status", "paused")
    assert all(r["status"] in ("no_consensus", "paused") for r in json.loads(out))
    code, out, _ = moot(capsys, "list", "--json", "--since", "1h")
    assert len(json.loads(out)) == 2
    tomorrow = time.strftime("%Y-%m-%d", time.localtime(time.time() + 86400))
    code, out, _ = moot(capsys, "list", "--since", tomorrow)
    assert code == 0 and "no sessions that match" in out
    code, _, err = moot(capsys, "list", "--since", "last tuesday")
    assert code == 1 and "give a date (2026-11-26) or a time ago" in err


def test_status_json_of_a_crashed_run_says_it_can_be_resumed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _run(capsys)
    (folder,) = list_sessions()
    state = json.loads(folder.state_json.read_text())
    folder.state_json.write_text(json.dumps({**state, "status": "running", "pid": 999_999_999}))
    code, out, _ = moot(capsys, "status", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["status"] == "stopped unexpectedly" and data["resumable"] is True
