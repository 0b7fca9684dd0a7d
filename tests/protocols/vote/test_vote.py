"""The vote protocol with scripted agents: a clear majority, a tie that names no answer,
free-text answers grouped by moot's agreement check, exactly K x agents calls, and the generic
views through the CLI."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable

import pytest

from moot.config import RunConfig
from moot.engine.store import find_session
from moot.models.scripted import register_script
from moot.types import Request
from tests.cli.test_cli import moot
from tests.scripts import start

TASK = "What is 6 x 7?"


class Voters:
    """`answer(alias, sample)` is the reply; every request is counted per step."""

    def __init__(self, answer: Callable[[str, int], str]) -> None:
        self.answer = answer
        self.steps: Counter[str] = Counter()
        self.requests: list[Request] = []
        self._lock = threading.Lock()

    def reply(self, request: Request) -> str:
        with self._lock:
            self.steps[request.meta["step"]] += 1
            self.requests.append(request)
        return self.answer(request.meta["agent"], int(request.meta["step"].rsplit("/", 1)[1]))

    def config(self, agents: int, samples: int, **vote: object) -> RunConfig:
        register_script("voter", self.reply)
        return RunConfig.read(
            {
                "protocol": "vote",
                "agents": [{"model": "scripted:@voter"}] * agents,
                "seed": 2,
                "vote": {"samples": samples, **vote},
            }
        )


def test_a_clear_majority_wins_with_its_share_and_distribution() -> None:
    v = Voters(lambda a, k: "Let me think. 6*7\nAnswer: 42" if k != 3 else "Answer: 48")
    run = start(TASK, v.config(agents=3, samples=3))
    assert run.exit_code == 0, run.message
    vote = run.result.details["rounds"][0]
    assert run.result.final_answer == "42"
    assert vote["distribution"] == {"42": 6, "48": 3} and vote["share"] == pytest.approx(6 / 9)
    assert vote["consensus"] and not vote["tie"]


def test_exactly_k_times_agents_calls_even_when_answers_are_unreadable() -> None:
    v = Voters(lambda a, k: "I would rather not say." if a == "agent_a" else "Answer: 7")
    run = start(TASK, v.config(agents=4, samples=5))
    assert sum(v.steps.values()) == 4 * 5 and set(v.steps.values()) == {1}
    assert not any(step.endswith("/reask") for step in v.steps)
    # every sample is a fresh context of one message, seeded by its own step
    assert all(len(r.messages) == 1 for r in v.requests)
    assert len({r.seed for r in v.requests}) == 20
    vote = run.result.details["rounds"][0]
    assert vote["total"] == 20


def test_a_number_and_a_statement_without_one_are_two_groups() -> None:
    v = Voters(lambda a, k: "I would rather not say." if a == "agent_a" else "Answer: 7")
    run = start(TASK, v.config(agents=4, samples=5))
    vote = run.result.details["rounds"][0]
    assert vote["distribution"] == {"7": 15, "I would rather not say.": 5}


def test_a_tie_names_no_answer_and_no_leader_and_is_no_majority() -> None:
    """Two against two used to print a final answer (the group answered first) and "'42'
    leads"; a tie names no answer."""
    v = Voters(lambda a, k: "Answer: 42" if a in ("agent_a", "agent_b") else "Answer: 48")
    run = start(TASK, v.config(agents=4, samples=1))
    assert run.exit_code == 2
    vote = run.result.details["rounds"][0]
    assert vote["tie"] and vote["tied"] == ["42", "48"] and not vote["consensus"]
    assert run.result.final_answer == "" and vote["winner"] is None
    assert run.result.finding is not None and run.result.finding.label == "tie"
    assert "a tie: '42' (2) against '48' (2)" in run.result.how
    assert "a tie is no majority" in run.result.how
    assert "leads" not in run.result.how + run.result.trust
    report = (run.folder / "report.md").read_text()
    assert "## Final Answer" not in report and "leads" not in report


def test_free_text_answers_are_grouped_by_the_agreement_check() -> None:
    texts = {
        "agent_a": "Answer: Use a message queue between the services",
        "agent_b": "Answer: use a message queue between the services.",
        "agent_c": "Answer: Use a message queue between both services",
        "agent_d": "Answer: Call the other service directly over HTTP",
    }
    v = Voters(lambda a, k: texts[a])
    run = start(TASK, v.config(agents=4, samples=1))
    vote = run.result.details["rounds"][0]
    assert run.exit_code == 0, vote
    assert list(vote["distribution"].values()) == [3, 1]
    assert run.result.final_answer.lower().startswith("use a message queue")


def test_vote_through_the_cli_with_samples_and_the_generic_views(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Voters(lambda a, k: "Answer: 42" if k < 3 else "Answer: 41").config(1, 1)
    code, out, err = moot(
        capsys, "run", TASK, "--protocol", "vote", "--samples", "3",
        "--models", "scripted:@voter", "--models", "scripted:@voter",
    )  # fmt: skip
    assert code == 0, err
    # 4 of 6: a majority needs more than half, 4 (3 of 6 is not one)
    assert "round 1: majority for '42' (67%): '42' 4 of 6, '41' 2; 4 of 6 needed" in err
    session = out.split("Session ", 1)[1].split(":", 1)[0]
    folder = find_session(session).path
    result = json.loads((folder / "result.json").read_text())
    assert result["details"]["rounds"][0]["samples_per_agent"] == 3
    assert "'42' 4 of 6, '41' 2" in (folder / "report.md").read_text()
    code, out, _ = moot(capsys, "show", session)
    assert code == 0 and "majority for '42' (67%)" in out
    code, out, err = moot(
        capsys, "run", TASK, "--protocol", "arena", "--samples", "3",
        "--models", "scripted:@voter", "--models", "scripted:@voter",
    )  # fmt: skip
    assert code == 1 and "--samples: the arena protocol does not take --samples" in err


def test_the_reports_name_each_sample_by_its_agent_in_words() -> None:
    v = Voters(lambda a, k: "Answer: 42" if k != 2 else "Answer: 48")
    run = start(TASK, v.config(agents=2, samples=2))
    report = (run.folder / "report.md").read_text()
    assert "| Agent A (answer 1) | 42 |" in report and "| Agent B (answer 2) | 48 |" in report
    html = (run.folder / "report.html").read_text()
    assert "<th>Agent A (answer 2)</th>" in html
    assert "agent_a/" not in report and "agent_b/" not in html
