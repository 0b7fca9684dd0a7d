"""A malformed JSON reply repaired off the event loop, in a worker process with a time limit.

json_repair is pure Python and its time grows faster than the text (64 KB of unclosed braces:
about 30 s). On the event loop it stalled every other agent's answer (issue 30), and a thread
would still hold the interpreter lock and could not be stopped; a process can be killed when
its time is up, and the reply is then unrepairable (a format error the protocol re-asks on).
"""

from __future__ import annotations

import asyncio
import multiprocessing
from multiprocessing.connection import Connection
from typing import Any

from moot.text import jsonfix

__all__ = ["REPAIR_SECONDS", "repair_off_loop"]

REPAIR_SECONDS = 5.0  # a structured reply of a few KB repairs in milliseconds


def _child(conn: Connection, target: str) -> None:  # pragma: no cover - runs in the worker
    try:
        conn.send(jsonfix.repair(target))
    finally:
        conn.close()


def _context() -> Any:
    # forkserver: a fork of a clean server, not of this process and its threads (spawn where
    # there is none)
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


async def repair_off_loop(target: str, seconds: float | None = None) -> dict[str, Any] | None:
    """json_repair's object for `target` (see `jsonfix.repair`), computed in a worker process
    that is killed after `seconds` (REPAIR_SECONDS): None when it finds none or runs out of
    time."""
    limit = REPAIR_SECONDS if seconds is None else seconds
    context = _context()
    reader, writer = context.Pipe(duplex=False)
    worker = context.Process(target=_child, args=(writer, target), daemon=True)
    await asyncio.to_thread(worker.start)
    writer.close()
    try:
        ready = await asyncio.to_thread(reader.poll, limit)
        if not ready:
            return None
        try:
            value = reader.recv()
        except (EOFError, OSError):  # the worker died (out of memory, killed)
            return None
        return value if isinstance(value, dict) else None
    finally:
        if worker.is_alive():
            worker.kill()
        await asyncio.to_thread(worker.join)
        reader.close()
