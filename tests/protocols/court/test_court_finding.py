"""The court's label is moot's finding on the agents' positions (issue 29): persuasion is told
apart from agreement and who moved is reported; a paraphrase of a position is that position;
abstentions are abstentions; a judge panel's pick is "chosen by the judges", never consensus; a
judge that contradicts its own scores is an invalid verdict; a non-answer is no position."""

from __future__ import annotations

import json

import pytest

from moot import api as runner
from moot.deliberation.consensus import position_id
from tests.court_scripts import (
    Ask,
    Behaviour,
    Court,
    agreeable,
    failing,
    reply,
    selects,
    stubborn,
)
from tests.scripts import start

PG, LITE, FILES = "Use Postgres.", "Use SQLite.", "Use flat files."
TASK = "Which database should the service use for its sessions?"


def alias(run: runner.RunResult, name: str) -> str:
    """The alias the scripted participant `name` played (aliases are random per session)."""
    return {spec: a for a, spec in run.result.aliases.items()}[f"scripted:@{name}"]


def abstains(text: str, confidence: float = 0.8) -> Behaviour:
    """Proposes `text`, then abstains."""

    def behave(ask: Ask) -> str:
        if ask.candidate is None:
            return reply(text=text, confidence=confidence)
        return reply("abstain", confidence=confidence)

    return behave


def test_one_confident_agent_and_two_yes_votes_is_persuasion_and_says_who_moved() -> None:
    """Agent 'one' proposes at confidence 1.0; the two others drop their own proposals and vote
    yes. That was "unanimous consensus", with no word of who changed."""
    court = Court(
        {"one": stubborn(PG, 1.0), "two": agreeable(LITE, 0.4), "three": agreeable(FILES, 0.4)}
    )
    run = start(TASK, court.config())
    result = run.result
    assert run.exit_code == 0 and result.final_answer == PG
    assert result.finding is not None and result.finding.label == "persuasion"
    assert result.finding.independent == 1
    # the rounds as the court numbers them: round 1 proposes, round 2 is the first vote
    assert "only 1 held it in their first proposal" in result.finding.reason
    assert "in round 2 after" in result.finding.reason and "round 1" not in result.finding.reason
    assert "converged by persuasion in round 2" in result.how
    assert "unanimous" not in result.how
    one, two, three = (alias(run, n) for n in ("one", "two", "three"))
    moved = {(c.agent, c.round, c.before, c.after, c.critics) for c in result.changes}
    assert moved == {(two, 2, LITE, PG, (one,)), (three, 2, FILES, PG, (one,))}
    assert "Changes of mind:" in result.trust and "in round 2" in result.trust
    assert "1 of the 3 agents held this answer in their first, independent answer" in result.trust
    claims = {(c.agent, c.round): c.claim for c in result.claims}
    assert claims[(two, 1)] == LITE and claims[(two, 2)] == PG


def test_an_independent_majority_stays_consensus_and_names_the_one_who_moved() -> None:
    court = Court({"one": agreeable(PG, 0.9), "two": agreeable(LITE, 0.5), "three": agreeable(PG)})
    run = start(TASK, court.config())
    assert run.exit_code == 0 and run.result.finding is not None
    assert run.result.finding.label == "consensus"
    assert "unanimous consensus in round 2" in run.result.how
    (change,) = run.result.changes
    assert change.agent == alias(run, "two") and change.round == 2


def test_identical_proposals_restated_with_no_are_one_position_not_a_deadlock() -> None:
    """Three agents propose the same text, then vote "no" restating it (a tiny model's habit):
    that was four rounds of "no" and a deadlock, "did not agree"."""

    def restates(ask: Ask) -> str:
        if ask.candidate is None:
            return reply(text=PG)
        return reply("no", text="We should use Postgres.")

    court = Court({"one": restates, "two": restates, "three": restates})
    run = start(TASK, court.config())
    assert run.exit_code == 0, run.result.how
    assert run.result.final_answer == PG and run.result.rounds == 2
    assert "did not agree" not in run.result.trust
    assert "positions agree with it by moot's check" in run.result.how


