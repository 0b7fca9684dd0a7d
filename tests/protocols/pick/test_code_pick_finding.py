"""A pick is a choice, not a consensus (issue 29): its finding is labelled `chosen` (by a human
or a judge), the judge's pick is a model verdict weighed as evidence, a judge that names no
usable change is an invalid verdict, and the exit codes stay (0 picked, 2 none)."""

from __future__ import annotations

import json
from pathlib import Path

from moot import api
from tests.code.test_code_tasks import (  # noqa: F401 (fixtures)
    TASK,
    agents_file,
    by_spec,
    choose_first,
    config,
    git_env,
    repo,
)
from tests.scripts import no_sleep


def _label(alias: str) -> str:
    return "Agent " + alias.rsplit("_", 1)[-1].upper()


def test_a_judges_pick_is_evidence_and_the_label_is_chosen(
    repo: Path,  # noqa: F811
    agents_file: Path,  # noqa: F811
) -> None:
    specs = [f"scripted:{agents_file}#{name}" for name in ("good", "wrong")]
    judge = f"scripted:{agents_file}#judge"
    run = api.start(TASK, config(specs, repo, pick={"by": "judge", "judge": judge}), sleep=no_sleep)
    assert run.exit_code == 0 and run.result.status == "consensus"  # a winner to apply
    good = by_spec(run)["good"]
    finding = run.result.finding
    assert finding is not None and finding.label == "chosen" and not finding.consensus
    assert (
        finding.reason
        == f"a judge model chose {_label(good)}'s change; no agent reviewed another's"
    )
    (verdict,) = run.result.verdicts
    assert (verdict.by, verdict.role, verdict.valid) == ("Judge A", "judge", True)
    assert verdict.says == f"picked {_label(good)}'s change" and not verdict.claims_agreement
    assert run.result.status_words == "change chosen"
    stored = json.loads((run.folder / "result.json").read_text())
    assert stored["finding"]["label"] == "chosen" and stored["verdicts"][0]["role"] == "judge"


def test_a_judge_that_names_no_usable_change_is_an_invalid_verdict_and_exits_2(
    repo: Path,  # noqa: F811
    agents_file: Path,  # noqa: F811
) -> None:
    """Both changes fail verification: the scripted judge answers 'WINNER: None'."""
    specs = [f"scripted:{agents_file}#wrong"] * 2
    judge = f"scripted:{agents_file}#judge"
    run = api.start(TASK, config(specs, repo, pick={"by": "judge", "judge": judge}), sleep=no_sleep)
    assert run.exit_code == 2 and run.result.status == "no_consensus"
    finding = run.result.finding
    assert finding is not None and finding.label == "no_consensus"
    assert finding.reason.startswith("no change was chosen: it named no winner")
    (verdict,) = run.result.verdicts
    assert not verdict.valid and "no 'WINNER: Agent X' line" in verdict.problem


def test_a_human_pick_changes_only_its_label(
    repo: Path,  # noqa: F811
    agents_file: Path,  # noqa: F811
) -> None:
    specs = [f"scripted:{agents_file}#{name}" for name in ("good", "wrong")]
    run = api.start(TASK, config(specs, repo), sleep=no_sleep, chooser=choose_first)
    assert run.exit_code == 0 and run.result.status == "consensus" and run.result.consensus
    winner = run.result.details["winner"]
    finding = run.result.finding
    assert finding is not None and finding.label == "chosen"
    assert finding.reason.startswith(f"a human chose {_label(winner)}'s change")
    assert run.result.verdicts == [] and run.result.claims == []
    none = api.start(TASK, config(specs, repo, pick={"by": "none"}), sleep=no_sleep)
    assert none.exit_code == 2
    assert none.result.finding is not None and none.result.finding.label == "no_consensus"
