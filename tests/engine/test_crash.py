"""Crash safety with real processes: `moot run` is killed with SIGKILL at many points, then
`moot resume` finishes the session. The outcome must equal an uninterrupted run with the same
seed, and no step that reached the journal may be asked again.

The scripted agents (written to a file, so that a child process can load them) log every call
(`<step>` a line, fsync'd) before they answer. A full run asks 17 times: 3 solve, then two
rounds of 3 evaluate + 3 revise + 1 verify (CONTINUE in round 1, CONSENSUS in round 2).

Three styles of kill:
* the agent kills its own process at call number KILL_AT (1..17). Before it dies it waits until
  every other call already made has been journaled, so exactly one step is in flight at the kill:
  that step is asked exactly twice, every other step exactly once. (If the engine journaled
  late, for instance only after a whole phase, that wait times out, the kill still happens and
  the counts fail.)
* the test kills the child from outside while several calls overlap, at a point it places by
  waiting for the journal's Nth `ask` line (N in KILL_POINTS_OUTSIDE). Calls after the Nth are
  held (they answer only long after the test's deadline), so the journal holds exactly N asks
  at the kill, with the held calls in flight: the points differ by construction, however slow
  the machine. The check: at most two asks per step, the steps asked twice are those in
  flight, and no step journaled before the kill is asked after it.
* the test kills the child while a group fsync hangs (issue 23): the journal's fsync hangs once
  it holds the first answer, the other two answers of the phase are written behind it, and the
  kill comes once all three lines are in the journal. None of them was acted on (no call of the
  next phase was made), and the resume asks none of them again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from moot import api as runner
from moot.cli import main
from moot.engine.journal import Journal
from tests.waiting import has_ask, wait_for_journal, wait_until

MOOT = str(Path(sys.executable).parent / "moot")
TASK = "How should the service store its sessions?"
SEED = 5
FULL_RUN_CALLS = 17
KILL_POINTS = list(range(1, FULL_RUN_CALLS + 1))
# kills from outside, once the journal holds this many asks: one in each of the first phases
KILL_POINTS_OUTSIDE = (1, 4, 8)
SLOW_LATENCY = 0.04  # per unit; a call sleeps 1..4 units
PROCESS_TIMEOUT = 120  # a hang, not a slow machine; the agents' quiesce waits up to 60 s
HELD_FOR = 4 * PROCESS_TIMEOUT  # a held call answers only after this; the test kills it first

AGENTS = r'''
"""Scripted agents for crash tests (see tests/engine/test_crash.py)."""
import asyncio
import glob
import hashlib
import json
import os
import signal
import time

FOREVER = 10**9


def _hold_group_fsync(asks):
    """Make the journal's first fsync once it holds `asks` ask lines hang (a disk stalling in
    the middle of a group fsync): the test kills the process while it hangs."""
    real = os.fsync

    def fsync(fd):
        path = os.readlink(f"/proc/self/fd/{fd}")
        if path.endswith("events.jsonl"):
            with open(path, "rb") as handle:
                count = sum(1 for line in handle if b'"kind":"ask"' in line)
            if count >= asks:
                with open(os.environ["MOOT_TEST_CALLS"] + ".fsync", "w") as handle:
                    handle.write(str(count))
                time.sleep(FOREVER)
        real(fd)

    os.fsync = fsync


if os.environ.get("MOOT_TEST_HOLD_FSYNC"):
    _hold_group_fsync(int(os.environ["MOOT_TEST_HOLD_FSYNC"]))


def _answer(step):
    if "/verify/" in step:
        decision, score = ("CONTINUE", 4) if step.startswith("r1/") else ("CONSENSUS", 9)
        return (
            "AGREEMENT POINTS: most.\n<verdict>\n"
            f"decision: {decision}\nconvergence_score: {score}\n"
            f"remaining_disagreements: {0 if decision == 'CONSENSUS' else 2}\n"
            "base_solution: Agent B\nmodifications: none\n</verdict>"
        )
    if "/evaluate/" in step:
        return f"Strengths: clear. Weaknesses: none. Errors: none. ({step})"
    if step == "r0/solve/agent_b":
        # B's first answer already holds what the run ends on: the agreement the judge
        # confirms rests on a first, independent answer (else it is no consensus)
        step = "r2/revise/agent_b"
    return (
        f"<solution>\n## PLAN\n1. store them in a journal ({step})\n## CHANGES\n{step}\n"
        "</solution>\n<analysis>\n## RISKS\nnone\n## DISAGREEMENTS\nNone.\n</analysis>"
    )


def _journaled_asks():
    steps = set()
    pattern = os.path.join(os.environ["MOOT_HOME"], "sessions", "*", "events.jsonl")
    for path in glob.glob(pattern):
        with open(path, "rb") as handle:
            for line in handle:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if event.get("kind") == "ask":
                    steps.add(event.get("step"))
    return steps


async def _quiesce(log, me):
    """Wait (bounded, generously: a loaded machine is slow) until every other call made so
    far is journaled."""
    deadline = time.monotonic() + 60.0
    while time.monotonic() < deadline:
        with open(log, encoding="utf-8") as handle:
            others = set(handle.read().split()) - {me}
        if others <= _journaled_asks():
            return
        await asyncio.sleep(0.005)


async def reply(request):
    step = request.meta["step"]
    log = os.environ["MOOT_TEST_CALLS"]
    # Logging and counting happen with no await in between: the event loop runs one reply
    # at a time, so the count is exact even though the three agents overlap.
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(step + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    with open(log, encoding="utf-8") as handle:
        number = sum(1 for _ in handle)
    if number == int(os.environ.get("KILL_AT") or 0):
        # What the journal held when this call started: every earlier phase must be in it.
        with open(log, encoding="utf-8") as handle:
            logged = handle.read().split()
        snapshot = {"step": step, "logged": logged, "journaled": sorted(_journaled_asks())}
        with open(log + ".kill", "w", encoding="utf-8") as handle:
            json.dump(snapshot, handle)
        await _quiesce(log, step)
        os.kill(os.getpid(), signal.SIGKILL)
    if number > int(os.environ.get("MOOT_TEST_HOLD_AFTER") or FOREVER):
        await asyncio.sleep(float(os.environ["MOOT_TEST_HELD_FOR"]))  # in flight at the kill
    unit = float(os.environ.get("MOOT_TEST_LATENCY") or 0.002)
    await asyncio.sleep(unit * (1 + hashlib.sha256(step.encode()).digest()[0] % 4))
    return _answer(step)
'''


# -- helpers ------------------------------------------------------------------------------------
_TEST_ENV = (
    "KILL_AT",
    "MOOT_JOURNAL_KEY",
    "MOOT_TEST_CALLS",
    "MOOT_TEST_LATENCY",
    "MOOT_TEST_HOLD_AFTER",
    "MOOT_TEST_HELD_FOR",
    "MOOT_TEST_HOLD_FSYNC",
)
_BASE_ENV = {k: v for k, v in os.environ.items() if k not in _TEST_ENV}


@dataclass(frozen=True)
class Home:
    """One MOOT_HOME (holding one session) and its calls log."""

    root: Path
    agents: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def calls_log(self) -> Path:
        return self.root / "calls.log"

    def env(self, **extra: str) -> dict[str, str]:
        # Built from a snapshot: worker threads start children while the main thread
        # changes os.environ for in-process resumes.
        return {
            **_BASE_ENV,
            "MOOT_HOME": str(self.home),
            "MOOT_TEST_CALLS": str(self.calls_log),
            **extra,
        }

    def run_args(self) -> list[str]:
        spec = f"scripted:{self.agents}"
        models = ["--models", spec] * 3
        return [MOOT, "run", TASK, *models, "--seed", str(SEED), "-q"]

    def calls(self) -> list[str]:
        if not self.calls_log.exists():
            return []
        return self.calls_log.read_text(encoding="utf-8").split()

    def session(self) -> Path:
        sessions = self.home / "sessions"
        folders = [p for p in sessions.iterdir() if (p / "events.jsonl").exists()]
        assert len(folders) == 1, folders
        return folders[0]

    def session_if_any(self) -> Path | None:
        """The session folder once it has a journal; None before."""
        sessions = self.home / "sessions"
        if not sessions.is_dir():
            return None
        folders = [p for p in sessions.iterdir() if (p / "events.jsonl").exists()]
        return folders[0] if len(folders) == 1 else None


def make_home(root: Path, agents: Path) -> Home:
    root.mkdir(parents=True, exist_ok=True)
    return Home(root, agents)


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, env=env, cwd=cwd, capture_output=True, text=True, timeout=PROCESS_TIMEOUT
    )


def journal_lines(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]


def asked_steps(events: list[dict[str, Any]]) -> list[str]:
    return [e["step"] for e in events if e["kind"] == "ask"]


def exit_code(exc: SystemExit) -> int:
    return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)


def cli(*args: str) -> int:
    """`moot ARGS` in this process; returns its exit code."""
    try:
        main(list(args))
    except SystemExit as exc:
        return exit_code(exc)
    return 0


def resume_in_process(home: Home) -> list[int]:
    """`moot resume ID` in this process until it exits 0 (at most three times)."""
    codes: list[int] = []
    with pytest.MonkeyPatch.context() as patch:
        for name, value in home.env().items():
            if name.startswith("MOOT_"):
                patch.setenv(name, value)
        for name in _TEST_ENV:
            if name == "MOOT_TEST_CALLS":
                continue
            patch.delenv(name, raising=False)
        for _ in range(3):
            codes.append(cli("resume", home.session().name, "-q"))
            if codes[-1] not in (3, 130):  # paused or interrupted: resume again
                break
    return codes


def resume_in_subprocess(home: Home) -> list[int]:
    """A real `moot resume ID` process until it exits 0 (at most three times)."""
    codes: list[int] = []
    for _ in range(3):
        done = run([MOOT, "resume", home.session().name, "-q"], home.env(), home.root)
        codes.append(done.returncode)
        assert done.returncode in (0, 3, 130), done.stderr
        if done.returncode == 0:
            break
    return codes


def phase(step: str) -> str:
    """'r1/evaluate/agent_b' -> 'r1/evaluate'."""
    return step.rsplit("/", 1)[0]


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    # `journal`: the head the result was computed from; a crash and resume add events to it
    return {k: v for k, v in result.items() if k not in ("session_id", "journal")}


@dataclass
class Crash:
    """What one killed, then resumed, session left behind."""

    label: str
    home: Home
    killed_code: int | None
    killed_stderr: str
    calls_before: list[str]  # calls the killed process made, in order
    journaled_before: list[str]  # steps with an `ask` event in the journal when it died
    resume_codes: list[int] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)  # every call, both processes
    result: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def calls_after(self) -> list[str]:
        return self.calls[len(self.calls_before) :]

    def finish(self) -> Crash:
        """Resume until done (in this process), then collect what it left."""
        self.resume_codes = resume_in_process(self.home)
        self.calls = self.home.calls()
        session = self.home.session()
        self.result = json.loads((session / "result.json").read_text())
        self.events = journal_lines(session)
        return self


def crashed(label: str, home: Home, code: int | None, stderr: str) -> Crash:
    return Crash(
        label=label,
        home=home,
        killed_code=code,
        killed_stderr=stderr,
        calls_before=home.calls(),
        journaled_before=asked_steps(journal_lines(home.session())),
    )


def kill_at(home: Home, number: int) -> Crash:
    """A run whose agent SIGKILLs its own process at call `number`."""
    killed = run(home.run_args(), home.env(KILL_AT=str(number)), home.root)
    return crashed(f"KILL_AT={number}", home, killed.returncode, killed.stderr)


def kill_after(home: Home, asks: int) -> Crash:
    """A slow run that the test SIGKILLs once its journal holds `asks` ask lines; the calls
    after those are held, so they are in flight at the kill."""
    env = home.env(
        MOOT_TEST_LATENCY=str(SLOW_LATENCY),
        MOOT_TEST_HOLD_AFTER=str(asks),
        MOOT_TEST_HELD_FOR=str(HELD_FOR),
    )
    with subprocess.Popen(
        home.run_args(),
        env=env,
        cwd=home.root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            wait_for_journal(
                home.session_if_any,
                has_ask(count=asks),
                f"ask line {asks} in the journal",
                alive=lambda: child.poll() is None,
            )
            child.send_signal(signal.SIGKILL)
            _, stderr = child.communicate(timeout=PROCESS_TIMEOUT)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=PROCESS_TIMEOUT)
    return crashed(f"SIGKILL after ask line {asks}", home, child.returncode, stderr)


# -- fixtures -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One agents file for every run: its path is the model spec, which result.json shows."""
    path = tmp_path_factory.mktemp("agents") / "crash_agents.py"
    path.write_text(AGENTS, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, agents: Path) -> dict[str, Any]:
    """An uninterrupted run with the same seed."""
    home = make_home(tmp_path_factory.mktemp("reference"), agents)
    done = run(home.run_args(), home.env(), home.root)
    assert done.returncode == 0, done.stderr
    calls = home.calls()
    assert len(calls) == FULL_RUN_CALLS and len(set(calls)) == FULL_RUN_CALLS, calls
    result = json.loads((home.session() / "result.json").read_text())
    assert result["status"] == "consensus" and result["rounds"] == 2
    return {"result": result, "steps": sorted(calls)}