def test_paraphrased_proposals_pool_their_support_for_the_candidate() -> None:
    """Two paraphrases of one position (0.5 each) used to lose the candidacy to one confident
    outlier (0.9), on which the agreeable agents then agreed."""
    court = Court(
        {
            "one": agreeable(PG, 0.5),
            "two": agreeable("We should use Postgres.", 0.5),
            "three": stubborn(LITE, 0.9),
        }
    )
    run = start(TASK, court.config(consensus_threshold=0.66))
    rounds = run.result.details["court"]["agentDebate"]["rounds"]
    postgres = {PG, "We should use Postgres."}
    assert rounds[1]["candidatePositionId"] in {position_id(t) for t in postgres}
    assert run.exit_code == 0 and run.result.final_answer in postgres


def test_one_yes_among_abstentions_is_no_consensus_and_abstentions_are_named() -> None:
    """One yes and two abstentions was a supermajority (1 of 1 voting) and exit 0."""
    court = Court({"one": stubborn(PG, 0.9), "two": abstains(LITE), "three": abstains(FILES)})
    run = start(TASK, court.config(max_agent_rounds=2))
    assert run.exit_code == 2 and run.result.final_answer == ""
    two, three = alias(run, "two"), alias(run, "three")
    names = sorted(f"Agent {a[-1].upper()}" for a in (two, three))
    assert f"{names[0]} and {names[1]} abstained" in run.result.trust
    assert "voted against" not in run.result.trust
    bad = {c.agent: c.reason for c in run.result.claims if c.round == 2 and not c.valid}
    assert bad == {two: "abstained", three: "abstained"}


def test_an_abstention_under_a_judges_pick_is_not_a_vote_against() -> None:
    court = Court(
        {"one": stubborn(PG), "two": stubborn(LITE), "three": abstains(FILES)},
        {"j1": selects(PG), "j2": selects(PG), "j3": selects(PG)},
    )
    run = start(TASK, court.config(max_agent_rounds=2))
    assert run.exit_code == 2 and run.result.final_answer == PG
    assert run.result.finding is not None and run.result.finding.label == "chosen"
    three = alias(run, "three")
    assert f"Agent {three[-1].upper()} abstained" in run.result.trust
    assert "voted against" not in run.result.trust
    assert "3 of 3 judges chose this answer" in run.result.trust


def contradicts_itself(ask: Ask) -> str:
    """A judge that selects Postgres but scores SQLite highest."""
    scores = {pid: (90 if pid == position_id(LITE) else 40) for pid in ask.positions}
    return json.dumps(
        {
            "selectedPositionId": position_id(PG),
            "scoresByPositionId": scores,
            "reasoning": "Postgres.",
            "confidence": 0.9,
        }
    )


def test_a_judge_whose_pick_is_not_its_own_top_score_is_an_invalid_verdict() -> None:
    """Counted, its pick made Postgres 2 of 3 and settled the court."""
    court = Court(
        {"one": stubborn(PG), "two": stubborn(LITE)},
        {"j1": contradicts_itself, "j2": selects(PG), "j3": selects(LITE)},
    )
    run = start(TASK, court.config(max_agent_rounds=2, max_judge_rounds=1))
    assert run.exit_code == 2 and run.result.final_answer == ""
    assert "deadlock" in run.result.how
    judge = alias(run, "j1")
    invalid = [v for v in run.result.verdicts if not v.valid]
    assert [v.by for v in invalid] == [f"Judge {judge[-1].upper()}"]
    assert f"is not its own top score: it scored {position_id(PG)} 40" in invalid[0].problem
    assert "1 of the 3 verdicts of the 3 judges in 1 judge round was invalid: 1 because" in (
        run.result.trust
    )
    assert f"(Judge {judge[-1].upper()} in judge round 1)" in run.result.trust
    evaluations = run.result.details["court"]["judgePanel"]["rounds"][0]["evaluations"]
    (bad,) = [e for e in evaluations if e["judgeId"] == judge]
    assert bad["status"] == "error" and "not its own top score" in bad["error"]


