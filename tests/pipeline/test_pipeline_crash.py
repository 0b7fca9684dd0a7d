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
import sys
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.code import test_code_tasks as base
from tests.pipeline import scripts
from tests.waiting import journal_events, wait_until

FEATURE = "Add subtract and multiply"
# One gate, run in a bare interpreter (-S): the syntax check, then the repository's test
# functions called in turn. pytest's start, and a gate process more, would be most of each
# trial's time; what is under test is the journal, not the gates.
GATE = """\
import compileall, importlib.util, pathlib, re, sys
if not compileall.compile_dir(".", quiet=1, rx=re.compile(r"(^|/)[.][^/]")):
    sys.exit(1)
sys.path.insert(0, ".")
for path in sorted(pathlib.Path("tests").glob("test_*.py")):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in dir(module):
        if name.startswith("test_"):
            getattr(module, name)()
"""
TIMEOUT = 120.0


@dataclass
class World:
    """One trial's files: the user's repository, MOOT_HOME, the scripted roles and their log."""

    root: Path
    env: dict[str, str]
    repo: Path
    plan: Path
    config: Path

    @property
    def sessions(self) -> Path:
        return self.root / "home" / "sessions"

    def log(self) -> list[str]:
        path = self.root / "agents.log"
        if not path.exists():
            return []
        return [json.loads(line)["step"] for line in path.read_text().splitlines() if line]

    def session(self) -> Path | None:
        found = list(self.sessions.iterdir()) if self.sessions.is_dir() else []
        return found[0] if len(found) == 1 else None


def world(root: Path, *, impl_tournament: bool = False, plan_tournament: bool = False) -> World:
    root.mkdir(parents=True, exist_ok=True)
    repo = root / "project"
    (repo / "tests").mkdir(parents=True)
    gitconfig = root / "gitconfig"
    gitconfig.write_text("")
    keep = {k: v for k, v in os.environ.items() if k not in ("MOOT_JOURNAL_KEY", "GATE_ONCE")}
    env = {
        **keep,
        "MOOT_HOME": str(root / "home"),
        "MOOT_TESTING": "1",
        "AGENT_LOG": str(root / "agents.log"),
        "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GIT_CONFIG_NOSYSTEM": "1",
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }
    for who in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{who}_NAME"] = "Test User"
        env[f"GIT_{who}_EMAIL"] = "test@example.invalid"
    git = {**env, "GIT_DIR": str(repo / ".git"), "GIT_WORK_TREE": str(repo)}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], env=env, check=True)
    (repo / "calc.py").write_text(scripts.CALC)
    (repo / "tests" / "test_calc.py").write_text(scripts.CALC_TEST)
    (repo / ".gitignore").write_text("__pycache__/\n")
    subprocess.run(["git", "add", "-A"], env=git, cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "first"], env=git, cwd=repo, check=True)
    roles = scripts.write_script(root)
    plan = root / "plan.json"
    plan.write_text(scripts.plan_json())
    runner = root / "gate.py"
    runner.write_text(GATE)
    chosen = {**scripts.gates(), "syntax": "", "tests": f"{sys.executable} -S {runner}"}
    gates = "\n".join(f"{k} = {json.dumps(v)}" for k, v in chosen.items())
    config = root / "moot.toml"
    config.write_text(
        f"""seed = 5

[[agents]]
model = "scripted:{roles}#happy"

[code]
repo = "{repo}"

[pipeline]
lessons = false
gate_revisions = 0

[pipeline.gates]
{gates}

[pipeline.impl_tournament]
enabled = {json.dumps(impl_tournament)}
max_passes = 1

[pipeline.plan_tournament]
enabled = {json.dumps(plan_tournament)}
judges = 1
convergence_k = 1
max_passes = 2
"""
    )
    return World(root, env, repo, plan, config)


def command(w: World, phase: str) -> list[str]:
    cli = [sys.executable, "-m", "moot.cli"]
    if phase == "plan":
        return [*cli, "plan", FEATURE, "--repo", str(w.repo), "--config", str(w.config), "-q"]
    return [*cli, "execute", str(w.plan), "--repo", str(w.repo), "--config", str(w.config), "-q"]


def start(w: World, args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        args,
        env=w.env,
        cwd=w.root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: the gates' and children's go too
    )


def finish(process: subprocess.Popen[bytes]) -> tuple[int, str]:
    _, err = process.communicate(timeout=TIMEOUT)
    return process.returncode, err.decode(errors="replace")


def kill_at(
    process: subprocess.Popen[bytes], journal: Callable[[], Path | None], lines: int
) -> bool:
    """SIGKILL the process group once the journal `journal()` finds has `lines` lines; False
    when the process ended first (the kill point lay beyond its run)."""

    def reached() -> bool:
        folder = journal()
        return folder is not None and len(journal_events(folder)) >= lines

    def ended() -> bool:
        return process.poll() is not None

    wait_until(lambda: reached() or ended(), f"{lines} journal lines", timeout=TIMEOUT)
    if ended():
        process.communicate(timeout=TIMEOUT)
        return False
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=TIMEOUT)
    return True


