"""Issue 22: the feature pipeline survives SIGKILL at random points of `moot plan` and `moot
execute`. Each trial runs the real CLI in a process group of its own, waits until a journal
(the pipeline's, or the implementation tournament's child refine session under
`<session>/tournaments/`) has N lines, kills the group, then runs `moot resume ID` (killed once
more in some trials) until it exits 0. Every trial must end with the branch of an
uninterrupted run (the same commit messages and trees), ask no step again that the journal had
recorded before a kill, and leave the user's repository as it was.

The kill points come from a seeded RNG, so a failing trial is the same trial on every run."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.code import test_code_tasks as base
from tests.pipeline.crashing import (
    TIMEOUT,
    Ended,
    Kill,
    Trial,
    World,
    branch_of,
    command,
    killed_at_step,
    play,
    resume,
    same_request,
    uninterrupted,
    world,
)
from tests.waiting import journal_events, wait_until


@dataclass
class Reference:
    """An uninterrupted run's outcome, and where its journals may be cut (see `kill_points`)."""

    steps: Counter[str]
    branch: list[tuple[str, str]]
    plan: str
    points: list[int]  # the pipeline's journal
    children: dict[str, list[int]]  # a tournament's label: its journal's
    worktrees: int


def kill_points(folder: Path, *, child: bool = False) -> list[int]:
    """The journal lengths to kill at: after the begin line, before the last (a child's last
    too: its parent has yet to record what it gave). Notes and scripted answers take no time,
    so a kill "at" a length often lands later, while git applies a diff or removes a worktree:
    the two tests at the end stall git there and kill it."""
    events = journal_events(folder)
    last = len(events) if child else len(events) - 2
    return list(range(2, last + 1))


def outcome_of(w: World, ended: Ended, phase: str) -> tuple[list[tuple[str, str]], str]:
    """(the plan's branch, or [] for a plan; the approved plan.json, or "" for execute)."""
    if phase == "plan":
        return [], (ended.session / "plan.json").read_text()
    return branch_of(w, ended.session.name), ""


def worktrees(w: World) -> int:
    return base.sh(w.repo, "worktree", "list", "--porcelain").count("worktree ")


def reference(root: Path, trial: Trial) -> Reference:
    w = world(root, impl_tournament=trial.impl_tournament, plan_tournament=trial.plan_tournament)
    ended = uninterrupted(w, trial.phase)
    branch, plan = outcome_of(w, ended, trial.phase)
    prefix = ended.session.name + "-"
    children = {
        p.name.removeprefix(prefix): kill_points(p, child=True)
        for p in (ended.session / "tournaments").glob("*")
        if p.is_dir()
    }
    steps = Counter(step for step, _ in ended.log)
    return Reference(steps, branch, plan, kill_points(ended.session), children, worktrees(w))


def check(w: World, trial: Trial, ended: Ended, ref: Reference, before: dict[str, Any]) -> None:
    """Issue 22's promises for one trial (the assertion names the trial)."""
    name = trial.name
    branch, plan = outcome_of(w, ended, trial.phase)
    assert branch == ref.branch, f"{name}: the branch differs from an uninterrupted run's"
    assert plan == ref.plan, f"{name}: the plan differs from an uninterrupted run's"
    # no request the journal held at a kill is asked again after it
    lost: list[str] = []
    start_at = 0
    for length, journaled in ended.at_kill:
        again = [
            step
            for step, prompt in ended.log[length:]
            if any(same_request((step, prompt), j) for j in journaled)
        ]
        assert not again, f"{name}: asked again after a kill, though journaled: {again}"
        lost += [
            entry[0]
            for entry in ended.log[start_at:length]
            if not any(same_request(entry, j) for j in journaled)
        ]
        start_at = length
    # and nothing else is asked twice: each request of the uninterrupted run, plus the ones a
    # kill caught in flight (asked, never journaled)
    steps = Counter(step for step, _ in ended.log)
    assert steps == ref.steps + Counter(lost), f"{name}: {steps - ref.steps} asked beyond {lost}"
    after = base.state(w.repo)
    branches = [b for b in after.pop("branches") if "refs/heads/moot-plan/" not in b]
    assert branches == before["branches"], f"{name}: the user's branches changed"
    assert after == {k: v for k, v in before.items() if k != "branches"}, f"{name}: repo changed"
    assert worktrees(w) == ref.worktrees, f"{name}: worktrees left behind"