@pytest.mark.parametrize(
    "junk",
    [
        "You are an AI, you will not be allowed to speak in the debate.",
        "\x1b[1A\x1b[2K",
        "[1A[2K",
        ", no more than 40 words.",
        "no",
    ],
)
def test_a_non_answer_is_no_position(junk: str) -> None:
    court = Court({"one": stubborn(junk), "two": stubborn(PG), "three": stubborn(PG)})
    run = start(TASK, court.config(max_agent_rounds=2))
    assert run.exit_code == 0 and run.result.final_answer == PG
    one = alias(run, "one")
    bad = {(c.agent, c.round): c.reason for c in run.result.claims if not c.valid}
    assert set(bad) == {(one, 1), (one, 2)}
    assert "is not an answer to the topic" in bad[(one, 1)]
    assert f"Agent {one[-1].upper()} gave an invalid answer" in run.result.trust
    # two such agents are no majority for anything: no consensus, and no final answer (they
    # answered: what moot found of their answers is the outcome, not a failed run)
    court = Court({"one": stubborn(junk), "two": stubborn(junk), "three": stubborn(PG)})
    run = start(TASK, court.config(max_agent_rounds=2, consensus_threshold=0.66))
    assert run.exit_code == 2 and run.result.final_answer == "", run.message
    assert "not an answer to the topic" in run.result.trust
    assert "Only 1 of the 3 agents that started gave a valid answer" in run.result.trust


def test_the_court_gives_the_substance_check_its_question() -> None:
    """With the question in `initial_query`, the check saw only the topic, which reads as a
    yes/no question: a bare "No." was a position, and two of them a consensus (exit 0)."""
    court = Court({"one": stubborn("No."), "two": stubborn("No."), "three": stubborn(PG)})
    run = start(
        "Is our session store ready for growth?",
        court.config(
            initial_query="Which database should the service use for its sessions?",
            consensus_threshold=0.66,
        ),
    )
    assert run.exit_code == 2 and run.result.final_answer == "", run.result.how
    assert "a bare 'no' to a question that is not a yes/no question" in run.result.trust


def test_a_judges_pick_over_agents_that_disagree_is_chosen_and_named_as_such() -> None:
    court = Court(
        {"one": stubborn(PG), "two": stubborn(LITE), "three": stubborn(FILES)},
        {"j1": selects(PG), "j2": selects(PG), "j3": selects(LITE)},
    )
    run = start(TASK, court.config(max_agent_rounds=2))
    result = run.result
    assert run.exit_code == 2 and result.status == "no_consensus" and not result.consensus
    assert result.final_answer == PG
    assert result.finding is not None and result.finding.label == "chosen"
    assert "2 of 3 judges chose this answer" in result.trust
    assert "not an agreement of the agents" in result.trust
    assert "The judges are the agents' own models" not in result.trust
    assert [v.role for v in result.verdicts] == ["judge"] * 3
    assert runner.replay(run.session_id).identical is True


def test_each_round_names_why_an_agent_held_no_position_then() -> None:
    def late(ask: Ask) -> str:
        if ask.candidate is None:
            return reply(text=", no more than 40 words.")
        return reply("yes", target=ask.candidate)

    court = Court({"one": late, "two": stubborn(PG), "three": stubborn(PG)})
    run = start(TASK, court.config())
    assert run.exit_code == 0 and run.result.final_answer == PG
    one = alias(run, "one")
    rows = {c.round: c for c in run.result.claims if c.agent == one}
    assert not rows[1].valid and "a piece of an instruction" in rows[1].reason
    assert rows[2].valid and rows[2].claim == PG and rows[2].reason == ""


JUNK = (
    "You are an AI, you will not be allowed to speak in the debate.",
    ", no more than 40 words.",
    "[1A[2K",
)


