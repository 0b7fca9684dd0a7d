"""reasoning-gym suites (`--suite gym:DATASET`): generated from the seed, offline, each question
scored by its dataset's own scorer (right only at the full score); the errors without the extra
or for a dataset not offered; `moot --help` does not load reasoning_gym."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from moot.bench.gym import GYM_DATASETS, GymScorer, gym_suite
from moot.bench.runner import BenchOptions, run_bench
from moot.bench.suites import Question, suite_for
from moot.deliberation.answers import extract_answer
from moot.errors import ConfigError
from moot.models.scripted import register_script
from moot.text.install import extra_install_hint
from moot.types import Request
from tests.cli.test_cli import moot


@pytest.mark.parametrize("dataset", GYM_DATASETS)
def test_an_offered_dataset_is_seeded_and_its_right_answers_score(dataset: str) -> None:
    suite = gym_suite(dataset, 8, seed=5)
    assert suite.name == f"gym:{dataset}" and len(suite.questions) == 8
    assert suite == gym_suite(dataset, 8, seed=5) == suite_for(f"gym:{dataset}", n=8, seed=5)
    assert suite != gym_suite(dataset, 8, seed=6)
    assert gym_suite(dataset, 3, seed=5).questions == suite.questions[:3]
    assert len({q.id for q in suite.questions}) == 8
    for question in suite.questions:
        assert question.scorer == "dataset"
        assert question.question.endswith("inside <answer></answer> tags.")
        reply = extract_answer(f"Step by step...\n<answer>{question.answer}</answer>")
        assert reply is not None and question.score(reply.text)
        # reasoning-gym gives these partial credit at most: not right
        assert not question.score(f"{question.answer} {question.answer}")
        assert not question.score(None) and not question.score("")


def test_the_datasets_own_scorer_decides() -> None:
    # basic_arithmetic compares strings; chain_sum reads decimals; moot's numeric scorer would
    # take both
    arithmetic = gym_suite("basic_arithmetic", 10, seed=1).questions
    assert not any(q.score(f"{q.answer}.0") for q in arithmetic)
    chain = gym_suite("chain_sum", 10, seed=1).questions
    assert all(q.score(f"{q.answer}.00") for q in chain)
    # the right words in the wrong order earn word_sorting's partial credit, not a right answer
    sorting = gym_suite("word_sorting", 10, seed=1).questions
    assert not any(q.score(", ".join(reversed(q.answer.split(", ")))) for q in sorting)


class Stub:
    def __init__(self, score: Any) -> None:
        self.result = score
        self.asked: list[tuple[str | None, dict[str, Any]]] = []

    def score_answer(self, answer: str | None, entry: dict[str, Any]) -> Any:
        self.asked.append((answer, entry))
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def test_only_a_full_score_is_right_and_a_scorer_that_raises_says_wrong() -> None:
    entry = {"question": "q", "answer": "a", "metadata": {}}
    full, partial = Stub(1.0), Stub(0.99)
    assert GymScorer(full, entry)("a") and full.asked == [("a", entry)]
    assert not GymScorer(partial, entry)("a")
    assert not GymScorer(Stub(ValueError("invalid literal for int()")), entry)("zzz")
    assert not GymScorer(Stub(None), entry)("a")
    with pytest.raises(ValueError, match="judge exactly when"):
        Question(id="q", question="q", answer="a", scorer="dataset")


def test_questions_do_not_depend_on_the_hash_seed() -> None:
    code = (
        "import json; from moot.bench.gym import GYM_DATASETS, gym_suite;"
        "print(json.dumps({d: [q.question for q in gym_suite(d, 4, 9).questions]"
        " for d in GYM_DATASETS}))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )
    assert run.returncode == 0, run.stderr
    here = {d: [q.question for q in gym_suite(d, 4, 9).questions] for d in GYM_DATASETS}
    assert json.loads(run.stdout) == here


def test_the_help_lists_the_gym_suites_without_loading_reasoning_gym() -> None:
    code = (
        "import sys; from click.testing import CliRunner; from moot.cli import cli;"
        "out = CliRunner().invoke(cli, ['bench', '--help']).output;"
        "CliRunner().invoke(cli, ['--help']);"
        "print(out); sys.exit('reasoning_gym' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    help_text = " ".join(run.stdout.split())
    for dataset in GYM_DATASETS:
        assert f"gym:{dataset}" in help_text
    assert "(the gym extra)" in help_text


def test_without_the_extra_a_gym_suite_names_the_install(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "reasoning_gym", None)  # as if the extra were not installed
    with pytest.raises(ConfigError, match="needs reasoning-gym"):
        gym_suite("leg_counting", 3)
    code, out, err = moot(capsys, "bench", "--suite", "gym:leg_counting", "--models", "x:y")
    assert code == 1 and out == ""
    # the install that fits this one (an editable checkout: from the checkout, into its venv)
    assert err.strip().count("\n") == 0 and extra_install_hint("gym") in err


def test_a_dataset_not_offered_lists_the_offered_ones(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "reasoning_gym", None)  # the check needs no reasoning-gym
    code, _, err = moot(capsys, "bench", "--suite", "gym:sudoku", "--models", "x:y")
    assert code == 1 and "unknown gym dataset 'sudoku'" in err
    assert all(f"gym:{dataset}" in err for dataset in GYM_DATASETS)
    with pytest.raises(ConfigError, match=r"unknown suite 'gsm8k'.*gym:DATASET"):
        suite_for("gsm8k")


# -- end to end: vote with scripted agents that know each question's answer --------------------

SUITE = "gym:basic_arithmetic"
QUESTIONS = 5
SEED = 2
ANSWERS: dict[str, str] = {}  # question -> answer, from the same seeded suite the bench builds
MODE = {"reply": "right"}


def agent(request: Request) -> str:
    for message in request.messages:
        for question, answer in ANSWERS.items():
            if question in message.content:
                # "-129.0" is -129 to moot's numeric scorer, not to basic_arithmetic's
                shown = answer if MODE["reply"] == "right" else f"{answer}.0"
                return f"Working it out step by step.\n<answer>{shown}</answer>"
    raise AssertionError("the question is not in the request")


@pytest.fixture
def scripted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    suite = gym_suite("basic_arithmetic", QUESTIONS, seed=SEED)
    ANSWERS.update({q.question: q.answer for q in suite.questions})
    register_script("gym-agent", agent)
    yield
    MODE["reply"] = "right"


@pytest.mark.usefixtures("scripted")
@pytest.mark.parametrize(("reply", "accuracy"), [("right", 1.0), ("reformatted", 0.0)])
def test_the_bench_scores_gym_answers_with_the_datasets_scorer(
    tmp_path: Path, reply: str, accuracy: float
) -> None:
    MODE["reply"] = reply
    options = BenchOptions(
        suite=SUITE, protocols=["vote"], models=["scripted:@gym-agent"] * 3, n=QUESTIONS, seed=SEED
    )
    report = run_bench(options, out=tmp_path / "out")
    data = json.loads((tmp_path / "out" / "bench.json").read_text())
    assert data["suite"] == SUITE and data["questions"] == QUESTIONS
    [row] = data["protocols"]
    assert row["name"] == "vote" and row["failed_sessions"] == 0
    assert row["accuracy"] == accuracy
    assert report.suite.questions[0].question in ANSWERS
