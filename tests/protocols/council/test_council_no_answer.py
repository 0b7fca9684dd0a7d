"""The council where the agents' answers are no answers by moot's check (the embedded tiny
model answered "5" to "Is 7 a prime number?"): nothing is ranked, there is nothing for a
chairman to synthesize, and the trust statement agrees with the finding. A chairman's own
answer is checked for substance as the agents' answers are."""

from __future__ import annotations

from moot import api
from moot.deliberation.finding import judge_answers
from moot.protocols.council.outcome import Stages, describe_round, outcome
from moot.protocols.council.ranking import aggregate
from tests.protocols.council.test_council import Council
from tests.scripts import start

PRIME = "Is 7 a prime number?"
BARE = {
    "agent_a": "Let me count the factors.\nAnswer: 5",
    "agent_b": "The experts agree.\nAnswer: 5",
    "agent_c": "Thinking about primes.\nAnswer: 5",
}
REJECTS = (
    "The Council of Experts has decided to reject 7 as a prime number, as the answers "
    "disagree on it.\nAnswer: 5"
)


def test_when_every_answer_is_a_bare_number_to_a_yes_no_question_nothing_is_synthesized() -> None:
    # a new user's first council on the embedded model: the finding said no agent gave a valid
    # answer, yet the rankings ranked the three "5"s, the chairman's "5" was accepted as a
    # synthesis, printed as the final answer, and the trust statement spoke of "the 3 agents'
    # answers" and "3 valid rankings"
    c = Council(BARE, chair=REJECTS)
    run = start(PRIME, c.config())
    assert run.exit_code == 2 and run.result.status == "no_consensus", run.message
    assert run.result.finding is not None
    assert run.result.finding.reason == "no agent gave a valid answer"
    assert run.result.final_answer == ""
    # nothing to rank and nothing to synthesize: only the answers were asked
    assert {step.split("/")[1] for step in c.steps} == {"answer"}, c.steps
    synthesis = run.result.synthesis
    assert synthesis is None or not synthesis.accepted
    answers = run.result.details["answers"]
    assert all(r["status"] == "invalid" for r in answers), answers
    assert all("bare number to a yes/no question" in r["problem"] for r in answers)
    assert run.result.positions == {}
    trust = run.result.trust
    assert "No agent gave a valid answer, so there is nothing to synthesize" in trust, trust
    assert "agents' answers do not agree" not in trust and "valid ranking" not in trust, trust
    assert "synthesis of disagreeing answers" not in trust, trust
    assert "The chairman's answer" not in trust, trust
    assert "Answers set aside as invalid: Agent A: its answer is a bare number" in trust, trust
    how = run.result.how
    assert how == "no agent gave a valid answer; no final answer: there is nothing to synthesize"
    record = run.result.details["rounds"][0]
    assert record["valid"] == 0 and record["chairman"] is None
    summary = describe_round(record, None)
    assert summary is not None and "chairman's synthesis" not in summary.decision
    nothing = "no agent gave a valid answer, so there is nothing to synthesize"
    assert summary.decision == f"no consensus: {nothing}", summary
    assert api.replay(run.session_id).identical is True


def test_a_chairmans_bare_number_to_a_yes_no_question_is_no_synthesis() -> None:
    # the agents disagree (yes, no, and a "5" that is no answer): the chairman's "5" is no
    # answer either, checked as theirs are, so it is not accepted and there is no final answer
    answers = {
        "agent_a": "7 has no divisors but 1 and itself.\nAnswer: Yes, 7 is prime",
        "agent_b": "I doubt it.\nAnswer: No, 7 is not prime",
        "agent_c": "Counting.\nAnswer: 5",
    }
    c = Council(answers, chair=REJECTS)
    run = start(PRIME, c.config())
    assert run.exit_code == 2 and run.result.status == "no_consensus", run.message
    assert "r1/chair/" in " ".join(c.steps)  # two valid answers: the chairman is asked
    chair = run.result.details["chairman"]
    assert chair["status"] == "invalid" and "bare number" in chair["problem"], chair
    synthesis = run.result.synthesis
    assert synthesis is not None and not synthesis.accepted
    # only Agent C (its own answer none) ranks; the best-ranked valid answer stands, labelled
    top = run.result.details["aggregate"]["top"]
    assert run.result.final_answer == synthesis.picked == answers[top] != ""
    assert "the best-ranked answer by mean rank, not a consensus" in run.result.how
    assert "The chairman gave no valid answer: its answer is a bare number" in run.result.trust
    assert "the final answer is a synthesis" not in run.result.trust, run.result.trust
    assert api.replay(run.session_id).identical is True


def test_a_valid_chairman_text_is_no_synthesis_where_no_agent_gave_a_valid_answer() -> None:
    # however a chairman came to write (a journal of an older moot), answers that are all no
    # answers leave it nothing to synthesize: recorded, not accepted, not the final answer
    answers = [
        {"agent": a, "step": f"r1/answer/{a}", "status": "valid", "text": "Answer: 5"}
        | {"answer": "5", "problem": None}
        for a in BARE
    ]
    judgement = judge_answers(
        [{r["agent"]: r["answer"] for r in answers}], started=list(BARE), task=PRIME
    )
    assert judgement.finding.valid == 0
    chair = {"agent": "agent_a", "step": "r1/chair/agent_a", "status": "valid"}
    chair |= {"text": "7 is prime.\nAnswer: Yes", "answer": "Yes", "problem": None, "why": ""}
    ranked = aggregate([], [])
    _, result = outcome(Stages({}, answers, [], ranked, chair, judgement), PRIME)
    assert result.final_answer == ""
    # nothing was picked to stand: the chairman's text is its record, not a synthesis
    assert result.synthesis is None and result.details["chairman"]["recorded_only"] is True
    assert "No agent gave a valid answer, so there is nothing to synthesize" in result.trust
    assert "The chairman's text (Agent A's model chaired) is recorded, not the final answer" in (
        result.trust
    )


def test_the_council_numbers_its_one_round_as_its_steps_and_reports_do() -> None:
    """Its reports put "Agent A (round 0): invalid" under "### Round 1"."""
    run = start(PRIME, Council(BARE, chair=REJECTS).config())
    assert {c.round for c in run.result.claims} == {1}
    report = (run.folder / "report.md").read_text(encoding="utf-8")
    assert "| Agent | Round 1 |" in report and "Round 0" not in report
    assert "(round 0)" not in report and "- Agent A (round 1): invalid: " in report
    assert api.replay(run.session_id).identical is True
