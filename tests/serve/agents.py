"""Scripted agents for tests/serve (loaded by path by the `scripted:` provider): every agent
answers 42 in words of its own (48 to the follow-up "6 times 8"), with hostile HTML in its
answer, and the judges agree at the first verify. Each reply waits DELAY seconds, so that a
page can watch them arrive."""

import asyncio
import os

DELAY = float(os.environ.get("MOOT_TEST_AGENT_DELAY", "0.3"))
HOSTILE = (
    "<script>window.__pwned = 'script'</script>\n"
    '<img src="http://198.51.100.7/pixel.png" onerror="window.__pwned = \'img\'">\n'
    "![pixel](http://198.51.100.7/remote.png)\n"
)
SOLUTION = (
    "<solution>\n## PLAN\n1. the answer is {n} ({me})\n## CHANGES\nthe answer is {n} ({me})\n"
    + HOSTILE
    + "</solution>\n<analysis>\n## RISKS\nnone\n## DISAGREEMENTS\nNone.\n</analysis>"
)
VERDICT = (
    "AGREEMENT POINTS: most.\n<verdict>\ndecision: CONSENSUS\nconvergence_score: 9\n"
    "remaining_disagreements: 0\nbase_solution: Agent A\nmodifications: none\n</verdict>"
)
CRITIQUE = "Strengths: clear. Weaknesses: none. Errors: none."


async def _reply(request):
    await asyncio.sleep(DELAY)
    step = request.meta["step"]
    if "/verify/" in step:
        return VERDICT
    if "/evaluate/" in step:
        return CRITIQUE
    n = 48 if "6 times 8" in str(request.messages) else 42
    return SOLUTION.format(me=request.meta["agent"], n=n)


agent_one = agent_two = agent_three = _reply
