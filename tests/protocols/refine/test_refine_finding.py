"""refine's end is "converged", never a consensus (issue 29): the finding says the judges
preferred the final text k passes in a row, each judge's ranking is a model verdict weighed as
evidence, and a synthesis that says what the revision says is never invalid for leaving out the
incumbent's answer that the revision contradicts."""

from __future__ import annotations

import json

from moot.types import Request
from tests.protocols.refine.test_refine_trust import Scripted
from tests.refine_scripts import INITIAL, Refinery, shown
from tests.scripts import start

TASK = "How should the service store its sessions?"


def test_converged_is_done_and_says_the_judges_preferred_the_text_never_consensus() -> None:
    def prefer(p: int, j: int) -> list[str] | str:
        if p == 1 and j == 3:
            return '{"ranking": ["X", "X", "Y"]}'  # no permutation: an invalid verdict
        return ["A", "AB", "B"]

    r = Refinery(prefer)
    run = start(TASK, r.config(judges=3, convergence_k=2))
    assert run.exit_code == 0, run.message  # done
    result = run.result
    assert not result.consensus
    assert result.finding is not None and result.finding.label == "converged"
    assert result.finding.reason == "converged: the judges preferred this text 2 passes in a row"
    assert result.finding.claim is not None and "store sessions in a table" in result.finding.claim
    assert "the judges preferred this text 2 passes in a row" in result.how
    assert "Converged: the judges preferred this text 2 passes in a row" in result.trust
    assert "consensus" not in result.trust.lower() and "consensus" not in result.how.lower()
    assert result.final_answer == INITIAL
    # every ranking is evidence; the duplicate ranking is an invalid verdict
    assert len(result.verdicts) == 6 and {v.role for v in result.verdicts} == {"judge"}
    (invalid,) = [v for v in result.verdicts if not v.valid]
    assert invalid.round == 1 and "must name each of" in invalid.problem
    assert any(v.says == "ranked A over AB over B in pass 2" for v in result.verdicts)
    assert not any(v.claims_agreement for v in result.verdicts)
    stored = json.loads((run.folder / "result.json").read_text())
    assert stored["finding"]["label"] == "converged" and stored["consensus"] is False


def test_not_converged_is_no_consensus_and_exits_2() -> None:
    r = Refinery(lambda p, j: ["B", "A", "AB"])  # a new incumbent every pass
    run = start(TASK, r.config(judges=1, convergence_k=2, max_passes=2))
    assert run.exit_code == 2 and run.result.status == "no_consensus"
    finding = run.result.finding
    assert finding is not None and finding.label == "no_consensus"
    assert finding.reason.startswith("not converged: the judges preferred the incumbent 0 of the 2")


def test_a_synthesis_that_sides_with_the_revision_is_not_invalid_for_dropping_the_incumbent() -> (
    None
):
    """A says yes, B says no: they agree on nothing, so a synthesis that says what B says is a
    valid candidate. It used to be invalid for leaving out 'run', a word of A's answer."""
    task = "Is it safe to run the migration on Friday?"
    r = Scripted(
        lambda p, j: ["AB", "B", "A"] if p == 1 else ["A", "B", "AB"],
        texts={
            "author": lambda n: "Yes, it is safe to run the migration on Friday.",
            "revise": lambda n: "No, it is not safe to run the migration on Friday.",
            "synthesize": lambda n: "No: the migration is not safe on Friday.",
        },
        name="sides-with-b",
    )
    run = start(task, r.setup(max_passes=2))
    first = run.result.details["rounds"][0]
    assert "issues" not in first, first.get("issues")
    assert first["borda"]["candidates"] == ["A", "B", "AB"] and first["winner"] == "AB"
    assert run.result.final_answer == "No: the migration is not safe on Friday."
    # each writer's claim, by pass: the first text, then B and AB of each pass
    said = [(c.round, c.claim, c.valid) for c in run.result.claims]
    assert said[0] == (0, "Yes, it is safe to run the migration on Friday.", True)
    assert (1, "No, it is not safe to run the migration on Friday.", True) in said
    assert (1, "No: the migration is not safe on Friday.", True) in said
    # a synthesis that drops what A and B both say is still invalid (test_refine_trust)


class Echoing(Refinery):
    """Author B hands the incumbent back in other case and punctuation; judges rank it first."""

    def answer(self, request: Request, phase: str, number: int, judge: int) -> str:
        if phase == "revise":
            return INITIAL.upper().replace(":", " -")
        if phase == "judge":
            labels = shown(request.prompt)
            order = sorted(labels, key=lambda lb: labels[lb] != INITIAL.upper().replace(":", " -"))
            return json.dumps({"ranking": order, "reason": "scripted"})
        return super().answer(request, phase, number, judge)


def test_a_challenger_that_only_repeats_the_incumbent_keeps_its_streak() -> None:
    """It used to become the new incumbent and reset the streak, so refine never converged on a
    text its writers kept handing back."""
    r = Echoing(lambda p, j: ["A"])
    run = start(TASK, r.config(judges=1, convergence_k=2, max_passes=3))
    assert run.exit_code == 0, run.message
    finding = run.result.finding
    assert finding is not None and finding.label == "converged"
    assert run.result.final_answer == INITIAL
