"""moot's finding: consensus needs more than half of all agents that started agreeing by moot's
check; a model's verdict is evidence; persuasion is told apart from independent agreement."""

from __future__ import annotations

import pytest

from moot.deliberation.finding import judge_answers, majority, names
from moot.text import change_line, parted
from moot.types import ChangeOfMind, ModelVerdict

ABC = ["agent_a", "agent_b", "agent_c"]


def judge(
    says: str = "called it consensus (10/10)", *, agrees: bool = True, by: str = "Agent B"
) -> ModelVerdict:
    return ModelVerdict(by=by, role="judge", says=says, claims_agreement=agrees)


def test_majority_is_more_than_half() -> None:
    assert not majority(2, 4)
    assert majority(3, 4)
    assert majority(2, 3)
    assert not majority(1, 2)
    assert not majority(0, 0)


def test_a_judges_consensus_over_differing_numbers_is_not_consensus() -> None:
    j = judge_answers(
        [{"agent_a": "408", "agent_b": "418", "agent_c": "400"}], started=ABC, verdicts=[judge()]
    )
    assert not j.consensus
    assert j.finding.label == "no_consensus"
    assert j.finding.reason == (
        "Agent B called it consensus (10/10); the final answers differ: 408 (A); 418 (B); 400 (C)"
    )
    assert j.verdicts[0].upheld is False
    assert "does not bear it out" in " ".join(j.sentences())


def test_a_judge_confirms_what_the_wording_cannot_but_never_a_contradiction() -> None:
    unsure = {
        "agent_a": "Shorter wavelengths scatter more strongly off the molecules of the air.",
        "agent_b": "Blue light is bent and spread around by gas in the atmosphere more than red.",
        "agent_c": "Longer wavelengths scatter more strongly off the molecules of the air.",
    }
    alone = judge_answers([unsure], started=ABC)
    assert not alone.consensus
    confirmed = judge_answers([unsure], started=ABC, verdicts=[judge(by="Agent C")])
    assert confirmed.consensus
    assert confirmed.finding.confirmed_by == "Agent C"
    assert confirmed.finding.agreed == ("agent_a", "agent_b")
    contradicted = judge_answers(
        [{"agent_a": "It is safe.", "agent_b": "It is not safe.", "agent_c": "Not safe."}],
        started=ABC,
        verdicts=[judge()],
    )
    assert contradicted.finding.agreed == ("agent_b", "agent_c")


def test_paraphrases_make_a_consensus_without_any_judge() -> None:
    j = judge_answers(
        [{"agent_a": "Paris", "agent_b": "It's Paris.", "agent_c": "The capital is Paris."}],
        started=ABC,
    )
    assert j.finding.label == "consensus"
    assert j.finding.claim == "Paris"
    assert j.finding.agreed == tuple(ABC)


def test_two_of_four_is_a_tie_not_a_majority() -> None:
    four = [*ABC, "agent_d"]
    j = judge_answers(
        [{"agent_a": "408", "agent_b": "418", "agent_c": "408", "agent_d": "418"}], started=four
    )
    assert j.finding.label == "tie"
    assert j.finding.claim is None
    assert j.finding.reason == "a tie: '408' (A, C) against '418' (B, D)"


def test_failed_agents_count_against_the_majority() -> None:
    j = judge_answers([{"agent_a": "Paris", "agent_b": None}], started=[*ABC, "agent_d"])
    assert not j.consensus
    assert j.finding.valid == 1
    assert j.finding.reason.startswith("only 1 of 4 agents gave a valid answer")
    rows = {(c.agent, c.valid) for c in j.claims}
    assert ("agent_b", False) in rows


def test_agreement_reached_by_giving_up_answers_is_persuasion() -> None:
    j = judge_answers(
        [
            {"agent_a": "408", "agent_b": "418", "agent_c": "418"},
            {"agent_a": "408", "agent_b": "408", "agent_c": "408"},
        ],
        started=ABC,
    )
    assert j.consensus
    assert j.finding.label == "persuasion"
    assert j.finding.independent == 1
    # (no critique was read: the protocol passed none; moot names the answer they moved toward)
    assert "Agent B and Agent C moved from '418' to '408' in round 1, toward Agent A's answer" in (
        j.finding.reason
    )
    assert [(c.agent, c.round, c.toward) for c in j.changes] == [
        ("agent_b", 1, ("agent_a",)),
        ("agent_c", 1, ("agent_a",)),
    ]


