"""The arena's label is moot's finding over the agents' answers (issue 29): a judge's verdict is
evidence, an agreement stop reads claims after every round, peers can mark an answer as no
answer, and the outcome says who changed their mind."""

from __future__ import annotations

import json
from collections.abc import Callable

from moot import api
from moot.deliberation.parsing import JudgeVerdict
from moot.protocols.arena import prompts
from moot.protocols.arena.weigh import (
    answer_part,
    model_verdict,
    not_answering,
    read_marks,
    remaining_disagreements,
)
from moot.types import FailureKind, Request
from tests.scripts import Debate, events, start, verdict

ACTIVE = ["agent_a", "agent_b", "agent_c"]
# Plans that neither agree nor contradict by their wording: only a judge can confirm them.
PLANS = {
    "agent_a": "Run the export from a queue worker that retries failed batches.",
    "agent_b": "Schedule it nightly and alert the on-call engineer when a batch fails.",
    "agent_c": "Keep the exporter idempotent so a rerun after a crash is harmless.",
}


def said(answer: str, work: str = "Counted the boxes twice.") -> str:
    """A solve or revise reply in the arena's format, ending with its final answer line."""
    return (
        f"<solution>\n## PLAN\n1. {work}\n## CHANGES\n{work}\nFinal answer: {answer}\n"
        "</solution>\n<analysis>\n## RISKS\nnone\n## DISAGREEMENTS\nNone.\n</analysis>"
    )


def plan(alias: str, step: str) -> str:
    return said(PLANS[alias], work=PLANS[alias])


