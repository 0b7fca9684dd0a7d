"""`local` (llama.cpp from the xllamacpp wheel) and `llama` (llama-cpp-python): a GGUF model run
by a worker process.

`local:smollm2` is the embedded default, SmolLM2-135M-Instruct (see `local_files` for where
the file comes from); any other name is a path to a GGUF file. `llama:` takes the same names
and runs them with llama-cpp-python instead, for those who have it (`pip install
'moot[llama]'`).

The runtime never runs in the moot process. Each model file gets one worker process
(`local_worker`), shared by every agent on that file for as long as one of them is open; their
asks go to it at once and the runtime batches them. A worker that dies (segmentation fault,
abort, out-of-memory kill) fails the asks it had in flight; each of them is journaled as a
warning and retried once on a fresh worker, and a second death is that ask's error completion.
The session goes on either way.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any, ClassVar

from moot.errors import ConfigError
from moot.models.base import Capabilities, ModelSettings, Spec, call_context
from moot.models.durations import seconds_text
from moot.models.local_files import find_smollm2
from moot.models.provider import Provider, ProviderError, Reply
from moot.types import FailureKind, Request, Usage, dump

__all__ = ["DEFAULT_MAX_TOKENS", "LlamaModel", "LocalModel", "find_smollm2"]

# The 135M model rambles, but its JSON answers (solutions, verdicts) need room: at 160 tokens
# they were cut mid-string and the verdicts failed to parse.
DEFAULT_MAX_TOKENS = 320
# Free text (critiques) has no such need, and past this the 135M model only rambles; its long
# critiques were the slowest part of a default run twice over, generated and then read back as
# the quoted critiques every agent revises from.
DEFAULT_TEXT_MAX_TOKENS = 160
# SmolLM2's model-card value. benchmarks/embedded_answers.py asks 12 seeded first answers to
# each of 4 short questions as the arena asks them: moot accepted them and they were right in
# 43 of 48 at 0.2, 37 at 0.3, 24 at 0.5 and 13 at 0.8 (llama.cpp's default, this default until
# then: at 0.2 the first answers had been echoes of the task, which moot now rejects). At 0.8
# the README's own question ended in an honest consensus in 1 of 8 runs; at 0.2 in 2 of 5 and
# at 0.3 in 3 of 6. A config's temperature overrides it.
DEFAULT_TEMPERATURE = 0.2
DEFAULT_CONTEXT = 8192  # SmolLM2 was trained with an 8k context
# Asks one worker decodes together, each with a whole context window. Its cache is allocated
# when the model loads (8-bit: about 85 MB a slot for SmolLM2 at 8k; 534 MB in all for the
# worker at 4 slots): the three agents of a default run with one to spare. More asks wait for a
# free slot; `options.max_concurrency` changes it.
DEFAULT_SLOTS = 4
START_TIMEOUT = 300.0  # loading a GGUF takes a second; a busy machine may take much longer
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CHATTER = re.compile(r"^\S+\s+(INFO|DEBUG|TRACE)\b")
_BUILTIN_NAMES = {"smollm2", "smollm2-135m", "smollm2-135m-instruct", "default"}


class _Crashed(Exception):
    """The worker died: `reason` says how (exit status or signal, last lines of stderr)."""


class _Worker:
    """One worker process and the asks waiting for its replies."""

    def __init__(self, backend: str, path: Path, n_ctx: int, threads: int, slots: int) -> None:
        self.path = path
        env = {**os.environ, "MOOT_LOCAL_THREADS": str(threads)}
        # llama.cpp's threads meet at an OpenMP barrier at every matrix product, and libgomp
        # spins 300,000 times there before it sleeps. When two workers' threads outnumber the
        # cores (two moot runs at once), each spins away the time slice the thread it waits
        # for needs: a 64-token ask took 130 s instead of 0.5 s (2 cores, two 2-thread
        # workers). Spinning 1,000 times keeps one ask as fast (0.57 s) and bounds that case
        # (2.5 s); not spinning at all made one ask 3x slower.
        env.setdefault("GOMP_SPINCOUNT", "1000")
        # Its own session: a Ctrl-C meant for moot must not kill the runtime under the asks
        # that the interruption handling still waits for. It exits when its stdin closes.
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "moot.models.local_worker",
                backend,
                str(path),
                "--n-ctx",
                str(n_ctx),
                "--slots",
                str(slots),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=env,
            start_new_session=True,
        )
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self._stdin: IO[str] = self.proc.stdin
        self.ready: Future[dict[str, Any]] = Future()
        self.dead: str | None = None
        self._pending: dict[int, Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._stderr: deque[str] = deque(maxlen=12)
        self._stderr_done = threading.Event()
        self.closed = threading.Event()
        threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _drain(self, stream: IO[str]) -> None:
        for line in stream:
            line = _ANSI.sub("", line).strip()
            if line and not _CHATTER.search(line):  # keep what explains a death
                self._stderr.append(line[:300])
        stream.close()
        self._stderr_done.set()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "ready" in message:
                _settle(self.ready, message)
            elif "fatal" in message:
                why = str(message["fatal"])
                _fail(
                    self.ready,
                    ConfigError(
                        f"the local model file {str(self.path)!r} did not load ({why}); is it a "
                        "complete GGUF model this runtime supports? Give another file, or use "
                        "local:smollm2"
                    ),
                )
            else:
                with self._lock:
                    waiting = self._pending.pop(message.get("id"), None)
                if waiting is not None:
                    _settle(waiting, message)
        stream.close()
        code = self.proc.wait()
        self._stderr_done.wait(2)
        reason = _describe(code, list(self._stderr))
        with self._lock:
            self.dead = reason
            waiting_all = list(self._pending.values())
            self._pending.clear()
            try:
                self._stdin.close()
            except OSError:
                pass
        _fail(self.ready, _Crashed(reason))
        for waiting in waiting_all:
            _fail(waiting, _Crashed(reason))
        self.closed.set()

    def submit(self, payload: dict[str, Any]) -> tuple[int, Future[dict[str, Any]]]:
        """Send one ask; its future gets the reply line or raises _Crashed."""
        answer: Future[dict[str, Any]] = Future()
        with self._lock:
            if self.dead is not None:
                raise _Crashed(self.dead)
            ask_id = next(self._ids)
            self._pending[ask_id] = answer
            self._write({"id": ask_id, **payload})
        return ask_id, answer

    def cancel(self, ask_id: int) -> None:
        with self._lock:
            self._pending.pop(ask_id, None)
            self._write({"cancel": ask_id})

    def _write(self, line: dict[str, Any]) -> None:
        if self.dead is not None:
            return
        try:
            self._stdin.write(json.dumps(line) + "\n")
            self._stdin.flush()
        except (OSError, ValueError):
            pass  # the worker is gone; the reader fails every pending ask

    def close(self) -> None:
        """Close stdin (the worker's signal to exit), then make sure it is gone. A worker still
        loading its model reads no stdin until it has loaded (a second or several): it is
        ended at once instead, so a Ctrl-C then does not wait for the load."""
        try:
            self._stdin.close()
        except OSError:
            pass
        if not self.ready.done() and self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self.closed.wait(5)  # the reader has closed the pipes


def _settle(future: Future[dict[str, Any]], value: dict[str, Any]) -> None:
    if not future.done():
        try:
            future.set_result(value)
        except Exception:  # cancelled meanwhile by its waiter
            pass


def _fail(future: Future[Any], error: BaseException) -> None:
    if not future.done():
        try:
            future.set_exception(error)
        except Exception:
            pass


def _describe(code: int, stderr: list[str]) -> str:
    if code < 0:
        try:
            how = f"killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"killed by signal {-code}"
    else:
        how = f"exited with status {code}"
    tail = " | ".join(stderr[-3:])
    return f"{how}; its last output: {tail}" if tail else how


# One worker per (backend, file, settings), shared by the models on it while one is open.
_Key = tuple[str, str, int, int, int]  # backend, file, context size, threads, slots
_WORKERS: dict[_Key, _Worker] = {}
_USERS: dict[_Key, int] = {}
_WORKERS_LOCK = threading.Lock()


def _worker(key: _Key) -> _Worker:
    with _WORKERS_LOCK:
        worker = _WORKERS.get(key)
        if worker is None or worker.dead is not None:
            worker = _Worker(key[0], Path(key[1]), key[2], key[3], key[4])
            _WORKERS[key] = worker
        return worker


@atexit.register
def _close_all() -> None:
    with _WORKERS_LOCK:
        workers = list(_WORKERS.values())
        _WORKERS.clear()
    for worker in workers:
        worker.close()


@functools.cache
def default_threads() -> int:
    """Compute threads for a worker: every core when the machine is idle as moot starts (under a
    quarter of the CPU busy over a tenth of a second), else one per two cores. The runtime's
    threads wait for each other at every matrix product, so on a busy machine each extra thread
    stalls the rest (measured on 2 cores: a 63-token reply took 2.2 s on one thread and 17 s on
    two while other work ran), while on an idle one two threads made prompts and replies 1.7x
    faster. Decided once per process, so agents created together share one worker."""
    cores = os.cpu_count() or 2
    busy = _busy_share()
    return cores if busy is not None and busy < 0.25 else max(1, cores // 2)


def _busy_share(window: float = 0.1) -> float | None:
    """The share of all CPU time spent busy over `window` seconds (Linux /proc/stat), or None
    where that cannot be read."""

    def sample() -> tuple[int, int]:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
        ticks = [int(x) for x in fields]
        return sum(ticks), ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait

    try:
        total0, idle0 = sample()
        time.sleep(window)
        total1, idle1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    spent = total1 - total0
    return None if spent <= 0 else 1.0 - (idle1 - idle0) / spent


def _check_gguf(path: Path, name: str) -> None:
    """A file that is not a GGUF model is refused here, in one line, before any session exists:
    the runtime would fail on it with a long native backtrace."""
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise ConfigError(f"local model file {name!r} cannot be read: {exc.strerror}") from exc
    if magic != b"GGUF":
        raise ConfigError(
            f"local model file {name!r} is not a GGUF model (it does not start with the GGUF "
            "header); give a path to a .gguf file or use local:smollm2"
        )


class LocalModel(Provider):
    """A GGUF model served by a worker process running llama.cpp (or llama-cpp-python). The
    worker enforces each ask's deadline itself (`guards_timeout` off); a local call costs
    nothing."""

    backend = "xllamacpp"
    guards_timeout: ClassVar[bool] = False

    def __init__(self, spec: Spec, settings: ModelSettings) -> None:
        if spec.name.lower() in _BUILTIN_NAMES:
            path = find_smollm2()
        else:
            path = Path(spec.name).expanduser()
            if not path.is_file():
                raise ConfigError(
                    f"local model file {spec.name!r} does not exist; give a path to a .gguf file "
                    "or use local:smollm2"
                )
            _check_gguf(path, spec.name)
        options = settings.options
        n_ctx = int(options.get("n_ctx", DEFAULT_CONTEXT))
        threads = int(options.get("n_threads", default_threads()))
        self.path = path.resolve()
        # xllamacpp decodes concurrent asks together, one slot each; llama-cpp-python's one
        # context takes them in turn.
        batched = self.backend == "xllamacpp"
        slots = int(options.get("max_concurrency", DEFAULT_SLOTS if batched else 1))
        capabilities = Capabilities(
            json_schema=True,
            seed=True,
            context_window=n_ctx,
            max_concurrency=slots,
            max_tokens=settings.max_tokens or max(DEFAULT_MAX_TOKENS, DEFAULT_TEXT_MAX_TOKENS),
        )
        # connection key "<backend>:<file>": agents on one file share its worker's pool
        super().__init__(
            str(spec), settings, capabilities, label=self.backend, endpoint=str(self.path)
        )
        self._key: _Key = (self.backend, str(self.path), n_ctx, threads, slots)
        self._using = False  # counted among the worker's users since its first ask

    def price(self, usage: Usage) -> float | None:
        return 0.0

    def _payload(self, request: Request) -> dict[str, Any]:
        temperature = request.temperature
        if temperature is None:
            temperature = self.settings.temperature
        if temperature is None:
            temperature = DEFAULT_TEMPERATURE
        return {
            "messages": [dump(m) for m in request.messages],
            "max_tokens": request.max_tokens
            or self.settings.max_tokens
            or (DEFAULT_TEXT_MAX_TOKENS if request.json_schema is None else DEFAULT_MAX_TOKENS),
            "temperature": temperature,
            "seed": request.seed,
            "json_schema": request.json_schema,
            # Small models loop on a phrase without a repetition penalty.
            "repeat_penalty": float(self.settings.options.get("repeat_penalty", 1.15)),
            "timeout": request.timeout or self.settings.timeout,
        }

    async def send(self, request: Request, timeout: float) -> Reply:
        """One ask to the file's worker; a worker that dies mid-ask is replaced and the ask
        retried once (journaled as a warning), a second death is a failed call."""
        payload = self._payload(request)
        for attempt in (1, 2):
            try:
                reply = await self._ask(payload)
            except _Crashed as crash:
                if attempt == 1:
                    context = call_context()
                    if context is not None:
                        context.warn(
                            f"the {self.backend} worker for {self.path.name} died ({crash}) "
                            "during an ask; the ask was retried once on a fresh worker"
                        )
                    continue
                raise ProviderError(
                    FailureKind.UNKNOWN,
                    f"the {self.backend} worker died twice on this ask: {crash}",
                ) from None
            except ConfigError as exc:
                raise ProviderError(FailureKind.BAD_REQUEST, str(exc)) from None
            return self._reply(reply)
        raise AssertionError("unreachable")

    async def _ask(self, payload: dict[str, Any]) -> dict[str, Any]:
        if not self._using:
            self._using = True
            with _WORKERS_LOCK:
                _USERS[self._key] = _USERS.get(self._key, 0) + 1
        worker = _worker(self._key)
        try:
            # Shielded: one ask giving up must not cancel the start that others wait for.
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(worker.ready)), START_TIMEOUT)
        except TimeoutError:
            message = (
                f"the {self.backend} worker did not load the model in {seconds_text(START_TIMEOUT)}"
            )
            return {"ok": False, "kind": "timeout", "message": message}
        ask_id, answer = worker.submit(payload)
        timeout = payload["timeout"]
        # The worker enforces the deadline itself, between streamed tokens (one step, such as a
        # long prompt's prefill on a CPU, can take seconds); this guard only catches a hung
        # runtime, so it gives the worker 5s at least, and a tenth of a long timeout, uncapped.
        # Under a Session the engine's guard (engine/calls.py: never longer, started before
        # the worker was ready) fires first; this one serves direct calls (doctor --ping).
        guard = timeout + max(5.0, timeout / 10) if timeout else None
        try:
            return await asyncio.wait_for(asyncio.wrap_future(answer), guard)
        except TimeoutError:
            worker.cancel(ask_id)
            return {
                "ok": False,
                "kind": "timeout",
                "message": f"no answer within {seconds_text(timeout)}",
            }
        except asyncio.CancelledError:
            worker.cancel(ask_id)  # the worker drops the sequence at its next token
            raise

    def _reply(self, reply: dict[str, Any]) -> Reply:
        if not reply.get("ok"):
            try:
                kind = FailureKind(reply.get("kind", "unknown"))
            except ValueError:
                kind = FailureKind.UNKNOWN
            raise ProviderError(kind, str(reply.get("message", "")))
        return Reply(
            text=str(reply["text"]),
            usage=Usage(
                prompt_tokens=int(reply.get("prompt_tokens", 0)),
                completion_tokens=int(reply.get("completion_tokens", 0)),
            ),
            hit_max_tokens=bool(reply.get("hit_max_tokens")),
        )

    async def aclose(self) -> None:
        if not self._using:
            return
        self._using = False
        with _WORKERS_LOCK:
            _USERS[self._key] -= 1
            last = _USERS[self._key] <= 0
            worker = _WORKERS.pop(self._key, None) if last else None
        if worker is not None:
            await asyncio.to_thread(worker.close)


class LlamaModel(LocalModel):
    """The same, run by llama-cpp-python (`llama:` specs, the `llama` extra)."""

    backend = "llama"
