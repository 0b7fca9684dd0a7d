"""The library face: start, resume and replay sessions. The CLI calls these.

start(task, config)   create a session and run its protocol
resume(ref)           run the protocol again over its journal; recorded steps cost nothing
replay(ref)           recompute the outcome from the journal alone (zero model calls)
run(task, ...)        the shortest way in: deliberate and return the outcome
say(ref, agent, text) a person's note to one agent of a running or paused session
arun(task, ...)       the same in a running event loop (await it)

The run lifecycle is `moot.lifecycle.run` (one async core: `start_async`, `resume_async`) and
`moot.lifecycle.replay`; `start` and `resume` run that core on a fresh event loop of their own
through `lifecycle.run.run_sync`, where Ctrl-C and SIGTERM interrupt the run cleanly. The
names of both are importable from here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from moot.engine.inbox import HumanNote, post
from moot.engine.store import find_session
from moot.errors import ConfigError
from moot.lifecycle.plan import load_run
from moot.lifecycle.run import RunResult, resume_async, run_sync, start_async
from moot.lifecycle.specs import user_config

if TYPE_CHECKING:
    from moot.engine.result import Result
    from moot.lifecycle.replay import FINDING_RULE, ReplayReport, outcome_change, replay

# Replay's names are imported on first use (`__getattr__` below): `moot run` never replays,
# and its start-up would pay for the module (issue 23).
_REPLAY_NAMES = ("FINDING_RULE", "ReplayReport", "outcome_change", "replay")

__all__ = [
    "FINDING_RULE",
    "HumanNote",
    "ReplayReport",
    "RunResult",
    "arun",
    "outcome_change",
    "replay",
    "resume",
    "resume_async",
    "run",
    "say",
    "start",
    "start_async",
]

P = ParamSpec("P")
T = TypeVar("T")


def _blocking(
    name: str, run_async: Callable[P, Coroutine[Any, Any, T]], doc: str
) -> Callable[P, T]:
    """`run_async` with its very parameters, run on a fresh event loop of its own
    (`lifecycle.run.run_sync`: Ctrl-C and SIGTERM interrupt it cleanly)."""

    def blocking(*args: P.args, **kwargs: P.kwargs) -> T:
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


async def arun(
    task: str,
    *,
    models: Sequence[str] = (),
    protocol: str | None = None,
    config: str | Path | None = None,
    seed: int | None = None,
    rounds: int | None = None,
    max_cost: float | None = None,
    max_tokens: int | None = None,
    timeout: float | None = None,
    verify: Sequence[str] = (),
    samples: int | None = None,
    input: str | None = None,
    pick: str | None = None,
    shuffle: bool = True,
    cache: str | None = None,
    repo: str | Path | None = None,
    context: Sequence[str] = (),
    synthesize: bool | None = None,
    chairman: str | None = None,
    **options: Any,
) -> Result:
    """Deliberate on `task` and return the outcome, in a running event loop (`await
    moot.arun(...)` in Jupyter or an async web app); `moot.run` is the same from plain code.

    Every option of `moot run` is a keyword: `models` (one agent per spec or alias of the user
    config; default its models, else three on the embedded model), `protocol` (default: the
    config's, else the user config's, else arena), `config` (a config file),
    `seed`, `rounds`, the limits `max_cost` (USD), `max_tokens` and `timeout` (seconds),
    `verify` (commands whose results the judge sees), `samples`, `input` (a text to start
    from: the text, not a file name), `pick`, `shuffle=False` (--no-shuffle), `cache` (a cache
    spec such as "sqlite"), `repo` and `context` (a code task), `synthesize` and `chairman`
    (a chairman's final answer after the outcome, --synthesize). Other keywords set the
    protocol's own options (`moot.run(task, protocol="court", max_agent_rounds=2)`). Bad input
    raises `moot.errors.ConfigError` before any session is made; the session is kept on disk
    like any other (`result.session_id`)."""
    if options and protocol is None:
        if config is not None:
            raise ConfigError(
                f"{', '.join(sorted(options))}: with a config file, a protocol's options need "
                "protocol=NAME, so that they are read as that protocol's"
            )
        protocol = user_config().protocol or "arena"  # the default protocol's options
    plan = load_run(
        Path(config) if config is not None else None,
        {f"{protocol}.{key}": value for key, value in options.items()},
        protocol=protocol,
        models=models,
        seed=seed,
        max_cost=max_cost,
        max_tokens=max_tokens,
        timeout=timeout,
        cache=cache,
        repo=repo,
        context=context,
        rounds=rounds,
        verify=list(verify),
        no_shuffle=not shuffle,
        samples=samples,
        input_text=input,
        picker=pick,
        synthesize=synthesize,
        chairman=chairman,
    )
    return (await start_async(task, plan)).result


run = _blocking(
    "run",
    arun,
    """Deliberate on `task` and return the outcome: the shortest way in from Python. It takes
    what `moot.arun` takes; called where an event loop is already running (Jupyter, an async
    web app) it runs on a thread of its own and blocks until the outcome (`await moot.arun`
    does not block the loop).""",
)


def say(ref: str | None, agent: str, text: str) -> HumanNote:
    """Send a note to one agent of session `ref` (an id, a unique prefix, or None: the last)
    while it runs, or while it is paused: it is journaled as a human message and added to that
    agent's next prompt (`moot say`). `agent`: its alias, label or letter (`agent_b`, `Agent B`,
    `B`). Raises NoteRefused (a MootError) for an unknown agent, an empty note or a finished
    session."""
    return post(find_session(ref), agent, text)


def __getattr__(name: str) -> Any:
    if name in _REPLAY_NAMES:
        from moot.lifecycle import replay as replaying

        return getattr(replaying, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
