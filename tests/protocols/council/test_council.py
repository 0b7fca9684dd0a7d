"""The council with scripted agents: answers, rankings under per-prompt labels, a chairman; the
label is moot's finding over the answers (consensus, or a labelled synthesis with exit 2); an
invalid ranking is an abstention named in the trust statement; a replay gives the same
outcome; the projection counts every call a run makes."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from moot import api
from moot.config import RunConfig, SynthesisSettings, read
from moot.lifecycle.plan import load_config
from moot.lifecycle.projection import estimate
from moot.models.scripted import register_script
from moot.types import Request
from tests.cli.test_cli import moot
from tests.scripts import start

TASK = "What is 6 x 7?"
BLOCK = re.compile(r"ANSWER ([P-Z]):\n<quoted [^>]*>\n(.*?)\n</quoted", re.DOTALL)


class Council:
    """Scripted members: `answers[alias]` is an agent's stage 1 reply; a ranker ranks the
    answers it is shown by `prefer` (a function of the answer text: lower is better), or
    replies `bad_ranking[alias]` verbatim; the chairman replies `chair`."""

    def __init__(
        self,
        answers: dict[str, str],
        chair: str = "Weighing the answers.\nAnswer: 42",
        prefer: Callable[[str], Any] = lambda text: text,
        bad_ranking: dict[str, str] | None = None,
    ) -> None:
        self.answers = answers
        self.chair = chair
        self.prefer = prefer
        self.bad_ranking = bad_ranking or {}
        self.steps: Counter[str] = Counter()
        self.prompts: dict[str, str] = {}
        self._lock = threading.Lock()

    def reply(self, request: Request) -> str:
        step, me = request.meta["step"], request.meta["agent"]
        with self._lock:
            self.steps[step] += 1
            self.prompts[step] = request.prompt
        phase = step.split("/")[1]
        if phase == "answer":
            return self.answers[me]
        if phase == "chair":
            return self.chair
        if me in self.bad_ranking:
            return self.bad_ranking[me]
        shown = dict(BLOCK.findall(request.prompt))
        ranking = sorted(shown, key=lambda label: self.prefer(shown[label]))
        reasons = {label: f"it says {shown[label].splitlines()[-1]}" for label in shown}
        return json.dumps({"reasons": reasons, "ranking": ranking})

    def config(self, agents: int = 3, **council: object) -> RunConfig:
        register_script("member", self.reply)
        return RunConfig.read(
            {
                "protocol": "council",
                "agents": [{"model": "scripted:@member"}] * agents,
                "seed": 4,
                "council": council,
            }
        )


AGREE = {
    "agent_a": "6 times 7 is 42.\nAnswer: 42",
    "agent_b": "Six sevens: 42.\nAnswer: 42",
    "agent_c": "It is 42.\nAnswer: 42",
}
SPLIT = {
    "agent_a": "6 times 7 is 42.\nAnswer: 42",
    "agent_b": "I make it 48.\nAnswer: 48",
    "agent_c": "Surely 36.\nAnswer: 36",
}


def test_agreeing_answers_end_in_consensus_with_the_chairmans_text() -> None:
    c = Council(AGREE, chair="All three agree: six sevens are 42.\nAnswer: 42")
    run = start(TASK, c.config())
    assert run.exit_code == 0, run.message
    assert run.result.status == "consensus"
    assert run.result.final_answer == "All three agree: six sevens are 42.\nAnswer: 42"
    # 3 answers, 3 rankings, 1 chairman; each once
    phases = Counter(step.split("/")[1] for step in c.steps)
    assert phases == {"answer": 3, "rank": 3, "chair": 1} and set(c.steps.values()) == {1}
    details = run.result.details
    assert all(r["status"] == "valid" and len(r["ranking"]) == 2 for r in details["rankings"])
    assert details["aggregate"]["method"] == "mean rank"
    # the default chairman is the top-ranked agent's model
    top = details["aggregate"]["top"]
    assert details["chairman"]["agent"] == top and f"r1/chair/{top}" in c.steps
    assert "3 of 3 agents' final answers agree on '42'" in run.result.how
    assert "draws on Agent A, Agent B and Agent C's answers" in run.result.trust


def test_a_ranker_never_sees_its_own_answer_or_any_alias_and_labels_differ_per_prompt() -> None:
    answers = {
        a: f"Reasoning of {a[-1]}.\nAnswer: 42"
        for a in ("agent_a", "agent_b", "agent_c", "agent_d")
    }
    c = Council(answers)
    run = start(TASK, c.config(agents=4))
    assert run.exit_code == 0, run.message
    for row in run.result.details["rankings"]:
        prompt = c.prompts[row["step"]]
        me = row["ranker"][-1]
        assert f"Reasoning of {me}." not in prompt and "Agent " not in prompt
        assert sorted(row["labels"]) == ["P", "Q", "R"]
        # each label shows the answer the record says it showed
        for label, text in BLOCK.findall(prompt):
            assert text.startswith(f"Reasoning of {row['labels'][label][-1]}.")
    assert len({tuple(r["labels"].values()) for r in run.result.details["rankings"]}) > 1


def test_disagreeing_answers_end_with_exit_2_and_a_labelled_synthesis() -> None:
    c = Council(SPLIT, chair="Two of the answers slip; 6 x 7 is 42.\nAnswer: 42")
    run = start(TASK, c.config())
    assert run.exit_code == 2, run.message
    assert run.result.status == "no_consensus" and not run.result.consensus
    assert run.result.final_answer.endswith("Answer: 42")
    assert "the final answers differ" in run.result.how
    assert "the chairman's synthesis (Agent " in run.result.how
    assert "of answers that disagree, not a consensus" in run.result.how
    trust = run.result.trust
    assert "synthesis of disagreeing answers, not a consensus" in trust
    # the chairman's answer agrees with A's and contradicts B's and C's
    assert "draws on Agent A's answer" in trust
    assert "sets aside Agent B and Agent C's, which it contradicts" in trust
    report = (run.folder / "report.md").read_text()
    for title in ("Stage 1: Answers", "Stage 2: Rankings", "Aggregate Ranking", "Stage 3"):
        assert title in report
    # the chairman's text is shown in the Synthesis section beside moot's check of it, not in
    # stage 3 again
    stage3 = report.split("## Stage 3", 1)[1].split("\n## ", 1)[0]
    assert "Two of the answers slip" not in stage3 and "is under Synthesis" in stage3, stage3
    assert "Two of the answers slip" in report.split("## Synthesis", 1)[1].split("\n## ", 1)[0]


def test_an_invalid_ranking_is_an_abstention_named_in_the_trust_statement() -> None:
    c = Council(
        AGREE,
        bad_ranking={"agent_b": '{"ranking": ["P", "P"], "reasons": {"P": "good", "Q": "ok"}}'},
    )
    run = start(TASK, c.config())
    assert run.exit_code == 0, run.message
    (bad,) = [r for r in run.result.details["rankings"] if r["ranker"] == "agent_b"]
    assert bad["status"] == "invalid" and bad["ranking"] is None
    assert "Rankings counted as abstentions: Agent B: invalid ranking" in run.result.trust
    assert "over 2 valid rankings" in run.result.trust
    # only one call: a strict parse has no re-ask
    assert not any(step.endswith("/reask") for step in c.steps)
    assert run.result.details["rounds"][0]["abstained"] == ["agent_b"]


def test_a_ranking_without_a_reason_for_every_answer_is_an_abstention() -> None:
    c = Council(AGREE, bad_ranking={"agent_c": '{"ranking": ["P", "Q"], "reasons": {"P": "x"}}'})
    run = start(TASK, c.config())
    (bad,) = [r for r in run.result.details["rankings"] if r["ranker"] == "agent_c"]
    assert bad["status"] == "invalid" and "no reason for Q" in bad["problem"]


def test_a_chairman_named_in_the_config_writes_the_final_answer() -> None:
    c = Council(SPLIT)
    register_script("chair", lambda request: "As chairman: 42.\nAnswer: 42")
    run = start(TASK, c.config(chairman="scripted:@chair"))
    assert run.exit_code == 2
    assert run.result.final_answer == "As chairman: 42.\nAnswer: 42"
    assert run.result.details["chairman"]["agent"] == "chairman_a"
    assert not any("/chair/" in step for step in c.steps)  # no agent was asked to chair


def test_a_chairman_contradicting_the_agreed_answer_is_not_the_final_answer() -> None:
    c = Council(AGREE, chair="I think it is 48.\nAnswer: 48", prefer=lambda t: -len(t))
    run = start(TASK, c.config())
    assert run.exit_code == 0
    best = run.result.details["aggregate"]["order"][0]["agent"]
    assert run.result.final_answer == AGREE[best]
    assert "contradicts the agreed answer" in run.result.how
    synthesis = run.result.synthesis  # checked as every synthesis is, and kept beside the pick
    assert synthesis is not None and not synthesis.accepted
    assert synthesis.picked == AGREE[best] and synthesis.text.endswith("Answer: 48")
    assert "Synthesis" in (run.folder / "report.md").read_text()


def test_the_chairmans_text_is_an_accepted_synthesis_where_it_keeps_the_agreed_answer() -> None:
    c = Council(AGREE)
    run = start(TASK, c.config())
    synthesis = run.result.synthesis
    assert synthesis is not None and synthesis.accepted and not synthesis.of_disagreeing
    assert synthesis.text == run.result.final_answer and synthesis.step.startswith("r1/chair/")
    assert not any(step.startswith("synthesis/") for step in c.steps)  # no second chairman


def test_synthesis_off_leaves_the_chairman_out_and_a_synthesis_chairman_chairs() -> None:
    c = Council(AGREE, prefer=lambda t: -len(t))
    config = c.config()
    config.synthesis = SynthesisSettings(enabled=False)
    projected = estimate(load_config(None, config.dump()), TASK)
    run = start(TASK, config)
    assert run.exit_code == 0 and run.result.synthesis is None
    assert not any("/chair/" in step for step in c.steps) and projected is not None
    assert projected.calls == (6, 6) == (sum(c.steps.values()),) * 2
    best = run.result.details["aggregate"]["order"][0]["agent"]
    assert run.result.final_answer == AGREE[best]
    c = Council(SPLIT)
    register_script("chair", lambda request: "As chairman: 42.\nAnswer: 42")
    config = c.config()
    config.synthesis = read(SynthesisSettings, {"chairman": "scripted:@chair"})
    run = start(TASK, config)
    assert run.result.details["chairman"]["agent"] == "chairman_a"
    assert run.result.final_answer == "As chairman: 42.\nAnswer: 42"


def test_ties_in_the_aggregate_are_reported() -> None:
    # each ranker prefers the answer after its own in alias order: every mean rank is 1.5
    answers = {a: f"From {a[-1]}.\nAnswer: 42" for a in ("agent_a", "agent_b", "agent_c")}
    cycle = {"a": "b", "b": "c", "c": "a"}

    def ranking(request: Request) -> str:
        step, me = request.meta["step"], request.meta["agent"]
        if "/answer/" in step:
            return answers[me]
        if "/chair/" in step:
            return "Answer: 42"
        shown = dict(BLOCK.findall(request.prompt))
        first = next(
            label for label, text in shown.items() if text.startswith(f"From {cycle[me[-1]]}.")
        )
        order = [first] + [label for label in shown if label != first]
        return json.dumps({"reasons": dict.fromkeys(shown, "fine"), "ranking": order})

    register_script("cyclic", ranking)
    config = RunConfig.read(
        {"protocol": "council", "agents": [{"model": "scripted:@cyclic"}] * 3, "seed": 4}
    )
    run = start(TASK, config)
    agg = run.result.details["aggregate"]
    assert [row["mean_rank"] for row in agg["order"]] == [1.5, 1.5, 1.5]
    assert agg["ties"] == [["agent_a", "agent_b", "agent_c"]]
    assert agg["top_tied"] == ["agent_a", "agent_b", "agent_c"] and agg["top"] == "agent_a"
    assert "tied for first" in run.result.trust
    assert "Tied: Agent A and Agent B and Agent C" in (run.folder / "report.md").read_text()


def test_replay_reproduces_the_outcome_without_a_call() -> None:
    c = Council(SPLIT)
    run = start(TASK, c.config())
    calls = sum(c.steps.values())
    report = api.replay(run.session_id)
    assert report.identical is True and sum(c.steps.values()) == calls
    assert report.result.final_answer == run.result.final_answer
    assert report.result.trust == run.result.trust


def test_the_projection_counts_every_call_a_run_makes() -> None:
    for agents, extra in ((3, {}), (5, {"chairman": "scripted:@member"})):
        answers = {f"agent_{x}": f"{x}.\nAnswer: 42" for x in "abcde"[:agents]}
        c = Council(answers)
        config = c.config(agents=agents, **extra)
        projected = estimate(load_config(None, config.dump()), TASK)
        run = start(TASK, config)
        assert run.exit_code == 0, run.message
        assert projected is not None
        assert projected.calls == (2 * agents + 1,) * 2 == (sum(c.steps.values()),) * 2


def test_council_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    Council(AGREE).config()
    code, out, err = moot(
        capsys, "run", TASK, "--protocol", "council", "-q",
        "-m", "scripted:@member", "-m", "scripted:@member", "-m", "scripted:@member",
    )  # fmt: skip
    assert code == 0, err
    assert out.strip() == "Weighing the answers.\nAnswer: 42"
    code, out, err = moot(
        capsys, "run", TASK, "--protocol", "council", "--dry-run",
        "-m", "scripted:@member", "-m", "scripted:@member", "-m", "scripted:@member",
    )  # fmt: skip
    assert code == 0 and "Calls: 7" in out and "Chairman (the top-ranked agent's model" in out
    code, _, err = moot(
        capsys, "run", TASK, "--protocol", "council",
        "-m", "scripted:@member", "-m", "scripted:@member",
    )  # fmt: skip
    assert code == 1 and "council" in err


def test_a_chairman_without_an_answer_leaves_the_agreed_or_the_best_ranked_answer() -> None:
    c = Council(AGREE, chair="I cannot help with that.")
    run = start(TASK, c.config())
    assert run.exit_code == 0
    assert run.result.final_answer in AGREE.values()
    assert "the chairman's text gave no valid answer" in run.result.how
    assert run.result.details["chairman"]["status"] == "invalid"
    split = Council(SPLIT, chair="I cannot help with that.")
    run = start(TASK, split.config())
    # no consensus: the best-ranked valid answer stands, labelled (rankers sort by the text)
    top = run.result.details["aggregate"]["top"]
    assert run.exit_code == 2 and run.result.final_answer == SPLIT[top] == SPLIT["agent_a"]
    assert "the best-ranked answer by mean rank, not a consensus" in run.result.how
    assert "The chairman gave no valid answer" in run.result.trust


def test_with_no_valid_answer_nothing_is_ranked_and_no_chairman_is_asked() -> None:
    c = Council(dict.fromkeys(AGREE, "   "))
    run = start(TASK, c.config())
    assert run.exit_code == 2 and run.result.final_answer == ""
    assert set(step.split("/")[1] for step in c.steps) == {"answer"}
    assert all(r["status"] == "skipped" for r in run.result.details["rankings"])
    assert "Answers set aside as invalid: Agent A:" in run.result.trust
