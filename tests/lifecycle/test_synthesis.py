"""A chairman's synthesis after any text protocol (`--synthesize`, `[synthesis]`): accepted it is
the final answer; one that changes the agreed answer is rejected and the picked answer stands;
the label stays moot's finding; both texts are in result.json and the reports; a replay asks
nothing and a resume asks nothing twice; the projection counts the call; a code task refuses
it."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from moot import api
from moot.config import RunConfig
from moot.errors import ConfigError
from moot.lifecycle.plan import load_config, resolve
from moot.lifecycle.projection import estimate
from moot.models.scripted import ScriptedFailure, register_script
from moot.types import FailureKind, Request
from tests.cli.test_cli import moot
from tests.scripts import no_sleep, start

TASK = "How many seconds should the request timeout be?"
AGREE = {
    "agent_a": "Thirty is plenty.\nAnswer: 30 seconds",
    "agent_b": "I would use 30.\nAnswer: 30 seconds",
    "agent_c": "A minute is safer.\nAnswer: 60 seconds",
}
SPLIT = {
    "agent_a": "Answer: 30 seconds",
    "agent_b": "Answer: 60 seconds",
    "agent_c": "Answer: 90 seconds",
}
KEEPS = "Use 30 seconds, and log the slow requests that hit it.\nAnswer: 30 seconds"
CHANGES = "Use a long timeout to be safe.\nAnswer: 300 seconds"


class Members:
    """Scripted agents answering `answers[alias]`; whoever chairs replies `chair`."""

    def __init__(self, answers: dict[str, str], chair: str = KEEPS) -> None:
        self.answers = answers
        self.chair = chair
        self.steps: Counter[str] = Counter()
        self.prompts: dict[str, str] = {}
        self._lock = threading.Lock()

    def reply(self, request: Request) -> str:
        step = request.meta["step"]
        with self._lock:
            self.steps[step] += 1
            self.prompts[step] = request.prompt
        if step.startswith("synthesis/"):
            return self.chair
        return self.answers[request.meta["agent"]]

    def config(self, protocol: str = "vote", **synthesis: Any) -> RunConfig:
        register_script("member", self.reply)
        return RunConfig.read(
            {
                "protocol": protocol,
                "agents": [{"model": "scripted:@member"}] * 3,
                "seed": 4,
                "synthesis": {"enabled": True, **synthesis},
            }
        )

    def chair_steps(self) -> list[str]:
        return [s for s in self.steps if s.startswith("synthesis/")]


def test_an_accepted_synthesis_is_the_final_answer_and_the_label_stays_consensus() -> None:
    m = Members(AGREE)
    run = start(TASK, m.config())
    assert run.exit_code == 0, run.message
    result = run.result
    assert result.status == "consensus" and result.final_answer == KEEPS
    synthesis = result.synthesis
    assert synthesis is not None and synthesis.accepted and not synthesis.of_disagreeing
    assert synthesis.picked == "30 seconds" and synthesis.text == KEEPS  # vote's pick
    assert "it keeps the agreed answer '30 seconds'" in result.trust
    # asked once, of the model of an agent whose answer was picked, with the losing answer
    [step] = m.chair_steps()
    assert step in ("synthesis/chair/agent_a", "synthesis/chair/agent_b")
    assert "Agent C answered instead: 60 seconds" in m.prompts[step] and m.steps[step] == 1
    stored = (run.folder / "result.json").read_text()
    assert '"synthesis"' in stored and '"accepted": true' in stored
    for name in ("report.md", "report.html"):
        report = (run.folder / name).read_text()
        assert "Synthesis" in report and "accepted" in report


def test_a_synthesis_that_changes_the_agreed_number_is_rejected_and_the_pick_stands() -> None:
    m = Members(AGREE, chair=CHANGES)
    run = start(TASK, m.config())
    assert run.exit_code == 0, run.message
    result = run.result
    synthesis = result.synthesis
    assert synthesis is not None and not synthesis.accepted
    assert result.final_answer == synthesis.picked == "30 seconds"
    assert "contradicts the agreed answer '30 seconds'" in synthesis.reason
    assert "was rejected" in result.trust and "the picked answer stands" in result.trust
    assert "rejected" in (run.folder / "report.md").read_text()
    assert synthesis.text == CHANGES  # kept beside the picked answer


MIDDLE = "A minute is a safe middle.\nAnswer: 60 seconds"


def test_with_disagreeing_answers_it_is_a_labelled_synthesis_and_exit_2() -> None:
    m = Members(SPLIT, chair=MIDDLE)
    run = start(TASK, m.config())
    assert run.exit_code == 2, run.message
    assert run.result.status == "no_consensus" and not run.result.consensus
    synthesis = run.result.synthesis
    assert synthesis is not None and synthesis.accepted and synthesis.of_disagreeing
    assert run.result.final_answer == MIDDLE
    assert "synthesis of disagreeing answers, not a consensus" in run.result.trust


def test_a_synthesis_of_disagreeing_answers_that_contradicts_them_all_is_rejected() -> None:
    # 300 seconds agrees with none of 30, 60 and 90: it would stand on the chairman's word
    m = Members(SPLIT, chair=CHANGES)
    run = start(TASK, m.config())
    assert run.exit_code == 2, run.message
    synthesis = run.result.synthesis
    assert synthesis is not None and not synthesis.accepted and synthesis.of_disagreeing
    assert synthesis.reason.startswith(
        "its answer '300 seconds' agrees with none of the agents' answers and contradicts "
        "Agent A's (30 seconds)"
    ), synthesis.reason
    # the vote picked nothing: no answer stands in its place, and the trust statement says so
    assert run.result.final_answer == synthesis.picked == ""
    assert "was rejected: its answer '300 seconds'" in run.result.trust
    assert "there is no final answer" in run.result.trust
    assert "the picked answer stands" not in run.result.trust
    assert "the picked answer stands" not in run.result.how


def test_a_named_chairman_writes_it_and_without_synthesis_nothing_is_asked() -> None:
    m = Members(AGREE)
    run = start(TASK, m.config(chairman="scripted:@member"))
    assert m.chair_steps() == ["synthesis/chair/chairman_a"]
    assert run.result.aliases["chairman_a"] == "scripted:@member"
    m = Members(AGREE)
    run = start(TASK, m.config(enabled=False))
    assert m.chair_steps() == [] and run.result.synthesis is None
    assert '"synthesis"' not in (run.folder / "result.json").read_text()


def test_arena_judges_modifications_reach_the_chairman() -> None:
    from tests.scripts import Debate, solution, verdict

    def answer(alias: str, step: str) -> str:
        if step.startswith("synthesis/"):
            return "The answer is 42, as every agent found.\nAnswer: the answer is 42"
        return solution(f"the answer is 42 ({alias})")

    debate = Debate(
        verdicts=[verdict("CONSENSUS", 9, mods="mention the retry budget")],
        critique="Strengths: clear. Weaknesses: no retry budget. Errors: none.",
        answer=answer,
    )
    run = start("What is 6 times 7?", debate.config(synthesis={"enabled": True}))
    synthesis = run.result.synthesis
    assert synthesis is not None, run.message
    said = "\n".join(synthesis.feedback)
    assert "The judge's modifications to the base solution: mention the retry budget" in said
    assert said.count("Critique by Agent ") == 3 and "no retry budget" in said
    [prompt] = [r.prompt for r in debate.requests if r.meta["step"].startswith("synthesis/")]
    assert "mention the retry budget" in prompt and "no retry budget" in prompt
    assert synthesis.accepted, synthesis.reason
    assert run.result.final_answer == synthesis.text and run.result.status == "consensus"


def test_replay_is_identical_and_asks_nothing() -> None:
    m = Members(AGREE, chair=CHANGES)
    run = start(TASK, m.config())
    calls = sum(m.steps.values())
    report = api.replay(run.session_id)
    assert report.identical is True and sum(m.steps.values()) == calls
    assert report.result.synthesis == run.result.synthesis


def test_a_chairman_that_failed_is_asked_again_on_resume_and_nothing_else_is() -> None:
    m = Members(AGREE)
    down = {"yes"}

    def chair(request: Request) -> str:
        m.steps[request.meta["step"]] += 1
        if down:
            raise ScriptedFailure(FailureKind.SERVER, "the chairman's provider is down")
        return KEEPS

    register_script("chair", chair)
    config = m.config(chairman="scripted:@chair")
    config.engine = replace(config.engine, **{"attempts": 1})
    first = start(TASK, config)
    assert first.exit_code == 0, first.message  # the label is the agents': consensus
    assert first.result.synthesis is not None and not first.result.synthesis.accepted
    assert "no valid answer" in first.result.synthesis.reason
    assert first.result.final_answer == "30 seconds"  # the picked answer stands
    assert sum(m.steps.values()) == 4 and m.chair_steps() == ["synthesis/chair/chairman_a"]
    down.clear()
    resumed = api.resume(first.session_id, sleep=no_sleep, retry_failed=True)
    assert resumed.exit_code == 0, resumed.message
    assert resumed.result.final_answer == KEEPS
    assert m.steps["synthesis/chair/chairman_a"] == 2  # failed once, asked once again
    assert all(n == 1 for step, n in m.steps.items() if not step.startswith("synthesis/"))
    assert api.replay(resumed.session_id).identical is True


def test_the_projection_counts_the_chairman() -> None:
    m = Members(AGREE)
    with_it = estimate(load_config(None, m.config().dump()), TASK)
    without = estimate(load_config(None, m.config(enabled=False).dump()), TASK)
    assert with_it is not None and without is not None
    assert with_it.calls == (without.calls[0] + 1, without.calls[1] + 1)
    assert any("Chairman (synthesis" in line.role for line in with_it.lines)
    start(TASK, m.config())
    assert sum(m.steps.values()) == with_it.calls[1]


def test_a_code_task_refuses_synthesis(tmp_path: Path) -> None:
    config = RunConfig.read(
        {
            "protocol": "pick",
            "code": {"repo": str(tmp_path)},
            "synthesis": {"enabled": True},
        }
    )
    with pytest.raises(ConfigError, match="code task's outcome is a change"):
        resolve(config)


def test_synthesize_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    Members(AGREE).config()
    members = ["-m", "scripted:@member"] * 3
    code, out, err = moot(capsys, "run", TASK, "--protocol", "vote", "--synthesize", "-q", *members)
    assert code == 0, err
    assert out.strip() == KEEPS
    code, out, err = moot(
        capsys, "run", TASK, "--protocol", "vote", "--synthesize", "--dry-run", *members
    )
    assert code == 0 and "Calls: 4" in out and "Chairman (synthesis" in out


def test_the_library_takes_synthesize_and_a_chairman() -> None:
    m = Members(AGREE)
    m.config()
    result = api.run(
        TASK,
        models=["scripted:@member"] * 3,
        protocol="vote",
        synthesize=True,
        chairman="scripted:@member",
    )
    assert result.synthesis is not None and result.synthesis.accepted
    assert result.synthesis.chairman == "chairman_a" and result.final_answer == KEEPS
