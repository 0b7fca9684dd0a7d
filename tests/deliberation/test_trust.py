"""Labels say exactly what happened, and every outcome says how far to trust it (issue 9)."""

from __future__ import annotations

import pytest

from moot.deliberation.trust import (
    Checks,
    JudgePanel,
    JudgeScore,
    MatchingAnswers,
    Participant,
    Trust,
    Votes,
    assess,
    is_tiny,
    own_judges_note,
    qualified,
)


def _agents(*statuses: str, reasons: dict[str, str] | None = None) -> list[Participant]:
    reasons = reasons or {}
    names = [f"Agent {chr(ord('A') + i)}" for i in range(len(statuses))]
    return [
        Participant(name, status, reasons.get(name, ""))  # type: ignore[arg-type]
        for name, status in zip(names, statuses, strict=True)
    ]


def test_unanimous_although_one_of_three_failed_is_now_labelled_correctly() -> None:
    # the court in the field: 2 of 2 yes, Agent B failed, and it said "unanimous"
    agents = _agents("agreed", "failed", "agreed", reasons={"Agent B": "connection refused."})
    label, statement, allowed = assess(agents, reached=True, evidence=Votes())
    assert label == "supermajority of the 2 valid agents; Agent B failed"
    assert "unanimous" not in label and "unanimous" not in statement
    assert allowed  # 2 of 3 valid is a quorum
    assert statement == (
        "2 of the 3 agents that started voted for it. Agent B failed: connection refused."
    )


def test_unanimous_only_when_every_agent_that_started_agreed() -> None:
    label, statement, allowed = assess(
        _agents("agreed", "agreed", "agreed"), reached=True, evidence=Votes()
    )
    assert (label, allowed) == ("unanimous", True)
    assert statement == "3 of the 3 agents that started voted for it."


def test_an_abstention_or_a_dissent_lowers_unanimous_to_supermajority() -> None:
    label, statement, _ = assess(
        _agents("agreed", "agreed", "abstained", "agreed", "dissented"),
        reached=True,
        evidence=Votes(),
    )
    assert label == "supermajority: 3 of 5 agents"
    assert "Agent C abstained." in statement and "Agent E voted against." in statement


def test_an_invalid_answer_is_named_with_its_reason() -> None:
    agents = _agents(
        "agreed",
        "agreed",
        "agreed",
        "invalid",
        reasons={"Agent D": "it only repeats the prompt's template ('{ newVote }')"},
    )
    label, statement, allowed = assess(agents, reached=True, evidence=Votes())
    assert label == "supermajority of the 3 valid agents; Agent D gave an invalid answer"
    assert (
        "Agent D gave an invalid answer: it only repeats the prompt's template ('{ newVote }')."
        in statement
    )
    assert allowed


@pytest.mark.parametrize(
    ("statuses", "valid"),
    [
        (("agreed", "failed", "invalid"), 1),  # 1 of 3
        (("agreed", "agreed", "failed", "failed"), 2),  # 2 of 4 is not more than half
        (("agreed", "failed"), 1),
    ],
)
def test_no_consensus_without_a_quorum(statuses: tuple[str, ...], valid: int) -> None:
    label, statement, allowed = assess(_agents(*statuses), reached=True, evidence=Votes())
    assert not allowed
    assert label.startswith(f"no consensus: no quorum ({valid} of {len(statuses)} agents valid); ")
    assert f"only {valid} of the {len(statuses)} agents gave a valid answer" in statement
    assert "more than half" in statement


def test_the_quorum_is_configurable() -> None:
    agents = _agents("agreed", "agreed", "failed", "failed")
    assert assess(agents, reached=True, quorum=0.4).consensus_allowed
    assert not assess(agents, reached=True, quorum=0.5).consensus_allowed
    with pytest.raises(ValueError, match="quorum"):
        assess(agents, reached=True, quorum=1.0)
    with pytest.raises(ValueError, match="every agent that started"):
        assess([], reached=True)


def test_no_consensus_is_labelled_so_with_what_failed() -> None:
    agents = _agents("dissented", "agreed", "failed", reasons={"Agent C": "timed out after 60 s"})
    trust = assess(agents, reached=False, evidence=JudgeScore("Agent A", 5))
    assert trust == Trust(
        "no consensus; Agent C failed",
        "The 2 valid agents of the 3 that started did not agree. Agent A, as judge, scored their "
        "convergence 5/10. Agent C failed: timed out after 60 s.",
        False,
    )


def test_agreement_no_first_answer_held_is_said_as_such_not_as_disagreement() -> None:
    agents = _agents("dissented", "dissented", "dissented")
    trust = assess(agents, reached=False, unheld=3)
    assert trust == Trust(
        "no consensus",
        "3 of the 3 agents that started end on the same answer, but none of them held it in "
        "their first, independent answer, so it is not counted as their consensus.",
        False,
    )
    # one agent is nobody to agree with
    assert "did not agree" in assess(agents, reached=False, unheld=1).statement


def test_round_0_agreement_rests_on_matching_answers() -> None:
    label, statement, allowed = assess(
        _agents("agreed", "agreed", "agreed"), reached=True, evidence=MatchingAnswers("exact")
    )
    assert (label, allowed) == ("unanimous", True)
    assert statement == "3 of the 3 agents that started gave the same answer, word for word."
    _, similar, _ = assess(
        _agents("agreed", "agreed"), reached=True, evidence=MatchingAnswers("similar", 0.912)
    )
    assert "in nearly the same words (similarity 0.91)" in similar


