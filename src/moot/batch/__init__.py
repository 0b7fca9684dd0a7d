"""`moot batch`: many sessions, one per line of a JSONL file, in one event loop.

A batch lives in `$MOOT_HOME/batches/<id>/`:
    batch.json      the lines, each with its task and fully resolved config (written once)
    journal.jsonl   append-only, each line fsync'd: a line's session id as soon as its folder
                    exists (before its first step is asked), then how that session ended
    results.jsonl   one line per task, in the tasks' order, for scripts (`result_line`):
                    written when a run of the batch ends or is interrupted, from the journal
So after any kill, `resume_batch` knows which lines have a session: it continues those
(`lifecycle.run.resume_async`: journaled steps are not asked again), starts the lines that have
none, and leaves finished sessions alone.

Sessions run under one global concurrency limit and optional per-provider limits (how many
sessions using a provider run at once). A failing session is recorded with its error and the
batch goes on. An observer (`moot.display.batch`) sees each session start and end, and, where
it has a `called(line)` method, each model call of a session run in this process end; this
module prints nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import json
import os
import secrets
import signal
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from filelock import FileLock, Timeout
from msgspec import Struct, field
from msgspec.structs import asdict

from moot.config import RunConfig, read_lines
from moot.engine.result import exit_code_for
from moot.engine.store import atomic_write, sessions_root
from moot.errors import ConfigError, MootError
from moot.lifecycle.plan import Plan, load_run, resolve
from moot.lifecycle.run import RunResult, resume_async, start_async
from moot.text import closest
from moot.types import Event

__all__ = [
    "Batch",
    "BatchLine",
    "BatchObserver",
    "BatchSummary",
    "LineResult",
    "batches_root",
    "create_batch",
    "open_batch",
    "read_tasks",
    "result_line",
    "run_batch",
]

DONE = frozenset({"consensus", "no_consensus"})  # a session that reached its outcome
_LINE_FIELDS = ("task", "id", "protocol", "models", "seed", "config")


def batches_root() -> Path:
    """`$MOOT_HOME/batches`, next to the sessions."""
    return sessions_root().parent / "batches"


class BatchLine(Struct, frozen=True):
    index: int
    label: str  # the line's `id`, else `line-N`
    task: str
    config: dict[str, Any]  # a resolved RunConfig as JSON

    def plan(self) -> Plan:
        return resolve(RunConfig.read(self.config))

    def providers(self) -> set[str]:
        """The providers this line's session calls (its agents and other roles)."""
        plan = self.plan()
        roles = plan.record.participants(plan.config, plan.options)
        return {m.model.partition(":")[0].lower() for role in roles for m in role.members}


class LineResult(Struct):
    index: int
    label: str
    session_id: str | None
    status: str  # a session status, or "failed" when it could not even start
    error: str | None = None
    calls: int = 0
    tokens: int = 0
    cost: float | None = 0.0
    final_answer: str = ""
    seconds: float = 0.0
    folder: str | None = None
    finding: str | None = None  # moot's label of the outcome (deliberation/finding.py)


class BatchSummary(Struct):
    batch_id: str
    results: list[LineResult]
    seconds: float
    interrupted: bool = False
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def failed(self) -> list[LineResult]:
        return [r for r in self.results if r.status not in DONE]

    @property
    def complete(self) -> bool:
        return not self.interrupted and all(r.status in DONE for r in self.results)


class BatchObserver(Protocol):
    def begun(self, total: int, already: Sequence[LineResult]) -> None: ...
    def started(self, line: BatchLine) -> None: ...
    def ended(self, result: LineResult) -> None: ...


# What `run_local` calls when a model call of its session ends: the observer's `called`,
# bound to the line by the batch's worker (a context variable: the runner's signature stays
# the one a remote runner has, whose calls this process never sees).
_ON_CALL: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "moot_batch_on_call", default=None
)


class _Silent:
    def begun(self, total: int, already: Sequence[LineResult]) -> None:
        pass

    def started(self, line: BatchLine) -> None:
        pass

    def ended(self, result: LineResult) -> None:
        pass


