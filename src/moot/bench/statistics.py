"""The numbers `moot bench` reports: accuracy intervals, the paired test against `vote`, the plain
verdict, answer flips between debate rounds, and the judges' swap audit.

Standard library only (scipy and statsmodels check these numbers in the tests, never at run
time). Everything is deterministic: the bootstrap takes a seed.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from statistics import NormalDist
from typing import Literal

from msgspec import Struct

from moot.text import plural

__all__ = [
    "Comparison",
    "Interval",
    "McNemar",
    "RoundFlips",
    "SwapAudit",
    "audit_sample",
    "bootstrap_interval",
    "compare",
    "count_flips",
    "mcnemar_exact",
    "swap_audit",
    "wilson_interval",
]

Direction = Literal["better", "worse", "no measurable gain"]


class Interval(Struct, frozen=True):
    """A two-sided confidence interval for a share, both ends in [0, 1]."""

    estimate: float
    low: float
    high: float
    confidence: float
    method: Literal["wilson", "bootstrap"]


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (0.95 for 95%), got {confidence}")


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for `successes` out of `n` (good at small n and near 0 or 1)."""
    _check_confidence(confidence)
    if n <= 0:
        raise ValueError("an interval needs at least one question (n was 0)")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n={n}, got {successes}")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half), confidence, "wilson")


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default percentile)."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def bootstrap_interval(
    outcomes: Sequence[bool],
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval of the accuracy of `outcomes` (True = correct).

    The same outcomes and seed always give the same interval. With every answer right (or every
    answer wrong) every resample agrees and the interval collapses to a point: use Wilson there."""
    _check_confidence(confidence)
    if not outcomes:
        raise ValueError("an interval needs at least one question (outcomes was empty)")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    n = len(outcomes)
    values = [1 if outcome else 0 for outcome in outcomes]
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    return Interval(
        sum(values) / n,
        _percentile(means, tail),
        _percentile(means, 1 - tail),
        confidence,
        "bootstrap",
    )


class McNemar(Struct, frozen=True):
    """McNemar's exact test on paired outcomes: a two-sided binomial test on the questions that
    exactly one of the two got right."""

    questions: int
    only_first: int  # first right, second wrong
    only_second: int  # second right, first wrong
    p_value: float

    @property
    def discordant(self) -> int:
        return self.only_first + self.only_second


def _check_paired(first: Sequence[bool], second: Sequence[bool]) -> None:
    if len(first) != len(second):
        raise ValueError(
            f"paired outcomes need the same questions: got {len(first)} and {len(second)} results"
        )


def mcnemar_exact(first: Sequence[bool], second: Sequence[bool]) -> McNemar:
    """Compare two protocols answering the same questions (index i = question i in both)."""
    _check_paired(first, second)
    only_first = sum(1 for a, b in zip(first, second, strict=True) if a and not b)
    only_second = sum(1 for a, b in zip(first, second, strict=True) if b and not a)
    n = only_first + only_second
    # P(X <= min) for X ~ Binomial(n, 1/2), doubled; exact integers, one division at the end.
    tail = sum(math.comb(n, k) for k in range(min(only_first, only_second) + 1))
    p_value = min(1.0, 2 * tail / (1 << n))
    return McNemar(len(first), only_first, only_second, p_value)


class Comparison(Struct, frozen=True):
    """A protocol against the baseline on the same questions, and what that means in words."""

    protocol: str
    baseline: str
    accuracy: float
    baseline_accuracy: float
    test: McNemar
    alpha: float
    direction: Direction

    @property
    def sentence(self) -> str:
        p = "p < 0.001" if self.test.p_value < 0.001 else f"p = {self.test.p_value:.3f}"
        numbers = (
            f"({self.accuracy:.1%} against {self.baseline_accuracy:.1%} on the same "
            f"{plural(self.test.questions, 'question')}; McNemar exact {p} at level {self.alpha:g})"
        )
        if self.direction == "no measurable gain":
            return f"{self.protocol} shows no measurable gain over {self.baseline} {numbers}."
        return f"{self.protocol} is {self.direction} than {self.baseline} {numbers}."


def compare(
    protocol: str,
    correct: Sequence[bool],
    baseline: str,
    baseline_correct: Sequence[bool],
    alpha: float = 0.05,
) -> Comparison:
    """Better or worse when McNemar's p is below `alpha`, else "no measurable gain"."""
    _check_paired(correct, baseline_correct)
    if not correct:
        raise ValueError("nothing to compare: no questions were answered by both")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1 (0.05 for 5%), got {alpha}")
    test = mcnemar_exact(correct, baseline_correct)
    direction: Direction = "no measurable gain"
    if test.p_value < alpha:
        direction = "better" if test.only_first > test.only_second else "worse"
    n = len(correct)
    return Comparison(
        protocol=protocol,
        baseline=baseline,
        accuracy=sum(correct) / n,
        baseline_accuracy=sum(baseline_correct) / n,
        test=test,
        alpha=alpha,
        direction=direction,
    )