def test_when_every_position_is_no_answer_the_court_finds_so_and_does_not_fail() -> None:
    """Three positions that are no answer (the embedded model's) ended the run as failed, exit
    1, with no trust statement: the agents answered, and what moot found of their answers is the
    outcome (no consensus, exit 2, no final answer, each invalid answer named), as the arena's."""
    court = Court(
        {"one": stubborn(JUNK[0]), "two": stubborn(JUNK[1]), "three": stubborn(JUNK[2])},
        {"j1": selects(PG), "j2": selects(PG), "j3": selects(PG)},
    )
    run = start(TASK, court.config())
    result = run.result
    assert run.exit_code == 2 and result.status == "no_consensus", run.message
    assert result.final_answer == ""
    assert result.finding is not None and result.finding.reason == "no agent gave a valid answer"
    assert "None of the 3 agents that started gave a valid answer" in result.trust
    for name in ("one", "two", "three"):
        who = f"Agent {alias(run, name)[-1].upper()} gave an invalid answer"
        assert f'{who}: "newPositionText" is not an answer to the topic' in result.trust
        assert who in result.how
    assert "only 0 position(s)" not in result.how
    # nothing to vote on and nothing for the judges: the court ends after the proposals
    assert not court.asked("r2") and not court.asked("j")
    assert result.details["court"]["session"]["phases"] == ["init", "agent_debate", "deadlock"]
    assert runner.replay(run.session_id).identical is True


def test_a_failed_call_where_no_agent_holds_a_position_still_fails_the_run() -> None:
    """The failed call is the cause to fix: the run fails (exit 1) and resumes once it is."""
    court = Court({"one": stubborn(JUNK[0]), "two": stubborn(JUNK[1]), "three": failing})
    run = start(TASK, court.config(engine={"attempts": 1}))
    assert run.exit_code == 1 and run.result.status == "failed", run.message
    assert "1 of 3 agents failed in round 1" in (run.message or "")
    assert "not an answer to the topic" in (run.message or "")


PRIME = "Is 7 a prime number?"
YES = "Yes.\tSeven is a prime number:\nits only divisors are 1 and 7."
NO = "No, 7 is not a prime number."


def test_a_position_the_arena_refuses_is_asked_again_then_invalid_and_never_the_answer() -> None:
    """The court held positions only to the substance check: a bare number to a yes/no question
    ("6" to "Is 7 a prime number?"), which the arena refuses as a solution and asks again, was a
    position, shown to the judges, and their pick of it was the court's final answer. Positions
    are held to the arena's test now. The disagreement lines printed a position's tabs and
    newlines."""
    court = Court(
        {"one": stubborn("6"), "two": stubborn(YES), "three": stubborn(NO)},
        {"j1": selects("6"), "j2": selects("6"), "j3": selects("6")},
    )
    run = start(PRIME, court.config(max_agent_rounds=2, max_judge_rounds=1))
    result = run.result
    one = alias(run, "one")
    reasks = court.prompts_of("one", "r1/propose")
    assert len(reasks) == 2, court.asked("r")  # the proposal, then the re-ask
    assert "its answer is a bare number to a yes/no question ('6')" in reasks[1]
    assert run.exit_code == 2 and result.final_answer == "", result.how
    judged = output_of(run)["judgePanel"]["rounds"][0]["positionIds"]
    assert judged == sorted([position_id(YES), position_id(NO)])
    assert result.finding is not None and result.finding.valid == 2
    why = "its answer is a bare number to a yes/no question ('6')"
    assert f'Agent {one[-1].upper()} gave an invalid answer: "newPositionText"' in result.trust
    assert why in result.trust
    assert f"Agent {one[-1].upper()} gave an invalid answer" in result.how
    # one-line places show a position on one line
    assert not [d for d in result.disagreements if "\t" in d or "\n" in d], result.disagreements
    assert any(
        d.endswith(": Yes. Seven is a prime number: its only divisors are 1 and 7.")
        for d in result.disagreements
    ), result.disagreements
    assert runner.replay(run.session_id).identical is True


def output_of(run: runner.RunResult) -> dict:  # type: ignore[type-arg]
    court: dict = run.result.details["court"]  # type: ignore[type-arg]
    return court


def test_a_court_left_with_one_position_says_so_in_plain_words() -> None:
    court = Court(
        {"one": stubborn(PG), "two": stubborn(JUNK[0]), "three": stubborn(JUNK[1])},
        {"j1": selects(PG), "j2": selects(PG), "j3": selects(PG)},
    )
    run = start(TASK, court.config())
    how = run.result.how
    assert "only 1 position for the judges" in how, how
    assert "position(s)" not in how


