"""`moot status` reads state.json while another process runs the session; the walkthrough saw
it one phase behind the live log: a phase starts with its asks, whose answers may be minutes
away, and the snapshot was not written for them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from moot.models.scripted import register_script
from moot.types import Request
from tests.scripts import Debate, start


def test_state_json_shows_the_phase_whose_answers_are_awaited(isolated: Path) -> None:
    debate = Debate()
    answer = debate.script("one")
    seen: list[tuple[str, object, object]] = []

    async def slow_evaluate(request: Request) -> str:
        step = request.meta["step"]
        if "/evaluate/" in step and not seen:
            await asyncio.sleep(0.6)  # a long call: the run waits on it
            state_json = next(isolated.glob("sessions/*/state.json"))
            state = json.loads(state_json.read_text())
            seen.append((step, state["round"], state["phase"]))
        return answer(request)

    register_script("slow_evaluate", slow_evaluate)
    config = debate.config()
    for agent in config.agents:
        agent.model = "scripted:@slow_evaluate"
    run = start("What is 6 times 7?", config)
    assert run.exit_code == 0, run.message
    step, round_no, phase = seen[0]
    assert step.startswith("r1/evaluate/")
    assert (round_no, phase) == (1, "evaluate"), seen
