"""`moot bench` measures moa against vote at about the same number of calls: each question an
ordinary moa session, then vote at moa's mean calls per question."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from moot.bench.runner import BenchOptions, run_bench
from moot.models.scripted import register_script
from moot.types import Request

_QUESTION = re.compile(r"What is the result of ([0-9+*\-]+)\?")


def solver(request: Request) -> str:
    """Right in every moa layer and in the aggregator; vote's one-shot samples are off by one
    (the first layer's prompt and vote's differ: vote asks the bare question)."""
    found = _QUESTION.search(request.prompt)
    assert found, request.prompt
    right = int(eval(found.group(1)))  # digits and + - * only: the regex allows no more
    step = request.meta["step"]
    moa = "/propose/" in step or "/aggregate/" in step
    return f"Working.\nAnswer: {right if moa else right + 1}"


def test_bench_runs_moa_against_vote_at_equal_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    register_script("moa-bench", solver)
    options = BenchOptions(
        suite="arithmetic", protocols=["vote", "moa"], models=["scripted:@moa-bench"] * 3, n=3
    )
    run_bench(options, out=tmp_path / "out")
    data = json.loads((tmp_path / "out" / "bench.json").read_text())
    rows = {row["name"]: row for row in data["protocols"]}
    moa, vote = rows["moa"], rows["vote (samples=3)"]
    # 3 layers of 3 agents and the aggregator: 10 calls a question; vote at 3 samples x 3 agents
    assert moa["calls_per_question"] == 10 and moa["calls"] == 30
    assert vote["calls_per_question"] == 9
    assert moa["comparison"]["baseline"] == "vote (samples=3)"
    assert moa["accuracy"] == 1.0 and vote["accuracy"] == 0.0
    assert moa["comparison"]["only_protocol_right"] == 3  # too few questions to be "better"
