"""Mixture-of-Agents with scripted agents: layers of answers, each shown the layer before's,
then an aggregator; the label is moot's finding over the last layer's answers (consensus, or
a labelled aggregation with exit 2); an invalid answer is named and not counted; a replay gives
the same outcome; the projection counts every call a run makes; --layers must be positive."""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable

import pytest

from moot import api
from moot.config import RunConfig
from moot.errors import ConfigError
from moot.lifecycle.plan import load_config, load_run
from moot.lifecycle.projection import estimate
from moot.models.scripted import register_script
from moot.types import Request
from tests.cli.test_cli import moot
from tests.scripts import start

TASK = "What is 6 x 7?"
BLOCK = re.compile(r"ANSWER ([P-Z]):\n<quoted [^>]*>\n(.*?)\n</quoted", re.DOTALL)

# (layer, agent, prompt) -> reply
Reply = Callable[[int, str, str], str]


class Layers:
    """Scripted agents: `answer(layer, agent, prompt)` is an agent's reply in a layer; the
    aggregator (whichever alias is asked at an `aggregate` step) replies `aggregate`."""

    def __init__(self, answer: Reply, aggregate: str = "Weighing them: 42.\nAnswer: 42") -> None:
        self.answer = answer
        self.aggregate = aggregate
        self.steps: Counter[str] = Counter()
        self.prompts: dict[str, str] = {}
        self._lock = threading.Lock()

    def reply(self, request: Request) -> str:
        step, me = request.meta["step"], request.meta["agent"]
        with self._lock:
            self.steps[step] += 1
            self.prompts[step] = request.prompt
        head, phase = step.split("/")[:2]
        if phase == "aggregate":
            return self.aggregate
        return self.answer(int(head[1:]), me, request.prompt)

    def config(self, agents: int = 3, **moa: object) -> RunConfig:
        register_script("layer", self.reply)
        return RunConfig.read(
            {
                "protocol": "moa",
                "agents": [{"model": "scripted:@layer"}] * agents,
                "seed": 4,
                "moa": moa,
            }
        )


def fixed(answers: dict[str, str]) -> Reply:
    return lambda layer, me, prompt: answers[me]


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


def test_an_agreeing_last_layer_ends_in_consensus_with_the_aggregators_text() -> None:
    m = Layers(fixed(AGREE), aggregate="All agree: six sevens are 42.\nAnswer: 42")
    run = start(TASK, m.config())
    assert run.exit_code == 0, run.message
    assert run.result.status == "consensus" and run.result.rounds == 3
    assert run.result.final_answer == "All agree: six sevens are 42.\nAnswer: 42"
    # 3 layers of 3 answers, then one aggregator; each step once
    phases = Counter((step.split("/")[0], step.split("/")[1]) for step in m.steps)
    assert phases == {
        ("r1", "propose"): 3,
        ("r2", "propose"): 3,
        ("r3", "propose"): 3,
        ("r3", "aggregate"): 1,
    }
    assert set(m.steps.values()) == {1}
    # the default aggregator is Agent A's model
    assert "r3/aggregate/agent_a" in m.steps
    assert run.result.details["aggregator"]["agent"] == "agent_a"
    assert "3 of 3 agents' final answers agree on '42'" in run.result.how
    assert "the aggregator's text (Agent A's model aggregated), which keeps" in run.result.how
    assert "draws on Agent A, Agent B and Agent C's answers" in run.result.trust


def test_a_disagreeing_last_layer_ends_with_exit_2_and_a_labelled_aggregation() -> None:
    m = Layers(fixed(SPLIT), aggregate="Two of them slip; 6 x 7 is 42.\nAnswer: 42")
    run = start(TASK, m.config(layers=2))
    assert run.exit_code == 2, run.message
    assert run.result.status == "no_consensus" and not run.result.consensus
    assert run.result.final_answer == "Two of them slip; 6 x 7 is 42.\nAnswer: 42"
    assert "the final answers differ" in run.result.how
    assert "the aggregator's aggregation (Agent A's model aggregated) of answers that " in (
        run.result.how
    )
    trust = run.result.trust
    assert "an aggregation of disagreeing answers, not a consensus" in trust
    assert "draws on Agent A's answer" in trust
    assert "sets aside Agent B and Agent C's, which it contradicts" in trust
    report = (run.folder / "report.md").read_text()
    for title in ("Answers by Layer", "Layer 1 (answered alone)", "Layer 2 (shown", "Aggregator"):
        assert title in report
    assert "| Agent B | 48 | 48 |" in report


