"""A malformed JSON reply repaired off the event loop, in a worker process with a time limit.

json_repair is pure Python and its time grows faster than the text (64 KB of unclosed braces:
about 30 s). On the event loop it stalled every other agent's answer (issue 30), and a thread
would still hold the interpreter lock and could not be stopped; a process can be killed when
its time is up, and the reply is then unrepairable (a format error the protocol re-asks on).
The worker is a fresh interpreter running a few lines: not a fork of this process and its
threads, and it never imports the caller's main module (a script without a main guard).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import sys
from typing import Any

__all__ = ["REPAIR_SECONDS", "WALL_BACKSTOP", "repair_off_loop"]

REPAIR_SECONDS = 5.0  # a structured reply of a few KB repairs in milliseconds
# The limit is on the worker's CPU time where the system can set one, so that a worker starved
# by a busy machine is not killed while it waits for a core (that made a repairable reply
# unrepairable, and the run's course hang on the load); the wall clock is a backstop only.
WALL_BACKSTOP = 10  # times the CPU limit

# stdin: the text; argv[1]: the CPU seconds; stdout: json_repair's value as JSON, or null when
# it fails. Past the CPU limit the system ends it (SIGXCPU), without a core file.
_WORKER = """
import json, sys
try:
    import resource
    cpu = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
except (ImportError, ValueError, OSError):
    pass
from json_repair import repair_json
try:
    value = repair_json(sys.stdin.read(), return_objects=True)
except (ValueError, RecursionError):
    value = None
json.dump(value, sys.stdout)
"""
_CPU_LIMITED = sys.platform != "win32"  # (Windows has no `resource`: the wall clock limits)


async def repair_off_loop(target: str, seconds: float | None = None) -> dict[str, Any] | None:
    """json_repair's object for `target` (as `jsonfix.repair` gives it), computed in a worker
    process that is ended after `seconds` (REPAIR_SECONDS, whole seconds) of CPU time: None
    when it finds no non-empty object, fails or runs out of time."""
    limit = REPAIR_SECONDS if seconds is None else seconds
    cpu = max(1, math.ceil(limit))
    wall = cpu * WALL_BACKSTOP if _CPU_LIMITED else limit
    # -P: the worker's imports never come from the current folder
    worker = await asyncio.create_subprocess_exec(
        sys.executable,
        "-P",
        "-c",
        _WORKER,
        str(cpu),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        out, _ = await asyncio.wait_for(worker.communicate(target.encode("utf-8", "replace")), wall)
    except TimeoutError:
        return None
    finally:
        if worker.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                worker.kill()
            await worker.wait()
    try:
        value = json.loads(out) if worker.returncode == 0 else None
    except ValueError:
        return None
    return value if isinstance(value, dict) and value else None
