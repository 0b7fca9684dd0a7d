"""The judge swap audit on real tournament sessions: each match's verdict is found in the
journal, asked again with the two sides swapped, and a judge that always prefers whatever is
shown first keeps 0% of its verdicts while one that judges the texts keeps 100%."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from moot import api
from moot.bench.swap import audit_judgements, pairwise_judgements, swapped_prompt
from moot.config import RunConfig
from moot.models.scripted import register_script
from moot.types import Request

TEXTS = {
    "agent_a": "Store sessions in PostgreSQL with an index on expiry.",
    "agent_b": "Keep sessions in Redis with a TTL per key.",
    "agent_c": "Put sessions in DynamoDB with native expiry.",
}
PREFERENCE = ("PostgreSQL", "Redis", "DynamoDB")
_BODY = re.compile(r'<quoted from="([AB])" id="[^"]+">\n(.*?)\n</quoted', re.DOTALL)
JUDGE = {"mode": "first"}


def side(request: Request) -> str:
    step, me = request.meta["step"], request.meta["agent"]
    kind = step.split("/")[1].rsplit("_", 1)[-1]
    if kind == "convergence":
        return json.dumps(
            {
                "overall_convergence": 40,
                "core_recommendation": 40,
                "reasoning_alignment": 40,
                "tradeoff_alignment": 40,
                "implementation_alignment": 40,
                "key_disagreements": ["the store"],
            }
        )
    if kind == "verdict" or step.endswith("/swap-audit"):
        winner = "A"
        if JUDGE["mode"] == "consistent":
            bodies = dict(_BODY.findall(request.prompt))
            best = min(
                bodies,
                key=lambda s: min(
                    (i for i, word in enumerate(PREFERENCE) if word in bodies[s]), default=9
                ),
            )
            winner = best
        return json.dumps(
            {
                "winner": winner,
                "reasons": ["more complete"],
                "fundamental_disagreement": "which store",
                "why_no_convergence": "different priorities",
            }
        )
    text = TEXTS[me]
    if kind == "positions":
        return json.dumps(
            {
                "recommendation": text,
                "reasons": ["measured"],
                "confidence": 0.7,
                "confidence_factors": ["benchmarks"],
                "uncertainty_points": ["growth"],
            }
        )
    if kind == "challenge":
        return json.dumps(
            {
                "weaknesses": ["backups", "failover"],
                "counter_claims": [],
                "alternatives": [],
                "strong_points": ["clear"],
                "position": text,
                "confidence": 0.7,
            }
        )
    return json.dumps(
        {
            "defense": ["measured"],
            "concessions": [],
            "position": text,
            "position_changed": False,
            "what_changed": "",
            "confidence": 0.7,
        }
    )


@pytest.fixture
def tournament(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    register_script("swap-side", side)
    config = RunConfig.read(
        {"protocol": "tournament", "seed": 5, "agents": [{"model": "scripted:@swap-side"}] * 3}
    )
    run = api.start("How should the service store its sessions?", config)
    return run.folder


@pytest.mark.parametrize(("mode", "stability"), [("first", 0.0), ("consistent", 1.0)])
def test_swap_audit_measures_whether_verdicts_survive_the_swap(
    tournament: Path, mode: str, stability: float
) -> None:
    JUDGE["mode"] = mode
    judgements = pairwise_judgements(tournament)
    assert len(judgements) == 2  # one verdict per match
    assert all(set(j.candidates) == {"A", "B"} for j in judgements)
    audit = audit_judgements(judgements, share=1.0, seed=0)
    assert (audit.judged, audit.unusable) == (2, 0)
    assert audit.stability == stability


def test_the_swapped_prompt_exchanges_the_sides_and_the_transcript_letters(
    tournament: Path,
) -> None:
    (first, _) = pairwise_judgements(tournament)
    swapped = swapped_prompt(first.prompt)
    assert dict(_BODY.findall(swapped)) == {"A": first.candidates["B"], "B": first.candidates["A"]}
    assert swapped_prompt(swapped) == first.prompt
    # the debate transcript follows the sides to their new letters
    assert f"Round 0, A states: {first.candidates['A']}" in first.prompt
    assert f"Round 0, B states: {first.candidates['A']}" in swapped


def test_the_bench_reports_the_audit_per_protocol(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot import protocols
    from moot.bench.runner import BenchOptions, run_bench
    from tests.bench.test_bench_runner import VOTE

    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    register_script("swap-side", side)
    protocols.register(VOTE)
    JUDGE["mode"] = "first"
    try:
        options = BenchOptions(
            suite="arithmetic",
            protocols=["tournament"],
            models=["scripted:@swap-side"] * 3,
            n=2,
            swap_audit=0.5,
        )
        report = run_bench(options, out=tmp_path / "out")
    finally:
        protocols.unregister("vote")
    (tournament_row,) = [r for r in report.data["protocols"] if r["name"] == "tournament"]
    audit = tournament_row["swap_audit"]
    assert audit["judgements"] == 4  # 2 questions x 2 matches
    assert audit["asked_swapped"] == 2  # half of them, chosen by the seed
    assert (audit["judged"], audit["stable"], audit["stability"]) == (2, 0, 0.0)
    assert "0 of 2 verdicts named the same candidate with the order swapped (0%" in (
        report.markdown
    )
