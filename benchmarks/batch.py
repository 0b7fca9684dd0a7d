"""`moot batch` at scale: 1,000 scripted sessions in one process, its throughput and peak memory.

Run from the repository root:  python benchmarks/batch.py [--sessions 1000] [--concurrency 32]
No network, no model weights; everything is written under a temporary MOOT_HOME removed at the
end. Each session is a real 3-agent arena (3 solve, 3 evaluate, 3 revise, 1 verify: 10 calls)
through `moot.batch` exactly as `moot batch` runs it (its batch journal fsync'd per session
start and end, each session's journal, result.json and reports written), with zero-latency
scripted models that differ in round 0 and agree after revising. Printed:

sessions_per_second   sessions ended / wall time of `run_batch` (target: none; it is a figure)
peak_rss_mb           the process's peak resident memory after the run (target < 1024 MB)
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

SOLUTION = (
    "<solution>\n## PLAN\n1. {text}\n## CHANGES\n{text}\n</solution>\n"
    "<analysis>\n## RISKS\nnone\n## DISAGREEMENTS\nNone.\n</analysis>"
)
VERDICT = (
    "AGREEMENT POINTS: all.\n<verdict>\ndecision: CONSENSUS\nconvergence_score: 9\n"
    "remaining_disagreements: 0\nbase_solution: Agent A\nmodifications: none\n</verdict>"
)


def reply(request: object) -> str:
    meta: dict[str, str] = request.meta  # type: ignore[attr-defined]
    phase = meta["step"].split("/")[1]
    if phase == "solve":  # the agents differ at first, so that the debate runs its round
        return SOLUTION.format(text=f"The answer is {40 + ord(meta['agent'][-1]) - ord('a')}.")
    if phase == "revise":
        return SOLUTION.format(text="The answer is 42.")
    if phase == "evaluate":
        return "Strengths: clear. Weaknesses: none. Errors: none."
    return VERDICT


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="moot-batch-bench-"))
    os.environ["MOOT_HOME"] = str(home)
    try:
        from moot.batch import create_batch, run_batch_sync
        from moot.config import RunConfig
        from moot.models.scripted import register_script

        register_script("bench", reply)
        config = RunConfig.read({"protocol": "arena", "agents": [{"model": "scripted:@bench"}] * 3})
        tasks = [(f"q{i}", f"Question {i}: what is 6 x 7?", config) for i in range(args.sessions)]
        batch = create_batch(tasks)
        began = time.monotonic()
        summary = run_batch_sync(batch, concurrency=args.concurrency)
        wall = time.monotonic() - began
        ended = len(summary.results)
        ok = sum(1 for r in summary.results if r.status == "consensus")
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
        peak_mb = peak_kb / 1024 if sys.platform != "darwin" else peak_kb / 1024 / 1024
        calls = sum(r.calls for r in summary.results)
        print(f"sessions: {ended} ended, {ok} consensus, {calls} model calls, {wall:.1f}s wall")
        print(f"sessions_per_second: {ended / wall:.1f}")
        verdict = "met" if peak_mb < 1024 else "MISSED"
        print(f"peak_rss_mb: {peak_mb:.0f} (target < 1024: {verdict})")
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
