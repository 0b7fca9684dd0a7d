"""`moot batch --executor ray`: each session in a Ray task (the optional extra `ray`).

The driver keeps the batch (its queue, limits and journal) exactly as with the local executor;
only running one line moves into a Ray task, which runs `moot.batch.run_local` on its own event
loop. The session folder and the batch journal are written by the task where it runs, so both
must be on storage the driver and every node share (the same filesystem for a local Ray, a
shared mount for a cluster; `MOOT_HOME` is passed to the tasks). The resume rules are therefore
the same: a line's session id is in the batch journal before its first step is asked.

Workers need moot installed (and any `scripted:FILE` participants reachable by an absolute path
or from the driver's working directory, which the task adopts). A session cancelled by the
driver (Ctrl-C) is cancelled in Ray too; Ray interrupts the task, which journals the stop.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from msgspec.structs import asdict

from moot.batch import Batch, BatchLine, LineResult, Runner, run_local
from moot.errors import ConfigError

__all__ = ["ray_runner"]


def _session(
    batch_path: str, line: dict[str, Any], folder: str | None, env: dict[str, str], cwd: str
) -> dict[str, Any]:
    """Runs inside a Ray worker: one line's session, to its end."""
    os.environ.update(env)
    os.chdir(cwd)
    batch = Batch(Path(batch_path), [])  # only its journal is written here
    result = asyncio.run(run_local(batch, BatchLine(**line), folder))
    return asdict(result)


def ray_runner(address: str | None = None, **init: Any) -> Runner:
    """A batch runner that sends each session to Ray; `address` None starts a local Ray
    (extra `ray.init` arguments such as num_cpus go in `init`)."""
    try:
        import ray
    except ImportError:
        from moot.text.install import extra_install_hint

        raise ConfigError(
            f"--executor ray needs Ray: {extra_install_hint('ray')} "
            "(or use the default local executor)"
        ) from None
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, **init)
    remote = ray.remote(max_retries=0)(_session)  # a retry would be a resume: the driver decides
    env = {k: v for k, v in os.environ.items() if k.startswith("MOOT_")}
    cwd = os.getcwd()

    async def run(batch: Batch, line: BatchLine, folder: str | None) -> LineResult:
        ref = remote.remote(str(batch.path), asdict(line), folder, env, cwd)
        try:
            data = await ref
        except asyncio.CancelledError:
            ray.cancel(ref)
            raise
        return LineResult(**data)

    return run
