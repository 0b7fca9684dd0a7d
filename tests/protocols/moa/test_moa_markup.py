"""Mixture-of-Agents with answers that copy moot's own quote markup back: a later layer's
answer that reproduces the fence moot wrapped another answer in (with its id) is no answer of
the agent's own, so it is not counted, and a last layer of such copies is no consensus; and a
change of mind between layers is not said to follow a critique (MoA has none)."""

from __future__ import annotations

import re

from moot.types import Request
from tests.protocols.moa.test_moa import Layers
from tests.scripts import start

TASK = "What is 3+4?"
FIRST = {
    "agent_a": "3 and 4 make 7.\nAnswer: 7",
    "agent_b": "Adding them gives 7.\nAnswer: 7",
    "agent_c": "I think it is 2.\nAnswer: 2",
}
FENCE = re.compile(r'<quoted from="[^"]*" id="([0-9a-f]{12})">\n(.*?)\n</quoted id="\1">', re.S)


def _copy_of_a_quote(layer: int, me: str, prompt: str) -> str:
    """Layer 1 answers alone; later, each agent copies the first quoted answer of its prompt
    back, fence and id included, as a tiny model does (the id under a label of its own)."""
    if layer == 1:
        return FIRST[me]
    fence_id, body = FENCE.findall(prompt)[0]
    return f'<quoted from="An Answer" id="{fence_id}">\n{body}\n</quoted id="{fence_id}">'


def test_an_answer_that_copies_a_quote_fence_is_not_counted() -> None:
    m = Layers(_copy_of_a_quote, aggregate="Adding 3 and 4 gives 7.\nAnswer: 7")
    run = start(TASK, m.config(layers=2))
    assert run.exit_code == 2, run.message
    assert not run.result.consensus and run.result.status == "no_consensus"
    last = run.result.details["layers"][1]
    assert [r["status"] for r in last] == ["invalid"] * 3
    for row in last:
        assert "copies moot's quote markup" in row["problem"], row["problem"]
    assert run.result.positions == {}
    assert "Answers set aside as invalid, not counted: Agent A in layer 2: it copies" in (
        run.result.trust
    )
    # nothing valid in the last layer: no aggregator is asked, and there is no final answer
    assert not any("/aggregate/" in step for step in m.steps)
    assert run.result.final_answer == ""


def test_an_answer_with_a_copied_fence_and_words_of_its_own_is_still_no_answer() -> None:
    def answer(layer: int, me: str, prompt: str) -> str:
        if layer == 1:
            return FIRST[me]
        fence_id = FENCE.findall(prompt)[0][0]
        return f'<quoted from="An Answer" id="{fence_id}">\n3 * (2+5) = 6*10 = 8*9\nAnswer: 7'

    run = start(TASK, Layers(answer).config(layers=2))
    assert run.exit_code == 2, run.message
    assert [r["status"] for r in run.result.details["layers"][1]] == ["invalid"] * 3


class CopyingAggregator(Layers):
    """Agents A and B answer 7 in every layer; the aggregator copies the first quoted answer of
    its prompt back, fence and id included."""

    def reply(self, request: Request) -> str:
        if "/aggregate/" in request.meta["step"]:
            fence_id, body = FENCE.findall(request.prompt)[0]
            return f'<quoted from="Answer P" id="{fence_id}">\n{body}\n</quoted id="{fence_id}">'
        return super().reply(request)


def test_an_aggregator_that_copies_a_quote_fence_is_not_the_final_answer() -> None:
    m = CopyingAggregator(lambda layer, me, prompt: FIRST["agent_a" if me != "agent_b" else me])
    run = start(TASK, m.config(layers=2))
    assert run.exit_code == 0, run.message
    assert run.result.details["aggregator"]["status"] == "invalid"
    assert "copies moot's quote markup" in run.result.how
    assert run.result.final_answer == FIRST["agent_a"]


def test_a_change_of_mind_between_layers_is_not_said_to_follow_a_critique() -> None:
    split = {
        "agent_a": FIRST["agent_a"],
        "agent_b": "It is 9.\nAnswer: 9",
        "agent_c": FIRST["agent_c"],
    }

    def answer(layer: int, me: str, prompt: str) -> str:
        if layer == 1:
            return split[me]
        return f"Having read the answers, {me[-1]} finds 3 + 4 = 7.\nAnswer: 7"

    run = start(TASK, Layers(answer, aggregate="3 + 4 = 7.\nAnswer: 7").config(layers=2))
    assert run.exit_code == 0, run.message
    assert run.result.finding is not None and run.result.finding.label == "persuasion"
    said = f"{run.result.how} {run.result.trust}"
    assert "Agent C moved from '2' to '7'" in said, said
    assert "critique" not in said, said
    assert [(c.agent, c.critics) for c in run.result.changes] == [
        ("agent_b", ()),
        ("agent_c", ()),
    ]