def branch_of(w: World, session: str) -> list[tuple[str, str]]:
    """(message with the session's id made generic, tree) per commit of moot-plan/<id>."""
    git = {**w.env, "GIT_DIR": str(w.repo / ".git")}
    shown = subprocess.run(
        ["git", "log", "--reverse", "--format=%B%x00%T%x01", f"main..moot-plan/{session}"],
        env=git,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = []
    for chunk in shown.split("\x01"):
        if chunk.strip():
            message, tree = chunk.strip("\n").split("\x00")
            rows.append((message.replace(session, "<id>").strip(), tree.strip()))
    return rows


Asked = tuple[str, str]  # (step, prompt): the prompt tells apart two children's equal steps


def asks_of(session: Path) -> list[Asked]:
    """The asks journaled by the session and its tournaments (their last user message)."""
    folders = [session, *sorted(p for p in (session / "tournaments").glob("*") if p.is_dir())]
    return [
        (str(e.get("step")), str(e["data"].get("prompt", "")))
        for folder in folders
        for e in journal_events(folder)
        if e.get("kind") == "ask"
    ]


def logged(w: World) -> list[Asked]:
    """The scripted roles' log: (step, the request's messages joined) per request."""
    path = w.root / "agents.log"
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [(str(r["step"]), str(r["prompt"])) for r in rows]


def same_request(entry: Asked, journaled: Asked) -> bool:
    return entry[0] == journaled[0] and entry[1].endswith(journaled[1])


@dataclass(frozen=True)
class Kill:
    """A kill point: once `child`'s journal (None: the pipeline's own) has `lines` lines."""

    lines: int
    child: str | None = None


@dataclass
class Trial:
    phase: str
    kills: list[Kill]  # the first kills the first run; each other one a resume
    impl_tournament: bool = False
    plan_tournament: bool = False

    @property
    def name(self) -> str:
        points = ",".join(f"{k.child + ':' if k.child else ''}{k.lines}" for k in self.kills)
        extra = "+tournament" if self.impl_tournament or self.plan_tournament else ""
        return f"{self.phase}{extra}@{points}"


@dataclass
class Ended:
    """What a run (killed and resumed, or not) left."""

    session: Path
    log: list[Asked]
    at_kill: list[tuple[int, list[Asked]]] = field(default_factory=list)  # log length, asks
    stderr: str = ""


def child_journal(w: World, label: str) -> Callable[[], Path | None]:
    def find() -> Path | None:
        session = w.session()
        return None if session is None else session / "tournaments" / f"{session.name}-{label}"

    return find


def play(w: World, trial: Trial) -> Ended:
    """Run the trial: the CLI killed at each kill point, then `moot resume` until exit 0."""
    at_kill: list[tuple[int, list[Asked]]] = []
    args = command(w, trial.phase)
    for number, kill in enumerate(trial.kills):
        process = start(w, args)
        journal = child_journal(w, kill.child) if kill.child else w.session
        assert kill_at(process, journal, kill.lines), f"{trial.name}: ended before kill {number}"
        session = w.session()
        assert session is not None
        at_kill.append((len(logged(w)), asks_of(session)))
        args = [sys.executable, "-m", "moot.cli", "resume", session.name, "-q"]
    errors = ""
    for _ in range(3):
        code, err = finish(start(w, args))
        errors += err
        if code == 0:
            break
    else:
        raise AssertionError(f"{trial.name}: resume never exited 0: {errors}")
    session = w.session()
    assert session is not None
    return Ended(session, logged(w), at_kill, errors)


def uninterrupted(w: World, phase: str) -> Ended:
    code, err = finish(start(w, command(w, phase)))
    assert code == 0, err
    session = w.session()
    assert session is not None
    return Ended(session, logged(w))


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
    too: its parent has yet to record what it gave); not just before
    a diff is applied or a worktree removed. A kill there lands while `git apply` or `git
    worktree remove` runs, which the engine does not survive yet: the two xfail tests below
    (test_a_kill_between_the_merge_and_its_record_..., test_a_kill_while_a_worktree_is_...)."""
    events = journal_events(folder)
    last = len(events) if child else len(events) - 2
    return [
        n
        for n in range(2, last + 1)
        if n == len(events) or events[n].get("data", {}).get("what") not in ("apply", "prune")
    ]


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


def killed_at_step(w: World, phase: str, step: str) -> Path:
    """The CLI killed once the pipeline's journal records `step`; its session folder."""
    process = start(w, command(w, phase))

    def reached() -> bool:
        session = w.session()
        return session is not None and any(e.get("step") == step for e in journal_events(session))

    wait_until(reached, f"{step} in the journal", alive=lambda: process.poll() is None)
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=TIMEOUT)
    session = w.session()
    assert session is not None
    return session


def resume(w: World, session: Path) -> tuple[int, str]:
    return finish(start(w, [sys.executable, "-m", "moot.cli", "resume", session.name, "-q"]))


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
@pytest.mark.xfail(
    strict=True,
    reason="moot/engine/code_effects.py: apply_diff runs `git apply`, then journals it; a kill "
    "in between leaves the change applied, and the resume's apply of the same diff fails",
)
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
@pytest.mark.xfail(
    strict=True,
    reason="moot/code/_worktrees.py _teardown: `git worktree remove -f -f` refuses a worktree "
    "whose .git file an interrupted remove already deleted, so the prune never completes",
)
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