@pytest.fixture(scope="module")
def crashes(tmp_path_factory: pytest.TempPathFactory, agents: Path) -> dict[Any, Crash]:
    """Every kill scenario. Two worker threads run the killed children; this thread resumes
    each session as soon as its child has died."""
    base = tmp_path_factory.mktemp("crashes")
    done: dict[Any, Crash] = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [
            (
                ("outside", asks),
                pool.submit(kill_after, make_home(base / f"after-{asks}", agents), asks),
            )
            for asks in KILL_POINTS_OUTSIDE
        ] + [(n, pool.submit(kill_at, make_home(base / f"at-{n}", agents), n)) for n in KILL_POINTS]
        for key, future in futures:
            done[key] = future.result().finish()
    return done


def assert_same_outcome(crash: Crash, reference: dict[str, Any]) -> None:
    assert crash.killed_code == -signal.SIGKILL, (
        f"{crash.label}: the run was not killed (exit {crash.killed_code}): {crash.killed_stderr}"
    )
    assert crash.resume_codes[-1] == 0, f"{crash.label}: resume exit codes {crash.resume_codes}"
    expected = reference["result"]
    for key in ("final_answer", "details", "rounds", "status", "positions"):
        assert crash.result[key] == expected[key], f"{crash.label}: {key} differs"
    assert comparable(crash.result) == comparable(expected), f"{crash.label}: result differs"
    # each step is journaled exactly once, and the journal still verifies and replays
    assert sorted(asked_steps(crash.events)) == reference["steps"]
    session = crash.home.session()
    journal, cut = Journal.open(session / "events.jsonl", repair=False)
    assert cut is None and len(journal.events) == len(crash.events)
    replayed = runner.replay(session.name, root=session.parent)
    assert replayed.identical is True, f"{crash.label}: replay differs from result.json"