def test_a_later_layer_is_shown_the_layer_befores_valid_answers_anonymised() -> None:
    def answer(layer: int, me: str, prompt: str) -> str:
        return f"Layer {layer} reasoning of {me[-1]}.\nAnswer: 42"

    m = Layers(answer)
    run = start(TASK, m.config(agents=4, layers=3))
    assert run.exit_code == 0, run.message
    assert "ANSWER" not in m.prompts["r1/propose/agent_a"]
    for layer in (2, 3):
        orders = set()
        for me in "abcd":
            prompt = m.prompts[f"r{layer}/propose/agent_{me}"]
            shown = dict(BLOCK.findall(prompt))
            assert sorted(shown) == ["P", "Q", "R", "S"]
            # every answer of the layer before, its own among them, and no alias
            texts = sorted(t.splitlines()[0] for t in shown.values())
            assert texts == [f"Layer {layer - 1} reasoning of {x}." for x in "abcd"]
            assert "Agent " not in prompt and "agent_" not in prompt
            orders.add(tuple(shown[x].splitlines()[0] for x in sorted(shown)))
            row = next(
                r for r in run.result.details["layers"][layer - 1] if r["agent"] == f"agent_{me}"
            )
            for label, text in shown.items():  # the record says which answer each label showed
                assert text.startswith(
                    f"Layer {layer - 1} reasoning of {row['labels'][label][-1]}."
                )
        assert len(orders) > 1  # labels are drawn per prompt
    # the aggregator is shown the last layer's answers
    shown = dict(BLOCK.findall(m.prompts["r3/aggregate/agent_a"]))
    assert sorted(t.splitlines()[0] for t in shown.values()) == [
        f"Layer 3 reasoning of {x}." for x in "abcd"
    ]


def test_an_invalid_answer_is_named_not_counted_and_not_shown() -> None:
    def answer(layer: int, me: str, prompt: str) -> str:
        if me == "agent_c" and layer == 2:
            return "I would rather not say.\nAnswer:"
        return AGREE[me]

    m = Layers(answer)
    run = start(TASK, m.config(layers=3))
    assert run.exit_code == 0, run.message
    (bad,) = [r for r in run.result.details["layers"][1] if r["status"] != "valid"]
    assert bad["agent"] == "agent_c" and bad["status"] == "invalid"
    assert "Answers set aside as invalid, not counted: Agent C in layer 2: " in run.result.trust
    # layer 3 is shown only layer 2's two valid answers
    assert len(BLOCK.findall(m.prompts["r3/propose/agent_a"])) == 2
    assert run.result.details["rounds"][1]["set_aside"] == ["agent_c"]
    assert run.result.details["rounds"][2]["set_aside"] == []
    # the claims by round give the reason, not a bare "no valid answer"
    (row,) = [c for c in run.result.claims if c.agent == "agent_c" and c.round == 1]
    assert not row.valid and row.reason == bad["problem"]


def test_an_invalid_last_layer_answer_does_not_count_toward_consensus() -> None:
    # two of three agree only if the invalid answer were counted as agreeing: it is not
    def answer(layer: int, me: str, prompt: str) -> str:
        if me == "agent_c" and layer == 2:
            return "Answer:"
        return SPLIT[me] if me != "agent_c" else "Also 42.\nAnswer: 42"

    m = Layers(answer)
    run = start(TASK, m.config(layers=2))
    assert run.exit_code == 2, run.message
    assert run.result.how.startswith("the final answers differ: 42 (A); 48 (B)")
    assert set(run.result.positions) == {"agent_a", "agent_b"}


def test_the_aggregator_named_in_the_config_writes_the_final_answer() -> None:
    m = Layers(fixed(SPLIT))
    register_script("agg", lambda request: "As aggregator: 42.\nAnswer: 42")
    run = start(TASK, m.config(layers=1, aggregator="scripted:@agg"))
    assert run.exit_code == 2
    assert run.result.final_answer == "As aggregator: 42.\nAnswer: 42"
    assert run.result.details["aggregator"]["agent"] == "aggregator_a"
    assert not any("/aggregate/" in step for step in m.steps)  # no agent was asked


