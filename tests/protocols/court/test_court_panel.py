"""The judge panel decides only as a panel. A tryout on the embedded model printed "chosen by
the judges: ... (1 of 3 judges, average confidence 1.00)": two judges' verdicts were invalid, and
the one that counted scored every position 1/100 with the reasoning '{{<quoted from='; its
result.json said "required": 1 and phase "consensus_reached" beside status no_consensus.

Rules: the leading position needs ceil(judge_consensus_threshold x seated judges) selections
from valid verdicts; a verdict whose reasoning is no argument (moot's substance check) or that
scores every position the same (no preference) is invalid; and nothing in result.json says
consensus_reached unless the status is consensus."""

from __future__ import annotations

import json
from typing import Any

from moot import api as runner
from moot.deliberation.consensus import position_id
from tests.court_scripts import Ask, Behaviour, Court, selects, stubborn
from tests.scripts import start

PG, LITE, FILES = "Use Postgres.", "Use SQLite.", "Use flat files."
TASK = "Which database should the service use for its sessions?"
AGENTS = {"one": stubborn(PG), "two": stubborn(LITE), "three": stubborn(FILES)}
JUNK = "{{<quoted from="


def judge(
    text: str,
    *,
    flat: int | None = None,
    reasoning: str = "It is the most complete and the best argued.",
    confidence: float = 0.9,
) -> Behaviour:
    """A judge that selects the position with this text, scoring it 90 and the others 40, or
    every position `flat`."""

    def behave(ask: Ask) -> str:
        pid = position_id(text)
        scores = {p: (flat if flat is not None else 90 if p == pid else 40) for p in ask.positions}
        return json.dumps(
            {
                "selectedPositionId": pid,
                "scoresByPositionId": scores,
                "reasoning": reasoning,
                "confidence": confidence,
            }
        )

    return behave


def contradicts(text: str) -> Behaviour:
    """A judge whose pick is not its own top score: an invalid verdict (panel.own_pick_problem)."""

    def behave(ask: Ask) -> str:
        pid = position_id(text)
        scores = {p: (10 if p == pid else 80) for p in ask.positions}
        return json.dumps(
            {
                "selectedPositionId": pid,
                "scoresByPositionId": scores,
                "reasoning": "It is the safest choice.",
                "confidence": 0.9,
            }
        )

    return behave


def alias(run: runner.RunResult, name: str) -> str:
    return {spec: a for a, spec in run.result.aliases.items()}[f"scripted:@{name}"]


def result_json(run: runner.RunResult) -> str:
    return (run.folder / "result.json").read_text()


def judge_entries(run: runner.RunResult) -> list[dict[str, Any]]:
    return [d for d in run.result.details["rounds"] if d["phase"] == "judges"]


def assert_no_decision(run: runner.RunResult) -> None:
    result = run.result
    assert run.exit_code == 2 and result.status == "no_consensus" and not result.consensus
    assert result.finding is not None and result.finding.label != "chosen"
    assert result.final_answer == ""
    assert "chosen by the judges" not in result.how and result.how.startswith("deadlock")
    court = result.details["court"]
    assert court["finalVerdict"]["source"] == "deadlock"
    assert court["judgePanel"]["final"] is None
    assert court["session"]["phase"] == "deadlock" and result.details["phase"] == "deadlock"
    assert "consensus_reached" not in result_json(run)


def test_the_tryout_one_valid_judge_of_three_with_flat_scores_and_junk_reasoning() -> None:
    court = Court(
        AGENTS,
        {
            "j1": judge(PG, flat=1, reasoning=JUNK, confidence=1.0),
            "j2": contradicts(LITE),
            "j3": contradicts(FILES),
        },
    )
    run = start(TASK, court.config(max_agent_rounds=1, max_judge_rounds=1))
    assert_no_decision(run)
    (entry,) = judge_entries(run)
    assert entry["required"] == 2 and entry["tally"] == {} and entry["leader"] is None
    assert sorted(entry["failed"]) == sorted(alias(run, j) for j in ("j1", "j2", "j3"))
    assert not [v for v in run.result.verdicts if v.valid]