def run_trials(root: Path, ref: Reference, trials: list[Trial]) -> None:
    """Play the trials two at a time; fail naming every trial that broke a promise."""

    def one(number: int, trial: Trial) -> str:
        w = world(
            root / f"trial{number}",
            impl_tournament=trial.impl_tournament,
            plan_tournament=trial.plan_tournament,
        )
        before = base.state(w.repo)
        try:
            check(w, trial, play(w, trial), ref, before)
        except AssertionError as exc:
            return str(exc)  # it names the trial
        return ""

    with ThreadPoolExecutor(max_workers=2) as pool:
        failures = [f for f in pool.map(one, range(len(trials)), trials) if f]
    assert not failures, "\n".join(failures)


def points(rng: random.Random, allowed: list[int], count: int, again: float) -> list[list[int]]:
    """`count` kill plans among the `allowed` journal lengths: one point each, and with
    probability `again` a second one, during the resume."""
    plans = []
    for _ in range(count):
        first = rng.choice(allowed)
        plan = [first]
        later = [n for n in allowed if n > first + 1]
        if later and rng.random() < again:
            plan.append(rng.choice(later))
        plans.append(plan)
    return plans


@pytest.mark.slow
def test_execute_killed_at_random_points_resumes_to_the_same_branch(tmp_path: Path) -> None:
    ref = reference(tmp_path / "reference", Trial("execute", []))
    assert [m.split("\n")[0] for m, _ in ref.branch] == [
        "T1: Add subtract(a, b)",
        "T2: Add multiply(a, b)",
    ]
    rng = random.Random(22)
    trials = [
        Trial("execute", [Kill(n) for n in plan]) for plan in points(rng, ref.points, 14, 0.4)
    ]
    run_trials(tmp_path, ref, trials)


@pytest.mark.slow
def test_execute_killed_inside_the_implementation_tournament_resumes_it(
    tmp_path: Path,
) -> None:
    ref = reference(tmp_path / "reference", Trial("execute", [], impl_tournament=True))
    assert set(ref.children) == {"impl-t1-1", "impl-t2-1"}
    rng = random.Random(23)
    trials = [
        Trial("execute", [Kill(n, "impl-t1-1") for n in plan], impl_tournament=True)
        for plan in points(rng, ref.children["impl-t1-1"], 1, 1.0)
    ] + [
        Trial("execute", [Kill(n, "impl-t2-1") for n in plan], impl_tournament=True)
        for plan in points(rng, ref.children["impl-t2-1"], 1, 0.0)
    ]
    # the child has ended, the pipeline has not recorded it yet
    done = ref.children["impl-t1-1"][-1]
    trials.append(Trial("execute", [Kill(done, "impl-t1-1")], impl_tournament=True))
    run_trials(tmp_path, ref, trials)


@pytest.mark.slow
def test_plan_killed_at_random_points_resumes_to_the_same_plan(tmp_path: Path) -> None:
    ref = reference(tmp_path / "reference", Trial("plan", []))
    rng = random.Random(24)
    trials = [Trial("plan", [Kill(n) for n in plan]) for plan in points(rng, ref.points, 4, 0.5)]
    run_trials(tmp_path, ref, trials)


@pytest.mark.slow
def test_plan_killed_inside_the_plan_tournament_resumes_it(tmp_path: Path) -> None:
    ref = reference(tmp_path / "reference", Trial("plan", [], plan_tournament=True))
    assert set(ref.children) == {"plan1"}
    rng = random.Random(25)
    trials = [
        Trial("plan", [Kill(n, "plan1") for n in plan], plan_tournament=True)
        for plan in points(rng, ref.children["plan1"], 1, 1.0)
    ]
    run_trials(tmp_path, ref, trials)


