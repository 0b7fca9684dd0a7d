"""`moot run` and `moot resume`: a run's options become a plan; its projection is checked
(--dry-run, --max-cost) before anything runs; the library runs it; its outcome is the exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Unpack

import click

from moot.cli.common import (
    PROCESS,
    Whole,
    config_option,
    context_option,
    display_options,
    exit_with,
    fail,
    input_text,
    json_option,
    limit_options,
    limit_overrides,
    models_option,
    quick_start,
    run_face,
    say,
    task_file_option,
    task_text,
    tmux_for,
    tmux_option,
    with_tmux,
)
from moot.cli.outcome import chooser, shown

if TYPE_CHECKING:
    from moot.lifecycle.plan import RunOptions

    class RunFlags(RunOptions, total=False):
        """The options of `moot run` that go to `load_run` as they come (the flags whose click
        destination is `load_run`'s keyword): a run's options and a chairman's synthesis."""

        synthesize: bool | None
        chairman: str | None


__all__ = ["dry_run_option", "projection_gate", "resume", "run"]

DEMO_ROUNDS = 1  # rounds of a run with no --models and no config (the embedded model)


class ProtocolName(click.ParamType[str, Any]):
    """A registered protocol's name; the choices are read from the registry when shown."""

    name = "protocol"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        from moot import protocols

        return "[" + "|".join(protocols.names()) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from moot import protocols

        if value in protocols.names():
            return str(value)
        self.fail(protocols.unknown_protocol(str(value)), param, ctx)


def _preset(preset: str, protocol: str | None) -> dict[str, str]:
    """The overrides of `--preset NAME`: the protocol whose record has that preset (it must be
    --protocol's, when given) and the option the preset sets."""
    from moot import protocols
    from moot.protocols.definition import Flag

    owners = [protocols.get(name) for name in protocols.names()]
    owner = next((r for r in owners if preset in r.presets), None)
    if owner is None:
        known = ", ".join(p for r in owners for p in r.presets)
        raise click.UsageError(f"--preset {preset}: no protocol has that preset ({known})")
    if protocol is not None and protocol != owner.name:
        raise click.UsageError(
            f"--preset is a {owner.name} preset, not one of --protocol {protocol}"
        )
    return {"protocol": owner.name, f"{owner.name}.{owner.flags[Flag.PRESET]}": preset}


def _demo_rounds(protocol: str | None, overrides: dict[str, Any] | None) -> int | None:
    """The rounds of the embedded model's demonstration run of the protocol that runs (the
    config's default without --protocol): DEMO_ROUNDS; for a protocol that needs several rounds
    to reach its end (refine: its incumbent must win convergence_k passes in a row), one more
    than those, so that a revision adopted in the first can still hold to the end; None for a
    protocol without rounds."""
    from moot import protocols
    from moot.config import protocol_default, read
    from moot.protocols.definition import Flag

    name = protocol or protocol_default()
    record = protocols.get(name)
    if Flag.ROUNDS not in record.flags:
        return None
    if record.rounds_needed is None:
        return DEMO_ROUNDS
    prefix = f"{name}."
    section = {
        k.removeprefix(prefix): v for k, v in (overrides or {}).items() if k.startswith(prefix)
    }
    try:
        options = read(record.options, section)
    except ValueError:  # the config check words it
        return DEMO_ROUNDS
    return DEMO_ROUNDS + record.rounds_needed(options).rounds


def _warn_short_rounds(plan: Any, rounds_flag: int | None) -> None:
    """Before a run (or its projection) whose rounds cap is below what the protocol needs to
    reach its end: say so, with the fix. The run still goes ahead (its outcome says it did not
    get there)."""
    short = plan.record.short_of_rounds(plan.options)
    if short is None:
        return
    from moot.protocols.definition import Flag

    cap = plan.max_rounds
    if rounds_flag is not None:
        source = f"--rounds {cap}"
    else:
        source = f"{plan.record.name}.{plan.record.flags[Flag.ROUNDS]} = {cap}"
    say(
        f"moot: warning: {source} is fewer than the {short.rounds} rounds the "
        f"{plan.record.name} protocol needs to {short.goal} ({short.why}): this run cannot "
        f"{short.goal} (it ends with exit 2); give --rounds {short.rounds} or more to let it",
        err=True,
    )


def dry_run_option(command: Callable[..., None]) -> Callable[..., None]:
    """--dry-run (the parameter `dry_run`): `projection_gate` prints the projection and exits."""
    return click.option(
        "--dry-run",
        is_flag=True,
        help="Print the projected calls, tokens and cost range, then exit without running.",
    )(command)


def projection_gate(plan: Any, task: str, dry_run: bool, *, cost_flag: bool = True) -> None:
    """--dry-run makes the checks the run makes before its first call, failing as it fails,
    then prints the projection and exits 0; a projection above the session's max_cost asks
    for confirmation on a terminal and refuses otherwise (exit 1). `cost_flag`: whether that
    limit is --max-cost's (else a config's `limits.max_cost`, and the messages say so)."""
    limit = plan.config.limits.max_cost
    named = "--max-cost" if cost_flag else "limits.max_cost of the config"
    if dry_run:
        _dry_run(plan, task)
    if limit is None:
        return
    from moot.lifecycle.projection import estimate, render

    projected = estimate(plan, task)
    if projected is None or projected.cost[1] <= limit:
        return
    message = (
        f"the projected worst case costs ${projected.cost[1]:.4f}, more than {named} ${limit:g}"
    )
    if sys.stdin.isatty() and sys.stderr.isatty():
        say(render(projected), err=True)
        if click.confirm(f"{message.capitalize()}. Run anyway?", default=False, err=True):
            return
        fail(f"not run: the projected cost is above {named}")
    fail(
        f"{message}; not run. Raise {'it' if cost_flag else 'it (or give --max-cost)'}, lower "
        "the caps (--rounds, --samples, --layers), or see the projection with --dry-run"
    )


def _dry_run(plan: Any, task: str) -> NoReturn:
    """What `--dry-run` does: every check a run makes before its first model call (the task,
    the repository, each participant's model made as the run makes it, but not started: no
    weights loaded, no connection; the task against each context window), failing with the
    message the run fails with; then the projection, each call at most its model's context
    window (exit 0). Nothing is created. A provider whose SDK is not installed needs none for
    the projection: it is shown, then every missing extra is named with the one command that
    installs them all, and the dry run fails (exit 1), as the run would."""
    from moot.lifecycle.plan import make_models, participants, start_problems
    from moot.lifecycle.projection import estimate, render, within_windows
    from moot.types import parse_spec

    if not task.strip() and plan.record.default_task is not None:
        task = plan.record.default_task(plan.options) or ""
    if not task.strip():  # as lifecycle/run.py's _open_new words it
        fail('the task is empty: give the question to deliberate, as in moot run "..."')
    agents = participants(plan, plan.config.seed or 0)
    missing = _missing_sdks(agents)
    problems = [p for p in start_problems(plan, task) if p not in missing.values()]
    if problems:
        fail(problems[0])  # the one the run stops at: it checks in the same order
    windows: dict[str, int] = {}
    caps: dict[str, int] = {}  # what a model's calls write when nothing caps them
    for agent in agents:
        if parse_spec(agent.spec).provider not in missing:
            make_models([agent], prepare=False, plan=plan)  # no SDK needed for the projection
        if agent.model is not None:
            known = agent.model.capabilities
            windows[agent.spec] = max(known.context_window, windows.get(agent.spec, 0))
            if known.max_tokens is not None:
                caps[agent.spec] = max(known.max_tokens, caps.get(agent.spec, 0))
    projected = estimate(plan, task, caps)
    if projected is None:
        say(f"The {plan.record.name} protocol gives no projection; nothing was run.")
    else:
        fitted, notes = within_windows(plan, projected, windows)
        say(render(fitted))
        for note in notes:
            say(note)
    if missing:
        fail(_missing_message(missing))
    sys.exit(0)


def _missing_sdks(agents: list[Any]) -> dict[str, str]:
    """The providers of `agents` whose SDK is not installed: name -> what making one of its
    models says (the run's message, which `start_problems` lists)."""
    from moot.errors import ConfigError, ProviderMissing
    from moot.models.base import create_model, provider_info
    from moot.types import parse_spec

    missing: dict[str, str] = {}
    for agent in agents:
        info = provider_info(parse_spec(agent.spec).provider)
        if info is None or info.name in missing or info.installed():
            continue
        try:
            create_model(agent.spec, agent.config.settings(), prepare=False)
        except ProviderMissing as exc:
            missing[info.name] = str(exc)
        except ConfigError:  # another problem: start_problems words it
            continue
    return missing


def _missing_message(missing: dict[str, str]) -> str:
    """The missing providers' extras, all named, with one command that installs them all."""
    from moot.models.base import provider_info
    from moot.text import plural
    from moot.text.install import extra_install_hint

    infos = [info for name in sorted(missing) if (info := provider_info(name)) is not None]
    extras = sorted({info.extra for info in infos if info.extra})
    command = extra_install_hint(",".join(extras)) if extras else "reinstall moot"
    needs = [f"provider {info.name!r} needs {', '.join(info.requires)}" for info in infos]
    if len(needs) == 1:
        return (
            f"a real run would stop here: {needs[0]}, which is not installed; install it "
            f"with: {command}"
        )
    return (
        f"a real run would stop here: the SDKs of {plural(len(needs), 'provider')} are not "
        f"installed ({'; '.join(needs)}); install them all with: {command}"
    )


@click.command()
@click.argument("task", required=False, default="")
@task_file_option("Read the task from this file (UTF-8). TASK '-' or a pipe reads standard input.")
@click.option(
    "--protocol", type=ProtocolName(), default=None, help="Deliberation protocol (default: arena)."
)
@models_option("One agent per use, e.g. -m local:smollm2 -m openai:gpt-5.4.")
@click.option(
    "--rounds",
    type=Whole(1, 50),
    default=None,
    help="Maximum rounds. Default: the protocol's own (arena: 3), or 1 for the demo that runs "
    "without --models and without a config.",
)
@config_option("TOML, JSON or YAML config file.")
@limit_options
@click.option("--seed", type=int, default=None, help="Seed for aliases, order and sampling.")
@click.option(
    "--verify",
    "verify_commands",
    multiple=True,
    metavar="CMD",
    help="Shell command whose result the judge sees (repeatable).",
)
@click.option(
    "--no-shuffle",
    is_flag=True,
    help="Keep the models in the order given where the protocol would shuffle them.",
)
@click.option(
    "--samples",
    type=Whole(1, 100),
    default=None,
    help="Answers asked of every agent, for protocols that sample (vote).",
)
@click.option(
    "--layers",
    type=Whole(1, 10),
    default=None,
    help="Layers of answers, each shown the last, before the final answer (moa).",
)
@click.option(
    "--input",
    "input_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A text to start from, for protocols that refine one (refine; a diff on a code task).",
)
@dry_run_option
@click.option(
    "--cache",
    "cache",
    is_flag=False,
    flag_value="sqlite",
    default=None,
    metavar="[SPEC]",
    help="Answer requests seen before from a cache: sqlite (default), sqlite:PATH or "
    "redis://HOST:PORT/DB. Put it after TASK, or write --cache=SPEC.",
)
@click.option(
    "--repo",
    "repo",
    is_flag=False,
    flag_value=".",
    default=None,
    metavar="[PATH]",
    help="A code task in this git repository (default: the current one): each agent works in "
    "its own worktree. Put it after TASK, or write --repo=PATH.",
)
@context_option("With --repo: files API models see whole (repeatable); none: a file listing.")
@click.option(
    "--pick",
    "picker",
    type=click.Choice(["human", "judge", "none"]),
    default=None,
    help="With --protocol pick: who picks the winner (default: you, on the terminal).",
)
@click.option(
    "--preset",
    metavar="NAME",
    default=None,
    help="A refine preset (implies --protocol refine): impl is the implementation tournament "
    "of a code task (with --repo); impl-defaults and plan-defaults set its defaults for a text.",
)
@click.option(
    "--synthesize/--no-synthesize",
    "synthesize",
    default=None,
    help="After a question's outcome, a chairman writes the final answer from the picked "
    "answer and what judges, critics or other agents said; kept only if it keeps the agreed "
    "answer (default: on where the protocol's last stage is a chairman, off otherwise).",
)
@click.option(
    "--chairman",
    metavar="SPEC",
    default=None,
    help="The model that writes the synthesis (default: the picked agent's model).",
)
@tmux_option
@display_options
@json_option
@quick_start
def run(
    task: str,
    task_file: Path | None,
    config_path: Path | None,
    verify_commands: tuple[str, ...],
    input_file: Path | None,
    dry_run: bool,
    preset: str | None,
    display: str | None,
    quiet: bool,
    reveal: bool,
    json_logs: bool,
    as_json: bool,
    **options: Unpack[RunFlags],
) -> None:
    """Deliberate on TASK. With no --models and no config: three agents on the embedded model.

    \b
    Examples:
      moot run "What is 17 x 23?" --protocol vote --samples 3
      moot run "Which database?" -m openai:gpt-5.4 -m anthropic:claude-sonnet-4-6 --max-cost 2
      moot run "Fix the failing test" --repo . --verify "pytest -q" -m cli:claude -m cli:codex
      moot run --task-file question.md --config models.toml --json > outcome.json

    Exit codes: 0 consensus (or a change chosen), 1 error, 2 no consensus, 3 paused (a limit,
    an outage, waiting for you: moot resume), 130 interrupted (moot resume)."""
    from moot.api import start
    from moot.lifecycle.plan import load_run
    from moot.lifecycle.specs import user_config

    task = task_text(task, task_file)
    tmux = tmux_for(display)

    protocol = options.get("protocol")
    rounds_flag = options.get("rounds")
    user = user_config()  # its models are not the embedded demo; its protocol may take no rounds
    overrides = _preset(preset, protocol) if preset is not None else None
    if rounds_flag is None and not (options.get("models") or user.models) and config_path is None:
        # The embedded default is a demonstration: one round shows every phase and a judged
        # outcome in about a minute on two cores (benchmarks/default_run.py measures it); a
        # protocol that needs more rounds to reach its end (refine) gets one more than those.
        named = protocol or (overrides or {}).get("protocol") or user.protocol
        demo = _demo_rounds(named, overrides)
        if demo is not None:
            options["rounds"] = demo
    options["verify"] = list(verify_commands)
    options["input_text"] = input_text(input_file)
    plan = load_run(config_path, overrides, **options)
    _warn_short_rounds(plan, rounds_flag)
    projection_gate(plan, task, dry_run, cost_flag=options.get("max_cost") is not None)
    with with_tmux(run_face(quiet, json_logs, reveal), tmux) as face:
        finished = start(
            task,
            plan,
            subscribers=[face],
            chooser=chooser(face),
            on_outcome=shown(face, quiet, as_json),
            detach_reports=PROCESS.whole,  # a process that exits: reports by a writer
        )
    exit_with(finished.exit_code)


@click.command()
@click.argument("session_id", required=False)
@click.option(
    "--retry-failed",
    is_flag=True,
    help="Also for a finished session: ask the calls that failed again (a provider that was "
    "down) and recompute the outcome; the journal keeps the outcome it replaces.",
)
@config_option(
    "The config file the session ran with: the secrets of its headers and base URLs, which "
    "the session's files hold masked, are read from it."
)
@limit_options
@tmux_option
@display_options
@json_option
@quick_start
@click.option(
    "--accept-tampered",
    is_flag=True,
    help="Continue a session whose result.json, reports or session.json prove its journal "
    "was cut or edited (recorded in the journal).",
)
@click.option(
    "--accept-unsigned",
    is_flag=True,
    help="Continue a signed session without MOOT_JOURNAL_KEY (the key is lost): its lines "
    "stay unverified and new ones unsigned (recorded in the journal).",
)
def resume(
    session_id: str | None,
    retry_failed: bool,
    config_path: Path | None,
    max_cost: float | None,
    max_tokens: int | None,
    timeout: float | None,
    display: str | None,
    quiet: bool,
    reveal: bool,
    json_logs: bool,
    accept_tampered: bool,
    accept_unsigned: bool,
    as_json: bool,
) -> None:
    """Continue a paused, interrupted or crashed session (default: the latest)."""
    from moot.api import resume as resume_session

    limits = limit_overrides(max_cost, max_tokens, timeout)
    tmux = tmux_for(display)
    with with_tmux(run_face(quiet, json_logs, reveal), tmux) as face:
        finished = resume_session(
            session_id,
            limits=limits,
            subscribers=[face],
            chooser=chooser(face),
            on_outcome=shown(face, quiet, as_json),
            detach_reports=PROCESS.whole,  # a process that exits: reports by a writer
            retry_failed=retry_failed,
            accept_tampered=accept_tampered,
            accept_unsigned=accept_unsigned,
            config=config_path,
        )
    exit_with(finished.exit_code)
