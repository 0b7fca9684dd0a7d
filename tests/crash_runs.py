"""The harness of the crash tests whose scripted participants log each call and kill their own
process at call KILL_AT (the court's `_log`, tests/protocols/court/test_court_crash.py): a
home with the participants and a config, an uninterrupted reference run, a killed run, and its
resume compared with the reference."""

from __future__ import annotations

import json
import signal
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.protocols.court.test_court_crash import PARTICIPANTS as COURT_PARTICIPANTS
from tests.protocols.court.test_court_crash import asked, calls, moot, session
from tests.protocols.tournament.test_tournament_crash import home as tournament_home

# The court participants' `_log`: records the call, and kills the process at call KILL_AT once
# every earlier call is journaled.
LOG = COURT_PARTICIPANTS[
    COURT_PARTICIPANTS.index("async def _log") : COURT_PARTICIPANTS.index("async def agent")
]


def participants(doc: str, imports: str, body: str) -> str:
    """A participants module: its docstring, its imports, `_log`, then `body`."""
    return f'"""{doc}"""\n{imports}\n\n\n' + LOG + body


def home(root: Path, participants: str, config_name: str, config: str) -> dict[str, str]:
    """The tournament crash test's environment, with these participants and this config."""
    env = tournament_home(root)  # the same environment; our files replace its own
    (root / "participants.py").write_text(participants)
    (root / config_name).write_text(config)
    return env


def reference(
    root: Path, env: dict[str, str], task: str, config_name: str, code: int, full_run: int
) -> dict[str, Any]:
    """An uninterrupted run: exit `code`, `full_run` calls each asked once; its printed answer
    and its result.json."""
    done = moot(root, env, "run", task, "--config", config_name, "-q")
    assert done.returncode == code, done.stderr
    steps = calls(root)
    assert len(steps) == full_run and len(set(steps)) == full_run, steps
    result = json.loads((session(root) / "result.json").read_text())
    return {"answer": done.stdout, "result": result}


@dataclass(frozen=True)
class Killed:
    folder: Path
    before: list[str]  # the calls made before the kill, the killed one last
    step: str  # the step being asked when the process was killed


def kill(tmp_path: Path, env: dict[str, str], task: str, config_name: str, at: int) -> Killed:
    """A run killed with SIGKILL at call `at`: only the killed step is missing from the
    journal, and there is no result."""
    killed = moot(tmp_path, {**env, "KILL_AT": str(at)}, "run", task, "--config", config_name)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    folder = session(tmp_path)
    before = calls(tmp_path)
    step = before[at - 1]
    assert set(asked(folder)) == set(before) - {step}  # only the killed step was lost
    assert not (folder / "result.json").exists()
    return Killed(folder, before, step)


def resume(
    tmp_path: Path, env: dict[str, str], killed: Killed, code: int, reference: dict[str, Any]
) -> dict[str, Any]:
    """Resume the killed run: exit `code`, the reference's answer, and the killed step the only
    one asked twice; its result.json."""
    resumed = moot(tmp_path, env, "resume", killed.folder.name, "-q")
    assert resumed.returncode == code, resumed.stderr
    assert resumed.stdout == reference["answer"]
    after = calls(tmp_path)[len(killed.before) :]
    twice = [step for step, n in Counter(killed.before + after).items() if n > 1]
    assert twice == [killed.step]  # everything journaled was answered from the journal
    result: dict[str, Any] = json.loads((killed.folder / "result.json").read_text())
    return result