def test_giving_up_a_sum_for_junk_with_more_numbers_is_a_change_of_mind() -> None:
    """A real run on the embedded model (`moot run "What is 2+2?"`) ended "consensus", exit 0:
    B's "2+2=4" was read as agreeing with the junk it moved to, every number of it being there,
    so B counted as holding the final answer from the start and its move was not shown."""
    junk = "2+2=10; 3*4 = 15; 6*7 = 18},"
    j = judge_answers(
        [
            {"agent_a": "2+2=10; 3*4 = 18; 5*6 = 72}", "agent_b": "2+2=4", "agent_c": junk},
            {"agent_a": junk, "agent_b": junk, "agent_c": junk},
        ],
        started=ABC,
        task="What is 2+2?",
    )
    assert j.finding.label == "persuasion" and j.finding.independent == 1
    assert "Agent B moved from '2+2=4'" in j.finding.reason
    assert {c.agent for c in j.changes} == {"agent_a", "agent_b"}


def test_an_independent_majority_is_consensus_even_if_one_agent_moved() -> None:
    j = judge_answers(
        [
            {"agent_a": "408", "agent_b": "408", "agent_c": "418"},
            {"agent_a": "408", "agent_b": "408", "agent_c": "408"},
        ],
        started=ABC,
        critics={("agent_c", 1): ["agent_a", "agent_b"]},
    )
    assert j.finding.label == "consensus"
    assert j.finding.independent == 2
    (change,) = j.changes
    assert change.critics == ("agent_a", "agent_b")


def test_rewording_is_not_a_change_of_mind() -> None:
    j = judge_answers(
        [
            {"agent_a": "Paris", "agent_b": "Paris"},
            {"agent_a": "The capital is Paris.", "agent_b": "It's Paris."},
        ],
        started=["agent_a", "agent_b"],
    )
    assert j.changes == ()
    assert j.finding.label == "consensus"


def test_an_invalid_verdict_is_named_and_weighs_nothing() -> None:
    bad = ModelVerdict(
        by="Judge A",
        role="judge",
        says="called it consensus",
        claims_agreement=True,
        valid=False,
        problem="it says CONSENSUS and lists 23 remaining disagreements",
    )
    unsure = {
        "agent_a": "Shorter wavelengths scatter more strongly off the molecules of the air.",
        "agent_b": "Blue light is bent and spread around by gas in the atmosphere more than red.",
    }
    j = judge_answers([unsure], started=["agent_a", "agent_b"], verdicts=[bad])
    assert not j.consensus
    assert "Judge A's verdict was invalid" in " ".join(j.sentences())


def test_no_agents_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match=r"^no agents started: pass every agent that started"):
        judge_answers([{}], started=[])


def test_a_judge_that_denies_agreement_moot_finds_is_named_too() -> None:
    j = judge_answers(
        [{"agent_a": "Paris", "agent_b": "It's Paris."}],
        started=["agent_a", "agent_b"],
        verdicts=[judge("scored the convergence 3/10", agrees=False)],
    )
    assert j.consensus
    assert j.verdicts[0].upheld is False
    assert (
        "Agent B scored the convergence 3/10, but moot's check finds the final answers agree."
        in (j.sentences())
    )


def test_answers_a_judge_confirmed_from_the_start_are_independent_not_persuaded() -> None:
    plans = {
        "agent_a": "Shorter wavelengths scatter more strongly off the molecules of the air.",
        "agent_b": "Blue light is bent and spread around by gas in the atmosphere more than red.",
        "agent_c": "Air molecules scatter the short blue wavelengths of sunlight the most.",
    }
    j = judge_answers([plans, plans], started=ABC, verdicts=[judge()])
    assert j.finding.label == "consensus"
    assert j.finding.independent == 3
    assert j.changes == ()


def test_majority_needs_someone_to_have_started() -> None:
    assert majority(1, 1)
    assert not majority(1, 0)


def test_names_join_with_commas_and_a_final_and() -> None:
    assert names([]) == ""
    assert names(["agent_a"]) == "Agent A"
    assert names(["agent_a", "agent_b"]) == "Agent A and Agent B"
    assert names(["agent_a", "agent_b", "agent_c"]) == "Agent A, Agent B and Agent C"


def test_an_unsure_first_answer_did_not_hold_the_agreed_answer_without_a_judge() -> None:
    j = judge_answers(
        [
            {"agent_a": "Paris", "agent_b": "The Eiffel Tower city.", "agent_c": "Lyon"},
            {"agent_a": "Paris", "agent_b": "Paris", "agent_c": "Paris"},
        ],
        started=ABC,
    )
    assert j.finding.label == "persuasion"
    assert j.finding.independent == 1


def test_persuasion_speaks_in_the_given_names_and_quotes_moves_short() -> None:
    long_a = "The total is 408 after counting every crate in the east warehouse twice."
    long_b = "The total is 418 after counting every crate in the west warehouse once."
    j = judge_answers(
        [
            {"x": long_a, "y": long_b, "z": long_b},
            {"x": long_a, "y": long_a, "z": long_a},
        ],
        started=["x", "y", "z"],
        name=str.upper,
    )
    assert j.finding.label == "persuasion"
    assert j.finding.reason == (
        f"converged by persuasion: 3 of 3 agents end on '{long_a}' (X, Y and Z), but only 1 held "
        "it in their first answer; Y and Z moved from 'The total is 418 after counting every...' "
        "to 'The total is 408 after counting every...' in round 1, toward X's answer"
    )