# -- tests --------------------------------------------------------------------------------------
@pytest.mark.parametrize("number", KILL_POINTS)
def test_kill_at_call_then_resume_asks_only_the_killed_step_again(
    number: int, crashes: dict[Any, Crash], reference: dict[str, Any]
) -> None:
    crash = crashes[number]
    assert_same_outcome(crash, reference)
    # calls overlap, so others of the same phase may have started before the kill; the agent
    # waited for those to be journaled, so the killed call is the only one lost
    assert len(crash.calls_before) >= number
    killed_step = crash.calls_before[number - 1]
    assert set(crash.journaled_before) == set(crash.calls_before) - {killed_step}
    # when the killed call started, every answer of an earlier phase, which the protocol had
    # already used to build this phase's prompts, was journaled
    snapshot = json.loads(Path(f"{crash.home.calls_log}.kill").read_text())
    assert snapshot["step"] == killed_step
    earlier = {s for s in snapshot["logged"] if phase(s) != phase(killed_step)}
    assert earlier <= set(snapshot["journaled"]), (
        f"used before journaled: {sorted(earlier - set(snapshot['journaled']))}"
    )
    counts = Counter(crash.calls)
    expected = {step: 1 for step in reference["steps"]}
    expected[killed_step] = 2
    assert dict(counts) == expected, f"KILL_AT={number}: asks per step differ"
    assert not set(crash.calls_after) & set(crash.journaled_before), (
        "a step journaled before the kill was asked again after it"
    )


