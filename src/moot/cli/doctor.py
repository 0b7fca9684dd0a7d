"""This installation and its config: models, doctor, validate, schema."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from moot.cli.common import config_option, fail, say
from moot.text import plural

__all__ = ["doctor", "models", "schema", "validate"]


@click.command()
def models() -> None:
    """The model providers, which are installed, and example specs."""
    from moot.models.doctor import provider_lines

    for line in provider_lines():
        say(line)


@click.command()
@config_option("Check the agents of this config file.")
@click.option("--models", "specs", multiple=True, metavar="SPEC", help="Check this model spec.")
@click.option("--ping", is_flag=True, help="Also make a one-token call to each model.")
@click.option(
    "--prune", is_flag=True, help="Remove the stray worktrees (and tmux sockets) it reports."
)
def doctor(config_path: Path | None, specs: tuple[str, ...], ping: bool, prune: bool) -> None:
    """Whether each configured model can run here: SDK, key (never shown), command, ping;
    plugins that did not load; and moot worktrees left behind (strays) in the repositories
    moot knows."""
    from moot.lifecycle.code import prune_strays, strays
    from moot.lifecycle.plan import load_run
    from moot.models.doctor import check_models

    found = strays(Path.cwd())
    for root, stray in found:
        say(
            f"stray: session {stray.session} in {root}: {stray.reason}; "
            f"{plural(len(stray.worktrees), 'worktree')}, "
            f"{plural(len(stray.branches), 'branch', 'branches')}"
        )
    from moot.display.tmux import remove_stale_sockets, socket_dir, stale_sockets

    sockets = stale_sockets()  # of --display tmux servers that a killed moot left
    if sockets and not prune:
        say(
            f"stray: {plural(len(sockets), 'tmux socket')} of moot sessions whose server is gone,"
            f" in {socket_dir()}"
        )
    if prune and sockets:
        say(f"removed {plural(len(remove_stale_sockets()), 'stale tmux socket')}")
    if found and prune:
        for root, cleaned in prune_strays(Path.cwd()):
            say(f"pruned {plural(len(cleaned.worktrees), 'worktree')} in {root}")
        return
    if found or sockets:
        say("remove them with: moot doctor --prune")
    if prune:
        return

    if specs:  # models checked on their own: no protocol, so no agent count to meet
        from moot.config import AgentConfig, Problems, problem_lines, read

        try:
            configured = [read(AgentConfig, {"model": spec}) for spec in specs]
        except Problems as exc:
            fail("; ".join(problem_lines(exc, "--models")))
    else:
        configured = load_run(config_path).config.agents  # under the user config, as a run
    agents = list({a.model: a for a in reversed(configured)}.values())[::-1]  # each once
    failed = _plugin_problems()
    reports = check_models(agents, ping=ping)
    for report in reports:
        say(report.spec)
        for check in report.checks:
            # a check quotes programs moot does not control (a CLI tool's --version)
            say(f"  {'ok  ' if check.ok else 'FAIL'}  {check.text}", keys=True)
    bad = sum(1 for r in reports if not r.ok)
    ready = f"{len(reports) - bad} of {plural(len(reports), 'model')} ready"  # 1 of 2 models
    say(ready if reports else "no models")
    if bad or failed:
        sys.exit(1)


def _plugin_problems() -> int:
    """A problem line for each plugin that did not load (`moot plugins` lists them all); how
    many there are."""
    from moot.cli.plugins import checked

    failed = [p for p in checked() if not p.loaded]
    for plugin in failed:
        source = f"{plugin.distribution} {plugin.version}".strip() or plugin.target
        say(f"plugin {plugin.name} ({plugin.kind or 'no kind'}, {source})", keys=True)
        say(f"  FAIL  {plugin.problem}", keys=True)
    return len(failed)


@click.command()
@click.argument("file", type=click.Path(path_type=Path))
def validate(file: Path) -> None:
    """Check a config file: print every problem with its path (exit 1), or "valid"."""
    from moot.errors import ConfigError
    from moot.lifecycle.plan import check_config

    try:
        plan, problems = check_config(file)
    except ConfigError as exc:  # unreadable, not UTF-8, or not parseable: one problem
        plan, problems = None, [str(exc)]
    if plan is None:
        say(f"{file}: {plural(len(problems), 'problem')}")
        for line in problems:
            say(f"  {line}")
        sys.exit(1)
    roles = plan.record.participants(plan.config, plan.options)
    counts = ", ".join(_members(len(r.members), r.prefix) for r in roles if r.members)
    say(f"{file}: valid ({plan.record.name}, {counts})")


@click.command()
def schema() -> None:
    """Print the JSON Schema of config files."""
    import json

    from moot.lifecycle.plan import config_schema

    say(json.dumps(config_schema(), indent=2))


def _members(count: int, role: str) -> str:
    """`3 agents`, `1 judge`, `2 chairmen`."""
    return plural(count, role, role[:-3] + "men" if role.endswith("man") else None)