def test_a_judge_widens_groups_in_the_order_the_agents_started() -> None:
    unsure = {
        "agent_a": "Shorter wavelengths scatter more strongly off the molecules of the air.",
        "agent_b": "Blue light is bent and spread around by gas in the atmosphere more than red.",
        "agent_c": "Longer wavelengths scatter more strongly off the molecules of the air.",
    }
    j = judge_answers(
        [unsure], started=["agent_c", "agent_b", "agent_a"], verdicts=[judge(by="Agent A")]
    )
    assert j.finding.agreed == ("agent_c", "agent_b")


def test_a_judge_vouches_for_no_pair_that_holds_its_own_answer() -> None:
    """A README run on the embedded model: the judge, Agent A, called its own junk and B's
    answer a consensus, and the confirmation made it one ('2 of 3 agree'), exit 0."""
    final = {
        "agent_a": "fabricate the code ; fix errors in production",
        "agent_b": "The answer to what should be in French: The capital of France is Paris.",
    }
    own = judge_answers(
        [final], started=ABC, verdicts=[judge(by="Agent A")], task="What is the capital?"
    )
    assert own.finding.label == "no_consensus" and own.finding.confirmed_by is None
    other = judge_answers(
        [final], started=ABC, verdicts=[judge(by="Agent C")], task="What is the capital?"
    )
    assert other.finding.agreed == ("agent_a", "agent_b")  # another's word still counts


def test_a_claim_of_exactly_the_quote_limit_is_shown_whole() -> None:
    sixty = "x" * 60
    j = judge_answers([{"agent_a": sixty, "agent_b": "408"}], started=["agent_a", "agent_b"])
    assert j.finding.reason == f"the final answers differ: {sixty} (A); 408 (B)"
    assert j.finding.started == 2


def test_a_tie_quotes_long_claims_at_sixty_characters() -> None:
    a = "Use SQLite for the session store, because the load is a single writer at a time."
    b = "Use Postgres for the session store, because the load has many writers at a time."
    j = judge_answers(
        [{"agent_a": a, "agent_b": b, "agent_c": a, "agent_d": b}],
        started=["agent_a", "agent_b", "agent_c", "agent_d"],
    )
    assert j.finding.label == "tie"
    assert j.finding.reason == (f"a tie: '{a[:57]}...' (A, C) against '{b[:57]}...' (B, D)")


def test_a_consensus_reason_names_the_claim_and_its_agents() -> None:
    j = judge_answers([{"agent_a": "408", "agent_b": "Answer: 408", "agent_c": "418"}], started=ABC)
    f = j.finding
    assert f.label == "consensus"
    assert (
        f.reason
        == "2 of 3 agents' final answers agree on '408' (Agent A and Agent B), by moot's check"
    )
    assert f.claim == "408"
    assert f.agreed == ("agent_a", "agent_b")
    assert f.groups == (("408", ("agent_a", "agent_b")), ("418", ("agent_c",)))
    assert (f.started, f.valid, f.independent, f.confirmed_by) == (3, 3, None, None)
    # one round: nothing to say about independence, nobody moved
    assert j.sentences() == []
    assert j.outcome_fields() == {
        "finding": f,
        "claims": j.claims,
        "changes": (),
        "verdicts": (),
    }
    assert [(c.agent, c.round, c.claim, c.valid) for c in j.claims] == [
        ("agent_a", 0, "408", True),
        ("agent_b", 0, "408", True),
        ("agent_c", 0, "418", True),
    ]


def test_a_confirmed_consensus_names_its_confirmer_and_how_many_held_it_first() -> None:
    unsure = {
        "agent_a": "Shorter wavelengths scatter more strongly off the molecules of the air.",
        "agent_b": "Blue light is bent and spread around by gas in the atmosphere more than red.",
        "agent_c": "Longer wavelengths scatter more strongly off the molecules of the air.",
    }
    first = judge(agrees=True)
    last = ModelVerdict(by="Judge C", role="judge", says="said they agree", claims_agreement=True)
    j = judge_answers([unsure, unsure], started=ABC, verdicts=[first, last])
    f = j.finding
    assert f.label == "consensus"
    assert f.confirmed_by == "Judge C"
    assert f.reason == (
        "2 of 3 agents' final answers agree on 'Shorter wavelengths scatter more strongly off the "
        "molecules of the air.' (Agent A and Agent B), confirmed by Judge C, and nothing in them "
        "contradicts"
    )
    assert f.independent == 2
    assert j.sentences() == [
        "2 of the 3 agents held this answer in their first, independent answer: Agent A and "
        "Agent B."
    ]
    assert [v.upheld for v in j.verdicts] == [True, True]


