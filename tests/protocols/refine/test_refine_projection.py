"""The refine protocol's projection (`--dry-run`, `--max-cost`): the fewest calls are never
more than the most (the tryout's `4-3 calls`, `Calls: 13-7`), and every bound is one that runs
reach: run every way a short run can go, and compare."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from typing import Any

import pytest

from moot.config import RunConfig
from moot.lifecycle.plan import load_config
from moot.lifecycle.projection import Estimate, estimate
from moot.models.scripted import register_script
from moot.protocols.definition import Projected
from tests.cli.test_cli import moot
from tests.refine_scripts import Refinery
from tests.scripts import start

TASK = "How should the service store its sessions?"

# What the judges of a pass do: prefer A (a win that counts), give no valid ranking (A holds,
# no win), prefer B or AB (adopted).
OUTCOMES: dict[str, list[str] | str] = {
    "A": ["A", "B", "AB"],
    "none": "no ranking here",
    "B": ["B", "A", "AB"],
    "AB": ["AB", "A", "B"],
}


def _config(agents: int, *, distinct: bool, script: str = "refinery", **refine: Any) -> RunConfig:
    """`agents` scripted agents; `distinct`: each its own config (a line each), else one."""
    models = [
        {"model": f"scripted:@{script}", **({"max_tokens": 1000 + i} if distinct else {})}
        for i in range(agents)
    ]
    return RunConfig.read({"protocol": "refine", "agents": models, "seed": 3, "refine": refine})


def _lines(config: RunConfig) -> list[Projected]:
    plan = load_config(None, config.dump())
    assert plan.record.conduct.project is not None
    return plan.record.conduct.project(plan.config, plan.options)


def _who(line: Projected) -> list[str]:
    """The participants a line counts: "Agent A, Judge A (critic, judge)" -> agent_a, judge_a."""
    names = line.role.split(" (")[0].split(", ")
    return [name.lower().replace(" ", "_") for name in names]


def test_the_fewest_calls_are_never_more_than_the_most() -> None:
    """Over agents, judges, k, max passes (below k too), a given first text or not, and one
    model or one each: every line's fewest <= most, and the lines bound a run's total."""
    wrong = []
    for agents, judges, k, passes, given, distinct in itertools.product(
        (1, 2, 3, 4, 5), (1, 3), (1, 2, 3), (1, 2, 3, 4), (None, "A text to refine."), (False, True)
    ):
        refine = {"judges": judges, "convergence_k": k, "max_passes": passes, "input": given}
        lines = _lines(_config(agents, distinct=distinct, **refine))
        assert lines
        wrong += [(refine, x.role, x.fewest, x.most) for x in lines if not 0 <= x.fewest <= x.most]
        # one run's total: the first text (unless given), then full passes
        author = 0 if given else 1
        fewest = author + min(k, passes) * (3 + judges)
        most = author + passes * (3 + judges)
        total = (sum(x.fewest for x in lines), sum(x.most for x in lines))
        if distinct:  # each line's bounds hold; their sum bounds a run's total
            assert total[0] <= fewest and total[1] >= most, (refine, total)
        else:  # one model: bounded together, exactly
            assert total == (fewest, most), (refine, total)
    assert wrong == []


def _every_run(config: RunConfig, passes: int, name: str) -> list[Counter[str]]:
    """The calls per participant of each way a run of `passes` can go: every sequence of pass
    outcomes (a run that converges early ends there, so some sequences repeat a run)."""
    seen: list[Counter[str]] = []
    for n, outcomes in enumerate(itertools.product(OUTCOMES, repeat=passes)):
        r = Refinery(lambda p, j, o=outcomes: OUTCOMES[o[p - 1]])
        script = f"{name}{n}"
        data = config.dump()
        for agent in data["agents"]:
            agent["model"] = f"scripted:@{script}"
        for role in (data["refine"].get("roles") or {}).values():
            role["model"] = f"scripted:@{script}"
        register_script(script, r.reply)
        start(TASK, RunConfig.read(data))
        seen.append(Counter(step.split("/")[2] for step in r.steps))
    return seen


_REVISER = {"model": "scripted:@reviser", "max_tokens": 7}


@pytest.mark.parametrize(
    ("agents", "refine"),
    [
        (3, {"judges": 3, "convergence_k": 2, "max_passes": 3}),  # the tryout's three agents
        # cases where a bound needs a pass A holds without a quorum, or AB adopted
        (4, {"judges": 1, "convergence_k": 1, "max_passes": 2}),
        (5, {"judges": 3, "convergence_k": 2, "max_passes": 2}),
        # an author B of its own: a participant with a line of its own; the text given
        (2, {"judges": 2, "convergence_k": 1, "max_passes": 2, "roles": {"author_b": _REVISER},
             "input": "Store them in Redis."}),
    ],
)  # fmt: skip
def test_each_bound_is_what_runs_reach(agents: int, refine: dict[str, Any]) -> None:
    """Every way a short run can go, run: per participant, the least and the most it was asked
    are the projection's fewest and most."""
    config = _config(agents, distinct=True, **refine)
    runs = _every_run(config, refine["max_passes"], f"every{agents}")
    for line in _lines(config):
        (alias,) = _who(line)
        asked = [run[alias] for run in runs]
        assert (line.fewest, line.most) == (min(asked), max(asked)), line.role


