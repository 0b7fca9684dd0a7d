"""reasoning-gym suites for `moot bench --suite gym:DATASET` (the `gym` extra).

A few of reasoning-gym's procedural datasets: short answers, generated offline from the bench's
seed, each question scored by its dataset's own `score_answer`. That scorer returns a float
(reasoning-gym grants partial credit, e.g. for the right words in the wrong order); moot counts a
question right only at the full score, 1.0. A scorer that raises on an odd answer counts it wrong.

The answer handed to the scorer is the one `moot.deliberation.answers` extracts from the final
reply; every question asks for it inside `<answer>` tags, as reasoning-gym's own prompt does, so
a list such as "b, a" arrives whole. reasoning_gym is imported only when a gym suite is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from moot.errors import ConfigError

if TYPE_CHECKING:
    from moot.bench.suites import Suite

__all__ = ["GYM_DATASETS", "GYM_PREFIX", "GymScorer", "gym_suite"]

GYM_PREFIX = "gym:"
# Short-answer datasets whose entries depend on the seed alone and take milliseconds to generate.
GYM_DATASETS = ("basic_arithmetic", "chain_sum", "leg_counting", "letter_counting", "word_sorting")
ANSWER_FORMAT = "Give your final answer, and nothing else, inside <answer></answer> tags."


class GymScorer(Struct, frozen=True):
    """A question's judge: its dataset's `score_answer` on its entry, right at 1.0 only."""

    dataset: Any  # a reasoning_gym ProceduralDataset
    entry: Mapping[str, Any]

    def __call__(self, answer: str | None) -> bool:
        try:
            score = self.dataset.score_answer(answer, self.entry)
        except Exception:  # untrusted model text: some scorers parse it without a guard
            return False
        return isinstance(score, int | float) and score >= 1.0


def gym_suite(dataset: str, n: int = 100, seed: int = 0) -> Suite:
    """`n` questions of one offered reasoning-gym dataset; the same n and seed give the same
    questions (and fewer give the first of them)."""
    if dataset not in GYM_DATASETS:
        offered = ", ".join(GYM_PREFIX + name for name in GYM_DATASETS)
        raise ConfigError(f"unknown gym dataset {dataset!r}: use one of {offered}")
    if n < 1:
        raise ConfigError(f"a gym suite needs at least one question, got --n {n}")
    # Imported here, not above: `moot bench --help` lists GYM_DATASETS without loading suites.
    from moot.bench.suites import Question, Suite

    try:
        import reasoning_gym
    except ImportError:
        from moot.text.install import extra_install_hint

        raise ConfigError(
            f"suite {GYM_PREFIX}{dataset} needs reasoning-gym: {extra_install_hint('gym')}"
        ) from None
    generated = reasoning_gym.create_dataset(dataset, size=n, seed=seed)
    questions = []
    for index in range(n):
        entry = generated[index]
        questions.append(
            Question(
                id=f"{dataset}-{seed}-{index}",
                question=f"{entry['question'].rstrip()}\n\n{ANSWER_FORMAT}",
                answer=str(entry["answer"]),
                scorer="dataset",
                metadata=entry,
                judge=GymScorer(generated, entry),
            )
        )
    return Suite(GYM_PREFIX + dataset, tuple(questions))
