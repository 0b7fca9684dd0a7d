"""Per model over every session (`moot stats`, the web view's models page): valid final
answers, agreement with the answer moot found, changes of mind, calls, tokens and cost, each
counted per agent seat; sessions without a result are left out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from moot.engine.store import SessionFolder
from moot.lifecycle.stats import model_stats


def _usage(model: str, tokens: int, cost: float | None) -> dict[str, Any]:
    return {
        "model": model,
        "prompt_tokens": tokens,
        "completion_tokens": 1,
        "tokens_estimated": False,
        "cost": cost,
        "calls": 3,
        "failures": 1,
    }


def _session(root: Path, name: str, result: dict[str, Any] | None) -> SessionFolder:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "session.json").write_text(json.dumps({"protocol": "arena"}))
    (folder / "events.jsonl").write_text(json.dumps({"kind": "begin", "data": {}}) + "\n")
    if result is not None:
        (folder / "result.json").write_text(json.dumps(result))
    return SessionFolder(folder)


def _two_sessions(root: Path) -> list[SessionFolder]:
    first = {
        "agents": {
            "agent_a": _usage("m:big", 100, 0.5),
            "agent_b": _usage("m:big", 50, 0.25),
            "agent_c": _usage("m:small", 10, None),
        },
        "claims": [
            {"agent": "agent_a", "round": 0, "claim": "41", "valid": True},
            {"agent": "agent_a", "round": 1, "claim": "42", "valid": True},
            {"agent": "agent_b", "round": 1, "claim": "42", "valid": True},
            {"agent": "agent_c", "round": 0, "claim": "42", "valid": True},
            {"agent": "agent_c", "round": 1, "claim": "", "valid": False},
        ],
        "changes": [{"agent": "agent_a", "round": 1, "before": "41", "after": "42"}],
        "finding": {"label": "consensus", "reason": "r", "agreed": ["agent_a", "agent_b"]},
        "final_answer": "It is 42.",
        "positions": {"agent_a": "It is 42.\n", "agent_b": "42, it is.", "agent_c": ""},
    }
    second = {
        "agents": {"agent_a": _usage("m:small", 5, 0.01)},
        "claims": [{"agent": "agent_a", "round": 0, "claim": "7", "valid": True}],
        "finding": {"label": "no_consensus", "reason": "r", "agreed": []},
    }
    return [
        _session(root, "s1", first),
        _session(root, "s2", second),
        _session(root, "s3", None),  # running: no result yet
    ]


def test_each_model_is_counted_per_agent_seat(tmp_path: Path) -> None:
    rows = {r.model: r.as_json() for r in model_stats(_two_sessions(tmp_path))}
    assert rows["m:big"] == {
        "model": "m:big",
        "sessions": 1,
        "agents": 2,
        "valid": 2,
        "agreed": 2,
        "picked": 1,  # agent_a's own text is the final answer; agent_b agreed in other words
        "changed": 1,
        "calls": 6,
        "failures": 2,
        "tokens": 152,
        "cost": 0.75,
    }
    # the order `moot stats --json` prints them in
    assert list(rows["m:big"])[:3] == ["model", "sessions", "agents"]
    small = rows["m:small"]
    assert (small["sessions"], small["agents"], small["valid"], small["agreed"]) == (2, 2, 1, 0)
    assert small["picked"] == 0  # an empty final answer is nobody's
    assert small["cost"] is None  # one call's cost unknown: the total is unknown


def test_moot_stats_prints_them(capsys: pytest.CaptureFixture[str], isolated: Path) -> None:
    from moot.cli import main

    _two_sessions(isolated / "sessions")
    with pytest.raises(SystemExit) as done:
        main(["stats", "--json"])
    assert done.value.code == 0
    printed = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in printed] == ["m:big", "m:small"]
    with pytest.raises(SystemExit):
        main(["stats"])
    table = capsys.readouterr().out
    assert "m:big" in table and "2/2 (100%)" in table and "unknown" in table
