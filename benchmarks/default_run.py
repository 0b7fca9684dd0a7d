"""The README's first command, measured: `moot run` with no --models and no config (three
agents on the embedded model), N times. Prints, in one run, how many reached a judged outcome
(a verdict with a score, consensus or not), the re-asks per run and the seconds of deliberation
(the session's running time, as `moot list` shows it).

Targets (issue 9): a judged outcome in at least 4 of 5 runs, at most one re-ask per run,
under 90 s of deliberation each, on 2 cores.

Labels (issue 29): how often the label was consensus (moot's finding: consensus or persuasion),
disputed (a model verdict claimed agreement that moot's check did not find) or no consensus
(anything else: no consensus, a tie, a failed run); and whether consensus appeared only where
the agents' final answers agree by moot's claims relation (`deliberation.claims.compare`: more
than half of the agents that started, no two of the agreeing agents' final claims contradicting).

    python benchmarks/default_run.py [N]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from moot.deliberation.claims import Relation, compare, extract_claim

TASKS = [
    "What is the capital of France?",
    "Why is the sky blue?",
    "Should a small team use Postgres or SQLite for a session store?",
    "What is 17 times 3?",
    "Name one benefit of unit tests.",
]


def label_of(result: dict[str, Any]) -> str:
    """consensus, disputed or no consensus (module doc)."""
    finding = result.get("finding") or {}
    if finding.get("label") in ("consensus", "persuasion"):
        return "consensus"
    verdicts = result.get("verdicts") or []
    if any(v.get("claims_agreement") and not v.get("upheld", True) for v in verdicts):
        return "disputed"
    return "no consensus"


def final_answers_agree(result: dict[str, Any]) -> bool:
    """Whether more than half of the agents that started end on claims that agree pairwise
    (none contradicts another), by the claims relation, from result.json's claims."""
    finding = result.get("finding") or {}
    last: dict[str, str] = {}
    for row in sorted(result.get("claims") or [], key=lambda r: r["round"]):
        if row.get("valid", True) and row.get("claim"):
            last[row["agent"]] = row["claim"]
        elif row["agent"] in last:
            del last[row["agent"]]
    agreed = [a for a in finding.get("agreed") or [] if a in last]
    started = finding.get("started") or len(result.get("aliases") or {}) or 1
    claims = [extract_claim(last[a]) for a in agreed]
    pairs = [(x, y) for i, x in enumerate(claims) for y in claims[i + 1 :]]
    return 2 * len(agreed) > started and all(
        compare(x, y).relation is not Relation.CONTRADICT for x, y in pairs
    )


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    moot = str(Path(sys.executable).parent / "moot")
    judged = 0
    reasks: list[int] = []
    seconds: list[float] = []
    labels: list[str] = []
    backed = 0
    with tempfile.TemporaryDirectory() as home:
        for i in range(runs):
            env = {**os.environ, "MOOT_HOME": home}
            subprocess.run([moot, "run", TASKS[i % len(TASKS)], "-q"], env=env, capture_output=True)
            folder = sorted(Path(home, "sessions").iterdir())[-1]
            events = [json.loads(x) for x in (folder / "events.jsonl").read_text().splitlines()]
            asks = [e for e in events if e["kind"] == "ask"]
            reasks.append(sum(1 for e in asks if e["step"].endswith("/reask")))
            result = json.loads((folder / "result.json").read_text())
            verdict = (result.get("details") or {}).get("verdict") or {}
            rounds = (result.get("details") or {}).get("rounds") or []
            scored = any(r.get("convergence_score") is not None for r in rounds)
            agreed = "same answer" in result.get("how", "")
            judged += bool(verdict.get("convergence_score") is not None or scored or agreed)
            labels.append(label_of(result))
            backed += labels[-1] == "consensus" and final_answers_agree(result)
            ts = [e["ts"] for e in events]
            seconds.append(ts[-1] - ts[0])
            print(
                f"run {i + 1}: {result['status']}, {len(asks)} calls, {reasks[-1]} re-asks, "
                f"{seconds[-1]:.0f} s, {labels[-1]}: {result['how'][:90]}",
                flush=True,
            )
    print(f"judged_outcomes: {judged}/{runs} (target >= 4/5)")
    print(f"max_reasks_per_run: {max(reasks)} (target <= 1)")
    print(f"max_deliberation_s: {max(seconds):.0f} (target < 90 s)")
    print(f"median_deliberation_s: {sorted(seconds)[len(seconds) // 2]:.0f}")
    shown = ", ".join(f"{k} {labels.count(k)}/{runs}" for k in ("consensus", "disputed"))
    consensus = labels.count("consensus")
    print(
        f"labels: {shown}, no consensus {labels.count('no consensus')}/{runs}; "
        f"consensus where the final answers agree: {backed}/{consensus} (target: all)"
    )


if __name__ == "__main__":
    main()
