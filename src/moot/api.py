"""The library face: start, resume and replay sessions. The CLI calls these.

start(task, config)   create a session and run its protocol
resume(ref)           run the protocol again over its journal; recorded steps cost nothing
replay(ref)           recompute the outcome from the journal alone (zero model calls)
run(task, ...)        the shortest way in: deliberate and return the outcome

The run lifecycle is `moot.lifecycle.run` (one async core: `start_async`, `resume_async`) and
`moot.lifecycle.replay`; `start` and `resume` run that core on a fresh event loop of their own
through `lifecycle.run.run_sync`, where Ctrl-C and SIGTERM interrupt the run cleanly. The
names of both are importable from here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, ParamSpec

from moot.engine.result import Result
from moot.lifecycle.plan import load_config
from moot.lifecycle.replay import FINDING_RULE, ReplayReport, outcome_change, replay
from moot.lifecycle.run import RunResult, resume_async, run_sync, start_async

__all__ = [
    "FINDING_RULE",
    "ReplayReport",
    "RunResult",
    "outcome_change",
    "replay",
    "resume",
    "resume_async",
    "run",
    "start",
    "start_async",
]

P = ParamSpec("P")


def _blocking(
    name: str, run_async: Callable[P, Coroutine[Any, Any, RunResult]], doc: str
) -> Callable[P, RunResult]:
    """`run_async` with its very parameters, run on a fresh event loop of its own
    (`lifecycle.run.run_sync`: Ctrl-C and SIGTERM interrupt it cleanly)."""

    def blocking(*args: P.args, **kwargs: P.kwargs) -> RunResult:
        return run_sync(lambda: run_async(*args, **kwargs))

    functools.update_wrapper(blocking, run_async, assigned=())  # its signature, for help()
    blocking.__name__ = blocking.__qualname__ = name
    blocking.__doc__ = doc
    return blocking


start = _blocking(
    "start",
    start_async,
    """Create a session for `task` and run it to its end, a limit, or an interruption.
    `chooser` reads a human's choice (default: standard input); `on_outcome` is called with
    the outcome before the reports are written.""",
)
resume = _blocking(
    "resume",
    resume_async,
    """Continue a session; `limits` (for example {"max_cost": 5}) raises its budgets.
    `on_outcome` as for `start`.""",
)


def run(
    task: str,
    *,
    models: Sequence[str] | None = None,
    protocol: str = "arena",
    config: str | Path | None = None,
    **options: Any,
) -> Result:
    """Deliberate on `task` and return the outcome: the shortest way in from Python.

    `models` gives one agent per spec (default: three on the embedded model); `options` set the
    protocol's options (`moot.run(task, protocol="court", max_agent_rounds=2)`); `config` names
    a config file. Bad input raises `moot.errors.ConfigError`; the session is kept on disk like
    any other (`result.session_id`)."""
    overrides: dict[str, Any] = {"protocol": protocol}
    if models:
        overrides["agents"] = [{"model": spec} for spec in models]
    for key, value in options.items():
        overrides[f"{protocol}.{key}"] = value
    plan = load_config(Path(config) if config is not None else None, overrides)
    return start(task, plan).result
