"""A CLI agent that leaves processes behind, the way real agents' tool calls and helpers do.

FAKE_LEAVE is a comma list of what it starts before answering:
  stdout  a background child that keeps the agent's stdout open
  setsid  a child in a session of its own, stdio detached (still the agent's child)
  daemon  a classic double fork (fork, setsid, fork): re-parented away from the agent
FAKE_THEN says what the agent does next: `exit` (answer at once and exit 0, the default) or
`hang` (sleep, never answering). Each process it starts runs `sleep` under the agent's own file
name, so a test finds all of them by the folder holding this file's launcher; each one's pid is
appended to FAKE_PIDS when that is set, so a test knows they were really started.
`install(path)` writes that launcher; use it as `cli:/abs/path` (it answers in plain text).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def install(launcher: Path) -> Path:
    launcher.parent.mkdir(parents=True, exist_ok=True)
    launcher.write_text(
        f"#!{sys.executable}\nimport runpy\n"
        f"runpy.run_path({str(Path(__file__).resolve())!r}, {{'LAUNCHER': __file__}}, '__main__')\n"
    )
    launcher.chmod(0o755)
    return launcher


def sleeper() -> list[str]:
    # the launcher's path names the marker folder: it shows in every process's command line
    launcher = str(globals().get("LAUNCHER", sys.argv[0]))
    return [sys.executable, "-c", "import time; time.sleep(300)", launcher, "left-behind"]


def daemon() -> None:
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)  # the middle process exits at once; the grandchild is orphaned
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    _note(os.getpid())  # execv keeps the pid
    os.execv(sys.executable, sleeper())


def main() -> int:
    if sys.argv[1:] == ["--version"]:
        print("leaving-agent 1.0")
        return 0
    prompt = sys.stdin.read()
    for kind in filter(None, os.environ.get("FAKE_LEAVE", "").split(",")):
        if kind == "stdout":
            _note(subprocess.Popen(sleeper(), stdin=subprocess.DEVNULL).pid)
        elif kind == "setsid":
            null = subprocess.DEVNULL
            child = subprocess.Popen(
                sleeper(), start_new_session=True, stdin=null, stdout=null, stderr=null
            )
            _note(child.pid)
        elif kind == "daemon":
            daemon()
        else:
            raise SystemExit(f"unknown FAKE_LEAVE kind {kind!r}")
    if os.environ.get("FAKE_THEN", "exit") == "hang":
        time.sleep(300)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.fakes.fake_agent import answer

    print(answer(prompt), flush=True)
    return 0


def _note(pid: int) -> None:
    if os.environ.get("FAKE_PIDS"):
        with open(os.environ["FAKE_PIDS"], "a", encoding="utf-8") as handle:
            handle.write(f"{pid}\n")


if __name__ == "__main__":
    sys.exit(main())