def test_a_judge_is_not_needed_where_the_wording_already_makes_a_majority() -> None:
    j = judge_answers(
        [{"agent_a": "Paris", "agent_b": "Paris", "agent_c": "Lyon"}],
        started=ABC,
        verdicts=[judge()],
    )
    assert j.finding.label == "consensus"
    assert j.finding.confirmed_by is None
    assert j.finding.reason.endswith("by moot's check")


def test_a_judge_cannot_widen_a_group_past_what_stays_a_minority() -> None:
    unsure = {
        "agent_a": "Shorter wavelengths scatter more strongly off the molecules of the air.",
        "agent_b": "Blue light is bent and spread around by gas in the atmosphere more than red.",
    }
    j = judge_answers([unsure], started=[*ABC, "agent_d"], verdicts=[judge()])
    assert j.finding.label == "no_consensus"
    assert j.finding.confirmed_by is None
    assert j.finding.groups == (
        ("Shorter wavelengths scatter more strongly off the molecules of the air.", ("agent_a",)),
        (
            "Blue light is bent and spread around by gas in the atmosphere more than red.",
            ("agent_b",),
        ),
    )
    assert j.verdicts[0].upheld is False


def test_a_judge_that_says_they_differ_confirms_nothing() -> None:
    unsure = {
        "agent_a": "Shorter wavelengths scatter more strongly off the molecules of the air.",
        "agent_b": "Blue light is bent and spread around by gas in the atmosphere more than red.",
    }
    j = judge_answers(
        [unsure], started=["agent_a", "agent_b"], verdicts=[judge("said they differ", agrees=False)]
    )
    assert j.finding.label == "no_consensus"
    assert j.finding.reason.startswith("the final answers differ: ")
    assert j.verdicts[0].upheld is True
    assert j.sentences() == []


def test_persuasion_names_who_moved_and_after_whose_critique() -> None:
    j = judge_answers(
        [
            {"agent_a": "408", "agent_b": "418", "agent_c": "400"},
            {"agent_a": "408", "agent_b": "408", "agent_c": "408"},
        ],
        started=ABC,
        critics={("agent_b", 1): ["agent_c"]},
    )
    f = j.finding
    assert f.label == "persuasion"
    assert f.consensus
    assert f.reason == (
        "converged by persuasion: 3 of 3 agents end on '408' (Agent A, Agent B and Agent C), but "
        "only 1 held it in their first answer; Agent B moved from '418' to '408' in round 1 after "
        "Agent C's critique; Agent C moved from '400' to '408' in round 1 after Agent A's critique"
    )
    assert j.sentences() == [
        "Changes of mind: Agent B moved from '418' to '408' in round 1 after Agent C's critique; "
        "Agent C moved from '400' to '408' in round 1 after Agent A's critique.",
        "1 of the 3 agents held this answer in their first, independent answer: Agent A. "
        "Agent B and Agent C came to it.",
    ]
    assert [(c.agent, c.before, c.after, c.toward, c.critics) for c in j.changes] == [
        ("agent_b", "418", "408", ("agent_a",), ("agent_c",)),
        ("agent_c", "400", "408", ("agent_a",), ("agent_a",)),
    ]


def test_agreement_that_no_first_answer_held_is_no_consensus() -> None:
    # a README run: two SmolLM2 agents ended on the same junk, one having said Paris first;
    # nobody held their final claim before reading the others, so moot says less
    j = judge_answers(
        [
            {"agent_a": "408", "agent_b": "418", "agent_c": "400"},
            {"agent_a": "408", "agent_b": "512", "agent_c": "512"},
        ],
        started=ABC,
        verdicts=[judge()],
        critics={("agent_b", 1): ["agent_c"]},
    )
    f = j.finding
    assert f.label == "no_consensus" and not f.consensus and not j.consensus
    assert f.claim is None and f.agreed == () and f.independent == 0
    assert f.reason == (
        "Agent B called it consensus (10/10); converged only by persuasion: 2 of 3 agents end on "
        "'512' (Agent B and Agent C), but none of them held it in their first, independent "
        "answer, so moot cannot tell their agreement from an echo; Agent B moved from '418' to "
        "'512' in round 1 after Agent C's critique; Agent C moved from '400' to '512' in round 1"
    )
    assert f.groups == (("512", ("agent_b", "agent_c")), ("408", ("agent_a",)))
    assert j.verdicts[0].upheld is False  # the judge's consensus is not borne out
    assert "0 of the 3 agents held" not in " ".join(j.sentences())


def test_agreement_after_no_valid_first_answer_is_no_consensus() -> None:
    j = judge_answers(
        [
            {"agent_a": None, "agent_b": "", "agent_c": None},
            {"agent_a": "408", "agent_b": "408", "agent_c": "408"},
        ],
        started=ABC,
    )
    assert j.finding.label == "no_consensus" and j.finding.independent == 0
    assert j.finding.reason.startswith(
        "converged only by persuasion: 3 of 3 agents end on '408' (Agent A, Agent B and Agent C)"
    )


