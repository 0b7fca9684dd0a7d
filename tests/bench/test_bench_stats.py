"""moot.bench.statistics, checked against scipy and statsmodels on fixed data."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats  # type: ignore[import-untyped]
from statsmodels.stats.contingency_tables import mcnemar  # type: ignore[import-untyped]
from statsmodels.stats.proportion import proportion_confint  # type: ignore[import-untyped]

from moot.bench.statistics import (
    audit_sample,
    bootstrap_interval,
    compare,
    count_flips,
    mcnemar_exact,
    swap_audit,
    wilson_interval,
)


def _paired(both: int, only_first: int, only_second: int, neither: int) -> tuple[list[bool], ...]:
    """Two outcome vectors with the given 2x2 table, shuffled by a fixed seed."""
    rows = (
        [(True, True)] * both
        + [(True, False)] * only_first
        + [(False, True)] * only_second
        + [(False, False)] * neither
    )
    random.Random(7).shuffle(rows)
    return [a for a, _ in rows], [b for _, b in rows]


@pytest.mark.parametrize(
    ("successes", "n", "confidence"),
    [
        (77, 100, 0.95),
        (85, 100, 0.95),
        (0, 10, 0.95),
        (10, 10, 0.95),
        (1, 3, 0.9),
        (412, 500, 0.99),
    ],
)
def test_wilson_matches_statsmodels(successes: int, n: int, confidence: float) -> None:
    low, high = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
    interval = wilson_interval(successes, n, confidence)
    assert interval.low == pytest.approx(low, abs=1e-12)
    assert interval.high == pytest.approx(high, abs=1e-12)
    assert interval.estimate == successes / n and interval.method == "wilson"


def test_wilson_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match="at least one question"):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match="between 0 and n=5"):
        wilson_interval(6, 5)
    with pytest.raises(ValueError, match=r"0\.95 for 95%"):
        wilson_interval(1, 5, confidence=95)


def test_bootstrap_agrees_with_scipy_and_is_seeded() -> None:
    rng = random.Random(3)
    outcomes = [rng.random() < 0.7 for _ in range(120)]
    ours = bootstrap_interval(outcomes, resamples=20_000, seed=1)
    theirs = stats.bootstrap(
        (np.array(outcomes, dtype=float),),
        np.mean,
        n_resamples=20_000,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(1),
    ).confidence_interval
    # Different generators: the ends agree to Monte Carlo error, not to the digit.
    assert ours.low == pytest.approx(theirs.low, abs=0.01)
    assert ours.high == pytest.approx(theirs.high, abs=0.01)
    assert ours.estimate == pytest.approx(sum(outcomes) / 120)
    assert bootstrap_interval(outcomes, resamples=2_000, seed=1) == bootstrap_interval(
        outcomes, resamples=2_000, seed=1
    )
    # With few resamples the seed shows (with many, the ends settle on the same k/120).
    assert bootstrap_interval(outcomes, resamples=40, seed=2) != bootstrap_interval(
        outcomes, resamples=40, seed=1
    )
    # Roughly the Wilson interval at this size.
    wilson = wilson_interval(sum(outcomes), 120)
    assert abs(ours.low - wilson.low) < 0.03 and abs(ours.high - wilson.high) < 0.03


def test_bootstrap_edges() -> None:
    assert bootstrap_interval([True] * 5, resamples=50).low == 1.0
    with pytest.raises(ValueError, match="empty"):
        bootstrap_interval([])


@pytest.mark.parametrize(
    "table",
    [
        (60, 17, 8, 15),
        (70, 3, 12, 15),
        (50, 0, 0, 50),
        (40, 5, 5, 50),
        (10, 0, 9, 1),
        (0, 40, 21, 0),
    ],
)
def test_mcnemar_matches_statsmodels(table: tuple[int, int, int, int]) -> None:
    both, only_first, only_second, neither = table
    first, second = _paired(*table)
    result = mcnemar_exact(first, second)
    expected = mcnemar([[both, only_first], [only_second, neither]], exact=True).pvalue
    assert result.p_value == pytest.approx(expected, rel=1e-12)
    assert (result.only_first, result.only_second) == (only_first, only_second)
    assert result.questions == sum(table) and result.discordant == only_first + only_second


def test_mcnemar_large_and_mismatched() -> None:
    first, second = _paired(1000, 700, 640, 1000)
    expected = stats.binomtest(640, 1340, 0.5).pvalue
    assert mcnemar_exact(first, second).p_value == pytest.approx(expected, rel=1e-9)
    with pytest.raises(ValueError, match="same questions: got 3 and 2"):
        mcnemar_exact([True, True, False], [True, False])


def test_verdict_when_the_protocol_wins() -> None:
    debate, vote = _paired(60, 25, 5, 10)
    result = compare("arena", debate, "vote", vote)
    assert result.direction == "better"
    assert result.sentence == (
        "arena is better than vote (85.0% against 65.0% on the same 100 questions; "
        "McNemar exact p < 0.001 at level 0.05)."
    )


def test_verdict_when_vote_wins() -> None:
    debate, vote = _paired(60, 4, 20, 16)
    result = compare("court", debate, "vote", vote, alpha=0.01)
    assert result.direction == "worse" and result.test.p_value < 0.01
    assert result.sentence.startswith("court is worse than vote (64.0% against 80.0%")
    assert result.sentence.endswith(f"p = {result.test.p_value:.3f} at level 0.01).")


def test_verdict_when_there_is_no_difference() -> None:
    debate, vote = _paired(70, 9, 7, 14)
    result = compare("refine", debate, "vote", vote)
    assert result.direction == "no measurable gain"
    assert result.sentence == (
        "refine shows no measurable gain over vote (79.0% against 77.0% on the same 100 "
        f"questions; McNemar exact p = {result.test.p_value:.3f} at level 0.05)."
    )
    assert result.test.p_value > 0.5
    # A gain that exists but is too small for these questions is still no measurable gain.
    better, worse = _paired(70, 8, 3, 19)
    small = compare("refine", better, "vote", worse)
    assert small.direction == "no measurable gain" and small.accuracy > small.baseline_accuracy


def test_compare_refuses_nothing() -> None:
    with pytest.raises(ValueError, match="nothing to compare"):
        compare("arena", [], "vote", [])
    with pytest.raises(ValueError, match="alpha"):
        compare("arena", [True], "vote", [True], alpha=5)


def test_flips_per_round() -> None:
    # Three agents over three rounds on one question, one agent on another question.
    trajectories: list[list[bool | None]] = [
        [True, False, False],  # broken in round 2
        [False, True, True],  # repaired in round 2
        [True, True, False],  # broken in round 3
        [False, None, True],  # no answer in round 2: neither transition counts
    ]
    flips = count_flips(trajectories)
    assert [(f.round, f.correct_to_wrong, f.wrong_to_correct) for f in flips] == [
        (2, 1, 1),
        (3, 1, 0),
    ]
    assert (flips[0].stayed_correct, flips[0].stayed_wrong) == (1, 0)
    assert (flips[1].stayed_correct, flips[1].stayed_wrong) == (1, 1)
    assert [f.net for f in flips] == [0, -1]
    assert count_flips([[True], []]) == ()
    assert count_flips({"a": [False, True]}.values(), first_round=0)[0].round == 1


def _pairs_from(
    judge: Callable[[str, str], str], candidates: list[tuple[str, str]]
) -> list[tuple[str | None, str | None]]:
    """(verdict as asked, verdict with the two swapped) for each pair."""
    return [(judge(x, y), judge(y, x)) for x, y in candidates]


def test_swap_audit_first_position_judge_is_zero_and_consistent_judge_is_one() -> None:
    rng = random.Random(5)
    candidates = [(f"text {rng.random()}", "x" * rng.randint(1, 40)) for _ in range(30)]

    def prefers_first(first: str, second: str) -> str:
        return first

    def prefers_longer(first: str, second: str) -> str:
        return max(first, second, key=lambda t: (len(t), t))

    positional = swap_audit(_pairs_from(prefers_first, candidates))
    assert positional.stability == 0.0 and positional.judged == 30
    consistent = swap_audit(_pairs_from(prefers_longer, candidates))
    assert consistent.stability == 1.0
    interval = consistent.interval()
    assert interval is not None and interval.high == 1.0 and interval.low < 1.0


def test_swap_audit_unusable_verdicts_are_reported_apart() -> None:
    audit = swap_audit([("A", "A"), ("A", "B"), (None, "A"), ("B", None)])
    assert (audit.judged, audit.stable, audit.unusable) == (2, 1, 2)
    assert audit.stability == 0.5
    empty = swap_audit([(None, None)])
    assert empty.stability is None and empty.interval() is None


def test_audit_sample() -> None:
    picked = audit_sample(50, 0.2, seed=3)
    assert len(picked) == 10 and list(picked) == sorted(set(picked))
    assert all(0 <= i < 50 for i in picked)
    assert audit_sample(50, 0.2, seed=3) == picked and audit_sample(50, 0.2, seed=4) != picked
    assert len(audit_sample(3, 0.2, seed=0)) == 1  # a positive share audits at least one
    assert audit_sample(3, 0.0, seed=0) == () and len(audit_sample(3, 1.0, seed=0)) == 3
    with pytest.raises(ValueError, match=r"0\.2 for 20%"):
        audit_sample(3, 20, seed=0)


def test_core_code_imports_neither_scipy_nor_statsmodels() -> None:
    code = (
        "import sys, moot.bench.statistics, moot.bench.suites, moot.deliberation.answers;"
        "bad = {'scipy', 'statsmodels', 'numpy'} & {m.split('.')[0] for m in sys.modules};"
        "sys.exit(repr(sorted(bad)) if bad else 0)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_the_verdict_on_one_question_says_one_question() -> None:
    result = compare("arena", [True], "vote", [True])
    assert "on the same 1 question; McNemar" in result.sentence, result.sentence