def test_an_aggregator_contradicting_the_agreed_answer_is_not_the_final_answer() -> None:
    m = Layers(fixed(AGREE), aggregate="I think it is 48.\nAnswer: 48")
    run = start(TASK, m.config(layers=2))
    assert run.exit_code == 0
    assert run.result.final_answer == AGREE["agent_a"]
    assert "contradicts the agreed answer" in run.result.how


def test_replay_reproduces_the_outcome_without_a_call() -> None:
    m = Layers(fixed(SPLIT))
    run = start(TASK, m.config())
    calls = sum(m.steps.values())
    report = api.replay(run.session_id)
    assert report.identical is True and sum(m.steps.values()) == calls
    assert report.result.final_answer == run.result.final_answer
    assert report.result.trust == run.result.trust


@pytest.mark.parametrize(("agents", "layers"), [(3, 3), (4, 1), (2, 2)])
def test_the_projection_counts_every_call_a_run_makes(agents: int, layers: int) -> None:
    answers = {f"agent_{x}": f"{x}.\nAnswer: 42" for x in "abcd"[:agents]}
    m = Layers(fixed(answers))
    config = m.config(agents=agents, layers=layers)
    projected = estimate(load_config(None, config.dump()), TASK)
    run = start(TASK, config)
    assert run.exit_code == 0, run.message
    assert projected is not None
    assert projected.calls == (layers * agents + 1,) * 2 == (sum(m.steps.values()),) * 2


def test_layers_come_from_the_flag_and_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    plan = load_run(protocol="moa", models=["scripted:@layer"] * 3, layers=2)
    assert plan.options.layers == 2
    with pytest.raises(ConfigError, match="layers"):
        load_run(None, {"moa.layers": 0}, protocol="moa", models=["scripted:@layer"] * 3)
    with pytest.raises(ConfigError, match="layers"):
        load_run(None, {"moa.layers": -1}, protocol="moa", models=["scripted:@layer"] * 3)
    with pytest.raises(ConfigError, match="the vote protocol does not take --layers"):
        load_run(protocol="vote", models=["scripted:@layer"], layers=2)
    for bad in ("0", "-2"):
        code, _, err = moot(capsys, "run", TASK, "--protocol", "moa", "--layers", bad)
        assert (
            code == 1
            and f"'--layers': {bad} is less than 1; give a whole number from 1 to 10" in err
        )


def test_dry_run_counts_the_calls(capsys: pytest.CaptureFixture[str]) -> None:
    Layers(fixed(AGREE)).config()
    code, out, err = moot(
        capsys, "run", TASK, "--protocol", "moa", "--layers", "2", "--dry-run",
        "-m", "scripted:@layer", "-m", "scripted:@layer", "-m", "scripted:@layer",
    )  # fmt: skip
    assert code == 0, err
    assert "Calls: 7\n" in out, out  # 2 layers of 3 agents, then the aggregator
    assert out.count(": 2 calls,") == 3 and "Aggregator (Agent A's model" in out


def test_moa_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    Layers(fixed(AGREE)).config()
    code, out, err = moot(
        capsys, "run", TASK, "--protocol", "moa", "--layers", "2", "-q",
        "-m", "scripted:@layer", "-m", "scripted:@layer", "-m", "scripted:@layer",
    )  # fmt: skip
    assert code == 0, err
    assert out.strip() == "Weighing them: 42.\nAnswer: 42"


def test_a_last_layer_that_agrees_only_after_reading_the_first_is_labelled_persuasion() -> None:
    def answer(layer: int, me: str, prompt: str) -> str:
        return SPLIT[me] if layer == 1 else AGREE[me]

    m = Layers(answer)
    run = start(TASK, m.config(layers=2))
    assert run.exit_code == 0, run.message
    assert run.result.finding is not None and run.result.finding.label == "persuasion"
    assert run.result.how.startswith("converged by persuasion: 3 of 3 agents end on '42'")
    assert "1 of the 3 agents held this answer in their first, independent answer" in (
        run.result.trust
    )
    assert "so the last layer's answers are not independent" in run.result.trust


def test_status_counts_each_layers_answers_and_the_aggregator(
    capsys: pytest.CaptureFixture[str],
) -> None:
    m = Layers(fixed(AGREE))
    run = start(TASK, m.config(layers=2))
    code, out, err = moot(capsys, "status", run.session_id)
    assert code == 0, err
    assert "MoA: answers layer 1 3 of 3, layer 2 3 of 3; aggregator written" in out


