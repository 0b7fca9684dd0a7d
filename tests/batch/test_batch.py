"""`moot batch`: one session per line, failures listed while the batch goes on, a batch killed
with SIGKILL continued by `moot batch --resume` without asking any journaled step again, and the
Ray executor on a local cluster.

The participants are real processes' scripted arena agents (file scripts, so that a subprocess
and a Ray worker load them too). Every answer names its question (`Q3`), so each call can be
logged as `Q3:r1/revise/agent_b`; at call KILL_AT the agent waits until every other logged call
is journaled, then kills its own process (the pattern of
tests/protocols/court/test_court_crash.py)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.cli.test_cli import moot as moot_in_process
from tests.protocols.court.test_court_crash import MOOT, moot
from tests.waiting import asks, has_kind, journal_events, wait_until

PARTICIPANTS = r'''"""Scripted arena agents for tests/batch/test_batch.py."""
import asyncio
import json
import os
import re
import signal
import time

FROZEN = []  # set when this process is about to be killed: no further call starts


def _journaled():
    found = set()
    for root, _, files in os.walk(os.environ["MOOT_HOME"]):
        if "events.jsonl" in files:
            with open(os.path.join(root, "events.jsonl"), encoding="utf-8") as events:
                for line in events:
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue
                    if event.get("kind") == "ask":
                        found.add(_tag(root, event["step"]))
    return found


async def _log(tag):
    if FROZEN:  # other sessions go on while the killer waits: hold their calls unlogged
        await asyncio.Event().wait()
    log = os.environ["MOOT_TEST_CALLS"]
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(tag + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    with open(log, encoding="utf-8") as handle:
        calls = handle.read().split()
    if len(calls) == int(os.environ.get("KILL_AT") or 0):
        FROZEN.append(True)
        deadline = time.monotonic() + 60  # generous: a loaded machine is slow
        while time.monotonic() < deadline:  # wait until the others are journaled
            with open(log, encoding="utf-8") as handle:
                calls = handle.read().split()
            if set(calls) - {tag} <= _journaled():
                break
            await asyncio.sleep(0.005)
        os.kill(os.getpid(), signal.SIGKILL)
    return len(calls)


def _tag(root, step):
    with open(os.path.join(root, "session.json"), encoding="utf-8") as handle:
        task = json.load(handle)["task"]
    return re.search(r"Q\d+", task).group(0) + ":" + step


def question(request):
    for message in request.messages:
        found = re.search(r"\bQ\d+\b", message.content)
        if found:
            return found.group(0)
    raise ValueError("no question tag in the request")


async def agent(request):
    step, me = request.meta["step"], request.meta["agent"]
    tag = question(request)
    number = await _log(tag + ":" + step)
    if number > int(os.environ.get("HOLD_AFTER") or number):
        await asyncio.Event().wait()  # held: in flight until the run is stopped
    await asyncio.sleep(float(os.environ.get("SLOW") or 0))
    phase = step.split("/")[1]
    if phase in ("solve", "revise"):  # they differ at first (else the debate ends at once)
        value = 42 if phase == "revise" else {"agent_a": 41, "agent_b": 42, "agent_c": 43}[me]
        text = f"For {tag} the answer is {value}."
        return (f"<solution>\n## PLAN\n1. {text}\n## CHANGES\n{text}\n</solution>\n"
                "<analysis>\n## RISKS\nnone\n## DISAGREEMENTS\nNone.\n</analysis>")
    if phase == "evaluate":
        return f"Strengths: clear about {tag}. Weaknesses: none. Errors: none."
    return ("AGREEMENT POINTS: all.\n<verdict>\ndecision: CONSENSUS\nconvergence_score: 9\n"
            "remaining_disagreements: 0\nbase_solution: Agent A\nmodifications: none\n</verdict>")
'''
QUESTIONS = 4
# 3 solve, 3 evaluate, 3 revise; the revisions agree (42), so the arena stops before a verify
CALLS_PER_SESSION = 9


def home(root: Path, questions: int = QUESTIONS) -> dict[str, str]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "participants.py").write_text(PARTICIPANTS)
    (root / "tasks.jsonl").write_text(
        "".join(
            json.dumps({"id": f"Q{i}", "task": f"Q{i}: what is 6 x 7?"}) + "\n"
            for i in range(1, questions + 1)
        )
    )
    env = {k: v for k, v in os.environ.items() if k not in ("KILL_AT", "MOOT_JOURNAL_KEY")}
    return {**env, "MOOT_HOME": str(root / "home"), "MOOT_TEST_CALLS": str(root / "calls.log")}


def home_in_process(root: Path, monkeypatch: pytest.MonkeyPatch, questions: int) -> None:
    """`home`, for a batch run in this process: its folder current, its variables set."""
    env = home(root, questions)
    monkeypatch.chdir(root)
    monkeypatch.setenv("MOOT_HOME", env["MOOT_HOME"])
    monkeypatch.setenv("MOOT_TEST_CALLS", env["MOOT_TEST_CALLS"])


MODELS = ("--models", "scripted:participants.py#agent") * 3


def calls(root: Path) -> list[str]:
    return (root / "calls.log").read_text().split()


def journaled(root: Path) -> list[str]:
    """Every asked step in every session, tagged with its question."""
    steps = []
    for folder in (root / "home" / "sessions").iterdir():
        task = json.loads((folder / "session.json").read_text())["task"]
        for line in (folder / "events.jsonl").read_text().splitlines():
            event = json.loads(line)
            if event["kind"] == "ask":
                steps.append(task.split(":")[0] + ":" + event["step"])
    return steps


def test_a_batch_of_one_speaks_of_one_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home_in_process(tmp_path, monkeypatch, questions=1)
    code, out, err = moot_in_process(capsys, "batch", "tasks.jsonl", *MODELS)
    assert code == 0, err
    assert re.search(r"batch \S+: 1 session$", err, re.M), err
    assert "1 of 1 session ended (1 consensus)" in out


def test_a_failing_line_is_listed_and_the_batch_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home_in_process(tmp_path, monkeypatch, questions=2)
    with (tmp_path / "tasks.jsonl").open("a") as handle:
        handle.write(
            json.dumps({"id": "broken", "task": "Q9", "models": ["scripted:gone.py"] * 2}) + "\n"
        )
    code, out, err = moot_in_process(capsys, "batch", "tasks.jsonl", *MODELS)
    assert code == 1, err
    assert "3 of 3 sessions ended (2 consensus, 1 failed)" in out
    assert "broken: failed: scripted model file 'gone.py' does not exist" in out
    assert "continue with: moot batch --resume" in out
    assert len(calls(tmp_path)) == 2 * CALLS_PER_SESSION
    # not a terminal: one progress line per ended session, with the running totals
    progress = [line for line in err.splitlines() if " ended, " in line]
    assert len(progress) == 3
    assert re.search(
        rf"3/3 ended, 0 running, 1 failed, {2 * CALLS_PER_SESSION} calls, ETA 0s, [\d,]+ tokens, "
        r"\$0\.0000",
        err,
    )


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('{"question": "no task"}', "no 'task' field; each line needs one"),
        ('{"task": 5}', "'task' is not a string"),
        ('["a list"]', "expected a JSON object"),
    ],
)
def test_a_bad_line_is_refused_before_anything_runs(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    line: str,
    said: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    (tmp_path / "tasks.jsonl").write_text('{"task": "fine"}\n' + line + "\n")
    code, _, err = moot_in_process(capsys, "batch", "tasks.jsonl")
    assert code == 1
    assert f"tasks.jsonl line 2: {said}" in err and '{"task": "..."}' in err
    assert not (tmp_path / "home" / "sessions").exists()


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (
            ['{"id": "q1", "task": "fine"}', '{"id": "q1", "task": "again"}'],
            "line 2: id 'q1' is also tasks.jsonl line 1's; give each line its own id",
        ),
        (
            ['{"task": "fine"}', '{"task": "  "}'],
            "line 2: 'task' is empty; write the question or instruction to deliberate on",
        ),
        (
            ['{"task": "fine", "protocl": "vote"}'],
            "line 1: unknown field 'protocl' (did you mean 'protocol'?); "
            "allowed: task, id, protocol",
        ),
    ],
)
def test_duplicate_ids_an_empty_task_and_a_misspelt_field_are_refused_before_anything_runs(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lines: list[str],
    said: str,
) -> None:
    """Two `q1` rows in results.jsonl; an empty task failed as a session and offered a
    `--resume` that could never succeed; 'protocl' named no field it might mean."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    (tmp_path / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    code, out, err = moot_in_process(capsys, "batch", "tasks.jsonl")
    assert code == 1
    assert f"tasks.jsonl {said}" in err
    assert "--resume" not in out + err
    assert not (tmp_path / "home" / "sessions").exists()


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", (14, 27))
def test_batch_killed_then_resumed_asks_no_journaled_step_again(
    tmp_path: Path, kill_at: int
) -> None:
    env = home(tmp_path)
    killed = moot(
        tmp_path, {**env, "KILL_AT": str(kill_at)}, "batch", "tasks.jsonl", *MODELS, "-j", "2"
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    (batch,) = (tmp_path / "home" / "batches").iterdir()
    before = calls(tmp_path)
    recorded = journaled(tmp_path)
    killed_call = before[kill_at - 1]
    assert set(recorded) == set(before) - {killed_call}  # only the killed call was lost
    sessions_before = set((tmp_path / "home" / "sessions").iterdir())

    resumed = moot(tmp_path, env, "batch", "--resume", batch.name)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{QUESTIONS} of {QUESTIONS} sessions ended ({QUESTIONS} consensus)" in resumed.stdout

    counts = Counter(calls(tmp_path))
    assert counts[killed_call] == 2  # asked before the kill (not journaled), and again
    assert all(n == 1 for call, n in counts.items() if call != killed_call), counts
    assert len(counts) == QUESTIONS * CALLS_PER_SESSION
    # every session begun before the kill (some may have a folder but no call yet) was resumed
    # in its own folder, not started afresh: one folder per question, the old ones kept
    sessions_after = set((tmp_path / "home" / "sessions").iterdir())
    assert sessions_before <= sessions_after
    questions = [
        re.search(r"Q\d+", json.loads((f / "session.json").read_text())["task"]).group(0)  # type: ignore[union-attr]
        for f in sessions_after
    ]
    assert sorted(questions) == sorted({c.split(":")[0] for c in counts}), questions
    for folder in sessions_after:
        assert json.loads((folder / "result.json").read_text())["status"] == "consensus"

    again = moot(tmp_path, env, "batch", "--resume", batch.name)
    assert again.returncode == 0, again.stderr
    assert Counter(calls(tmp_path)) == counts  # a finished batch asks nothing


@pytest.mark.slow
def test_sigterm_interrupts_the_running_sessions_and_resume_finishes_them(tmp_path: Path) -> None:
    # calls after the 5th are held, so both sessions of -j 2 are running at the signal
    env = {**home(tmp_path), "SLOW": "0.2", "HOLD_AFTER": "5"}
    driver = subprocess.Popen(
        [MOOT, "batch", "tasks.jsonl", *MODELS, "-j", "2"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    sessions = tmp_path / "home" / "sessions"

    def answered() -> int:
        folders = sessions.iterdir() if sessions.is_dir() else ()
        return sum(len(asks(journal_events(f))) for f in folders)

    wait_until(
        lambda: answered() >= 5,
        "the 5 answered calls in the sessions' journals",
        alive=lambda: driver.poll() is None,
    )
    running = [f for f in sessions.iterdir() if not has_kind("finished")(journal_events(f))]
    assert answered() == 5 and len(running) == 2, running
    driver.send_signal(signal.SIGTERM)
    out, err = driver.communicate(timeout=60)
    assert driver.returncode == 130, err
    assert "interrupted" in out and "continue with: moot batch --resume" in out
    statuses = [
        json.loads((folder / "result.json").read_text())["status"]
        for folder in (tmp_path / "home" / "sessions").iterdir()
    ]
    assert statuses.count("interrupted") == 2  # the two running sessions journaled their stop
    recorded = Counter(journaled(tmp_path))
    (batch,) = (tmp_path / "home" / "batches").iterdir()

    resumed = moot(
        tmp_path, {**env, "SLOW": "0", "HOLD_AFTER": ""}, "batch", "--resume", batch.name
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"{QUESTIONS} of {QUESTIONS} sessions ended ({QUESTIONS} consensus)" in resumed.stdout
    counts = Counter(calls(tmp_path))
    assert len(counts) == QUESTIONS * CALLS_PER_SESSION
    assert all(counts[call] == 1 for call in recorded), "a journaled step was asked again"


def test_ray_executor_runs_each_session_in_a_local_cluster(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (the optional extra moot[ray])")
    env = home(tmp_path, questions=3)
    args = ["batch", "tasks.jsonl", *MODELS, "--executor", "ray", "-j", "2"]
    driver = subprocess.Popen(
        [MOOT, *args],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = driver.communicate(timeout=120)
    assert driver.returncode == 0, err
    assert "3 of 3 sessions ended (3 consensus)" in out
    assert Counter(calls(tmp_path)) == Counter(journaled(tmp_path))
    assert len(calls(tmp_path)) == 3 * CALLS_PER_SESSION
    pids = set()
    for folder in (tmp_path / "home" / "sessions").iterdir():
        events = [json.loads(x) for x in (folder / "events.jsonl").read_text().splitlines()]
        pids |= {e["data"]["pid"] for e in events if e["kind"] == "run_started"}
    assert pids and driver.pid not in pids  # the sessions ran in Ray's worker processes


def test_a_batch_runs_in_one_process_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from filelock import FileLock

    from moot.batch import create_batch, run_batch_sync
    from moot.config import RunConfig
    from moot.errors import MootError

    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    config = RunConfig.read({"agents": [{"model": "scripted:x.py"}] * 2})
    batch = create_batch([("one", "a task", config)])
    with FileLock(batch.path / "lock"):  # as a running `moot batch` holds it
        with pytest.raises(MootError, match=f"batch {batch.id} is being run by another process"):
            run_batch_sync(batch)
    assert not batch.journal.exists()  # nothing was started


def test_resuming_a_finished_session_on_a_running_loop_rebuilds_it_without_a_call() -> None:
    """`resume_async` of a finished session replays it; the replay's own event loop must not
    start inside the caller's (it raised 'asyncio.run() cannot be called from a running event
    loop')."""
    import asyncio

    from moot import api
    from tests.scripts import Debate, start

    debate = Debate()
    run = start("What is 6 times 7?", debate.config())
    asked = sum(debate.steps.values())
    again = asyncio.run(api.resume_async(run.session_id))
    assert "already finished" in (again.message or "") and again.exit_code == 0
    assert sum(debate.steps.values()) == asked


def test_one_progress_shows_each_batch_of_a_bench_from_zero() -> None:
    """`moot bench` runs several batches with one progress: the second one counts its own
    sessions ("1/2 ended"), not on top of the first ("4/2", a negative ETA)."""
    import io

    from moot.batch import LineResult
    from moot.display.batch import BatchProgress

    stream = io.StringIO()
    progress = BatchProgress(stream, rich=False)
    progress.begun(3, [])
    for index in range(3):
        progress.ended(LineResult(index, f"arena/q{index}", "s", "consensus", tokens=10))
    progress.begun(2, [])
    progress.ended(LineResult(0, "vote/q0", "s", "consensus", tokens=5))
    last = stream.getvalue().splitlines()[-1]
    assert "1/2 ended" in last and "5 tokens" in last, last
    assert not re.search(r"ETA -\d", last), last  # no negative ETA
    progress.close()


def test_a_provider_limit_caps_the_sessions_using_that_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--provider-limit scripted=1`: one session at a time calls the provider (its 3 agents
    at once), where -j 4 alone lets 4 sessions call it together."""
    import asyncio

    from moot.batch import create_batch, run_batch_sync
    from moot.config import RunConfig
    from moot.models.scripted import register_script
    from moot.types import Request

    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    live, peak = [0], [0]

    async def agree(request: Request) -> str:
        live[0] += 1
        peak[0] = max(peak[0], live[0])
        await asyncio.sleep(0.02)
        live[0] -= 1
        return "<solution>\nThe answer is 2.\n</solution>"

    register_script("limited", agree)
    config = RunConfig.read({"agents": [{"model": "scripted:@limited"}] * 3})
    for limits, most in (({}, 12), ({"scripted": 1}, 3)):
        peak[0] = 0
        batch = create_batch([(f"q{i}", f"What is 1+{i}?", config) for i in range(8)])
        summary = run_batch_sync(batch, concurrency=4, provider_limits=limits)
        assert len(summary.results) == 8 and summary.failed == []
        assert peak[0] == most, (limits, peak[0])