@pytest.mark.parametrize("asks", KILL_POINTS_OUTSIDE)
def test_kill_from_outside_at_journal_points_then_resume(
    asks: int, crashes: dict[Any, Crash], reference: dict[str, Any]
) -> None:
    crash = crashes[("outside", asks)]
    assert_same_outcome(crash, reference)
    assert len(crash.journaled_before) == asks, f"{crash.label}: {crash.journaled_before}"
    assert len(crash.calls_before) > asks and crash.calls_after, (
        f"{crash.label}: {len(crash.calls_before)} calls before the kill and "
        f"{len(crash.calls_after)} after: nothing was in flight at the kill"
    )
    counts = Counter(crash.calls)
    assert set(counts) == set(reference["steps"])
    assert max(counts.values()) <= 2, counts
    again = set(crash.calls_after) & set(crash.journaled_before)
    assert not again, f"journaled before the kill, yet asked again after it: {sorted(again)}"
    # the steps asked twice are exactly those in flight (asked, not journaled) at the kill
    in_flight = set(crash.calls_before) - set(crash.journaled_before)
    assert {step for step, n in counts.items() if n == 2} == in_flight


def test_a_kill_during_a_group_fsync_acts_on_nothing_and_asks_nothing_again(
    tmp_path: Path, agents: Path, reference: dict[str, Any]
) -> None:
    home = make_home(tmp_path / "group-fsync", agents)
    env = home.env(MOOT_TEST_HOLD_FSYNC="1", MOOT_TEST_LATENCY=str(SLOW_LATENCY))
    held = Path(f"{home.calls_log}.fsync")
    with subprocess.Popen(
        home.run_args(), env=env, cwd=home.root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as child:
        try:
            wait_for_journal(
                home.session_if_any,
                has_ask(count=3),
                "the phase's three answers in the journal, behind a hanging fsync",
                alive=lambda: child.poll() is None,
            )
            # the fsync of the phase's answers hangs: the kill comes inside it
            wait_until(held.exists, "the hanging fsync", alive=lambda: child.poll() is None)
            child.send_signal(signal.SIGKILL)
            _, stderr = child.communicate(timeout=PROCESS_TIMEOUT)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=PROCESS_TIMEOUT)
    crash = crashed("SIGKILL during a group fsync", home, child.returncode, stderr.decode())
    solve = sorted(s for s in reference["steps"] if s.startswith("r0/solve/"))
    # the answers waited for their fsync: nothing of the next phase was asked
    assert sorted(crash.calls_before) == solve and sorted(crash.journaled_before) == solve
    crash.finish()
    assert_same_outcome(crash, reference)
    assert Counter(crash.calls) == Counter(reference["steps"])  # nothing asked twice