EXPORT = "How should the export run?"


@pytest.mark.parametrize(
    ("first", "final"),
    [
        # every part of the agreed plan was some first answer's
        (
            {
                "agent_a": "Run the export from a queue worker that retries failed batches.",
                "agent_b": "Schedule it nightly and alert the on-call engineer on failure.",
                "agent_c": "Keep the exporter idempotent so a rerun after a crash is harmless.",
            },
            "Queue worker, nightly, idempotent.",
        ),
        # half of it (nightly, idempotent), the rest the deliberation's
        (
            {
                "agent_a": None,
                "agent_b": "Schedule it nightly and alert the on-call engineer on failure.",
                "agent_c": "Keep the exporter idempotent so a rerun after a crash is harmless.",
            },
            "Queue worker, nightly, idempotent.",
        ),
    ],
)
def test_a_synthesis_of_the_first_answers_is_persuasion(
    first: dict[str, str | None], final: str
) -> None:
    j = judge_answers([first, dict.fromkeys(ABC, final)], started=ABC, task=EXPORT)
    assert j.finding.label == "persuasion" and j.finding.independent == 0
    assert j.finding.consensus


SAFEST = "Which option is safest: A, B or C?"


@pytest.mark.parametrize(
    ("first", "final", "task"),
    [
        # a number none of them gave, beside words they did
        (
            {"agent_a": "Use a 30 ms timeout.", "agent_b": "Use a 3 s timeout."},
            "Use a 300 ms timeout.",
            None,
        ),
        # an option none of them picked, in the words they used
        (
            {"agent_a": "Option A is safest.", "agent_b": "Option B is safest."},
            "Option C is safest.",
            SAFEST,
        ),
        # words none of them wrote: one of them had answered, the other talked
        (
            {"agent_a": "The capital of France is Paris.", "agent_b": "Lyon."},
            "Bananas are yellow and curved.",
            None,
        ),
        # only one word in three of what they wrote
        (
            {"agent_a": "Queue worker.", "agent_b": "Cron job."},
            "Queue function with alerting.",
            None,
        ),
        # the denial of a first answer, made of its words (the README's run at fc774c5)
        (
            {
                "agent_a": "The capital of France is Paris.",
                "agent_b": "A: In this task you need to write a clear answer.",
            },
            "The capital of France is not Paris.",
            "What is the capital of France?",
        ),
    ],
)
def test_agreement_on_what_the_first_answers_did_not_give_is_no_consensus(
    first: dict[str, str | None], final: str, task: str | None
) -> None:
    two = ["agent_a", "agent_b"]
    j = judge_answers([first, dict.fromkeys(two, final)], started=two, task=task)
    assert j.finding.label == "no_consensus" and j.finding.independent == 0
    assert j.finding.reason.startswith("converged only by persuasion: 2 of 2 agents end on")


def test_agreement_in_the_first_and_only_round_stays_consensus() -> None:
    # one round: the answers are the first, independent ones
    j = judge_answers([{"agent_a": "408", "agent_b": "408", "agent_c": "400"}], started=ABC)
    assert j.finding.label == "consensus" and j.finding.independent is None


def test_persuasion_without_a_change_of_mind_says_only_how_many_held_it() -> None:
    # b and c had no valid first answer: they did not move, yet did not hold it independently
    j = judge_answers(
        [
            {"agent_a": "408", "agent_b": None, "agent_c": ""},
            {"agent_a": "408", "agent_b": "408", "agent_c": "408"},
        ],
        started=ABC,
        reasons={"agent_b": "it timed out"},
    )
    assert j.finding.label == "persuasion"
    assert j.finding.reason == (
        "converged by persuasion: 3 of 3 agents end on '408' (Agent A, Agent B and Agent C), but "
        "only 1 held it in their first answer"
    )
    assert j.changes == ()
    assert [(c.agent, c.round, c.claim, c.valid, c.reason) for c in j.claims] == [
        ("agent_a", 0, "408", True, ""),
        ("agent_b", 0, "", False, "it timed out"),
        ("agent_c", 0, "", False, "no valid answer"),
        ("agent_a", 1, "408", True, ""),
        ("agent_b", 1, "408", True, ""),
        ("agent_c", 1, "408", True, ""),
    ]


def test_a_change_of_mind_without_critics_or_a_model_to_follow() -> None:
    j = judge_answers(
        [
            {"agent_a": "408", "agent_b": "408", "agent_c": "418"},
            {"agent_d": "400", "agent_a": "408", "agent_b": "408", "agent_c": "400"},
        ],
        started=[*ABC, "agent_d"],
    )
    (change,) = j.changes
    assert (change.agent, change.toward, change.critics) == ("agent_c", (), ())
    assert j.sentences() == ["Changes of mind: Agent C moved from '418' to '400' in round 1."]
    assert j.finding.label == "tie"


