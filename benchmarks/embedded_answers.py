"""How often the embedded model's first answer is one moot accepts and is right, at its default
sampling temperature and at another, in one run (the README's first command shows the result).

Run from the repository root:  python benchmarks/embedded_answers.py [N] [OTHER_TEMPERATURE]
Needs the `local` extra and the model file (scripts/setup.sh). For each question below, N seeded
solve asks exactly as the arena's first phase makes them (its system prompt, its solve prompt,
the JSON schema the embedded model's decoder enforces), at `local.DEFAULT_TEMPERATURE` and at
OTHER_TEMPERATURE (default 0.8, the default before 0.3). An answer counts when moot's substance
check takes it for an answer to the question and it holds the question's key word. Prints one
line per question and temperature, then the totals and their ratio. A few seconds per ask on 2
cores; the figures move with the seeds, not with the machine's load.
"""

from __future__ import annotations

import asyncio
import json
import sys

from moot.deliberation.substance import check_substance
from moot.models import local
from moot.models.base import Model, create_model
from moot.protocols.arena import prompts
from moot.types import Message, Request

QUESTIONS = {
    "What is the capital of France?": "paris",
    "What is the capital of Spain?": "madrid",
    "What is 2 + 3?": "5",
    "What color is the sky on a clear day?": "blue",
}


async def rate(model: Model, question: str, key: str, temperature: float, n: int) -> int:
    """How many of `n` seeded first answers to `question` moot accepts and hold `key`."""
    system = Message(role="system", content=prompts.SYSTEM.format(n=3))
    prompt = prompts.SOLVE.format(task=question, format=prompts.FORMAT)
    good = 0
    for seed in range(1, n + 1):
        request = Request(
            messages=(system, Message(role="user", content=prompt)),
            json_schema=dict(prompts.SOLUTION_SCHEMA),
            seed=seed,
            temperature=temperature,
        )
        completion = await model.complete(request)
        try:
            answer = str(json.loads(completion.text).get("solution", ""))
        except (ValueError, AttributeError):
            answer = ""
        accepted = check_substance(answer, [prompts.SYSTEM, prompt], task=question) is None
        good += accepted and key in answer.lower()
    return good


async def main(n: int, other: float) -> None:
    model = create_model("local:smollm2")
    totals = {local.DEFAULT_TEMPERATURE: 0, other: 0}
    try:
        for question, key in QUESTIONS.items():
            for temperature in totals:
                good = await rate(model, question, key, temperature, n)
                totals[temperature] += good
                print(f"{question!r} at {temperature}: {good}/{n} accepted and right")
    finally:
        await model.aclose()
    asked = n * len(QUESTIONS)
    ours, theirs = totals[local.DEFAULT_TEMPERATURE], totals[other]
    print(f"default {local.DEFAULT_TEMPERATURE}: {ours}/{asked}; {other}: {theirs}/{asked}")
    print(f"ratio, default over {other}: {ours / theirs:.2f}" if theirs else "ratio: none")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    asyncio.run(main(count, float(sys.argv[2]) if len(sys.argv) > 2 else 0.8))
