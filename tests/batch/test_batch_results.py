"""`moot batch` writes results.jsonl beside its journal (issue 24): one line per task, in the
tasks' order, with what a script needs of each session without reading its folder."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from moot import batch as batches
from moot.lifecycle.plan import load_config
from tests.batch.test_batch import MODELS, home_in_process
from tests.cli.test_cli import moot


def test_one_results_line_per_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home_in_process(tmp_path, monkeypatch, questions=2)
    with (tmp_path / "tasks.jsonl").open("a") as handle:
        handle.write(json.dumps({"id": "broken", "task": "Q9", "models": ["scripted:x.py"] * 2}))
    code, _, err = moot(capsys, "batch", "tasks.jsonl", *MODELS)
    assert code == 1, err
    shown = re.search(r"^results: (.+)$", err, re.M)
    assert shown, err
    path = Path(shown.group(1))
    assert path.name == "results.jsonl" and (path.parent / "journal.jsonl").is_file()
    lines = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in lines] == ["Q1", "Q2", "broken"]
    assert [line["index"] for line in lines] == [0, 1, 2]
    for line in lines[:2]:
        result = json.loads((Path(line["folder"]) / "result.json").read_text(encoding="utf-8"))
        answer = hashlib.sha256(result["final_answer"].encode("utf-8")).hexdigest()
        assert line["session_id"] == result["session_id"]
        assert (line["status"], line["exit_code"]) == ("consensus", 0)
        assert line["label"] == result["finding"]["label"]
        assert (line["tokens"], line["cost"]) == (result["tokens"], result["cost"])
        assert line["answer_sha256"] == answer and line["calls"] == 9
        assert line["seconds"] > 0 and line["error"] is None
    broken = lines[2]
    assert (broken["status"], broken["exit_code"], broken["session_id"]) == ("failed", 1, None)
    assert "scripted model file 'x.py' does not exist" in broken["error"]
    assert broken["answer_sha256"] is None and broken["label"] is None


def test_a_task_that_has_not_ended_is_pending(tmp_path: Path) -> None:
    plan = load_config(None, {})
    batch = batches.create_batch([("a", "x", plan), ("b", "y", plan)], root=tmp_path)
    ended = batches.LineResult(0, "a", "s1", "paused", "a limit", final_answer="")
    batch.write_results({0: ended})
    lines = [json.loads(t) for t in batch.results.read_text(encoding="utf-8").splitlines()]
    assert (lines[0]["status"], lines[0]["exit_code"], lines[0]["error"]) == (
        "paused",
        3,
        "a limit",
    )
    assert lines[1] == {"id": "b", "index": 1, "session_id": None, "status": "pending"}