def test_a_change_of_mind_is_judged_against_the_round_just_before() -> None:
    j = judge_answers(
        [
            {"agent_a": "408", "agent_b": "418"},
            {"agent_a": "408", "agent_b": "418"},
            {"agent_a": "408", "agent_b": "408"},
        ],
        started=["agent_a", "agent_b"],
    )
    assert [(c.agent, c.round, c.toward) for c in j.changes] == [("agent_b", 2, ("agent_a",))]


def test_two_single_answers_are_no_tie() -> None:
    j = judge_answers([{"agent_a": "408", "agent_b": "418"}], started=["agent_a", "agent_b"])
    assert j.finding.label == "no_consensus"
    assert j.finding.reason == "the final answers differ: 408 (A); 418 (B)"
    assert j.finding.claim is None
    assert j.finding.agreed == ()


def test_a_tie_lists_every_group_of_the_largest_size() -> None:
    six = [f"agent_{x}" for x in "abcdef"]
    j = judge_answers(
        [
            {
                "agent_a": "408",
                "agent_b": "408",
                "agent_c": "418",
                "agent_d": "418",
                "agent_e": "400",
                "agent_f": "400",
            }
        ],
        started=six,
        verdicts=[judge()],
    )
    assert j.finding.label == "tie"
    assert j.finding.reason == (
        "Agent B called it consensus (10/10); a tie: '408' (A, B) against '418' (C, D) "
        "against '400' (E, F)"
    )
    assert j.finding.valid == 6


def test_a_tie_names_agents_by_the_given_names() -> None:
    j = judge_answers(
        [{"x": "408", "y": "418", "z": "408", "w": "418"}],
        started=["x", "y", "z", "w"],
        name=str.upper,
    )
    assert j.finding.reason == "a tie: '408' (X, Z) against '418' (Y, W)"


def test_with_no_valid_answer_the_reason_says_so() -> None:
    j = judge_answers([{"agent_a": None, "agent_b": "  "}], started=["agent_a", "agent_b"])
    assert j.finding.reason == "no agent gave a valid answer"  # not "only 0 of 2 agents"
    assert j.finding.valid == 0
    assert j.finding.groups == ()
    empty = judge_answers([], started=["agent_a"])
    assert empty.finding.reason == "no valid answer was given"
    assert empty.claims == ()


def test_one_valid_answer_of_two_is_named() -> None:
    j = judge_answers([{"agent_a": "Paris", "agent_b": None}], started=["agent_a", "agent_b"])
    assert j.finding.reason == "only 1 of 2 agents gave a valid answer (Paris (A))"


def test_long_claims_are_quoted_short_and_printable() -> None:
    long = "word " * 30 + "soft\u00adhyphen"
    j = judge_answers([{"agent_a": long, "agent_b": "408"}], started=["agent_a", "agent_b"])
    shown = j.finding.reason.removeprefix("the final answers differ: ")
    assert shown == "word " * 11 + "wo... (A); 408 (B)"
    j = judge_answers([{"agent_a": long, "agent_b": long, "agent_c": "408"}], started=ABC)
    assert j.finding.reason.startswith("2 of 3 agents' final answers agree on '" + "word " * 15)
    assert "'" + "word " * 15 + "wo...' (Agent A and Agent B)" in j.finding.reason
    # an invisible character is shown as "?" in a quote, kept in the claim
    assert j.finding.claim == "word " * 30 + "soft\u00adhyphen"
    short = judge_answers(
        [{"agent_a": "soft\u00adhyphen", "agent_b": "408"}], started=["agent_a", "agent_b"]
    )
    assert short.finding.reason == "the final answers differ: soft?hyphen (A); 408 (B)"


def test_an_invalid_verdict_is_kept_as_it_came() -> None:
    bad = ModelVerdict(
        by="Judge A",
        role="judge",
        says="called it consensus",
        claims_agreement=True,
        valid=False,
        problem="it says CONSENSUS and lists 23 remaining disagreements",
    )
    j = judge_answers(
        [{"agent_a": "408", "agent_b": "418"}], started=["agent_a", "agent_b"], verdicts=[bad]
    )
    assert j.verdicts == (bad,)
    assert j.finding.reason == "the final answers differ: 408 (A); 418 (B)"
    assert j.sentences() == [
        "Judge A's verdict was invalid: it says CONSENSUS and lists 23 remaining disagreements."
    ]


def test_an_answer_that_only_repeats_the_question_is_no_answer() -> None:
    """The embedded model answered 'what the capital of France?,' and it agreed with 'The
    capital of France lies in Paris.': a consensus, exit 0, on an echo of the question."""
    task = "What is the capital of France?"
    answers = {
        "agent_a": "what the capital of France?,",
        "agent_b": "Your answer is a unique solution to everything.",
        "agent_c": "The capital of France lies in Paris.",
    }
    j = judge_answers([answers], started=ABC, task=task)
    assert not j.consensus
    assert j.finding.valid == 2
    (echo,) = [c for c in j.claims if c.agent == "agent_a"]
    assert not echo.valid
    assert echo.reason == "its answer only repeats the question ('what the capital of France?,')"
    # without the task the echo is a claim like any other
    assert judge_answers([answers], started=ABC).finding.valid == 3


