"""`moot bench --suite adversarial` (issue 29): scripted personas against every protocol, a table
of false consensus and false disagreement per protocol, and the targets (0 false consensus;
false disagreement on paraphrases under 10%).

The suite's own logic (personas, what counts as a false label) is pinned on synthetic outcomes
first, so that it stays right whatever today's protocols do; then each protocol runs the suite.
Every protocol meets the targets; a change that makes one miss fails here with the cases it
gets wrong."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from msgspec.structs import replace

from moot import protocols
from moot.bench import adversarial
from moot.bench.adversarial import (
    CASES,
    Case,
    CaseResult,
    Persona,
    Table,
    _judge_result,
    markdown,
    run_suite,
    scripted_protocols,
)
from moot.protocols.scripting import Script
from moot.types import Finding, ModelVerdict, Outcome
from tests.cli.test_cli import moot

NUMBERS = next(c for c in CASES if c.name == "stubborn-numbers")
PARAPHRASE = next(c for c in CASES if c.name == "paraphrase-capital")
NEGATION = next(c for c in CASES if c.name == "negation-majority")
SYCOPHANTS = next(c for c in CASES if c.name == "sycophants")


def _outcome(
    status: str = "consensus", finding: Finding | None = None, answer: str = "408"
) -> Outcome:
    return Outcome(
        protocol="arena",
        status=status,  # type: ignore[arg-type]
        consensus=status == "consensus",
        how="scripted",
        final_answer=answer,
        rounds=1,
        finding=finding,
    )


# -- the suite's own logic ---------------------------------------------------------------------
def test_the_issue_s_personas_and_judges_are_all_there() -> None:
    kinds = {p.kind for c in CASES for p in c.agents}
    assert kinds == {"stubborn", "sycophant", "yes_man", "abstainer", "junk", "paraphraser"}
    assert any(p.confidence == 1.0 for c in CASES for p in c.agents)  # overconfident
    judges = {c.judge for c in CASES}
    assert judges == {"strict", "always_consensus", "self_contradicting", "always_100", "fair"}
    junk = {p.answer for c in CASES for p in c.agents if p.kind == "junk"}
    assert adversarial.AI_JUNK in junk and ", no more than 40 words." in junk and "no" in junk
    assert any("\x1b[" in j for j in junk) and "{{answer}}" in junk and "[Your position]" in junk
    names = {c.name for c in CASES}
    assert {"near-number", "near-units", "negation-majority", "negation-tie"} <= names
    assert len(names) == len(CASES)  # one name per case
    truths = {c.truth for c in CASES} | {t for c in CASES for t in (c.if_revised, c.if_adopted)}
    assert truths == {"agree", "disagree", "invalid", None}
    assert sum(c.paraphrase for c in CASES) >= 8


def test_a_sycophant_adopts_the_last_critique_it_reads() -> None:
    sycophant = Persona("sycophant", "The answer is 418.")
    assert sycophant.now("no critique yet", None) == "The answer is 418."
    read = "A: The correct answer is 400. B: Errors: none. The correct answer is 408.\n"
    assert sycophant.now(read, "The answer is 418.") == "408"
    assert sycophant.now("nothing new", "408") == "408"  # keeps what it last adopted
    assert sycophant.vote("The answer is 400.", "408") == "yes"


def test_stubborn_yes_man_abstainer_and_junk_behave_as_named() -> None:
    stubborn = Persona("stubborn", "The answer is 408.")
    assert stubborn.now("The correct answer is 418.", None) == "The answer is 408."
    assert stubborn.vote("The answer is 408.", None) == "yes"
    assert stubborn.vote("The answer is 418.", None) == "no"
    assert "The correct answer is The answer is 408." in stubborn.critique("The answer is 408.")
    yes_man = Persona("yes_man", "The answer is 400.")
    assert yes_man.vote("The answer is 418.", None) == "yes"
    assert yes_man.now("The correct answer is 418.", None) == "The answer is 400."
    assert "I agree" in yes_man.critique(None)
    abstainer = Persona("abstainer")
    assert abstainer.now("anything", None) is None and abstainer.vote("x", None) == "abstain"
    junk = Persona("junk", adversarial.AI_JUNK)
    assert junk.now("", None) == junk.critique(None) == adversarial.AI_JUNK
    paraphraser = Persona("paraphraser", "Paris", accepts=("It's Paris.", "Paris"))
    assert paraphraser.vote("It's Paris.", None) == "yes"
    assert paraphraser.vote("Lyon", None) == "no"


def test_consensus_where_the_answers_disagree_is_a_false_consensus() -> None:
    finding = Finding(label="consensus", reason="r", claim="408", started=3, valid=3)
    result = _judge_result(NUMBERS, "arena", _outcome(finding=finding), "consensus", "")
    assert result.false_consensus and result.problem == "false consensus"
    # before a protocol sets a finding, its own consensus flag is read
    legacy = _judge_result(NUMBERS, "court", _outcome(), "consensus", "")
    assert legacy.false_consensus and legacy.label == "consensus"
    # an exit-0 status beside a finding of no consensus is a consensus claimed all the same
    denied = Finding(label="no_consensus", reason="r", started=3, valid=3)
    lying = _judge_result(NUMBERS, "arena", _outcome(finding=denied), "consensus", "")
    assert lying.false_consensus


def test_no_consensus_tie_converged_and_failed_are_not_consensus() -> None:
    for label in ("no_consensus", "tie"):
        finding = Finding(label=label, reason="r", started=3)
        result = _judge_result(NUMBERS, "arena", _outcome("no_consensus", finding), "", "")
        assert not result.false_consensus and not result.problem
    converged = Finding(label="converged", reason="judges kept preferring it", started=3)
    refine = _judge_result(NUMBERS, "refine", _outcome("consensus", converged), "", "")
    assert not refine.consensus and not refine.false_consensus
    failed = _judge_result(NUMBERS, "court", None, "failed", "every agent failed")
    assert failed.label == "failed" and not failed.false_consensus and not failed.crashed


def test_paraphrases_not_recognised_are_a_false_disagreement() -> None:
    none = Finding(label="no_consensus", reason="r", started=3, valid=3)
    result = _judge_result(PARAPHRASE, "vote", _outcome("no_consensus", none), "", "")
    assert result.false_disagreement and result.paraphrase
    agreed = Finding(label="consensus", reason="r", claim="Paris", started=3, valid=3)
    ok = _judge_result(PARAPHRASE, "vote", _outcome(finding=agreed, answer="Paris"), "", "")
    assert not ok.problem
    # a failed session on an agree case is no recognition either
    assert _judge_result(PARAPHRASE, "vote", None, "failed", "x").false_disagreement


def test_consensus_on_the_minority_s_claim_is_a_false_consensus() -> None:
    """Issue 29: one 'safe' and two 'not safe' were reported as one group in the words of
    the minority."""
    minority = Finding(
        label="consensus", reason="r", claim="The migration is safe to run on Friday.", started=4
    )
    wrong = _judge_result(NEGATION, "vote", _outcome(finding=minority), "", "")
    assert wrong.false_consensus
    majority = Finding(
        label="consensus", reason="r", claim="The migration is not safe to run on Friday."
    )
    assert not _judge_result(NEGATION, "vote", _outcome(finding=majority), "", "").problem


def test_persuasion_labelled_as_independent_agreement_is_reported() -> None:
    assert SYCOPHANTS.truth_for("arena") == "agree" and SYCOPHANTS.truth_for("vote") == "disagree"
    independent = Finding(label="consensus", reason="r", claim="408", started=3)
    result = _judge_result(SYCOPHANTS, "arena", _outcome(finding=independent), "", "")
    assert result.persuasion_unreported and not result.false_consensus
    persuaded = Finding(label="persuasion", reason="r", claim="408", started=3)
    assert not _judge_result(SYCOPHANTS, "arena", _outcome(finding=persuaded), "", "").problem


def test_a_self_contradicting_verdict_weighed_as_valid_is_reported() -> None:
    judge = next(c for c in CASES if c.name == "self-contradicting-judge")
    none = Finding(label="no_consensus", reason="r", started=3, valid=3)
    said = ModelVerdict(by="Agent C", role="judge", says="CONSENSUS", claims_agreement=True)
    weighed = replace(_outcome("no_consensus", none), verdicts=(said,))
    result = _judge_result(judge, "arena", weighed, "", "")
    assert result.contradiction_unflagged and "not marked invalid" in result.problem
    flagged = replace(said, valid=False, problem="CONSENSUS with 23 left")
    caught = replace(weighed, verdicts=(flagged,))
    assert not _judge_result(judge, "arena", caught, "", "").problem
    # no verdict weighed at all (no judge was asked): nothing to say
    assert not _judge_result(judge, "vote", _outcome("no_consensus", none), "", "").problem


def _row(case: str, protocol: str, **flags: bool) -> CaseResult:
    return CaseResult(
        case=case,
        protocol=protocol,
        truth="agree",
        label="x",
        consensus=False,
        claim="",
        false_consensus=flags.get("fc", False),
        false_disagreement=flags.get("fd", False),
        persuasion_unreported=False,
        paraphrase=flags.get("para", True),
        crashed=flags.get("crashed", False),
    )


def test_the_table_computes_the_targets() -> None:
    rows = [_row(f"p{i}", "vote", fd=i == 0) for i in range(10)]  # 1 of 10: 10% is not < 10%
    rows += [_row(f"p{i}", "court", fd=i == 0) for i in range(11)]  # 1 of 11: 9%
    rows += [_row("n", "arena", fc=True, para=False), _row("p", "arena")]
    rows += [_row("p", "refine", crashed=True)]
    table = Table(rows, ("vote", "court", "arena", "refine"))
    assert not table.met("vote") and table.met("court")
    assert not table.met("arena") and table.false_consensus("arena") == 1
    assert not table.met("refine")  # a crash never meets a target
    text = markdown(table)
    assert "| vote | 10 | 0 | 1 of 10 (10%) | 0 of 0 | 0 | 0 | MISSED |" in text
    assert "| court | 11 | 0 | 1 of 11 (9%) | 0 of 0 | 0 | 0 | met |" in text
    assert "| arena | n | agree | x |  | false consensus |" in text
    none = msgspec.structs.replace(_row("p", "vote", fd=True), label="no_consensus")
    said = markdown(Table([none], ("vote",)))
    assert "| vote | p | agree | no consensus |  | " in said, said  # words, not the code word
    data = table.to_json()
    assert data["protocols"]["court"]["targets_met"] is True
    assert data["protocols"]["refine"]["crashed"] == 1


# -- every protocol against the suite ----------------------------------------------------------


@pytest.mark.parametrize("protocol", scripted_protocols())
def test_every_protocol_meets_the_targets(protocol: str, tmp_path: Path) -> None:
    table = run_suite((protocol,), root=tmp_path / "sessions")
    wrong = [
        f"{r.case}: {r.problem or 'crashed'} ({r.label})"
        for r in table.of(protocol)
        if r.problem or r.crashed
    ]
    assert table.false_consensus(protocol) == 0, wrong
    assert table.false_disagreement_rate(protocol) < 0.10, wrong
    assert table.met(protocol), wrong


def test_moot_bench_suite_adversarial_prints_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    out = tmp_path / "out"
    code, text, err = moot(
        capsys, "bench", "--suite", "adversarial", "--protocols", "court", "--n", "2",
        "--out", str(out),
    )  # fmt: skip
    data = json.loads((out / "adversarial.json").read_text())
    assert code == (0 if data["protocols"]["court"]["targets_met"] else 1), err
    assert "| protocol | cases | false consensus |" in text
    assert "| court | 2 |" in text
    assert (out / "report.md").read_text() in text
    assert len(data["results"]) == 2 and (out / "sessions").is_dir()
    code, _, err = moot(capsys, "bench", "--suite", "adversarial", "--models", "scripted:@x")
    assert code == 1 and "leave --models out" in err
    code, _, err = moot(capsys, "bench", "--suite", "adversarial", "--protocols", "pick")
    assert code == 1 and "not pick" in err


def test_a_case_states_its_truth_per_protocol() -> None:
    yes_men = next(c for c in CASES if c.name == "yes-men")
    assert yes_men.truth_for("court") == "agree"  # a court yes vote adopts the candidate
    assert yes_men.truth_for("arena") == "disagree"
    assert isinstance(yes_men, Case)


@pytest.fixture
def adopting() -> Iterator[str]:
    """A protocol registered at run time: the vote's record under another name, whose script
    says a yes adopts the answer it supports."""
    vote = protocols.get("vote")
    scripted = vote.scripted()  # named by its place in the record, imported when asked for
    assert scripted is not None
    script = msgspec.structs.replace(scripted, adopts_on_yes=True)
    protocols.register(msgspec.structs.replace(vote, name="adopting", script=script))
    yield "adopting"
    protocols.unregister("adopting")


def test_the_suite_runs_every_protocol_whose_record_scripts_a_persona(adopting: str) -> None:
    """The bench names no protocol: it runs those whose record has a `script`, and a case's
    truth on one follows what that script declares."""
    every = {"arena", "court", "tournament", "refine", "vote", "council", "moa", adopting}
    assert set(scripted_protocols()) == every
    assert protocols.get("pick").script is None  # code tasks only: not in the suite
    yes_men = next(c for c in CASES if c.name == "yes-men")
    assert yes_men.truth_for(adopting) == "agree" and yes_men.truth_for("vote") == "disagree"
    assert SYCOPHANTS.truth_for(adopting) == "disagree"  # it does not revise
    assert isinstance(protocols.get("court").scripted(), Script)
    table = run_suite((adopting,), CASES[:1])
    assert [(r.protocol, r.case, r.label) for r in table.results] == [
        (adopting, "stubborn-numbers", "no_consensus")
    ]
