"""`--display tmux`: each CLI agent's output live in its own pane of a private tmux server that
moot creates and removes, with the agent's answer journaled exactly as without tmux; a clear
error when tmux is missing; nothing left running when moot is killed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from moot.engine.store import find_session
from tests.code import test_code_tasks as base
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

EDITOR = """#!{python}
# A coding CLI stand-in: says it starts, waits for the test, then fixes calc.py.
import os, sys, time
from pathlib import Path
if "--version" in sys.argv:
    print("editor 1.0")
    sys.exit(0)
sys.stdin.read()
print("starting on calc.py", flush=True)
sys.stderr.write("a progress note on stderr\\n")
sys.stderr.flush()
hold = os.environ["EDITOR_HOLD"]
Path(hold).write_text(str(os.getpid()))
while not Path(hold + ".release").exists():
    time.sleep(0.05)
Path("calc.py").write_text(Path("calc.py").read_text().replace("a - b", "a + b"))
print("I fixed add().")
"""


@pytest.fixture(autouse=True)
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base.git_env.__wrapped__(tmp_path, monkeypatch)  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def sockets(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """tmux's sockets in a folder of this test's own (short: a socket path has ~100 bytes),
    never the machine's /tmp/tmux-<uid>."""
    folder = Path(tempfile.mkdtemp(prefix="mt", dir="/tmp"))
    monkeypatch.setenv("TMUX_TMPDIR", str(folder))
    yield folder / f"tmux-{os.getuid()}"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return base.repo.__wrapped__(tmp_path)  # type: ignore[attr-defined, no-any-return]


def _tmux(socket: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=10, check=False
    )


def _start(tmp_path: Path, repo: Path) -> tuple[subprocess.Popen[bytes], Path, dict[str, str]]:
    editor = tmp_path / "bin" / "editor"
    editor.parent.mkdir()
    editor.write_text(EDITOR.format(python=sys.executable))
    editor.chmod(0o755)
    agents = tmp_path / "agents.py"
    agents.write_text(base.AGENTS)
    toml = tmp_path / "moot.toml"
    toml.write_text(
        f'protocol = "pick"\nseed = 5\n[pick]\nby = "none"\n[[agents]]\nmodel = "cli:editor"\n'
        f'options = {{ command = "{editor}", output = "text" }}\n'
        f'[[agents]]\nmodel = "scripted:{agents}#good"\n[code]\nrepo = "{repo}"\n'
    )
    hold = tmp_path / "hold"
    env = {**os.environ, "EDITOR_HOLD": str(hold)}
    process = subprocess.Popen(
        [base.MOOT, "run", base.TASK, "--config", str(toml), "--display", "tmux"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    wait_until(hold.exists, "the editor to start", alive=lambda: process.poll() is None)
    return process, hold, env


def test_each_cli_agent_gets_a_pane_and_its_answer_is_journaled_as_without_tmux(
    tmp_path: Path, repo: Path, sockets: Path
) -> None:
    process, hold, _ = _start(tmp_path, repo)
    folder = find_session(None)
    socket = f"moot-{folder.id}"
    meta = json.loads(folder.session_json.read_text())
    editor = next(a for a, spec in meta["aliases"].items() if spec == "cli:editor")
    label = "Agent " + editor.rsplit("_", 1)[-1].upper()
    panes = _tmux(socket, "list-panes", "-a", "-F", "#{pane_title}")
    assert panes.returncode == 0, panes.stderr
    assert panes.stdout.split("\n")[0] == label  # one pane: only the CLI agent gets one
    # the agent's output shows in its pane while it works, stdout and stderr

    def pane() -> str:
        return _tmux(socket, "capture-pane", "-p").stdout

    wait_until(
        lambda: "a progress note on stderr" in pane(), "the stderr note in the pane", detail=pane
    )
    assert "starting on calc.py" in pane()
    Path(str(hold) + ".release").write_text("")
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2, err  # finished; no winner picked (by = none)
    assert f"tmux -L {socket} attach" in err.decode()
    # the server, its socket file and its log files are gone
    assert _tmux(socket, "list-sessions").returncode != 0
    assert sockets.is_dir() and not (sockets / socket).exists()
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob(f"moot-tmux-{folder.id}-*"))
    # what is journaled is the agent's stdout, as without tmux (stderr stays out)
    events = [json.loads(line) for line in folder.events.read_text().splitlines()]
    asked = [e for e in events if e["kind"] == "ask" and e["data"].get("agent") == editor]
    assert asked[0]["data"]["completion"]["text"] == "starting on calc.py\nI fixed add()."
    result = json.loads(folder.result_json.read_text())
    assert result["details"]["code"][editor]["status"] == "completed"


def test_a_killed_moot_leaves_no_tmux_server_behind_and_resume_shows_panes_again(
    tmp_path: Path, repo: Path
) -> None:
    process, hold, env = _start(tmp_path, repo)
    folder = find_session(None)
    socket = f"moot-{folder.id}"
    assert _tmux(socket, "list-sessions").returncode == 0
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)
    # every pane's tail ends with moot, and tmux with its last pane
    wait_until(lambda: _tmux(socket, "list-sessions").returncode != 0, "the tmux server to end")
    Path(str(hold) + ".release").write_text("")
    done = subprocess.run(
        [base.MOOT, "resume", folder.id, "--display", "tmux"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert f"tmux -L {socket} attach" in done.stderr
    assert _tmux(socket, "list-sessions").returncode != 0
    result = json.loads(folder.result_json.read_text())
    assert all(row["status"] == "completed" for row in result["details"]["code"].values())


def test_without_tmux_a_clear_error_names_the_install_command(tmp_path: Path) -> None:
    agents = tmp_path / "agents.py"
    agents.write_text(base.AGENTS)
    empty = tmp_path / "empty-path"
    empty.mkdir()
    done = subprocess.run(
        [
            base.MOOT,
            "run",
            "What is 2+2?",
            "--display",
            "tmux",
            "--models",
            f"scripted:{agents}#good",
        ],
        env={**os.environ, "PATH": str(empty)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "--display tmux needs tmux, which is not installed" in done.stderr
    assert "apt-get install tmux" in done.stderr
    assert not (tmp_path / "moot-home" / "sessions").exists()


def test_doctor_prune_removes_moot_tmux_sockets_whose_server_is_gone(
    tmp_path: Path, sockets: Path
) -> None:
    sockets.mkdir(mode=0o700)
    listening = []
    for name in ("moot-20261123-000000-aaaaaa", "moot-20261123-000000-bbbbbb", "other"):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(sockets / name))
        server.listen()
        listening.append(server)
    listening[0].close()  # a server that is gone: its socket file stays, as tmux leaves it
    listening[2].close()  # gone too, but not moot's
    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [base.MOOT, "doctor"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert "1 tmux socket of moot sessions whose server is gone" in done.stdout, done.stdout
    pruned = subprocess.run(
        [base.MOOT, "doctor", "--prune"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "removed 1 stale tmux socket" in pruned.stdout, pruned.stdout + pruned.stderr
    assert sorted(p.name for p in sockets.iterdir()) == ["moot-20261123-000000-bbbbbb", "other"]
    listening[1].close()
