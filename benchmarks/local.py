"""The embedded model's benchmark: start, speed, and what three agents on one model cost.

Run from the repository root:  python benchmarks/local.py
Needs the `local` extra (and the model file: scripts/setup.sh fetches it); the llama.cpp
figures are printed too when llama-cpp-python is installed (the `llama` extra). One run, no
loops: on a shared machine the figures are noisy, so the machine's load is printed with them.

<backend>_cold_start_to_first_token_s
    From creating the model (no worker yet) to the first token of a one-token ask: the worker
    process starts, loads the GGUF and evaluates a short prompt. Nothing is installed or fetched.

<backend>_tokens_per_s
    Completion tokens of one ask (up to 64, greedy) divided by its wall time, prompt included.

<backend>_concurrent3_over_single
    Wall time of three different asks sent at once to one model divided by one ask's wall time
    (each up to 64 tokens, greedy). 1.0 would be perfect batching, 3.0 none. Target <= 1.5.

<backend>_two_workers_over_single
    Two workers on the file at once, each with a thread per core (as two moot runs started on
    an idle machine get), one ask each: wall time of both divided by one ask's time alone. 2.0
    is a fair share of the cores; in the hundreds, their threads spin against each other.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("MOOT_HOME", tempfile.mkdtemp(prefix="moot-bench-local-"))

from moot.models.base import Model, create_model  # noqa: E402
from moot.types import Completion, Message, ModelSettings, Request  # noqa: E402

PROMPTS = (
    "Write a long story about a lighthouse keeper.",
    "Write a long story about a river that ran uphill.",
    "Write a long story about a clockmaker's apprentice.",
)


def ask(text: str, max_tokens: int) -> Request:
    return Request(
        messages=(Message(role="user", content=text),),
        max_tokens=max_tokens,
        temperature=0.0,
        timeout=600,
    )


async def measure(backend: str) -> dict[str, float]:
    started = time.perf_counter()
    model: Model = create_model(f"{backend}:smollm2")
    try:
        first = await model.complete(ask("Hello.", 1))
        cold = time.perf_counter() - started
        check(first)
        started = time.perf_counter()
        one = await model.complete(ask(PROMPTS[0], 64))
        single = time.perf_counter() - started
        check(one)
        started = time.perf_counter()
        three = await asyncio.gather(*(model.complete(ask(p, 64)) for p in PROMPTS))
        concurrent = time.perf_counter() - started
        for reply in three:
            check(reply)
    finally:
        await model.aclose()
    return {
        "cold_start_to_first_token_s": cold,
        "tokens_per_s": one.usage.completion_tokens / single,
        "concurrent3_over_single": concurrent / single,
        "two_workers_over_single": await contended(backend) / single,
        "single_tokens": one.usage.completion_tokens,
        "concurrent_tokens": sum(r.usage.completion_tokens for r in three),
    }


async def contended(backend: str) -> float:
    """Both asks' wall time on two workers at once (two context sizes make two workers)."""
    cores = os.cpu_count() or 2
    models = [
        create_model(f"{backend}:smollm2", ModelSettings(options={"n_threads": cores, "n_ctx": n}))
        for n in (4096, 4097)
    ]
    try:
        for model in models:  # loaded before the clock starts
            check(await model.complete(ask("Hello.", 1)))
        started = time.perf_counter()
        both = await asyncio.gather(*(m.complete(ask(PROMPTS[0], 64)) for m in models))
        elapsed = time.perf_counter() - started
        for reply in both:
            check(reply)
        return elapsed
    finally:
        for model in models:
            await model.aclose()


def check(reply: Completion) -> None:
    if reply.failure is not None:
        raise SystemExit(f"the model failed: {reply.failure.kind}: {reply.failure.message}")


def main() -> None:
    load = os.getloadavg()[0]
    print(f"cores: {os.cpu_count()}, load average (1 min): {load:.1f}")
    backends = ["local"]
    if importlib.util.find_spec("llama_cpp") is not None:
        backends.append("llama")
    else:
        print("llama: llama-cpp-python is not installed (pip install 'moot[llama]'); skipped")
    for backend in backends:
        figures = asyncio.run(measure(backend))
        print(
            f"{backend}_cold_start_to_first_token_s: {figures['cold_start_to_first_token_s']:.2f}"
        )
        print(f"{backend}_tokens_per_s: {figures['tokens_per_s']:.1f}")
        ratio = figures["concurrent3_over_single"]
        verdict = "met" if ratio <= 1.5 else "MISSED"
        print(
            f"{backend}_concurrent3_over_single: {ratio:.2f} (target <= 1.5: {verdict}; "
            f"tokens {figures['single_tokens']:.0f} alone, {figures['concurrent_tokens']:.0f} "
            "for the three)"
        )
        print(f"{backend}_two_workers_over_single: {figures['two_workers_over_single']:.2f}")


if __name__ == "__main__":
    main()