def test_an_answer_that_says_both_yes_and_no_is_no_answer() -> None:
    """A tryout's `moot run "Is the Earth flat?"` ended 'consensus', exit 0, 3 of 3 on 'is the
    Earth flat? #1: no; #2: yes.': the question, numbered, with both answers."""
    task = "Is the Earth flat?"
    both = "is the Earth flat? #1: no; #2: yes."
    answers = {"agent_a": both, "agent_b": both, "agent_c": "No, it is round."}
    j = judge_answers([answers], started=ABC, task=task)
    assert not j.consensus and j.finding.valid == 1
    assert {c.agent: c.reason for c in j.claims if not c.valid} == {
        a: f"its answer says both yes and no ('{both}')" for a in ("agent_a", "agent_b")
    }
    # a yes and a no beside words of its own answer; without the task nothing is judged
    for said in ("Yes and no: it is an oblate spheroid.", "No, not flat; yes, round.", "Yes."):
        assert judge_answers([{**answers, "agent_a": said}], started=ABC, task=task).claims[0].valid
    assert judge_answers([answers], started=ABC).finding.valid == 3


def test_a_bare_number_is_no_answer_to_a_yes_or_no_question() -> None:
    """A tryout's council on "Is 7 a prime number?" took '5' and '2' for answers."""
    task = "Is 7 a prime number?"
    answers = {"agent_a": "5", "agent_b": "5", "agent_c": "Yes, 7 is prime."}
    j = judge_answers([answers], started=ABC, task=task)
    assert not j.consensus and j.finding.valid == 1
    assert [c.reason for c in j.claims if not c.valid] == [
        "its answer is a bare number to a yes/no question ('5')"
    ] * 2
    # a number with its unit answers; so does a bare number to a question that asks for one
    over = {"agent_a": "6 GB", "agent_b": "6 GB", "agent_c": "No."}
    assert judge_answers([over], started=ABC, task="Is it over 5 GB?").consensus
    sums = {"agent_a": "5", "agent_b": "5", "agent_c": "4"}
    assert judge_answers([sums], started=ABC, task="What is 2 + 3?").consensus
    assert judge_answers([answers], started=ABC).finding.valid == 3


def test_a_bare_number_is_no_answer_to_a_question_that_asks_for_a_name() -> None:
    """A new user's court run on "What is the capital of Italy?": the embedded model's
    positions ',1234567890,' and '2' (a control character before it) were valid answers."""
    task = "What is the capital of Italy?"
    answers = {"agent_a": ",1234567890,", "agent_b": "\x152", "agent_c": "Rome."}
    j = judge_answers([answers], started=ABC, task=task)
    assert j.finding.valid == 1
    assert [c.reason for c in j.claims if not c.valid] == [
        "its answer is a bare number to a question that asks for a name (',1234567890,')",
        "its answer is a bare number to a question that asks for a name ('2')",
    ]
    for named in (
        "Who wrote Hamlet?",
        "Which country has the most people?",
        "What's the name of the third planet?",
        "Context: a map. Question: whose flag is red?",
    ):
        assert judge_answers([answers], started=ABC, task=named).finding.valid == 1, named
    # a question about a quantity, a year or a port takes a bare number; so does one whose
    # name-like word is not what it asks for
    numbers = {"agent_a": "2", "agent_b": "2", "agent_c": "2"}
    for counted in (
        "How many moons does Mars have?",
        "What year did the war end?",
        "Which port does Postgres listen on?",
        "What is the boiling point of water in Celsius?",
        "In which country's capital is the number of districts largest, and how many?",
        "What is 3+4?",
    ):
        assert judge_answers([numbers], started=ABC, task=counted).consensus, counted


def test_an_unfinished_sum_of_the_question_is_no_answer() -> None:
    """A tryout's `moot run "What is 2 + 3?"` ended "consensus", exit 0, 3 of 3 agreeing on
    '2 + 3 =': the question's numbers, with nothing after the sign, agreed with '2 + 3 = 5'."""
    answers = {"agent_a": "2 + 3 =", "agent_b": "2 + 3 =", "agent_c": "2 + 3 = 5"}
    j = judge_answers([answers], started=ABC, task="What is 2 + 3?")
    assert not j.consensus
    assert j.finding.valid == 1
    assert {c.agent for c in j.claims if not c.valid} == {"agent_a", "agent_b"}