class RoundFlips(Struct, frozen=True):
    """How answers changed from the round before `round` to `round`."""

    round: int
    correct_to_wrong: int
    wrong_to_correct: int
    stayed_correct: int
    stayed_wrong: int

    @property
    def net(self) -> int:
        """Answers repaired minus answers broken: negative when debate made things worse."""
        return self.wrong_to_correct - self.correct_to_wrong


def count_flips(
    trajectories: Iterable[Sequence[bool | None]], first_round: int = 1
) -> tuple[RoundFlips, ...]:
    """Flips per round over trajectories: one per agent per question, the agent's correctness in
    each round (None where it gave no answer; a transition from or to None is not counted).

    Pass `per_question[q][agent]` flattened, or a mapping's `.values()`."""
    # One Counter per transition, keyed by (before, after).
    transitions: list[Counter[tuple[bool, bool]]] = []
    for trajectory in trajectories:
        for step, (before, after) in enumerate(itertools.pairwise(trajectory)):
            while len(transitions) <= step:
                transitions.append(Counter())
            if before is not None and after is not None:
                transitions[step][(bool(before), bool(after))] += 1
    return tuple(
        RoundFlips(
            round=first_round + step + 1,
            correct_to_wrong=counts[(True, False)],
            wrong_to_correct=counts[(False, True)],
            stayed_correct=counts[(True, True)],
            stayed_wrong=counts[(False, False)],
        )
        for step, counts in enumerate(transitions)
    )


class SwapAudit(Struct, frozen=True):
    """How many pairwise verdicts survived asking again with the two candidates swapped."""

    judged: int  # pairs with a usable verdict both times
    stable: int  # the same candidate preferred both times
    unusable: int  # pairs where either verdict was missing

    @property
    def stability(self) -> float | None:
        """Share of stable verdicts; None when nothing could be judged."""
        return self.stable / self.judged if self.judged else None

    def interval(self, confidence: float = 0.95) -> Interval | None:
        return wilson_interval(self.stable, self.judged, confidence) if self.judged else None


def swap_audit(verdicts: Iterable[tuple[str | None, str | None]]) -> SwapAudit:
    """Each pair is (preferred candidate as first asked, preferred candidate with the order
    swapped), naming the candidate itself, never its position. A judge that always takes whatever
    is shown first scores 0%; one that judges the texts scores 100%."""
    judged = stable = unusable = 0
    for original, swapped in verdicts:
        if original is None or swapped is None:
            unusable += 1
            continue
        judged += 1
        stable += original == swapped
    return SwapAudit(judged, stable, unusable)


def audit_sample(judgements: int, share: float, seed: int) -> tuple[int, ...]:
    """Which of `judgements` to ask again swapped for `--swap-audit SHARE`: ceil(share x count)
    of them (so any positive share audits at least one), chosen by the seed, in order."""
    if not 0 <= share <= 1:
        raise ValueError(f"the swap-audit share must be between 0 and 1 (0.2 for 20%), got {share}")
    size = min(judgements, math.ceil(round(judgements * share, 9)))
    return tuple(sorted(random.Random(seed).sample(range(judgements), size)))
