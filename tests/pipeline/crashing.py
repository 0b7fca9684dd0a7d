"""The crash trials' harness (test_pipeline_crash.py): a trial's world (the user's repository,
MOOT_HOME, the scripted roles of scripts.py and their log, a config file), the CLI run in a
process group of its own and killed at a journal length, `moot resume` until it exits 0, and
what the run left: the asks journaled at each kill, the log, the plan's branch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.pipeline import scripts
from tests.waiting import journal_events, wait_until

FEATURE = "Add subtract and multiply"
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
    chosen = {**scripts.gates(root), "syntax": ""}  # one gate process: the runner compiles too
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
        # a kill point is a length of the uninterrupted run's journal; each resume of that
        # journal has added its run_started line
        resumed = sum(1 for k in trial.kills[:number] if k.child == kill.child or not kill.child)
        lines = kill.lines + resumed
        assert kill_at(process, journal, lines), f"{trial.name}: ended before kill {number}"
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