def test_a_move_is_quoted_where_the_two_answers_part() -> None:
    # the README's first run printed "moved from '{{Your answer in a few words}}, Your …' to
    # '{{Your answer in a few words}}, Your …'": the texts differed only after the cut
    head = "The total after counting every crate in the east and west warehouses is "
    before, after = head + "418 crates.", head + "408 crates."
    j = judge_answers(
        [{"x": after, "y": before}, {"x": after, "y": after}], started=["x", "y"], name=str.upper
    )
    moved = next(s for s in j.sentences() if s.startswith("Changes of mind"))
    assert "'…warehouses is 418 crates.' to '…warehouses is 408 crates.'" in moved
    change = ChangeOfMind(agent="agent_b", before=before, after=after, round=1, critics=())
    line = change_line(change)
    assert "'…west warehouses is 418 crates.' to '…west warehouses is 408 crates.'" in line
    # texts that part within the quote are quoted from their start
    assert parted("418 crates", "408 crates", 40) == ("418 crates", "408 crates")


SKY = "What color is the sky on a clear day?"
BLUE = "The sky on a clear day has the color of blue."
OTHER = "The sky on a clear day has a different color than the one you see in your backyard."
ELSE = "The sky on a clear day has different colors than what we see in our backyard."


def test_a_move_between_answers_the_finding_groups_apart_is_a_change_of_mind() -> None:
    """A walkthrough arena on the embedded model: A said blue first and left it, B came to it.
    The finding put A's final answer apart from B's and C's, yet no change of mind was recorded:
    the change check wanted a contradiction where the grouping wants agreement."""
    j = judge_answers(
        [
            {"agent_a": BLUE, "agent_b": OTHER, "agent_c": BLUE},
            {"agent_a": ELSE, "agent_b": BLUE, "agent_c": BLUE},
        ],
        started=ABC,
        critics={("agent_a", 1): ["agent_b", "agent_c"], ("agent_b", 1): ["agent_a", "agent_c"]},
        task=SKY,
    )
    assert [g for _, g in j.finding.groups] == [("agent_b", "agent_c"), ("agent_a",)]
    assert [(c.agent, c.before, c.after, c.round) for c in j.changes] == [
        ("agent_a", BLUE, ELSE, 1),
        ("agent_b", OTHER, BLUE, 1),
    ]
    # B's move is toward the answer C held (and A held) a round before
    assert j.changes[1].toward == ("agent_a", "agent_c")


def test_the_trust_names_who_held_the_answer_first_who_left_it_and_who_came_to_it() -> None:
    j = judge_answers(
        [
            {"agent_a": BLUE, "agent_b": OTHER, "agent_c": BLUE},
            {"agent_a": ELSE, "agent_b": BLUE, "agent_c": BLUE},
        ],
        started=ABC,
        task=SKY,
    )
    assert j.finding.label == "consensus" and j.finding.agreed == ("agent_b", "agent_c")
    assert (
        "2 of the 3 agents held this answer in their first, independent answer: Agent A and "
        "Agent C. Agent A later left it; Agent B came to it."
    ) in j.sentences()


def test_an_answer_worded_anew_but_agreeing_is_no_change_of_mind() -> None:
    j = judge_answers(
        [{"agent_a": BLUE, "agent_b": BLUE}, {"agent_a": "It is blue.", "agent_b": BLUE}],
        started=["agent_a", "agent_b"],
        task=SKY,
    )
    assert j.finding.label == "consensus" and j.changes == ()
    assert j.sentences() == [
        "2 of the 2 agents held this answer in their first, independent answer: Agent A and "
        "Agent B."
    ]


def test_a_rewording_moot_cannot_confirm_that_keeps_its_point_is_no_change_of_mind() -> None:
    """'Use Postgres for the sessions.' to 'Postgres, because sessions need durable storage.'
    neither agrees nor contradicts by moot's check, yet keeps its point (Postgres): a move is
    claimed only where the claims, the task's words aside, share no word, or the new one takes
    up another agent's; a move that claims too much is worse than one left unsaid."""
    task = "How should the service store its sessions?"
    pg, reworded = (
        "Use Postgres for the sessions.",
        "Postgres, because sessions need durable storage.",
    )
    files = "Write each session to a file under /var/lib/app, one file per user."
    j = judge_answers(
        [{"agent_a": pg, "agent_b": files}, {"agent_a": reworded, "agent_b": files}],
        started=["agent_a", "agent_b"],
        task=task,
    )
    assert j.changes == ()
    # the task's own words are no common ground: 'sessions' is the task's
    j = judge_answers(
        [{"agent_a": pg, "agent_b": files}, {"agent_a": files, "agent_b": files}],
        started=["agent_a", "agent_b"],
        task=task,
    )
    assert [(c.agent, c.toward) for c in j.changes] == [("agent_a", ("agent_b",))]
    j = judge_answers(
        [
            {"agent_a": "Keep the sessions in Redis.", "agent_b": files},
            {"agent_a": "Sessions go in a memcached cluster.", "agent_b": files},
        ],
        started=["agent_a", "agent_b"],
        task=task,
    )
    assert [(c.agent, c.toward) for c in j.changes] == [("agent_a", ())]