def test_kills_from_outside_land_at_different_points(crashes: dict[Any, Crash]) -> None:
    journaled = [len(crashes[("outside", n)].journaled_before) for n in KILL_POINTS_OUTSIDE]
    assert journaled == list(KILL_POINTS_OUTSIDE), journaled
    phases = {phase(crashes[("outside", n)].journaled_before[-1]) for n in KILL_POINTS_OUTSIDE}
    assert len(phases) == len(KILL_POINTS_OUTSIDE), phases


def test_status_of_a_killed_session_says_it_stopped_unexpectedly(
    tmp_path: Path,
    agents: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = make_home(tmp_path / "killed", agents)
    killed = run(home.run_args(), home.env(KILL_AT="9"), home.root)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    session = home.session()
    state = json.loads((session / "state.json").read_text())
    assert state["status"] == "running"  # the last word of the killed process
    with pytest.raises(ProcessLookupError):
        os.kill(int(state["pid"]), 0)
    monkeypatch.setenv("MOOT_HOME", str(home.home))

    capsys.readouterr()
    assert cli("status", session.name) == 0
    out = capsys.readouterr().out
    assert "stopped unexpectedly" in out and f"moot resume {session.name}" in out
    # replay needs a finished or stopped session, and says how to get one
    assert cli("replay", session.name) == 1
    assert f"moot resume {session.name}" in capsys.readouterr().err

    assert resume_in_subprocess(home) == [0]  # a real `moot resume` process this time
    assert Counter(home.calls()).most_common(1)[0][1] == 2  # the killed step, asked again
    assert cli("status", session.name) == 0
    out = capsys.readouterr().out
    assert "stopped unexpectedly" not in out and "consensus" in out
