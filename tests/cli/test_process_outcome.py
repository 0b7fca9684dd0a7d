"""The outcome is shown the moment it is known, and the reports come after it without ever being
lost: a real `moot run` process against a loopback OpenAI-compatible server, killed with SIGKILL
after its outcome line and before its reports, leaves a session that `moot show`, `moot export`,
`moot replay` and `moot resume` still read whole."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from moot.api import RunResult, start
from moot.engine.store import find_session
from moot.lifecycle.plan import load_config
from tests.arena_server import ChatServer
from tests.loopback import serving

MOOT = str(Path(sys.executable).parent / "moot")
SRC = str(Path(__file__).resolve().parents[2] / "src")
TASK = "Count the pairs that sum to a target."
# Put first on PYTHONPATH: report writing never ends in any moot process started with
# MOOT_TEST_STALL_REPORTS set, the detached report writer included. It stands for a writer
# killed while rendering.
STALLED_REPORTS = (
    "import os\n"
    "if os.environ.get('MOOT_TEST_STALL_REPORTS'):\n"
    "    import time, moot.report\n"
    "    moot.report.write_reports = lambda *args, **kwargs: time.sleep(600)\n"
)


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with serving(ChatServer()) as running:
        yield running


def _models(server: ChatServer, count: int) -> list[str]:
    return [f"openai-compat:{server.url}#m{index}" for index in range(count)]


def _moot(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MOOT_HOME": str(home), "PYTHONPATH": SRC}
    return subprocess.run(
        [MOOT, *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_the_library_shows_the_outcome_before_it_writes_the_reports(
    server: ChatServer, isolated: Path
) -> None:
    seen: list[tuple[str, bool, bool]] = []

    def on_outcome(run: RunResult) -> None:
        folder = run.folder
        seen.append((run.result.status, (folder / "result.json").exists(), _reports(folder)))

    overrides = {"agents": [{"model": spec} for spec in _models(server, 3)], "seed": 1}
    run = start(TASK, load_config(None, overrides, rounds=1), on_outcome=on_outcome)
    # Called once, with the outcome and its result.json on disk, before any report existed.
    assert seen == [("consensus", True, False)]
    assert run.result.status == "consensus" and _reports(run.folder)


def _reports(folder: Path) -> bool:
    return (folder / "report.md").exists() or (folder / "report.html").exists()


def test_the_run_exits_after_its_outcome_while_a_writer_writes_the_reports(
    server: ChatServer, isolated: Path
) -> None:
    """Issue 23: the reports come from a detached writer, so the process exits once its
    outcome is printed; `moot show` waits for the writer, so the reports exist after it."""
    argv = ["run", TASK, "--seed", "1", "--rounds", "1", *_model_args(server)]
    done = _moot(*argv, home=isolated)
    assert done.returncode == 0, done.stderr
    session_id = _session_id(done.stdout)
    folder = find_session(session_id, isolated / "sessions").path
    shown = _moot("show", session_id, home=isolated)
    assert shown.returncode == 0 and "consensus" in shown.stdout.lower(), shown.stderr
    assert (folder / "report.md").exists() and (folder / "report.html").exists()
    assert not (folder / "reports.pending").exists()
    assert "revised in round 1" in (folder / "report.md").read_text()


def _model_args(server: ChatServer) -> list[str]:
    return [arg for spec in _models(server, 3) for arg in ("--models", spec)]


def _session_id(stdout: str) -> str:
    outcome = next(line for line in stdout.splitlines() if line.startswith("Session "))
    assert ": consensus: " in outcome, outcome
    return outcome.split()[1].rstrip(":")


def test_a_kill_between_the_outcome_and_the_reports_loses_nothing(
    server: ChatServer, isolated: Path, tmp_path: Path
) -> None:
    """The run has exited with its outcome; its report writer is killed while rendering."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(STALLED_REPORTS)
    env = {
        **os.environ,
        "MOOT_HOME": str(isolated),
        "PYTHONPATH": os.pathsep.join([str(shim), SRC]),
        "MOOT_TEST_STALL_REPORTS": "1",
    }
    argv = [MOOT, "run", TASK, "--seed", "1", "--rounds", "1", *_model_args(server)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr  # it did not wait for its reports
    session_id = _session_id(done.stdout)
    folder = find_session(session_id, isolated / "sessions").path
    assert not _reports(folder)  # the writer is still rendering them
    writer = int((folder / "reports.pending").read_text())
    os.kill(writer, signal.SIGKILL)

    shown = _moot("show", session_id, home=isolated)
    assert shown.returncode == 0, shown.stderr
    assert "consensus" in shown.stdout.lower() and "revised in round 1" in shown.stdout

    html, md = tmp_path / "out" / "report.html", tmp_path / "out" / "report.md"
    html.parent.mkdir()
    exported = _moot("export", session_id, "--html", str(html), "--md", str(md), home=isolated)
    assert exported.returncode == 0, exported.stderr
    assert "revised in round 1" in md.read_text() and "<html" in html.read_text().lower()

    replayed = _moot("replay", session_id, home=isolated)
    assert replayed.returncode == 0 and "identical" in replayed.stdout.lower(), replayed.stdout

    # Resuming it asks nothing and writes the reports the killed process never wrote.
    resumed = _moot("resume", session_id, "-q", home=isolated)
    assert resumed.returncode == 0, resumed.stderr
    assert "revised in round 1" in resumed.stdout
    assert (folder / "report.md").exists() and (folder / "report.html").exists()
    assert "revised in round 1" in (folder / "report.md").read_text()


# What a question's run loads, written by the process itself once its outcome is printed.
LOADED = (
    "import atexit, json, os, sys\n"
    "dump = lambda: open(os.environ['LOADED'], 'w').write(json.dumps(sorted(sys.modules)))\n"
    "atexit.register(dump)\n"
    "from moot.cli import main\n"
    "main()\n"
)


def _loaded_by_a_question(script: str, server: ChatServer, home: Path, tmp_path: Path) -> Any:
    """Run a 3-agent question in a process started by `script`, which writes what it loaded
    (JSON) to the file named by $LOADED; return that."""
    loaded = tmp_path / "loaded.json"
    env = {**os.environ, "MOOT_HOME": str(home), "PYTHONPATH": SRC, "LOADED": str(loaded)}
    argv = [sys.executable, "-c", script, "run", TASK, "--rounds", "1"]
    for model in _models(server, 3):
        argv += ["--models", model]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(loaded.read_text())


def test_a_question_run_loads_no_code_task_cache_or_terminal_machinery(
    server: ChatServer, isolated: Path, tmp_path: Path
) -> None:
    """Issue 12: the git plumbing, the response cache (sqlite3), rich, the batch and bench
    commands, verify commands' process supervisor, the TOML parser and the retry machinery cost
    a run that is a question, with no cache, no config file, printing plain lines, whose calls
    all succeed, about 0.1 s of start-up: they are not loaded."""
    modules = set(_loaded_by_a_question(LOADED, server, isolated, tmp_path))
    assert "moot.protocols.arena.run" in modules and "moot.engine.session" in modules
    unused = (
        "moot.code",
        "moot.code.workspace",
        "moot.engine.cache",
        "sqlite3",
        "rich",
        "moot.cli.batch",
        "moot.bench",
        "moot.pipeline",  # offered as a plugin: imported only when a protocol name is not moot's
        "moot.engine.shell",  # verify commands, and the process supervisor they run under
        "moot.models.cli_process",
        "tomllib",  # a config file or the price table, neither read here
        "tenacity",  # retries: every call here succeeds on its first try
    )
    assert not [name for name in unused if name in modules]


# The modules whose code has run when the process first connects to a model, and at its exit.
AT_FIRST_REQUEST = (
    "import atexit, gc, json, os, sys, types\n"
    "seen = {}\n"
    "def loaded():\n"
    "    return sorted(k for k, m in sys.modules.items() if type(m) is types.ModuleType)\n"
    "def models():\n"
    "    pydantic = sys.modules.get('pydantic')\n"
    "    found, todo = [], list(pydantic.BaseModel.__subclasses__() if pydantic else [])\n"
    "    while todo:\n"
    "        cls = todo.pop()\n"
    "        todo += cls.__subclasses__()\n"
    "        found.append(f'{cls.__module__}.{cls.__qualname__}')\n"
    "    return sorted(n for n in found if n.startswith('moot.'))\n"
    "def hook(event, args):\n"
    "    if event == 'socket.connect' and 'first' not in seen:\n"
    "        seen['first'] = loaded()\n"
    "        seen['models'] = models()\n"
    "        seen['collecting'] = gc.isenabled()\n"
    "sys.addaudithook(hook)\n"
    "atexit.register(lambda: open(os.environ['LOADED'], 'w').write(\n"
    "    json.dumps({**seen, 'exit': loaded()})))\n"
    "from moot.cli import main\n"
    "main()\n"
)


def test_the_first_request_does_not_wait_for_what_judges_the_replies(
    server: ChatServer, isolated: Path, tmp_path: Path
) -> None:
    """Issue 12: the checks that read the replies (substance, claims, finding, trust) and a code
    task's machinery are imported while the first asks are in flight, not before them. (The
    code-task modules, never used by a question, are loaded only because the process had that
    time to spare: each reply takes 50 ms here.)"""
    server.latency = 0.05
    seen = _loaded_by_a_question(AT_FIRST_REQUEST, server, isolated, tmp_path)
    later = [
        "moot.deliberation.substance",
        "moot.deliberation.claims",
        "moot.deliberation.finding",
        "moot.deliberation.trust",
        "moot.protocols.codework",
        "difflib",  # the claims' comparison; "did you mean" for a mistake before that
    ]
    assert "moot.protocols.arena.run" in seen["first"]
    assert [name for name in later if name in seen["first"]] == []
    assert [name for name in later if name in seen["exit"]] == later
    # Issue 23: what a reply, an error or the run's end first needs (lazy.modules), and the
    # folder lookup moot reads itself on Linux, are not loaded before the first request either.
    not_yet = [
        "moot.engine.repair",
        "moot.engine.seal",
        "moot.lifecycle.keys",
        "moot.lifecycle.reports",
        "moot.models.schema",
        "moot.text.rounds",
        "moot.lifecycle.replay",  # a replay of a finished session: never part of a run
        "moot.models.classify",  # what a failed call means
        "moot.text.safe",  # text with escape sequences or controls to remove
        *(["platformdirs"] if sys.platform == "linux" else []),
        # a reply's parsing and JSON repair (the solve's JSON schema is the arena's prompts'),
        # a failed call's retries, a time limit in words, other agents' answers quoted
        "moot.deliberation.parsing",
        "moot.text.jsonfix",
        "moot.engine.retry",
        "moot.models.durations",
        "moot.protocols.shown",
        # the quoting and scrubbing of other agents' answers, a chairman's synthesis, an
        # outage's account, the evidence a resume checks, a human's choice, and the
        # protocols' scripted personas (moot bench)
        "moot.deliberation.anonymize",
        "moot.protocols.synthesis",
        "moot.engine.outage",
        "moot.engine.evidence",
        "moot.engine.choice",
        "moot.protocols.scripting",
        "moot.protocols.arena.scripting",
    ]
    assert [name for name in not_yet if name in seen["first"]] == []


def test_the_first_request_goes_out_before_the_collector_runs_again(
    server: ChatServer, isolated: Path, tmp_path: Path
) -> None:
    """Issue 23: turned back on as the run's loop started, the collector made some 28 passes
    (10 ms) while the session opened and the HTTP stack was imported; it now waits for the
    loop's first wait on the models (engine/startup.py)."""
    server.latency = 0.05
    seen = _loaded_by_a_question(AT_FIRST_REQUEST, server, isolated, tmp_path)
    assert seen["collecting"] is False


def test_the_first_request_imports_no_pydantic(
    server: ChatServer, isolated: Path, tmp_path: Path
) -> None:
    """Issue 23: a pydantic model class costs about 1 ms to make, a msgspec Struct's some
    0.05 ms; the run config, the user config and the protocols' options were pydantic models,
    12 ms of every start. They are Structs now (moot/config/reading.py reads them and words
    their problems), and a question's run makes no pydantic model before its first request:
    nor does it import pydantic (some 60 ms), which the replies' JSON schemas of other
    protocols use."""
    seen = _loaded_by_a_question(AT_FIRST_REQUEST, server, isolated, tmp_path)
    assert seen["models"] == []
    assert "moot.config.reading" in seen["first"]
    assert [name for name in seen["first"] if name.split(".")[0] == "pydantic"] == []
