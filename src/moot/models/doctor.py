"""What `moot models` and `moot doctor` report: providers, and whether each configured model
can run here (SDK installed, key present, command found, and with a ping, a one-token call).
Key values are never shown: only the names of the variables and whether they are set."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING

from msgspec import Struct, field

from moot.config import AgentConfig
from moot.errors import ConfigError
from moot.models.base import Model, create_model, parse_spec, provider_info, providers
from moot.models.keys import redact
from moot.types import Message, Request

if TYPE_CHECKING:
    from moot.models.cli_agents import CliModel

__all__ = ["Check", "ModelReport", "check_models", "provider_lines"]

PING_TIMEOUT = 60.0


class Check(Struct, frozen=True):
    ok: bool
    text: str


class ModelReport(Struct):
    spec: str
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)


def provider_lines() -> list[str]:
    """One block per provider: installed or how to install, an example, what it is."""
    from moot.models.cli_agents import TOOLS  # no SDK behind it

    lines = []
    for info in providers():
        state = "installed" if info.installed() else f"missing: {info.install_hint()}"
        lines.append(f"{info.name:<14} {state}")
        lines.append(f"{'':<14} {info.summary}")
        lines.append(f"{'':<14} e.g. {info.example}")
        if info.key_env:
            lines.append(f"{'':<14} key from {' or '.join(info.key_env)}")
        if info.name == "cli":
            found = [
                f"{name} ({'found' if shutil.which(tool.command) else 'not on PATH'})"
                for name, tool in TOOLS.items()
            ]
            lines.append(f"{'':<14} tools: {', '.join(found)}")
    return lines


def check_models(agents: Sequence[AgentConfig], *, ping: bool = False) -> list[ModelReport]:
    return asyncio.run(_check_all(agents, ping))


async def _check_all(agents: Sequence[AgentConfig], ping: bool) -> list[ModelReport]:
    return [await _check(agent, ping) for agent in agents]


async def _check(agent: AgentConfig, ping: bool) -> ModelReport:
    report = ModelReport(agent.model)
    checks = report.checks
    spec = parse_spec(agent.model)
    info = provider_info(spec.provider)
    if info is None:
        checks.append(Check(False, f"unknown provider {spec.provider!r}"))
        return report
    if info.requires:
        installed = info.installed()
        needs = ", ".join(info.requires)
        checks.append(
            Check(
                installed,
                f"{needs} installed"
                if installed
                else f"{needs} missing: run {info.install_hint()}",
            )
        )
        if not installed:
            return report
    names = (agent.api_key_env,) if agent.api_key_env else info.key_env
    if names:
        present = [n for n in names if os.environ.get(n, "").strip()]
        checks.append(
            Check(
                bool(present),
                f"key in {present[0]} (set)" if present else f"no key: set {' or '.join(names)}",
            )
        )
        if not present:
            return report
    try:
        model = create_model(spec, agent.settings())
    except ConfigError as exc:
        checks.append(Check(False, redact(str(exc))))
        return report
    try:
        from moot.models.cli_agents import CliModel

        if isinstance(model, CliModel):
            checks.extend(await _cli_checks(model))
        else:
            checks.append(Check(True, "model created"))
        if ping:
            checks.append(await _ping(model))
    finally:
        await model.aclose()
    return report


async def _cli_checks(model: CliModel) -> list[Check]:
    """The installed version (asked in an empty folder; a custom command is not started:
    its file's sha256 instead) and the exact command line of each kind of task."""
    from moot.models.cli_process import file_sha256, tool_version

    executable = model.executable
    if model.custom:
        digest = await asyncio.to_thread(file_sha256, executable)
        found = Check(True, f"{executable}: custom command (not started), sha256 {digest}")
    else:
        found = Check(True, f"{executable}: {await tool_version(executable)}")
    return [
        found,
        Check(True, f"code task: {model.command_line(code=True)}"),
        Check(True, f"text task: {model.command_line(code=False)}"),
    ]


async def _ping(model: Model) -> Check:
    special = getattr(model, "ping", None)
    if callable(special):
        completion = await special()
    else:
        request = Request(
            messages=(Message(role="user", content="Reply with the single word OK."),),
            max_tokens=1,
            timeout=PING_TIMEOUT,
        )
        completion = await model.complete(request)
    if completion.ok:
        return Check(True, f"ping answered in {completion.latency:.2f}s")
    failure = completion.failure
    kind = failure.kind.value if failure else "error"
    return Check(False, f"ping failed ({kind}): {failure.message if failure else ''}")