def test_a_judges_score_and_verify_commands_are_the_evidence() -> None:
    label, statement, allowed = assess(
        _agents("agreed", "agreed", "failed"),
        reached=True,
        evidence=JudgeScore("Agent C", 9),
        checks=Checks(passed=1, total=2),
    )
    assert allowed
    assert label == (
        "judged consensus (Agent C, score 9/10) among the 2 valid agents; Agent C failed; "
        "1 of 2 checks failed"
    )
    assert "scored the convergence of the solutions of the 2 valid agents 9/10." in statement
    assert statement.endswith("Verify commands: 1 of 2 passed.")


def test_a_judge_panel_pick_is_chosen_by_the_judges_never_consensus() -> None:
    """A panel's pick over agents that did not agree was "judge panel decision", a consensus
    (issue 29: a model's selection is evidence, never the agents' agreement)."""
    for reached in (True, False):
        label, statement, allowed = assess(
            _agents("agreed", "dissented", "dissented"),
            reached=reached,
            evidence=JudgePanel(selected=2, judges=3, confidence=0.8),
        )
        assert (label, allowed) == (
            "chosen by the judges (2 of 3 judges); no consensus among the agents",
            False,
        )
        assert statement == (
            "The 3 valid agents of the 3 that started did not agree. 2 of 3 judges chose this "
            "answer (average confidence 0.80): a decision by the judges, not an agreement of the "
            "agents."
        )


def test_the_outcome_line_carries_what_the_label_adds() -> None:
    """arena, court and the tournament word their outcome line with `qualified`."""
    plain = assess(_agents("agreed", "agreed"), reached=True, evidence=Votes())
    assert qualified("both agree", plain, reached=True) == "both agree"
    failed = assess(_agents("agreed", "agreed", "failed"), reached=True, evidence=Votes())
    assert qualified("2 of 3 agree", failed, reached=True) == "2 of 3 agree; Agent C failed"
    panel = assess(
        _agents("agreed", "dissented", "dissented"),
        reached=True,
        evidence=JudgePanel(selected=2, judges=3, confidence=0.8),
    )
    assert qualified("A stands", panel, reached=True) == (
        "A stands, but chosen by the judges (2 of 3 judges); no consensus among the agents"
    )


def test_abstentions_are_abstentions_not_disagreement() -> None:
    label, statement, allowed = assess(
        _agents("abstained", "abstained", "abstained"), reached=False
    )
    assert (label, allowed) == ("no consensus", False)
    assert statement == "Agent A, Agent B and Agent C abstained."
    _, statement, _ = assess(_agents("agreed", "abstained", "dissented"), reached=False)
    assert statement == "Agent B abstained, and the 2 agents that took a side did not agree."
    assert "voted against" not in statement


def test_no_valid_answer_is_not_a_disagreement() -> None:
    _, statement, _ = assess(_agents("failed", "invalid"), reached=False)
    assert statement.startswith("None of the 2 agents that started gave a valid answer.")
    assert "did not agree" not in statement


def test_judges_on_the_agents_own_models_are_named() -> None:
    note = own_judges_note(["local:smollm2", "openai:gpt-5.2"], ["local:smollm2"])
    assert note == (
        "The judges are the agents' own models (local:smollm2): their verdict is not an "
        "independent check of the agents' answers."
    )
    assert own_judges_note(["openai:gpt-5.2"], ["anthropic:claude-opus-4-6"]) is None


def test_a_tiny_model_makes_the_answer_a_demonstration() -> None:
    agents = _agents("agreed", "agreed", "agreed")
    tiny = assess(agents, reached=True, evidence=Votes(), models=["local:smollm2"] * 3)
    assert tiny.statement.startswith(
        "This answer is a demonstration, not evidence: it comes from a tiny model (local:smollm2)."
    )
    big = assess(
        agents,
        reached=True,
        evidence=Votes(),
        models=["openai:gpt-5.2", "anthropic:claude-opus-4-6"],
    )
    assert "demonstration" not in big.statement


@pytest.mark.parametrize(
    ("spec", "tiny"),
    [
        ("local:smollm2", True),
        ("local:default", True),
        ("local:/models/SmolLM2-360M-Instruct.Q8_0.gguf", True),
        ("openai:qwen2.5-0.5b-instruct", True),
        ("local:/m/gemma-3-270m-it.gguf", True),
        ("openai:gpt-5.2", False),
        ("anthropic:claude-opus-4-6", False),
        ("local:/m/mistral-7b-instruct.gguf", False),
        ("openai:gpt-4o-2024-05-13", False),
        ("google:gemini-3-pro", False),
    ],
)
def test_tiny_models_are_known_by_their_spec(spec: str, tiny: bool) -> None:
    assert is_tiny(spec) is tiny


def test_reasons_quoting_model_text_stay_one_printable_line() -> None:
    agents = _agents(
        "agreed", "agreed", "invalid", reasons={"Agent C": "it holds\n\x1b[31m" + "x" * 5000}
    )
    statement = assess(agents, reached=True).statement
    assert statement.isprintable() and "\n" not in statement and len(statement) < 400


def test_a_dissent_without_votes_is_another_answer_not_a_vote() -> None:
    _, statement, _ = assess(
        _agents("agreed", "agreed", "dissented"),
        reached=True,
        evidence=MatchingAnswers("similar", 0.9),
    )
    assert "Agent C gave another answer." in statement
    assert "voted against" not in statement
