"""The shared data of moot.types: how ids are shown."""

from __future__ import annotations

from moot.types import alias_label


def test_an_alias_label_reads_agents_judges_and_one_of_several_answers() -> None:
    assert alias_label("agent_b") == "Agent B" and alias_label("judge_a") == "Judge A"
    assert alias_label("agent_b/2") == "Agent B (answer 2)"
    # a step id or any other text is shown as given
    for other in ("r1/evaluate/agent_b", "agent_b/x", "me/2", "arbiter_a/1/2"):
        assert alias_label(other) == other
    assert alias_label(None) == "-" and alias_label("") == "-"