# -- the task file ------------------------------------------------------------------------------
def _dotted(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and (value or not prefix):
        for key, inner in value.items():
            _dotted(f"{prefix}.{key}" if prefix else str(key), inner, out)
    else:
        out[prefix] = value


def _unknown(fields: Sequence[str]) -> str:
    """'unknown field 'protocl' (did you mean 'protocol'?); allowed: ...'."""
    named = []
    for name in fields:
        near = closest(name, _LINE_FIELDS)
        named.append(f"{name!r}" + (f" (did you mean {near!r}?)" if near else ""))
    head = "unknown field " if len(fields) == 1 else "unknown fields "
    return head + ", ".join(named) + f"; allowed: {', '.join(_LINE_FIELDS)}"


def read_tasks(
    path: Path,
    *,
    config_path: Path | None = None,
    protocol: str | None = None,
    models: Sequence[str] = (),
) -> list[tuple[str, str, Plan]]:
    """The (label, task, plan) of every line. A line is a JSON object with `task` and optional
    `id`, `protocol`, `models` (a list of specs), `seed` and `config` (a table of settings, as
    in a config file); a line's settings win over the flags, which win over the config file.
    Every problem names its line."""
    tasks: list[tuple[str, str, Plan]] = []
    seen: dict[str, str] = {}  # each id, and the line that has it
    for number, where, text in read_lines(path, "task file"):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise ConfigError(f"{where}: not valid JSON ({error})") from None
        if not isinstance(data, dict):
            raise ConfigError(f'{where}: expected a JSON object like {{"task": "..."}}')
        if not isinstance(data.get("task"), str):
            found = "no 'task' field" if "task" not in data else "'task' is not a string"
            raise ConfigError(f'{where}: {found}; each line needs one, like {{"task": "..."}}')
        if not data["task"].strip():
            raise ConfigError(
                f"{where}: 'task' is empty; write the question or instruction to deliberate on"
            )
        unknown = sorted(set(data) - set(_LINE_FIELDS))
        if unknown:
            raise ConfigError(f"{where}: {_unknown(unknown)}")
        label = str(data.get("id", f"line-{number}"))
        if label in seen:
            raise ConfigError(
                f"{where}: id {label!r} is also {seen[label]}'s; give each line its own id "
                "(results.jsonl names each line by it)"
            )
        seen[label] = where
        overrides: dict[str, Any] = {}
        if protocol:
            overrides["protocol"] = protocol
        if models:
            overrides["agents"] = [{"model": spec} for spec in models]
        line_models = data.get("models")
        if line_models is not None:
            if not isinstance(line_models, list) or not all(
                isinstance(m, str) for m in line_models
            ):
                raise ConfigError(f"{where}: 'models' must be a list of model specs")
            overrides["agents"] = [{"model": spec} for spec in line_models]
        for key in ("protocol", "seed"):
            if key in data:
                overrides[key] = data[key]
        settings = data.get("config", {})
        if not isinstance(settings, dict):
            raise ConfigError(f"{where}: 'config' must be a table of settings")
        _dotted("", settings, overrides)
        try:
            plan = load_run(config_path, overrides)  # a problem with the user config names it
        except ConfigError as error:
            raise ConfigError(f"{where}: {error}") from None
        tasks.append((label, data["task"], plan))
    if not tasks:
        raise ConfigError(f'task file {path} holds no tasks (one {{"task": "..."}} per line)')
    return tasks


# -- the batch folder ---------------------------------------------------------------------------
class Batch(Struct):
    path: Path
    lines: list[BatchLine]
    created: dict[int, str] = field(default_factory=dict)  # session folders made by this run

    @property
    def id(self) -> str:
        return self.path.name

    @property
    def journal(self) -> Path:
        return self.path / "journal.jsonl"

    @property
    def results(self) -> Path:
        return self.path / "results.jsonl"

    def write_results(self, ended: Mapping[int, LineResult]) -> None:
        """results.jsonl: `result_line` of every task, the latest end of each (`ended`)."""
        text = "".join(
            json.dumps(result_line(line, ended.get(line.index)), ensure_ascii=True) + "\n"
            for line in self.lines
        )
        atomic_write(self.results, text, durable=False)  # rebuilt from the journal on resume

    def record(self, entry: Mapping[str, Any]) -> None:
        """Append one journal line and make it durable before returning."""
        if entry.get("event") == "session":
            self.created[entry["line"]] = entry["folder"]
        data = (json.dumps(dict(entry), separators=(",", ":")) + "\n").encode()
        fd = os.open(self.journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def state(self) -> tuple[dict[int, str], dict[int, LineResult]]:
        """Per line: its session folder (once created) and its latest end (if any). A torn
        last line (a kill mid-write) is skipped: what it held was not yet relied on."""
        folders: dict[int, str] = {}
        ends: dict[int, LineResult] = {}
        if not self.journal.exists():
            return folders, ends
        for text in self.journal.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(text)
            except ValueError:
                continue
            index = entry.get("line")
            if not isinstance(index, int):
                continue
            if entry.get("event") == "session":
                folders[index] = entry["folder"]
                ends.pop(index, None)
            elif entry.get("event") == "ended":
                ends[index] = LineResult(**entry["result"])
        return folders, ends


def create_batch(
    tasks: Iterable[tuple[str, str, Plan | RunConfig]],
    *,
    root: Path | None = None,
    source: str = "",
) -> Batch:
    """A new batch folder holding every line's task and resolved config."""
    lines = []
    for index, (label, task, config) in enumerate(tasks):
        plan = config if isinstance(config, Plan) else resolve(config)
        lines.append(BatchLine(index, label, task, plan.config.dump()))
    if not lines:
        raise ConfigError("a batch needs at least one task")
    base = root or batches_root()
    path = base / (time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3))
    path.mkdir(parents=True)
    atomic_write(
        path / "batch.json",
        json.dumps(
            {
                "id": path.name,
                "created": time.time(),
                "source": source,
                "lines": [asdict(line) for line in lines],
            }
        ),
    )
    return Batch(path, lines)


def open_batch(ref: str, root: Path | None = None) -> Batch:
    """An existing batch by id (or a unique prefix of one)."""
    base = root or batches_root()
    found = sorted(p for p in base.glob(f"{ref}*") if (p / "batch.json").exists())
    if not found:
        raise MootError(f"no batch {ref!r} under {base}; the id is printed when a batch starts")
    if len(found) > 1 and found[0].name != ref:
        raise MootError(f"{ref!r} names {len(found)} batches; give more of the id")
    data = json.loads((found[0] / "batch.json").read_text(encoding="utf-8"))
    return Batch(found[0], [BatchLine(**line) for line in data["lines"]])


def result_line(line: BatchLine, result: LineResult | None) -> dict[str, Any]:
    """One task's line of results.jsonl: its `id` (the task line's, else line-N) and position
    (`index`, from 0), its session, `status` ("pending" before it ends), moot's `label` of the
    outcome, the `exit_code` `moot run` would give, cost (USD, null: unknown), tokens, calls,
    `seconds`, the SHA-256 of the final answer's UTF-8 (null: none), the error and the folder."""
    if result is None:
        return {"id": line.label, "index": line.index, "session_id": None, "status": "pending"}
    answer = result.final_answer.encode("utf-8", "replace") if result.final_answer else None
    return {
        "id": line.label,
        "index": line.index,
        "session_id": result.session_id,
        "status": result.status,
        "label": result.finding,
        "exit_code": exit_code_for(result.status),
        "cost": result.cost,
        "tokens": result.tokens,
        "calls": result.calls,
        "seconds": result.seconds,
        "answer_sha256": hashlib.sha256(answer).hexdigest() if answer is not None else None,
        "error": result.error,
        "folder": result.folder,
    }


# -- running ------------------------------------------------------------------------------------
def _ended(line: BatchLine, run: RunResult, seconds: float) -> LineResult:
    result = run.result
    calls = sum(usage.calls for usage in result.agents.values())
    error = None if result.status in DONE else (run.message or result.stop_message or result.how)
    return LineResult(
        index=line.index,
        label=line.label,
        session_id=run.session_id,
        status=result.status,
        error=error,
        calls=calls,
        tokens=result.tokens,
        cost=result.cost,
        final_answer=result.final_answer,
        seconds=round(seconds, 3),
        folder=str(run.folder),
        finding=result.finding.label if result.finding is not None else None,
    )


Runner = Callable[[Batch, BatchLine, str | None], Any]  # -> awaitable LineResult


async def run_local(batch: Batch, line: BatchLine, folder: str | None) -> LineResult:
    """Run (or continue) one line's session in this event loop."""
    began = time.monotonic()

    def created(where: Path) -> None:
        batch.record({"line": line.index, "event": "session", "folder": str(where)})

    on_call = _ON_CALL.get()

    def asked(event: Event) -> None:
        if on_call is not None and event.kind == "ask":  # a call ended (or the cache answered)
            on_call()

    if folder is None:
        run = await start_async(line.task, line.plan(), subscribers=[asked], on_created=created)
    else:
        path = Path(folder)
        run = await resume_async(path.name, root=path.parent, subscribers=[asked])
    return _ended(line, run, time.monotonic() - began)


async def run_batch(
    batch: Batch,
    *,
    concurrency: int = 8,
    provider_limits: Mapping[str, int] | None = None,
    observer: BatchObserver | None = None,
    runner: Runner = run_local,
) -> BatchSummary:
    """Run every line that has not reached its outcome; see the module docstring."""
    if concurrency < 1:
        raise ConfigError(f"the concurrency must be at least 1, got {concurrency}")
    observer = observer or _Silent()
    lock = FileLock(batch.path / "lock", thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise MootError(
            f"batch {batch.id} is being run by another process; wait for it to end or stop it, "
            f"then run: moot batch --resume {batch.id}"
        ) from None
    try:
        return await _run(batch, concurrency, provider_limits, observer, runner)
    finally:
        lock.release()


async def _run(
    batch: Batch,
    concurrency: int,
    provider_limits: Mapping[str, int] | None,
    observer: BatchObserver,
    runner: Runner,
) -> BatchSummary:
    began = time.monotonic()
    folders, ends = batch.state()
    done = {i: r for i, r in ends.items() if r.status in DONE}
    pending = [line for line in batch.lines if line.index not in done]
    observer.begun(len(batch.lines), list(done.values()))
    limits = {name: asyncio.Semaphore(n) for name, n in (provider_limits or {}).items()}
    queue = list(reversed(pending))
    results: dict[int, LineResult] = dict(done)
    stopping = asyncio.Event()
    running: set[asyncio.Task[Any]] = set()

    called = getattr(observer, "called", None)

    async def one(line: BatchLine) -> LineResult:
        if called is not None:  # this task's own context: only this line's calls reach it
            _ON_CALL.set(lambda: called(line))
        held = sorted(p for p in line.providers() if p in limits)  # sorted: no deadlock
        async with contextlib.AsyncExitStack() as stack:
            for name in held:
                await stack.enter_async_context(limits[name])
            return await runner(batch, line, folders.get(line.index))  # type: ignore[no-any-return]

    async def worker() -> None:
        while queue and not stopping.is_set():
            line = queue.pop()
            observer.started(line)  # running: started, or waiting for a provider's limit
            task = asyncio.ensure_future(one(line))
            running.add(task)
            try:
                result = await task
            except asyncio.CancelledError:
                if not stopping.is_set():
                    raise
                result = LineResult(line.index, line.label, None, "interrupted", "interrupted")
            except Exception as error:  # a broken session must not stop the batch
                message = str(error) if isinstance(error, MootError) else repr(error)
                result = LineResult(line.index, line.label, None, "failed", message)
            finally:
                running.discard(task)
            if result.folder is None:
                result.folder = batch.created.get(line.index, folders.get(line.index))
            batch.record({"line": line.index, "event": "ended", "result": asdict(result)})
            results[line.index] = result
            observer.ended(result)

    def stop() -> None:
        stopping.set()
        for task in list(running):
            task.cancel()

    loop = asyncio.get_running_loop()
    handled = []
    if sys.platform != "win32":
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(RuntimeError, ValueError):  # not the main thread
                loop.add_signal_handler(sig, stop)
                handled.append(sig)
    try:
        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(pending)) or 1)))
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
        batch.write_results({**ends, **results})
    ordered = [results[line.index] for line in batch.lines if line.index in results]
    counts: dict[str, int] = {}
    for result in ordered:
        counts[result.status] = counts.get(result.status, 0) + 1
    return BatchSummary(
        batch.id,
        ordered,
        time.monotonic() - began,
        interrupted=stopping.is_set(),
        counts=counts,
    )


def run_batch_sync(batch: Batch, **options: Any) -> BatchSummary:
    """`run_batch` on a fresh event loop."""
    return asyncio.run(run_batch(batch, **options))