class Arena(Debate):
    """A Debate whose critiques differ per agent and round: `critiques(alias, step)`."""

    def __init__(self, critiques: Callable[[str, str], str] | None = None, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.critiques = critiques

    def script(self, name: str) -> Callable[[Request], str]:
        inner = super().script(name)

        def reply(request: Request) -> str:
            text = inner(request)
            step = request.meta["step"]
            if "/evaluate/" in step and self.critiques is not None:
                return self.critiques(request.meta["agent"], step)
            return text

        return reply


def by_round(answers: dict[int, dict[str, str]]) -> Callable[[str, str], str]:
    """answer(alias, step) from {round: {alias: final answer}}; a later round missing keeps the
    latest given."""

    def answer(alias: str, step: str) -> str:
        r = int(step.split("/")[0][1:])
        given = max(k for k in answers if k <= r)
        return said(answers[given][alias])

    return answer


DIFFERENT = {0: {"agent_a": "408", "agent_b": "418", "agent_c": "400"}}


# -- a judge's CONSENSUS is evidence ----------------------------------------------------------
def test_a_judges_consensus_over_answers_that_differ_is_no_consensus_and_the_debate_goes_on() -> (
    None
):
    debate = Debate(answer=by_round(DIFFERENT), verdicts=[verdict("CONSENSUS", 10)])
    run = start("How many boxes are there?", debate.config(arena={"max_rounds": 2}))
    assert run.exit_code == 2 and run.result.status == "no_consensus"
    assert not run.result.consensus
    # the judge's claim did not end round 1: both rounds ran, each with its verify
    assert sorted(s for s in debate.steps if "/verify/" in s)[0].startswith("r1/")
    assert any(s.startswith("r2/verify/") for s in debate.steps)
    found = run.result.finding
    assert found is not None and found.label == "no_consensus"
    last = run.result.details["judges"][-1]
    judge = "Agent " + last[-1].upper()
    assert found.reason == (
        f"{judge} judged it consensus (score 10/10); "
        "the final answers differ: 408 (A); 418 (B); 400 (C)"
    )
    assert found.reason in run.result.how
    assert [v.upheld for v in run.result.verdicts] == [False, False]
    assert all(v.claims_agreement and v.valid for v in run.result.verdicts)
    assert [(v.role, v.round) for v in run.result.verdicts] == [("judge", 1), ("judge", 2)]
    assert "judged it consensus (score 10/10), but moot's check does not bear it out" in (
        run.result.trust
    )
    assert "did not agree on" in run.result.trust  # the final answer is not called agreed
    stored = json.loads((run.folder / "result.json").read_text())
    assert stored["finding"]["label"] == "no_consensus"


def test_a_judge_confirms_answers_whose_wording_cannot_tell() -> None:
    debate = Debate(answer=plan, verdicts=[verdict("CONSENSUS", 9, base="Agent B")])
    run = start("How should we run the nightly export?", debate.config(arena={"max_rounds": 1}))
    assert run.exit_code == 0 and run.result.status == "consensus"
    found = run.result.finding
    # the judge (Agent C) vouches for the others' plans, not for its own beside them
    assert run.result.details["judges"] == ["agent_c"]
    assert found is not None and found.consensus and found.agreed == ("agent_a", "agent_b")
    assert found.confirmed_by == "Agent C"
    assert not run.result.changes  # nobody moved
    assert PLANS["agent_b"] in run.result.final_answer  # the base, in the agreed group


def test_a_verdict_that_lists_remaining_disagreements_with_consensus_is_invalid() -> None:
    """Seen on the embedded model: CONSENSUS 10/10 with 23 remaining disagreements."""
    contradictory = verdict("CONSENSUS", 10, base="Agent C").replace(
        "remaining_disagreements: 0", "remaining_disagreements: 23"
    )
    debate = Debate(answer=plan, verdicts=[contradictory])
    run = start("How should we run the nightly export?", debate.config(arena={"max_rounds": 1}))
    assert run.exit_code == 2  # it weighs nothing: it confirms nothing
    (weighed,) = run.result.verdicts
    assert not weighed.valid
    assert weighed.problem == "it says CONSENSUS but lists remaining disagreements (23)"
    assert "verdict was invalid: it says CONSENSUS but lists remaining" in run.result.trust
    assert run.result.details["rounds"][0]["problem"] == weighed.problem
    # nor does its base solution: the final answer is the first remaining agent's
    assert run.result.details["final_from"] == "agent_a"
    assert run.result.details["verdict"]["remaining_disagreements"] == 23


def test_a_verdict_whose_base_solution_names_no_agent_is_invalid() -> None:
    debate = Debate(answer=plan, verdicts=[verdict("CONSENSUS", 9, base="Agent F")])
    run = start("How should we run the nightly export?", debate.config(arena={"max_rounds": 1}))
    assert run.exit_code == 2
    (weighed,) = run.result.verdicts
    assert not weighed.valid and "'Agent F' names no agent in the debate" in weighed.problem


def test_verdict_fields_are_checked_against_each_other() -> None:
    def parsed(decision: str, remaining: str, base: str | None = "Agent A") -> JudgeVerdict:
        raw = (
            f"<verdict>\ndecision: {decision}\nconvergence_score: 9\n"
            f"remaining_disagreements: {remaining}\nbase_solution: {base}\n</verdict>"
        )
        return JudgeVerdict(decision, 9, None, base, "", raw)  # type: ignore[arg-type]

    def check(v: JudgeVerdict) -> tuple[bool, str]:
        made = model_verdict(v, None, judge="agent_c", round=1, active=ACTIVE, threshold=8)
        return made.valid, made.problem

    for fine in ("0", "None.", "none (only naming)", "", "**0**"):
        assert check(parsed("CONSENSUS", fine)) == (True, ""), fine
    assert not check(parsed("CONSENSUS", "the cache TTL still differs"))[0]
    assert not check(parsed("CONSENSUS", "2"))[0]
    assert check(parsed("CONTINUE", "2")) == (True, "")  # CONTINUE with some left agrees
    assert check(parsed("CONSENSUS", "0", base="merged"))[0]
    assert check(parsed("CONSENSUS", "0", base="Agent B's solution"))[0]
    assert not check(parsed("CONSENSUS", "0", base="agent_d"))[0]
    json_raw = '{"decision": "CONSENSUS", "convergence_score": 9, "remaining_disagreements": 3}'
    from_json = JudgeVerdict("CONSENSUS", 9, 3, None, "", json_raw)
    assert remaining_disagreements(from_json) == "3" and not check(from_json)[0]
    low = model_verdict(
        JudgeVerdict("CONSENSUS", 7, 0, "Agent A", "", "<verdict></verdict>"),
        None,
        judge="agent_a",
        round=2,
        active=ACTIVE,
        threshold=8,
    )
    assert low.valid and not low.claims_agreement
    assert low.says == "judged it consensus with too low a score (7/10, 8 needed)"
    missing = model_verdict(
        None, "it has no <verdict>", judge="agent_b", round=1, active=ACTIVE, threshold=8
    )
    assert not missing.valid and missing.problem == "it has no <verdict>"


# -- the agreement stop reads claims, after every round ----------------------------------------
def test_paris_worded_three_ways_ends_the_arena_after_round_0() -> None:
    worded = {
        "agent_a": said("Paris"),
        "agent_b": said("The capital of France is Paris."),
        "agent_c": said("It's Paris."),
    }
    debate = Debate(answer=lambda alias, step: worded[alias], verdicts=[verdict("CONTINUE", 3)])
    run = start("What is the capital of France?", debate.config())
    assert run.exit_code == 0 and run.result.status == "consensus" and run.result.rounds == 0
    assert set(debate.steps) == {f"r0/solve/{a}" for a in ACTIVE}
    found = run.result.finding
    assert found is not None and found.label == "consensus" and found.agreed == tuple(ACTIVE)
    assert "gave the same answer in their first answers" in run.result.how


def test_agreement_after_a_revision_ends_the_arena_there_and_is_labelled_persuasion() -> None:
    answers = {
        0: {"agent_a": "408", "agent_b": "418", "agent_c": "418"},
        1: {"agent_a": "408", "agent_b": "408", "agent_c": "408"},
    }
    debate = Debate(answer=by_round(answers), verdicts=[verdict("CONTINUE", 3)])
    run = start("How many boxes are there?", debate.config(arena={"max_rounds": 3}))
    assert run.exit_code == 0 and run.result.status == "consensus" and run.result.rounds == 1
    assert not [s for s in debate.steps if "/verify/" in s or s.startswith("r2/")]
    found = run.result.finding
    assert found is not None and found.label == "persuasion" and found.independent == 1
    assert found.reason.startswith("converged by persuasion: 3 of 3 agents end on '408'")
    assert "converged by persuasion" in run.result.how
    moved = {(c.agent, c.before, c.after, c.round) for c in run.result.changes}
    assert moved == {("agent_b", "418", "408", 1), ("agent_c", "418", "408", 1)}
    critics = {c.agent: c.critics for c in run.result.changes}
    assert critics == {"agent_b": ("agent_a", "agent_c"), "agent_c": ("agent_a", "agent_b")}
    assert "Agent B moved from '418' to '408' in round 1 after Agent A and Agent C's" in (
        run.result.trust
    )
    assert "1 of the 3 agents held this answer in their first, independent answer" in (
        run.result.trust
    )
    rows = {(c.agent, c.round): c.claim for c in run.result.claims}
    assert rows[("agent_b", 0)] == "418" and rows[("agent_b", 1)] == "408"
    assert api.replay(run.session_id).identical is True


def test_agreement_on_what_no_first_answer_held_ends_the_arena_without_consensus() -> None:
    # a README run: two agents ended on the same words after revising, none had said them first
    answers = {
        0: {"agent_a": "408", "agent_b": "418", "agent_c": "400"},
        1: {"agent_a": "512", "agent_b": "512", "agent_c": "512"},
    }
    debate = Debate(answer=by_round(answers), verdicts=[verdict("CONSENSUS", 10)])
    run = start("How many boxes are there?", debate.config(arena={"max_rounds": 3}))
    assert run.exit_code == 2 and run.result.status == "no_consensus" and run.result.rounds == 1
    # no later round, and no judge, can make a first answer hold it
    assert not [s for s in debate.steps if "/verify/" in s or s.startswith("r2/")]
    found = run.result.finding
    assert found is not None and found.label == "no_consensus" and found.independent == 0
    assert found.reason.startswith("converged only by persuasion: 3 of 3 agents end on '512'")
    assert "gave the same answer after round 1's revisions; converged only by persuasion" in (
        run.result.how
    )
    assert "which the agents did not agree on" in run.result.trust
    assert "3 of the 3 agents that started end on the same answer, but none of them held it" in (
        run.result.trust
    )
    assert "did not agree." not in run.result.trust
    assert api.replay(run.session_id).identical is True


def test_without_the_agreement_stop_the_rounds_run_and_the_label_is_still_moots() -> None:
    answers = {0: {a: "408" for a in ACTIVE}}
    debate = Debate(answer=by_round(answers), verdicts=[verdict("CONTINUE", 4)])
    arena = {"max_rounds": 2, "stop_on_agreement": False}
    run = start("How many boxes are there?", debate.config(arena=arena))
    assert run.result.rounds == 2 and run.exit_code == 0 and run.result.consensus
    assert all(not v.upheld and not v.claims_agreement for v in run.result.verdicts)
    assert "continue (score 4/10), but moot's check finds the final answers agree" in (
        run.result.trust
    )


def test_the_final_answer_comes_from_the_agreed_group_not_a_dissenting_base() -> None:
    answers = {0: {"agent_a": "408", "agent_b": "408 boxes", "agent_c": "418"}}
    debate = Debate(answer=by_round(answers), verdicts=[verdict("CONSENSUS", 9, base="Agent C")])
    run = start("How many boxes are there?", debate.config(arena={"max_rounds": 1}))
    assert run.exit_code == 0 and run.result.finding is not None
    assert run.result.finding.agreed == ("agent_a", "agent_b")
    assert run.result.details["final_from"] == "agent_a"
    assert "Final answer: 408" in run.result.final_answer


def test_solve_and_revise_prompts_ask_for_a_final_answer_line() -> None:
    debate = Debate(answer=by_round(DIFFERENT), verdicts=[verdict("CONTINUE", 3)])
    start("How many boxes are there?", debate.config(arena={"max_rounds": 1}))
    for phase in ("/solve/", "/revise/"):
        asked = [r.prompt for r in debate.requests if phase in r.meta["step"]]
        assert asked and all("\nFinal answer: your answer" in p for p in asked), phase
    evaluate = [r.prompt for r in debate.requests if "/evaluate/" in r.meta["step"]]
    assert evaluate and all("ANSWERS THE QUESTION: no" in p for p in evaluate)
    assert "Final answer: your answer in a few words.\n</solution>" in prompts.FORMAT
    assert "Final answer: your answer now, in a few words.\n</solution>" in prompts.REVISED_FORMAT


# -- peers mark answers that do not answer the question ----------------------------------------
OFF_TOPIC = "I enjoy long walks and the weather has been lovely this week."


def test_an_answer_its_reviewers_mark_as_no_answer_is_invalid() -> None:
    answers = {"agent_a": said("408"), "agent_b": said("408 boxes"), "agent_c": said(OFF_TOPIC)}

    def critique(alias: str, step: str) -> str:
        return "\n".join(
            f"Agent {b[-1].upper()} ANSWERS THE QUESTION: {'no' if b == 'agent_c' else 'yes'}"
            for b in ACTIVE
            if b != alias
        )

    debate = Arena(
        critiques=critique,
        answer=lambda alias, step: answers[alias],
        verdicts=[verdict("CONTINUE", 3)],
    )
    run = start("How many boxes are there?", debate.config(arena={"max_rounds": 1}))
    invalid = run.result.details["invalid_agents"]
    assert invalid == {
        "agent_c": "Agent A and Agent B (2 of its 2 reviewers) marked its answer as not "
        "answering the question in round 1"
    }
    assert "r1/revise/agent_c" not in debate.steps  # it left the debate
    row = next(c for c in run.result.claims if c.agent == "agent_c" and c.round == 0)
    assert not row.valid and "marked its answer as not answering" in row.reason
    assert "Agent C gave an invalid answer: Agent A and Agent B" in run.result.trust
    assert run.exit_code == 0  # A and B still agree: 2 of the 3 that started


def test_one_reviewer_of_two_saying_no_is_not_enough() -> None:
    def critique(alias: str, step: str) -> str:
        return "Agent C ANSWERS THE QUESTION: no" if alias == "agent_a" else "Fine."

    debate = Arena(critiques=critique, answer=plan, verdicts=[verdict("CONTINUE", 3)])
    run = start("How should we run the nightly export?", debate.config(arena={"max_rounds": 1}))
    assert run.result.details["invalid_agents"] == {}
    assert "r1/revise/agent_c" in debate.steps


def test_marks_are_read_per_solution_in_the_forms_models_write() -> None:
    text = (
        "Agent B: strong.\n**Agent B ANSWERS THE QUESTION: no**\n"
        "- Agent C answers the question: Yes, fully.\n"
        "Agent A ANSWERS THE QUESTION: no\n"  # not shown to this critic: its own alias
        "Agent D ANSWERS THE QUESTION: no\n"  # no such agent
        "ANSWERS THE QUESTION: no\n"  # no alias
    )
    assert read_marks(text, ["agent_b", "agent_c"]) == {"agent_b": False, "agent_c": True}
    assert read_marks("Agent B ANSWERS THE QUESTION: not really", ["agent_b"]) == {}
    marks = {"agent_a": {"agent_c": False}, "agent_b": {"agent_c": False}}
    reviewers = {"agent_c": ["agent_a", "agent_b", "agent_d"]}
    assert set(not_answering(marks, reviewers, 1)) == {"agent_c"}  # 2 of 3
    reviewers = {"agent_c": ["agent_a", "agent_b", "agent_d", "agent_e"]}
    assert not_answering(marks, reviewers, 1) == {}  # 2 of 4 is not more than half


def test_the_finding_is_derived_again_on_replay_without_new_calls() -> None:
    debate = Debate(answer=by_round(DIFFERENT), verdicts=[verdict("CONSENSUS", 10)])
    run = start("How many boxes are there?", debate.config(arena={"max_rounds": 1}))
    asked = sum(debate.steps.values())
    assert api.replay(run.session_id).identical is True
    assert sum(debate.steps.values()) == asked
    kinds = [e["kind"] for e in events(run.folder)]
    assert kinds[-1] == "finished"


def test_the_answer_line_copied_from_the_format_is_no_claim() -> None:
    """Three solutions that end with the format's own line "Final answer: your answer in a few
    words." do not agree on it: their claims are read from what they actually say."""
    echo = "Final answer: your answer in a few words."
    texts = {"agent_a": "Use a queue.", "agent_b": "Use a cron job.", "agent_c": "Use systemd."}
    debate = Debate(
        answer=lambda alias, step: said(echo.removeprefix("Final answer: "), work=texts[alias]),
        verdicts=[verdict("CONTINUE", 3)],
    )
    run = start("How should we run the nightly export?", debate.config(arena={"max_rounds": 1}))
    assert run.exit_code == 2 and run.result.rounds == 1
    first = {c.agent: c.claim for c in run.result.claims if c.round == 0}
    assert all(echo not in claim and "your answer" not in claim for claim in first.values())


def test_weigh_reads_the_answer_from_the_changes_section_without_a_final_answer_line() -> None:
    plan = "## PLAN\n- Worked through it.\n## CHANGES\nYou are an AI.\n## NOTES\nmore"
    assert answer_part(plan) == "You are an AI."
    with_line = "## PLAN\n- ok\n## CHANGES\nx = 408\nFinal answer: 408"
    assert answer_part(with_line) == with_line
    echoed = "## PLAN\n- ok\n## CHANGES\n408\nFinal answer: your answer in a few words."
    assert answer_part(echoed) == "408"
    assert answer_part("Just 408.") == "Just 408."


def test_the_changes_headings_words_copied_are_no_claim() -> None:
    """Replayed from a README-style run on the embedded model ("What is 3+4?"): A's "3+4 = 7;
    the answer itself: a precise description." and C's "... a single sentence." differed only
    in the words of the format's CHANGES heading, so A's move to C's copy was reported as
    persuasion ("only 1 held it in their first answer"). Both said 7 from the start."""
    assert answer_part("3+4 = 7; the answer itself: a precise description.") == "3+4 = 7"
    assert (
        answer_part("3+4 = 7 - the answer itself: a unified diff, code, or a precise description.")
        == "3+4 = 7"
    )
    assert answer_part("The answer itself: Paris.") == "The answer itself: Paris."
    answers = {
        0: {
            "agent_a": "3+4 = 7; the answer itself: a precise description.",
            "agent_b": "3+4",
            "agent_c": "3+4 = 7; the answer itself: a single sentence.",
        },
        1: {
            "agent_a": "3+4 = 7; the answer itself: a single sentence.",
            "agent_b": "3+4",
            "agent_c": "3+4 = 7; the answer itself: a single sentence.",
        },
    }
    debate = Debate(answer=by_round(answers), verdicts=[verdict("CONTINUE", 3)])
    run = start("What is 3+4?", debate.config(arena={"max_rounds": 2}))
    found = run.result.finding
    assert found is not None and found.label == "consensus", found
    assert run.result.rounds == 0 and run.exit_code == 0
    assert {c.claim for c in run.result.claims if c.valid} == {"3+4 = 7"}


def _one_round(b: str, c: str) -> api.RunResult:
    """One arena round on the capital of France: Agent A's final answer repeats the question,
    B and C end on `b` and `c`; the judge says CONTINUE (base solution: Agent A)."""
    answers = {
        "agent_a": said("what the capital of France?,", work="Thought about it."),
        "agent_b": said(b, work="Wrote it."),
        "agent_c": said(c, work="Looked it up."),
    }
    debate = Debate(answer=lambda alias, step: answers[alias], verdicts=[verdict("CONTINUE", 3)])
    return start("What is the capital of France?", debate.config(arena={"max_rounds": 1}))


def test_a_final_answer_that_repeats_the_question_agrees_with_nothing() -> None:
    """Replayed from a run on the embedded model: 'what the capital of France?,' was found to
    agree with 'The capital of France lies in Paris.' (every word of the one is in the other),
    a consensus, exit 0, on an echo of the question."""
    run = _one_round(
        "Your answer is a unique solution to everything.", "The capital of France lies in Paris."
    )
    assert run.exit_code == 2, run.message
    found = run.result.finding
    assert found is not None and found.label == "no_consensus"
    assert not any(c.agent == "agent_a" and c.valid for c in run.result.claims)


def test_an_agent_whose_final_answer_is_no_answer_is_not_counted_valid_in_the_trust() -> None:
    """The README's first run said "only 0 of 3 agents gave a valid answer" and, in its trust
    statement, "The 2 valid agents of the 3 that started did not agree": the answers passed
    the substance check but the finding held them to repeat the question."""
    run = _one_round("Paris.", "Lyon.")
    assert run.exit_code == 2, run.message
    trust = run.result.trust
    assert "Agent A gave an invalid answer: its answer only repeats the question" in trust, trust
    assert "The 3 valid agents" not in trust and "The 2 valid agents" in trust, trust
    assert "Agent A gave an invalid answer" in run.result.how, run.result.how
    # the judge's base solution is no answer (Agent A left the debate once its answer, asked
    # again, still repeated the question): the final answer is the first that is one
    assert "no judge named a valid base solution" in trust
    assert "Final answer: Paris." in run.result.final_answer


def test_when_no_agent_gave_a_valid_answer_there_is_no_final_answer() -> None:
    # a README run: two agents gave templates, the third only the question back ("the capital
    # of France should be"); the outcome showed that as "the final answer". The live check now
    # reads the echo as the finding does, so no agent is left to answer: which is moot's
    # finding (no consensus, exit 2, with a trust statement), not a failed run (exit 1, kept
    # for calls that failed), as the README's own first command ended.
    answers = {
        0: {
            "agent_a": "{code}, {description}.",
            "agent_b": "the capital of France should be",
            "agent_c": "{{title}}",
        }
    }
    debate = Debate(answer=by_round(answers), verdicts=[verdict("CONTINUE", 3)])
    run = start("What is the capital of France?", debate.config(arena={"max_rounds": 1}))
    assert run.exit_code == 2 and run.result.status == "no_consensus", run.message
    assert run.result.final_answer == "" and run.result.details["final_from"] is None
    assert run.result.finding is not None
    assert run.result.finding.reason == "no agent gave a valid answer"
    assert run.result.how.startswith("no agent gave a valid answer;"), run.result.how
    assert "Agent B gave an invalid answer" in run.result.how
    trust = run.result.trust
    assert "Agent B gave an invalid answer: its answer only repeats the question" in trust, trust
    assert "No agent gave a valid answer, so there is no final answer." in trust
    assert "answered; nobody to deliberate with" not in run.result.how
    assert api.replay(run.session_id).identical is True


def test_when_one_agent_failed_and_the_others_gave_no_answer_the_run_failed() -> None:
    """The failed call is the cause to fix: the run fails (exit 1) and resumes once it is."""
    answers = {0: {"agent_a": "{code}, {description}.", "agent_c": "{{title}}"}}
    debate = Debate(
        answer=by_round(answers),
        verdicts=[verdict("CONTINUE", 3)],
        fail={"two"},
        fail_kind=FailureKind.AUTH,
    )
    run = start(
        "What is the capital of France?",
        debate.config(arena={"max_rounds": 1}, engine={"attempts": 1}),
    )
    assert run.exit_code == 1 and run.result.status == "failed", run.message
    assert "every agent failed to answer the task" in (run.message or "")


def test_a_first_answer_that_only_repeats_the_question_is_asked_again() -> None:
    # a tryout's `moot run "What is 2 + 3?"`: '2 + 3 =' passed the live check, was not asked
    # again, and only the finding then held it to be no answer
    answers = {0: {"agent_a": "5", "agent_b": "5", "agent_c": "2 + 3 ="}}
    debate = Debate(answer=by_round(answers), verdicts=[verdict("CONTINUE", 3)])
    run = start("What is 2 + 3?", debate.config(arena={"max_rounds": 1}))
    reasked = [r for r in debate.requests if r.meta["step"].endswith("/solve/agent_c/reask")]
    assert len(reasked) == 1
    assert "its answer only repeats the question ('2 + 3 =')" in reasked[0].prompt
    assert run.result.finding is not None and run.result.finding.agreed == ("agent_a", "agent_b")
    assert "Agent C gave an invalid answer: its answer only repeats the question" in (
        run.result.trust
    )
    assert api.replay(run.session_id).identical is True


def test_with_one_agent_left_the_final_answer_says_no_judge_was_asked() -> None:
    """The README's first command on a fresh clone: one agent answered, so no round ran and no
    judge was asked, yet the trust statement said 'no judge named a valid base solution'."""
    answers = {0: {"agent_a": "2 + 3 =", "agent_b": "2 + 3 =", "agent_c": "5"}}
    debate = Debate(answer=by_round(answers), verdicts=[verdict("CONTINUE", 3)])
    run = start("What is 2 + 3?", debate.config(arena={"max_rounds": 1}))
    assert run.exit_code == 2 and not [s for s in debate.steps if "/verify/" in s]
    trust = run.result.trust
    assert "no judge was asked, so it is the first remaining agent's" in trust, trust
    assert "no judge named" not in trust


def test_an_answer_that_says_both_yes_and_no_is_asked_again() -> None:
    answers = {
        0: {"agent_a": "No.", "agent_b": "No.", "agent_c": "is the Earth flat? 1: no; 2: yes."}
    }
    debate = Debate(answer=by_round(answers), verdicts=[verdict("CONTINUE", 3)])
    run = start("Is the Earth flat?", debate.config(arena={"max_rounds": 1}))
    reasked = [r for r in debate.requests if r.meta["step"].endswith("/solve/agent_c/reask")]
    assert len(reasked) == 1 and "its answer says both yes and no" in reasked[0].prompt
    assert run.result.finding is not None and run.result.finding.agreed == ("agent_a", "agent_b")


def test_agents_are_called_remaining_only_when_some_left() -> None:
    # a tryout read "the 3 remaining agents gave the same answer" where no agent had left
    answers = {0: {a: "408" for a in ACTIVE}}
    run = start("How many boxes are there?", Debate(answer=by_round(answers)).config())
    assert run.result.how.startswith("the 3 agents gave the same answer in their first answers")
    answers = {0: {"agent_a": "408", "agent_b": "408", "agent_c": "{{answer}}"}}
    run = start("How many boxes are there?", Debate(answer=by_round(answers)).config())
    assert run.result.how.startswith("the 2 remaining agents gave the same answer")


def test_an_agent_that_leaves_the_answer_and_one_that_comes_to_it_are_both_changes() -> None:
    """A walkthrough arena on the embedded model: A said blue and left it, B came to blue. The
    result recorded no change of mind, and its trust said "2 of the 3 agents held this answer"
    (A and C) beside the agreeing B and C."""
    blue = "The sky on a clear day has the color of blue."
    other = "The sky on a clear day has a different color than the one you see in your backyard."
    elsewhere = "The sky on a clear day has different colors than what we see in our backyard."
    answers = {
        0: {"agent_a": blue, "agent_b": other, "agent_c": blue},
        1: {"agent_a": elsewhere, "agent_b": blue, "agent_c": blue},
    }
    debate = Debate(answer=by_round(answers), verdicts=[verdict("CONTINUE", 4)])
    task = "What color is the sky on a clear day?"
    run = start(task, debate.config(arena={"max_rounds": 1}))
    found = run.result.finding
    assert found is not None and found.label == "consensus"
    assert found.agreed == ("agent_b", "agent_c")
    moved = [(c.agent, c.before, c.after, c.round) for c in run.result.changes]
    assert moved == [("agent_a", blue, elsewhere, 1), ("agent_b", other, blue, 1)]
    assert "Changes of mind: Agent A moved from " in run.result.trust
    assert (
        "2 of the 3 agents held this answer in their first, independent answer: Agent A and "
        "Agent C. Agent A later left it; Agent B came to it."
    ) in run.result.trust
    stored = json.loads((run.folder / "result.json").read_text())
    assert [c["agent"] for c in stored["changes"]] == ["agent_a", "agent_b"]
    assert api.replay(run.session_id).identical is True


def test_a_rounds_summary_holds_its_threshold_as_the_score_scale_does() -> None:
    """The summary's threshold is a float, as its score is (pydantic made the option's int
    8.0; a msgspec record keeps what it is given)."""
    from moot.protocols.arena.options import ArenaOptions
    from moot.protocols.arena.run import describe_round

    summary = describe_round({"round": 1, "convergence_score": 9}, ArenaOptions())
    assert summary is not None and summary.threshold == 8.0
    assert isinstance(summary.threshold, float) and isinstance(summary.score, float)