def _ranges(text: str) -> list[tuple[float, float]]:
    """Every "low-high" the projection prints: calls, tokens and dollars."""
    number = r"\$?(\d[\d,]*(?:\.\d+)?)"
    found = re.findall(number + "-" + number, text)
    return [(float(a.replace(",", "")), float(b.replace(",", ""))) for a, b in found]


@pytest.mark.parametrize("rounds", [[], ["--rounds", "1"], ["--rounds", "2"], ["--rounds", "3"]])
def test_the_tryouts_dry_run_prints_no_backward_range(
    rounds: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`moot run "..." --protocol refine --dry-run` on the embedded model printed `4-3 calls`,
    `6-2 calls`, `Calls: 13-7` and `Tokens: up to 217,022-116,858`."""
    code, out, err = moot(
        capsys, "run", "Write a one-line slogan for a bakery.", "--protocol", "refine",
        "--dry-run", *rounds,
    )  # fmt: skip
    assert code == 0, err
    # (a range of one value is printed as that value: every range left runs upward)
    assert "Calls: " in out and "Tokens: " in out, out
    assert all(low < high for low, high in _ranges(out)), out


def test_a_run_of_one_model_is_bounded_exactly_by_the_estimate() -> None:
    r = Refinery(lambda p, j: ["B", "A", "AB"])  # a new incumbent every pass: never converges
    config = r.config(agents=4, judges=3, convergence_k=2, max_passes=3)
    projected = estimate(load_config(None, config.dump()), TASK)
    assert isinstance(projected, Estimate)
    assert start(TASK, config).exit_code == 2
    assert projected.calls == (1 + 2 * 6, sum(r.steps.values())) == (13, 1 + 3 * 6)


def test_on_a_code_task_a_writer_answering_with_a_diff_may_be_asked_twice() -> None:
    """Author, author B and the synthesizer: a diff that does not apply is asked for once more
    (protocols/codework.py); a CLI agent edits its worktree and is asked once."""
    refine = {"judges": 1, "convergence_k": 1, "max_passes": 3}
    data = _config(3, distinct=False, **refine).dump()
    data["code"] = {"repo": "."}
    plan = load_config(None, data)
    assert plan.record.conduct.project is not None
    (line,) = plan.record.conduct.project(plan.config, plan.options)
    # fewest: the first change, one pass; most: every write twice, in each of 3 passes
    assert (line.fewest, line.most) == (1 + 4, 2 + 3 * (1 + 2 + 2 + 1))
    data["agents"] = [{"model": "cli:claude"}] * 3
    plan = load_config(None, data)
    assert plan.record.conduct.project is not None
    (line,) = plan.record.conduct.project(plan.config, plan.options)
    assert (line.fewest, line.most) == (1 + 4, 1 + 3 * 4)
