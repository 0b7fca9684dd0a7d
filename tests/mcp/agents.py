"""Scripted agents for tests/mcp (loaded by path by the `scripted:` provider in the server's
process): every agent answers 42 and the judges agree, but each verify ask waits until the
file `open` exists next to this file, so that a test can cancel a run there."""

import asyncio
from pathlib import Path

GATE = Path(__file__).with_name("open")
SOLUTION = (  # each agent words it its own way: no agreement before the judges' verify
    "<solution>\n## PLAN\n1. the answer is 42 ({me})\n## CHANGES\nthe answer is 42 ({me})\n"
    "</solution>\n<analysis>\n## RISKS\nnone\n## DISAGREEMENTS\nNone.\n</analysis>"
)
VERDICT = (
    "AGREEMENT POINTS: most.\n<verdict>\ndecision: CONSENSUS\nconvergence_score: 9\n"
    "remaining_disagreements: 0\nbase_solution: Agent A\nmodifications: none\n</verdict>"
)
CRITIQUE = "Strengths: clear. Weaknesses: none. Errors: none."


async def _reply(request):
    step = request.meta["step"]
    if "/verify/" in step:
        while not GATE.exists():
            await asyncio.sleep(0.02)
        return VERDICT
    if "/evaluate/" in step:
        return CRITIQUE
    return SOLUTION.format(me=request.meta["agent"])


agent_one = agent_two = agent_three = _reply