# A tiny model's last layer on "What is the capital of Italy?": Agent B and Agent C give one
# answer in other words; the aggregator adds which label it followed.
ITALY = {
    "agent_a": "Il Capitale di Venezia (The City of Venice) in Italian. The capital city of a "
    "sovereign state located on the Adriatic coast and is known for its cultural heritage.",
    "agent_b": "The capital of Italy is Rome.",
    "agent_c": "In Italian, the capital of Italy is Rome.",
}
FOLLOWED = "The capital of Italy is Rome. The answer I followed was: Answer R."


def test_the_aggregator_draws_on_every_answer_of_the_agreeing_group_and_no_label_is_shown() -> None:
    m = Layers(fixed(ITALY), aggregate=FOLLOWED)
    run = start("What is the capital of Italy?", m.config(layers=1))
    assert run.exit_code == 0, run.message
    assert run.result.finding is not None
    assert set(run.result.finding.agreed) == {"agent_b", "agent_c"}
    # the sentence naming a label the reader never saw is not part of the final answer
    assert run.result.final_answer == "The capital of Italy is Rome."
    trust = run.result.trust
    assert "draws on Agent B and Agent C's answers" in trust, trust
    assert "Agent C's" not in trust.split("draws on Agent B and Agent C's answers")[1], trust
    assert "cannot be compared with Agent A's." in trust
    # the prompt no longer asks it to name the answer it followed
    prompt = m.prompts["r1/aggregate/agent_a"]
    assert "which answer you follow" not in prompt and "do not name a label" in prompt


def test_an_answer_the_finding_groups_with_one_drawn_on_is_drawn_on_too() -> None:
    # moot's check agrees this with Agent B's words and is unsure of Agent C's alone; the
    # finding holds B's and C's answers one, so it cannot draw on one and not the other
    wider = "The capital of Italy is Rome, a city of three million people."
    m = Layers(fixed(ITALY), aggregate=wider)
    run = start("What is the capital of Italy?", m.config(layers=1))
    assert run.result.final_answer == wider
    assert run.result.details["aggregator"]["relations"] == {
        "agent_a": "unsure",
        "agent_b": "drew_on",
        "agent_c": "drew_on",
    }
    assert "draws on Agent B and Agent C's answers; cannot be compared with Agent A's." in (
        run.result.trust
    )


def test_a_final_answer_line_stays_where_a_label_sentence_before_it_is_cut() -> None:
    text = "Six sevens are 42. I follow answer P, which is right.\nAnswer: 42"
    m = Layers(fixed(AGREE), aggregate=text)
    run = start(TASK, m.config(layers=1))
    assert run.result.final_answer == "Six sevens are 42.\nAnswer: 42"
    # a label in the middle of the text, or no label, is left as written
    kept = "Answer P slips; six sevens are 42.\nAnswer: 42"
    assert (
        start(TASK, Layers(fixed(AGREE), aggregate=kept).config(layers=1)).result.final_answer
        == kept
    )


def test_an_aggregation_of_disagreeing_answers_that_sets_aside_all_of_them_is_no_final_answer() -> (
    None
):
    # 42, 48 and 36, aggregated into 54: it draws on none of them, so it is no aggregation of
    # them, and moot shows no final answer rather than a fourth answer of the aggregator's own
    m = Layers(fixed(SPLIT), aggregate="Weighing all three: 54.\nAnswer: 54")
    run = start(TASK, m.config(layers=1))
    assert run.exit_code == 2, run.message
    assert run.result.final_answer == ""
    assert "agrees with none of the last-layer answers" in run.result.how
    trust = run.result.trust
    assert "sets aside Agent A, Agent B and Agent C's, which it contradicts" in trust
    assert "no final answer" in trust
    # one answer drawn on is an aggregation, as before
    kept = Layers(fixed(SPLIT), aggregate="Agent A is right: 42.\nAnswer: 42")
    assert start(TASK, kept.config(layers=1)).result.final_answer.endswith("Answer: 42")
    # nor is an answer moot cannot compare with theirs set aside: it stays the aggregation
    unsure = Layers(fixed(SPLIT), aggregate="It depends on which base the digits are written in.")
    assert start(TASK, unsure.config(layers=1)).result.final_answer.startswith("It depends")