def test_one_valid_judge_of_three_is_no_panel_decision() -> None:
    """Counted against the valid verdicts only, ceil(0.6 x 1) = 1: one judge chose."""
    court = Court(AGENTS, {"j1": selects(PG), "j2": contradicts(LITE), "j3": contradicts(FILES)})
    run = start(TASK, court.config(max_agent_rounds=1, max_judge_rounds=1))
    assert_no_decision(run)
    (entry,) = judge_entries(run)
    assert entry["required"] == 2 and entry["tally"] == {position_id(PG): 1}
    rounds = run.result.details["court"]["judgePanel"]["rounds"]
    assert rounds[0]["requiredVotes"] == 2 and rounds[0]["consensusReached"] is False
    assert "1 of the 2 selections a decision needs (60% of 3 judges)" in run.result.how
    assert "in judge round 1, position" in run.result.how
    assert "2 of its 3 verdicts were invalid" in run.result.how


def test_two_valid_judges_of_three_who_agree_decide() -> None:
    court = Court(AGENTS, {"j1": selects(PG), "j2": selects(PG), "j3": contradicts(FILES)})
    run = start(TASK, court.config(max_agent_rounds=1, max_judge_rounds=1))
    assert run.exit_code == 2 and run.result.final_answer == PG
    assert run.result.finding is not None and run.result.finding.label == "chosen"
    assert "2 of 3 judges" in run.result.how
    (entry,) = judge_entries(run)
    assert entry["required"] == 2 and entry["reached"] is True


def test_a_verdict_whose_reasoning_is_junk_does_not_count() -> None:
    court = Court(
        AGENTS,
        {"j1": judge(PG, reasoning=JUNK), "j2": judge(PG, reasoning=JUNK), "j3": selects(LITE)},
    )
    run = start(TASK, court.config(max_agent_rounds=1, max_judge_rounds=1))
    assert_no_decision(run)
    invalid = {v.by: v.problem for v in run.result.verdicts if not v.valid}
    names = {f"Judge {alias(run, j)[-1].upper()}" for j in ("j1", "j2")}
    assert set(invalid) == names
    assert all(
        'its "reasoning" is no argument: it holds only protocol markup' in p
        for p in invalid.values()
    )
    assert f"2 because {invalid[min(names)]} ({' and '.join(sorted(names))} in judge round 1)" in (
        run.result.trust
    )


def test_a_judge_that_scores_every_position_the_same_chooses_nothing() -> None:
    court = Court(AGENTS, {"j1": judge(PG, flat=70), "j2": judge(PG, flat=70), "j3": selects(LITE)})
    run = start(TASK, court.config(max_agent_rounds=1, max_judge_rounds=1))
    assert_no_decision(run)
    invalid = [v.problem for v in run.result.verdicts if not v.valid]
    assert len(invalid) == 2
    assert all("it scored every position the same (70/100)" in p for p in invalid)


def test_a_panels_pick_is_no_consensus_and_result_json_never_says_consensus_reached() -> None:
    court = Court(AGENTS, {"j1": selects(PG), "j2": selects(PG), "j3": selects(LITE)})
    run = start(TASK, court.config(max_agent_rounds=1, max_judge_rounds=1))
    assert run.exit_code == 2 and run.result.status == "no_consensus"
    assert run.result.final_answer == PG
    court_doc = run.result.details["court"]
    assert court_doc["session"]["phases"] == [
        "init",
        "agent_debate",
        "judge_evaluation",
        "chosen_by_judges",
    ]
    assert run.result.details["phase"] == "chosen_by_judges"
    assert court_doc["finalVerdict"]["source"] == "judge_consensus"
    assert "consensus_reached" not in result_json(run)
    assert runner.replay(run.session_id).identical is True
