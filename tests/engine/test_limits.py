"""Limits on cost, running time and single calls; a real Ctrl-C on a real process."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from moot import api as runner
from moot.config import RunConfig
from moot.models.scripted import register_script
from moot.types import Completion, Request, Usage, estimate_tokens
from tests.scripts import Debate, events, no_sleep, solution, start, verdict
from tests.waiting import has_ask, wait_for_journal, wait_until


def test_cost_limit_pauses_and_a_raised_limit_finishes() -> None:
    debate = Debate()
    inner = debate.script("priced")

    def priced(request: Request) -> Completion:
        return Completion(text=inner(request), usage=Usage(prompt_tokens=10), cost=0.01)

    register_script("priced", priced)
    config = debate.config()
    for agent in config.agents:
        agent.model = "scripted:@priced"
    config.limits.max_cost = 0.045
    paused = start("task", config)
    assert paused.exit_code == 3 and "cost limit reached" in (paused.message or "")
    assert paused.result.cost is not None and paused.result.cost >= 0.045
    resumed = runner.resume(paused.session_id, limits={"max_cost": 1.0}, sleep=no_sleep)
    assert resumed.exit_code == 0
    assert resumed.result.cost == 0.1  # 10 calls at 1 cent


def test_a_token_limit_stops_a_phase_within_one_asks_max_tokens_and_resume_asks_the_rest() -> None:
    """The three solve asks start together: a limit that allows about one and a half of them
    stops the phase before the third is sent (it once let all three through), overshooting by
    no more than one ask's max_tokens; a raised limit finishes it, asking no step twice."""
    answer_cap = 200

    def honest(debate: Debate) -> str:  # a model that keeps to its max_tokens, exactly
        inner = debate.script("honest")

        def reply(request: Request) -> Completion:
            prompt = sum(estimate_tokens(m.content) for m in request.messages)
            usage = Usage(prompt_tokens=prompt, completion_tokens=request.max_tokens or 0)
            return Completion(text=inner(request), usage=usage)

        register_script("honest", reply)
        return "scripted:@honest"

    def config(debate: Debate, **extra: object) -> RunConfig:
        spec = honest(debate)
        made = debate.config(**extra)
        for agent in made.agents:
            agent.model, agent.max_tokens = spec, answer_cap
        return made

    def used(run: runner.RunResult) -> int:
        return sum(a.prompt_tokens + a.completion_tokens for a in run.result.agents.values())

    sized = start("task", config(Debate()))  # how large one solve ask is
    one = next(
        e["data"]["completion"]["usage"]
        for e in events(sized.folder)
        if e["step"] == "r0/solve/agent_a"
    )
    limit = int(1.5 * (one["prompt_tokens"] + one["completion_tokens"]))

    debate = Debate()
    paused = start("task", config(debate, limits={"max_tokens": limit}))
    assert paused.exit_code == 3 and "token limit reached" in (paused.message or "")
    assert used(paused) <= limit + answer_cap
    solved = [e["step"] for e in events(paused.folder) if e["kind"] == "ask"]
    assert len(solved) == 2 and all(s.startswith("r0/solve/") for s in solved)

    resumed = runner.resume(paused.session_id, limits={"max_tokens": 10**6}, sleep=no_sleep)
    assert resumed.exit_code == 0
    assert max(debate.steps.values()) == 1  # no recorded step asked again
    assert sum(debate.steps.values()) == sum(1 for _ in debate.steps)


def test_session_time_limit_pauses() -> None:
    debate = Debate()
    inner = debate.script("slow")

    async def slow(request: Request) -> str:
        await asyncio.sleep(0.05)
        return inner(request)

    register_script("slow", slow)
    config = debate.config()
    for agent in config.agents:
        agent.model = "scripted:@slow"
    config.limits.timeout = 0.12
    paused = start("task", config)
    assert paused.exit_code == 3 and "time limit reached" in (paused.message or "")
    assert 3 <= sum(debate.steps.values()) < 10


def test_a_call_past_its_timeout_fails_as_a_timeout_and_the_debate_goes_on() -> None:
    # the two agents left agree: 2 of the 3 that started
    debate = Debate(
        verdicts=[verdict("CONSENSUS", 9)], answer=lambda alias, step: solution("The answer is 42.")
    )
    inner = debate.script("hang")

    async def hang(request: Request) -> str:
        if request.meta["step"] == "r0/solve/agent_a":
            await asyncio.sleep(30)
        return inner(request)

    register_script("hang", hang)
    config = debate.config(limits={"call_timeout": 0.2}, engine={"attempts": 1})
    for agent in config.agents:
        agent.model = "scripted:@hang"
    began = time.monotonic()
    run = start("task", config)
    assert time.monotonic() - began < 10
    assert run.exit_code == 0
    failed = [e for e in events(run.folder) if e["step"] == "r0/solve/agent_a"]
    assert failed[0]["data"]["completion"]["failure"]["kind"] == "timeout"
    assert "agent_a" in run.result.details["failed_agents"]


AGENTS = """
import os, time
def reply(request):
    step = request.meta["step"]
    if step.startswith("r1/"):
        open(os.environ["MOOT_TEST_ROUND1"], "a").close()  # the test's cue: round 1 is on
        time.sleep(0.5)
    if "/verify/" in step:
        return ("<verdict>\\ndecision: CONSENSUS\\nconvergence_score: 9\\n"
                "base_solution: Agent A\\n</verdict>")
    if "/evaluate/" in step:
        return "fine"
    plans = {"a": "a queue worker", "b": "a cron job", "c": "systemd timers"}
    plan = plans[request.meta["agent"][-1]]  # three different answers: the debate goes on
    return f"<solution>Run the export with {plan}.</solution><analysis>none</analysis>"
"""


def test_ctrl_c_on_a_real_process_exits_130_and_resume_finishes(tmp_path: Path) -> None:
    agents = tmp_path / "agents.py"
    agents.write_text(AGENTS)
    spec = f"scripted:{agents}"
    home = tmp_path / "home"
    round1 = tmp_path / "round1"
    env = {**os.environ, "MOOT_HOME": str(home), "MOOT_TEST_ROUND1": str(round1)}
    moot = str(Path(sys.executable).parent / "moot")
    child = subprocess.Popen(
        [moot, "run", "task", "--models", spec, "--models", spec, "--models", spec],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def running() -> bool:
        return child.poll() is None

    try:
        folder = wait_until(
            lambda: next(iter(home.glob("sessions/*/events.jsonl")), None),
            "the session's journal",
            alive=running,
        ).parent
        wait_for_journal(folder, has_ask("r0/solve/", 3), "the solve phase", alive=running)
        # inside round 1, where every call takes half a second: a call of it has started
        wait_until(round1.exists, "a call of round 1", alive=running)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, err
    assert "moot resume" in out
    lines = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    assert lines[-1]["kind"] == "stopped" and lines[-1]["data"]["reason"] == "interrupted"
    state = json.loads((folder / "state.json").read_text())
    assert state["status"] == "interrupted"
    done = subprocess.run([moot, "resume"], env=env, capture_output=True, text=True, timeout=120)
    # three different plans: the judge's CONSENSUS is not borne out, so no consensus (exit 2)
    assert done.returncode == 2, done.stderr
    assert json.loads((folder / "result.json").read_text())["status"] == "no_consensus"
