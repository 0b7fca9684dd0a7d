"""Supervise one agent command so that nothing it starts outlives it.

moot runs each CLI agent as `python proc_supervisor.py OWNER_PID -- COMMAND...` (see
cli_process.py). The supervisor is a small process of its own, started in a new session:

    moot ── supervisor (session leader; Linux: subreaper, dies-with-moot signal)
              └── agent (its own process group)
                    └── whatever the agent starts: children, setsid'd ones, double forks

- On Linux it marks itself a child subreaper (PR_SET_CHILD_SUBREAPER), so every orphan of the
  agent's tree, including daemons that double-forked and called setsid, is re-parented to it
  instead of to init: the tree stays one tree it can walk in /proc, kill and reap. It also
  asks for SIGTERM when moot dies (PR_SET_PDEATHSIG), even through SIGKILL.
- When the agent exits, the agent's answer is complete: everything left in the tree is killed
  at once, so moot reads its output to the end without waiting for a background child that
  holds stdout open.
- On SIGTERM, SIGINT or SIGHUP (moot's timeout or cancellation, or moot's death) the agent's
  group gets SIGTERM, a grace period, then the whole tree gets SIGKILL.

Elsewhere (no prctl, no /proc: macOS, the BSDs) it degrades to what POSIX gives: the agent's
process group is killed, moot's death is noticed by polling the parent pid once a second, and
a child that called setsid there can escape.

This file imports only the standard library, so it runs as a script without importing moot.
"""

from __future__ import annotations

import os
import signal
import sys
import time

# Imported by a process started for every agent call: pathlib and contextlib would cost it
# more start-up time than everything it does, so plain os calls and try/except are used.

__all__ = ["GRACE", "descendants", "main", "session_members"]

GRACE = 1.0  # seconds between SIGTERM and SIGKILL
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_STOP = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
_WATCHED = {signal.SIGCHLD, *_STOP}
# Python ignores these two at start-up; an exec'd agent must get the default back.
_DEFAULTS = {signal.SIGPIPE, signal.SIGXFSZ, *_WATCHED}


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes  # only where prctl exists

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _table() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, session id, state) for every process in /proc ({} without /proc)."""
    table: dict[int, tuple[int, int, str]] = {}
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return table
    for name in names:
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as handle:
                # the command name in parentheses may hold spaces and parentheses: split after it
                fields = handle.read().rsplit(")", 1)[1].split()
            table[int(name)] = (int(fields[1]), int(fields[4]), fields[0])
        except (OSError, IndexError, ValueError):
            continue
    return table


def descendants(root: int, table: dict[int, tuple[int, int, str]] | None = None) -> list[int]:
    """Live (not zombie) descendants of `root`, found through /proc; [] where there is none."""
    table = _table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found: list[int] = []
    frontier = [root]
    while frontier:
        for child in children.get(frontier.pop(), []):
            frontier.append(child)
            if table[child][2] not in ("Z", "X"):
                found.append(child)
    return found


def session_members(sid: int) -> list[int]:
    """Live processes of session `sid` and their descendants (a fallback for moot's side)."""
    table = _table()
    members = {pid for pid, (_, s, state) in table.items() if s == sid and state not in "ZX"}
    for pid in list(members):
        members.update(descendants(pid, table))
    return sorted(members - {os.getpid()})


def _reap(agent: int) -> int | None:
    """Reap every child that ended; the agent's wait status if it was among them."""
    status = None
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if pid == 0:
            return status
        if pid == agent:
            status = code


def _next_signal(timeout: float) -> int | None:
    """Wait up to `timeout` seconds for one of the watched (blocked) signals."""
    if hasattr(signal, "sigtimedwait"):
        info = signal.sigtimedwait(_WATCHED, timeout)
        return None if info is None else info.si_signo
    deadline = time.monotonic() + timeout  # macOS: no sigtimedwait
    while time.monotonic() < deadline:
        pending = signal.sigpending() & _WATCHED
        if pending:
            return signal.sigwait(pending)
        time.sleep(0.05)
    return None


def _kill_tree(agent: int) -> None:
    """SIGKILL the agent's group and every descendant until none is left, reaping as it goes."""
    for _ in range(200):  # each pass kills all it sees; a forking tree cannot outrun that long
        _reap(agent)
        left = descendants(os.getpid())
        if _signal(agent, signal.SIGKILL, group=True):
            left = left or [agent]  # the group still had members: look again
        if not left:
            return
        for pid in left:
            _signal(pid, signal.SIGKILL)
        _next_signal(0.01)


def _signal(pid: int, sig: int, *, group: bool = False) -> bool:
    """Send `sig`; False when there was no such process (or group) to receive it."""
    try:
        (os.killpg if group else os.kill)(pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _exit_code(status: int | None) -> int:
    if status is None:
        return 128 + signal.SIGTERM
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def supervise(owner: int, command: list[str]) -> int:
    """Run `command` as described in the module docstring; returns the agent's exit code."""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    watching = _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    if os.getppid() != owner:
        return 128 + signal.SIGTERM  # moot died before the signal was armed
    try:
        agent = os.posix_spawnp(
            command[0],
            command,
            os.environ,
            setpgroup=0,  # its own group: killable without killing this supervisor
            setsigmask=(),
            setsigdef=_DEFAULTS,
        )
    except OSError as exc:
        print(f"moot: cannot run {command[0]}: {exc}", file=sys.stderr)
        return 127
    # Only the agent's tree may hold moot's pipes, so their end means the tree is gone.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    status = None
    stopped = False
    while status is None:
        status = _reap(agent)
        if status is not None:
            break
        received = _next_signal(0.5 if watching else 1.0)
        if received in _STOP or os.getppid() != owner:
            stopped = True
            break
    if stopped:
        _signal(agent, signal.SIGTERM, group=True)
        deadline = time.monotonic() + GRACE
        while status is None and time.monotonic() < deadline:
            _next_signal(0.02)
            status = _reap(agent)
    _kill_tree(agent)
    return _exit_code(None if stopped else status)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        print("usage: proc_supervisor.py OWNER_PID -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    return supervise(int(argv[0]), argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
