"""JSON repair benchmark (issue 30): what parsing a malformed JSON reply costs, and where.

Run from the repository root:  python benchmarks/json_parse.py [--before]
No network. Each figure is printed as `name: value`.

cut_4mb_parse_s
    Seconds for `extract_json` over a 4,000,000-byte reply cut at `engine.max_reply_bytes` (it
    ends with the cut mark): marked truncated, never repaired.
invalid_2mb_parse_s
    Seconds for `extract_json` over a 2,000,000-byte malformed JSON reply (under the cap, never
    closed): over REPAIR_CAP, so not repaired.
hostile_60kb_worker_s / hostile_60kb_loop_ticks
    Seconds for the session's repair (engine/repair.py) of 60,000 unclosed braces (under
    REPAIR_CAP; json_repair takes about 30 s over it), and how many 10 ms ticks another task
    made meanwhile (about 100 a second when the event loop is free).
--before
    Also times json_repair itself over the first two replies, as moot called it on the event
    loop before the bounds (about 65 s for 4 MB in the issue): minutes of CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from moot.deliberation.parsing import extract_json
from moot.engine.repair import repair_off_loop
from moot.errors import FormatError
from moot.types import CUT_MARK

CUT_4MB = '{"solution": "' + "x" * 4_000_000 + CUT_MARK
INVALID_2MB = '{"solution": "' + "x, " * 666_662
HOSTILE = "{" * 60_000


def _parse_seconds(text: str) -> float:
    began = time.perf_counter()
    try:
        extract_json(text)
    except FormatError:
        pass
    return time.perf_counter() - began


def _repair_seconds(text: str) -> float:
    from json_repair import repair_json

    began = time.perf_counter()
    try:
        repair_json(text, return_objects=True)
    except (ValueError, RecursionError):
        pass
    return time.perf_counter() - began


async def _worker() -> tuple[float, int]:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    began = time.perf_counter()
    await repair_off_loop(HOSTILE)
    took = time.perf_counter() - began
    task.cancel()
    return took, ticks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", action="store_true", help="time unbounded json_repair too")
    args = parser.parse_args()
    print(f"cut_4mb_parse_s: {_parse_seconds(CUT_4MB):.3f}")
    print(f"invalid_2mb_parse_s: {_parse_seconds(INVALID_2MB):.3f}")
    took, ticks = asyncio.run(_worker())
    print(f"hostile_60kb_worker_s: {took:.2f}")
    print(f"hostile_60kb_loop_ticks: {ticks}")
    if args.before:
        print(f"before_cut_4mb_repair_s: {_repair_seconds(CUT_4MB):.1f}")
        print(f"before_invalid_2mb_repair_s: {_repair_seconds(INVALID_2MB):.1f}")


if __name__ == "__main__":
    main()