def adopts(junk: str) -> Behaviour:
    """Proposes something that is no answer, then votes yes for whatever is the candidate."""

    def behave(ask: Ask) -> str:
        if ask.candidate is None:
            return reply(text=junk)
        return reply("yes", target=ask.candidate)

    return behave


def test_one_holder_and_an_agent_that_had_no_position_of_its_own_are_no_consensus() -> None:
    """A walkthrough's court (3 agents, --rounds 2): Agent A failed, Agent B proposed no answer
    and then voted yes for Agent C's position. That was "the agents converged by persuasion",
    consensus, exit 0: a label resting on one agent's own position. B was persuaded away from
    nothing; it adopted the only position on offer."""
    court = Court({"one": failing, "two": adopts(JUNK[1]), "three": stubborn(PG)})
    run = start(TASK, court.config(max_agent_rounds=2, engine={"attempts": 1}))
    result = run.result
    two, three = (f"Agent {alias(run, n)[-1].upper()}" for n in ("two", "three"))
    assert run.exit_code == 2 and result.status == "no_consensus", result.how
    assert not result.consensus and result.final_answer == ""
    assert result.finding is not None and result.finding.label == "no_consensus"
    said = f"{two} adopted it with no valid position of its own"
    assert said in result.finding.reason and said in result.how, result.how
    assert "only 1 of the 3 agents that started held it as a position of their own" in result.how
    assert "persuaded" not in result.how and "by persuasion in round" not in result.how
    assert three in result.how
    # the two are not two agents that disagree: one had a position, the other voted for it
    assert "did not agree" not in result.trust, result.trust
    assert f"{two} gave an invalid answer: it held no valid position of its own" in result.trust
    assert runner.replay(run.session_id).identical is True


def test_independent_holders_with_an_adopter_settle_and_the_adopter_is_named() -> None:
    """Two agents hold the position on their own and a third, with none of its own, votes for
    it: a consensus of the two, and the third is said to have adopted it."""
    court = Court({"one": adopts(JUNK[1]), "two": stubborn(PG), "three": stubborn(PG)})
    run = start(TASK, court.config(max_agent_rounds=2))
    result = run.result
    one = f"Agent {alias(run, 'one')[-1].upper()}"
    assert run.exit_code == 0 and result.final_answer == PG, result.how
    assert f"{one} adopted it with no valid position of its own" in result.how


def test_an_agent_persuaded_and_an_adopter_settle_as_persuasion() -> None:
    """One holder, one agent moved off a position of its own, one that had none: two agents with
    positions of their own agree, a majority of three; persuasion, and the adopter named."""
    court = Court({"one": stubborn(PG, 1.0), "two": agreeable(LITE, 0.4), "three": adopts(JUNK[1])})
    run = start(TASK, court.config(max_agent_rounds=2))
    result = run.result
    three = f"Agent {alias(run, 'three')[-1].upper()}"
    assert run.exit_code == 0 and result.final_answer == PG, result.how
    assert result.finding is not None and result.finding.label == "persuasion"
    assert "converged by persuasion in round 2" in result.how
    assert f"{three} adopted it with no valid position of its own" in result.how


def test_an_adopters_vote_does_not_make_up_the_courts_supermajority() -> None:
    """4 of 5 yes is the 0.8 supermajority only with the vote of an agent that had no position
    of its own; of the agents with positions of their own, 3 of 4 hold it."""
    court = Court(
        {
            "one": stubborn(PG),
            "two": stubborn(PG),
            "three": stubborn(PG),
            "four": stubborn(LITE),
            "five": adopts(JUNK[1]),
        }
    )
    run = start(TASK, court.config(max_agent_rounds=2, consensus_threshold=0.8))
    result = run.result
    assert run.exit_code == 2 and result.final_answer == "", result.how
    assert "short of the court's supermajority" in result.how
    assert "not counting the agents that adopted it" in result.how