@pytest.mark.slow
def test_a_kill_while_a_tournament_folder_is_made_resumes_it_from_the_start(
    tmp_path: Path,
) -> None:
    """A child refine session is created in steps (its folder, session.json, the begin
    event); a kill in between leaves a folder that is no session. The resume starts that
    tournament again (nothing was asked in it) instead of failing on the folder. Both
    tournaments' folders are made so here: T1's a bare folder, T2's one with session.json and
    an empty journal."""
    w = world(tmp_path / "trial", impl_tournament=True)
    before = base.state(w.repo)
    # T1's reviewer approved: the test engineer and the gates come before the tournament
    session = killed_at_step(w, "execute", "t1/state/9")
    first, second = (session / "tournaments" / f"{session.name}-impl-t{n}-1" for n in (1, 2))
    assert not first.exists() and not second.exists()
    first.mkdir(parents=True)  # as a kill right after the child's mkdir leaves it
    second.mkdir()
    (second / "session.json").write_text("{}\n")
    (second / "events.jsonl").write_text("")
    code, err = resume(w, session)
    assert code == 0, err
    rows = branch_of(w, session.name)
    assert [m.split("\n")[0] for m, _ in rows] == [
        "T1: Add subtract(a, b)",
        "T2: Add multiply(a, b)",
    ]
    for child in (first, second):
        assert json.loads((child / "result.json").read_text())["status"] != "failed"
    after = base.state(w.repo)
    after["branches"] = [b for b in after["branches"] if "refs/heads/moot-plan/" not in b]
    assert after == before


@pytest.mark.slow
def test_a_kill_between_the_merge_and_its_record_resumes_to_the_same_branch(
    tmp_path: Path,
) -> None:
    """T1's winning change is applied on the plan's worktree (`t1/merge/main/1`), then
    journaled; killed in between, the worktree holds a change the journal does not know of."""
    w = world(tmp_path / "trial")
    session = stalled(w, "apply")
    assert "t1/merge/main/1" not in {e.get("step") for e in journal_events(session)}
    code, err = resume(w, session)
    assert code == 0, err
    rows = branch_of(w, session.name)
    assert [m.split("\n")[0] for m, _ in rows] == [
        "T1: Add subtract(a, b)",
        "T2: Add multiply(a, b)",
    ]


# A git that stops in one command until it is killed. STALL=remove: removing T1's worktree,
# half way (its .git file gone, as `git worktree remove` deletes it first); STALL=apply:
# applying a diff on the plan's worktree, once the diff is applied.
STALLING_GIT = """\
#!/bin/sh
case "$STALL $*" in
  remove*"worktree remove"*/t1e1)
    for last; do :; done
    rm -f "$last/.git"
    : > "$HOLD"
    sleep 600;;
  apply*" apply "*)
    case "$PWD" in
      */worktrees/main)
        {git} "$@" || exit $?
        : > "$HOLD"
        sleep 600;;
    esac;;
esac
exec {git} "$@"
"""


def stalled(w: World, stall: str) -> Path:
    """`moot execute` run with STALLING_GIT, killed where it stalls; its session folder."""
    real = shutil.which("git")
    assert real is not None
    fake = w.root / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text(STALLING_GIT.format(git=real))
    fake.chmod(0o755)
    held = w.root / "held"
    env = {
        **w.env,
        "PATH": f"{fake.parent}{os.pathsep}{w.env['PATH']}",
        "HOLD": str(held),
        "STALL": stall,
    }
    process = subprocess.Popen(
        command(w, "execute"),
        env=env,
        cwd=w.root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_until(held.exists, "git to stall", alive=lambda: process.poll() is None)
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=TIMEOUT)
    session = w.session()
    assert session is not None
    return session


@pytest.mark.slow
def test_a_kill_while_a_worktree_is_removed_resumes_to_the_same_branch(tmp_path: Path) -> None:
    w = world(tmp_path / "trial")
    session = stalled(w, "remove")
    assert "t1/prune/t1e1" not in {e.get("step") for e in journal_events(session)}
    code, err = resume(w, session)
    assert code == 0, err
    rows = branch_of(w, session.name)
    assert [m.split("\n")[0] for m, _ in rows] == [
        "T1: Add subtract(a, b)",
        "T2: Add multiply(a, b)",
    ]
