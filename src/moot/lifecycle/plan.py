"""From a config to a runnable plan: the protocol's record, its validated options, the shared
settings with the protocol's defaults, and the participants with their aliases.

`load_config` / `check_config` read a file, apply command-line overrides and report every
problem at once, each as `dotted.path: message`. Options such as `--rounds` and `--verify`
apply to the protocol that runs, whatever the file or the flags name it.

The protocol's own check of a config (`ProtocolDefinition.check`: files it names exist, a code
task where one is needed) runs once per plan: `check_config` runs it on what it reads, and a
plan made otherwise (`resolve`) gets it from `checked` when a session is created from it.
A session's recorded plan (`reopen`) is never checked again: it was when the session began.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack, cast

from msgspec import Struct
from msgspec.structs import replace

from moot import lazy, protocols
from moot.config import (
    Problems,
    RunConfig,
    Section,
    check_task,
    problem_lines,
    read,
    read_config_file,
    shared_keys,
    synthesis_enabled,
)
from moot.engine.lifecycle import storage_problem
from moot.engine.session import Agent, Session
from moot.errors import ConfigError, JournalError, WorkspaceError
from moot.lifecycle.flags import (
    FlagTerms,
    flag_text,
    not_taken,
    reworded,
    run_flag_terms,
    set_flag,
)
from moot.lifecycle.specs import judge_as_agent, unknown_provider, user_config
from moot.models.base import create_model
from moot.models.keys import restore_call_settings
from moot.models.pricing import suggest_spec
from moot.protocols.definition import Flag, ProtocolDefinition, Role
from moot.text import plural
from moot.types import Outcome, alias_for, estimate_tokens

if TYPE_CHECKING:
    from moot.lifecycle import keys
    from moot.protocols import synthesis
else:
    (keys,) = lazy.modules("moot.lifecycle", "keys")  # wrong options only
    (synthesis,) = lazy.modules("moot.protocols", "synthesis")  # once the outcome is in

if TYPE_CHECKING:
    from moot.engine.lifecycle import ProtocolFn

__all__ = [
    "FlagValues",
    "Plan",
    "RunOptions",
    "check_config",
    "check_task_fits",
    "checked",
    "config_schema",
    "load_config",
    "load_run",
    "make_models",
    "participants",
    "protocol_fn",
    "reopen",
    "resolve",
    "start_problems",
]


class Plan(Struct, frozen=True):
    """What runs: the protocol's record, the config and the protocol's validated options."""

    record: ProtocolDefinition[Any]
    config: RunConfig  # the protocol's section holds its validated options
    options: Section
    checked: bool = False  # the protocol's own check (`record.check`) has passed on it

    @property
    def max_rounds(self) -> int | None:
        return self.record.max_rounds(self.options)


def resolve(config: RunConfig) -> Plan:
    """Validate the running protocol's section and apply its defaults. Idempotent."""
    problems, plan = _resolve(config)
    if plan is None:
        listed = "\n".join(f"  {line}" for line in problems)
        raise ConfigError(f"the config has {plural(len(problems), 'problem')}:\n{listed}")
    return plan


def _resolve(config: RunConfig) -> tuple[list[str], Plan | None]:
    try:  # a config made in Python (moot.run's `config`) is read as a file's is: its bounds;
        # a section the protocol has read already (its options) is taken as it is
        shared = {k: v for k, v in config.dump().items() if k in shared_keys()}
        config = replace(RunConfig.read(shared), sections=config.sections)
    except Problems as exc:
        return problem_lines(exc, "", RunConfig), None
    try:
        record = protocols.get(config.protocol)
    except ConfigError as exc:
        return [f"protocol: {exc}"], None
    problems = []
    raw = config.section(record.name)
    options: Section | None = None
    if isinstance(raw, record.options):
        options = raw
    else:
        try:
            options = read(record.options, raw if raw is not None else {})
        except Problems as exc:
            problems += keys.option_problems(exc, record)
    problems += _agent_count(record, len(config.agents))
    if config.code is not None and not record.code_tasks:
        problems.append(
            f"code: the {record.name} protocol does not run code tasks (--repo); "
            f"use one that does: {', '.join(_code_protocols())}"
        )
    if config.code is not None and config.synthesis and config.synthesis.enabled:
        problems.append(
            "synthesis: a code task's outcome is a change, not a text: --synthesize (a "
            "chairman's final answer) applies to questions only"
        )
    for name, section in config.sections.items():
        if name != record.name and name not in protocols.names():
            problems.append(keys.unknown_key(name, record))
        elif name != record.name and not isinstance(section, dict | Section):
            problems.append(f"{name}: must be a table of options")
    if problems or options is None:
        return problems, None
    config = replace(config, sections={**config.sections, record.name: options})
    for section_name, defaults in record.defaults.items():
        # the protocol's defaults where the config keeps the built-in one (a value given
        # equal to the built-in default is taken for unset: a Struct keeps no record of it)
        current = getattr(config, section_name)
        built_in = type(current)()
        unset = {k: v for k, v in defaults.items() if getattr(current, k) == getattr(built_in, k)}
        setattr(config, section_name, replace(current, **unset))
    if record.adjust is not None:
        config = record.adjust(config, options)
    return [], Plan(record, config, options)


def _agent_count(record: ProtocolDefinition[Any], count: int) -> list[str]:
    bounds = record.participants
    if bounds.min_agents <= count and (not bounds.max_agents or count <= bounds.max_agents):
        return []
    most = f" to {bounds.max_agents}" if bounds.max_agents else " or more"
    few = "; a model given twice is two agents" if count < bounds.min_agents else ""
    return [
        f"agents: the {record.name} needs {bounds.min_agents}{most} agents ({count} given){few}"
    ]


class FlagValues(TypedDict, total=False):
    """The shared CLI flags a config check applies to the protocol that runs (each sets the
    option its definition's `flags` names): --rounds, --verify, --no-shuffle, --samples, --input
    (the file's text), --pick (`picker`) and --layers."""

    rounds: int | None
    verify: list[str] | None
    no_shuffle: bool
    samples: int | None
    input_text: str | None
    picker: str | None  # --pick: who picks a code task's winner
    layers: int | None


class RunOptions(FlagValues, total=False):
    """A run's options as `moot run`, `moot.run` and `moot mcp` take them (`load_run`): the
    protocol, one agent per model spec, the seed, the limits, the cache, and a code task's
    repository and its context files' globs, a chairman's synthesis; with the shared flags."""

    protocol: str | None
    models: Sequence[str]
    seed: int | None
    max_cost: float | None
    max_tokens: int | None
    timeout: float | None
    cache: str | None
    repo: str | Path | None
    context: Sequence[str]
    synthesize: bool | None
    chairman: str | None


def check_config(
    path: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    cwd: Path | None = None,
    start: bool = True,
    task: str | None = None,
    terms: FlagTerms | None = None,
    **flags: Unpack[FlagValues],
) -> tuple[Plan | None, list[str]]:
    """Every problem of a config at once; the plan if there is none. `flags` (the shared CLI
    flags, `FlagValues`) set the options of the protocol that runs that its definition names for
    them. A file that cannot be read or parsed raises `ConfigError`. `start`: also what a
    run refuses as it starts (`start_problems`, with `task` if given), so that a config called
    valid starts; `load_config` leaves that to the run, which checks it with its task.
    `terms`: the paths flags set (lifecycle/flags.py); the protocol's flags are added to it."""
    data: dict[str, Any] = read_config_file(path) if path else {}
    for dotted, value in (overrides or {}).items():
        target = data
        *parents, leaf = dotted.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    name = data.get("protocol", "arena")
    record: ProtocolDefinition[Any] | None = None
    problems: list[str] = []
    try:
        record = protocols.get(name) if isinstance(name, str) else None
    except ConfigError:
        record = None
    if record is not None:
        section = data.setdefault(record.name, {})
        if isinstance(section, dict):
            given = {
                Flag.ROUNDS: flags.get("rounds"),
                Flag.VERIFY: flags.get("verify"),
                Flag.SAMPLES: flags.get("samples"),
                Flag.INPUT: flags.get("input_text"),
                Flag.PICK: flags.get("picker"),
                Flag.LAYERS: flags.get("layers"),
            }
            for flag, value in given.items():
                problems += set_flag(record, section, flag, value)
                if terms is not None and value and flag in record.flags:
                    terms[f"{record.name}.{record.flags[flag]}"] = flag_text(f"--{flag}", value)
            shuffle = record.flags.get(Flag.SHUFFLE)
            no_shuffle = flags.get("no_shuffle", False)
            if no_shuffle and shuffle is None:
                problems.append(not_taken(record, Flag.SHUFFLE, "--no-shuffle"))
            elif no_shuffle and shuffle is not None:
                section[shuffle] = False
        if record.check is not None:
            problems += record.check(data, cwd or Path.cwd())
    shared = {k: v for k, v in data.items() if k in shared_keys()}
    for key in data:
        if key not in shared_keys() and not protocols.exists(key):
            problems.append(keys.unknown_key(key, record))
    if record is None:
        problems.insert(0, f"protocol: {protocols.unknown_protocol(str(name))}")
    else:
        try:
            read(record.options, data.get(record.name) or {})
        except Problems as exc:
            problems += keys.option_problems(exc, record)
        agents = data.get("agents")
        if isinstance(agents, list):
            problems += _agent_count(record, len(agents))
    try:
        RunConfig.read(shared)
    except Problems as exc:
        problems = problem_lines(exc, "", RunConfig) + problems
    for index, agent in enumerate(shared.get("agents") or []):
        spec = agent.get("model") if isinstance(agent, dict) else None
        if isinstance(spec, str) and ":" in spec:
            problems += unknown_provider(f"agents.{index}.model", spec)
            problems += judge_as_agent(f"agents.{index}.model", spec)
        elif isinstance(spec, str) and (guess := suggest_spec(spec)):
            where = f"agents.{index}.model:"
            problems = [
                f"{x}; did you mean {guess!r}?" if x.startswith(where) else x for x in problems
            ]
    if problems:
        return None, problems
    more, plan = _resolve(RunConfig.read(data))
    if plan is not None:
        more += _provider_problems(plan)
    if plan is not None and not more and start:
        more += start_problems(plan, task)
    if more or plan is None:
        return None, more
    return replace(plan, checked=True), []


def checked(plan: Plan, cwd: Path | None = None) -> Plan:
    """The plan once the protocol's own check has passed on it (run here unless it already
    has, by `check_config`); ConfigError listing its problems otherwise."""
    if plan.checked or plan.record.check is None:
        return plan
    problems = plan.record.check(plan.config.dump(), cwd or Path.cwd())
    if problems:
        listed = "\n  ".join(problems)
        raise ConfigError(f"the config has {plural(len(problems), 'problem')}:\n  {listed}")
    return replace(plan, checked=True)


def start_problems(plan: Plan, task: str | None = None) -> list[str]:
    """What a run refuses as it starts, before any folder exists, worded as it words it: a bad
    repository, a task (`task`, else the protocol's default one) too large or not UTF-8, a
    model that cannot be made from its spec and settings (a missing key, a CLI not there), a
    task that cannot fit a context window, a file where the cache's or the session's folder
    must be (MOOT_HOME set to a file). Each model is made as a run makes it, but not started:
    no warm-up, no connection (`local:smollm2` is fetched into the cache, as a run would)."""
    problems: list[str] = []
    if plan.config.code is not None:
        from moot.code.workspace import check_repo

        try:
            check_repo(plan.config.code)
        except (ConfigError, WorkspaceError) as exc:
            problems.append(str(exc))
    if task is None and plan.record.default_task is not None:
        task = plan.record.default_task(plan.options)
    if task:
        try:
            check_task(task, plan.config.engine)
        except ConfigError as exc:
            problems.append(str(exc))
    agents = participants(plan, plan.config.seed or 0)
    for agent in agents:
        try:
            make_models([agent], prepare=False, plan=plan)
        except ConfigError as exc:
            if str(exc) not in problems:  # a court's default judges are its agents again
                problems.append(str(exc))
    if task and not problems:
        try:
            check_task_fits(task, agents)
        except ConfigError as exc:
            problems.append(str(exc))
    root = plan.record.sessions_root(plan.options) if plan.record.sessions_root else None
    stored = storage_problem(plan.config, root)
    return problems + ([stored] if stored else [])


def make_models(agents: list[Agent], *, prepare: bool = True, plan: Plan | None = None) -> None:
    """Make each participant's model from its spec and settings: ConfigError for a bad one,
    before anything more is written. `prepare`: start each one's warm-up (a run). `plan`: the
    run's, whose roles say which participants judge (none of them may be an inline agent)."""
    judging = (
        {r.prefix for r in plan.record.participants(plan.config, plan.options) if r.judges}
        if plan is not None
        else set()
    )
    prices = plan.config.prices if plan is not None else None
    for agent in agents:
        agent.model = create_model(agent.spec, agent.config.settings(prices), prepare=prepare)
        role = agent.alias.rpartition("_")[0]
        if agent.model.capabilities.inline and role in judging and plan is not None:
            # seed 004: fresh context per judge, which the user's coding agent does not have
            a = "an" if role[:1] in "aeiou" else "a"
            raise ConfigError(
                f"{agent.spec} is an inline agent (your coding agent, answering through "
                f"delegation files) and cannot be {a} {role} of the {plan.record.name} "
                f"protocol ({agent.label}): its {role}s judge others' work, which needs a fresh "
                "context; give that role a model or a CLI agent instead"
            )


def check_task_fits(task: str, agents: list[Agent]) -> None:
    """Refuse, before any folder exists, a task that cannot fit a participant's context
    window with room for its answer."""
    size = estimate_tokens(task)
    for agent in agents:
        if agent.model is None:
            continue
        window = agent.model.capabilities.context_window
        room = agent.config.max_tokens or 1024
        larger = "a larger context window (a local model's options.n_ctx)"
        if room >= window:
            raise ConfigError(
                f"{agent.spec} ({agent.alias}) has a context window of {window:,} tokens, no "
                f"more than the {room:,} kept for its answer, so no task fits; give it {larger} "
                "or a smaller max_tokens"
            )
        if size + room > window:
            raise ConfigError(
                f"the task is about {size:,} tokens, too large for {agent.spec} "
                f"({agent.alias}), whose context window is {window:,} tokens with {room:,} kept "
                f"for its answer; shorten the task, or give the model {larger} or a smaller "
                "max_tokens"
            )


def _code_protocols() -> list[str]:
    return [name for name in protocols.names() if protocols.get(name).code_tasks]


def _provider_problems(plan: Plan) -> list[str]:
    """The other roles' providers must exist too (the agents' were checked on the data)."""
    problems = []
    for role in plan.record.participants(plan.config, plan.options):
        if role.prefix != "agent":
            for index, member in enumerate(role.members):
                where = f"{plan.record.name}.{role.salt}.{index}.model"
                problems += unknown_provider(where, member.model)
    return problems


def load_config(
    path: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    terms: FlagTerms | None = None,
    **flags: Unpack[FlagValues],
) -> Plan:
    """Read a config file (optional), apply command-line overrides, validate everything. A
    problem of a value a flag set is worded by the flag (`terms`, lifecycle/flags.py)."""
    terms = dict(terms or {})
    # the run checks what it refuses as it starts itself, with its task
    plan, problems = check_config(path, overrides, start=False, terms=terms, **flags)
    if plan is None:
        source = f"{path} has" if path else "the options given have"
        listed = "\n".join(f"  {line}" for line in reworded(problems, terms))
        raise ConfigError(f"{source} {plural(len(problems), 'problem')}:\n{listed}")
    return plan


def load_run(
    path: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    **options: Unpack[RunOptions],
) -> Plan:
    """`load_config` with a run's options (`RunOptions`) as `moot run`, `moot.run` and `moot mcp`
    take them: one agent per model spec, the seed, the limits, the cache, and a code task's
    repository (a path made absolute), the globs of its context files and its verify commands
    (run in every worktree), a chairman's synthesis (`synthesize`, `chairman`: a model spec);
    `overrides` (a protocol's options, a preset) on top."""
    repo, context = options.get("repo"), options.get("context", ())
    if context and repo is None:
        raise ConfigError("context needs a repository (--repo): it chooses files of it")
    shared = FlagValues.__optional_keys__  # the shared flags go on to the config check as given
    flags = cast(FlagValues, {k: v for k, v in options.items() if k in shared})
    verify = flags.get("verify")
    if repo is not None and verify:  # a code task: the commands run in every worktree
        flags["verify"] = None
    pairs = {
        "protocol": options.get("protocol"),
        "seed": options.get("seed"),
        "limits.max_cost": options.get("max_cost"),
        "limits.max_tokens": options.get("max_tokens"),
        "limits.timeout": options.get("timeout"),
        "cache.store": options.get("cache"),
        "code.repo": str(Path(repo).expanduser().resolve()) if repo is not None else None,
        "code.context": list(context) or None,
        "code.verify_commands": list(verify) if repo is not None and verify else None,
        "synthesis.enabled": options.get("synthesize"),
        "synthesis.chairman": options.get("chairman"),
    }
    given: dict[str, Any] = {k: v for k, v in pairs.items() if v is not None}
    models = options.get("models", ())
    terms = run_flag_terms(given, models)
    if models:
        given["agents"] = [{"model": spec} for spec in models]
    given.update(overrides or {})
    user = user_config()  # a problem with a value of it names the file and the key
    merged = user.under(given, read_config_file(path) if path else {})
    try:
        return load_config(path, merged, {**terms, **user.terms(given, merged)}, **flags)
    except ConfigError as exc:
        raise user.named(exc) from None


def participants(plan: Plan, seed: int) -> list[Agent]:
    """Every participant with its alias: agent_a... then the protocol's other roles (a court's
    judge_a...). Aliases are random per session but derived from the seed, so resume and
    replay find the same ones."""
    result = []
    roles = plan.record.participants(plan.config, plan.options)
    chairman = plan.config.synthesis.chairman if plan.config.synthesis else None
    if chairman is not None and asks_synthesis(plan):
        roles.append(Role("chairman", "chairmen", [chairman]))
    for role in roles:
        order = list(range(len(role.members)))
        random.Random(f"{seed}/{role.salt}").shuffle(order)
        for i, k in enumerate(order):
            settings = role.members[k]
            result.append(
                Agent(alias=alias_for(i, role.prefix), spec=settings.model, config=settings)
            )
    return result


def reopen(
    meta: Mapping[str, Any], secrets_from: Mapping[str, Any] | None = None, *, calls: bool = False
) -> tuple[Plan, list[Agent]]:
    """The plan and participants recorded in a session's begin meta, checked against its
    alias map. With `calls` (a resume: its models are called) the secrets of the call
    settings, masked in the session's files, are taken again from `secrets_from` (the user's
    config file, read); one missing is a `ConfigError` naming it and the fix."""
    recorded = meta["config"]
    if calls:
        recorded, missing = restore_call_settings(recorded, secrets_from)
        if missing:
            where = ", ".join(missing)
            why = (
                "the config given has no such value there"
                if secrets_from is not None
                else "no config was given to take it from"
            )
            raise ConfigError(
                f"cannot resume session {meta['session_id']}: {where} "
                f"{'was' if len(missing) == 1 else 'were'} recorded masked (a session's files "
                f"keep no secret) and {why}. Resume with the config file the session ran "
                "with: moot resume --config FILE (a value written as ${VARIABLE} in a config "
                "is read from the environment and recorded as that reference)"
            )
    plan = resolve(RunConfig.read(recorded))
    agents = participants(plan, meta["seed"])
    if {a.alias: a.spec for a in agents} != meta["aliases"]:
        raise JournalError(
            f"the alias map of session {meta['session_id']} does not match "
            "its config; the session folder was edited"
        )
    return plan, agents


def asks_synthesis(plan: Plan) -> bool:
    """Whether a chairman's synthesis is asked after the protocol's outcome (`--synthesize`):
    never for a protocol that writes its own (the council's chairman), nor for a code task."""
    if plan.record.synthesizes or plan.config.code is not None:
        return False
    return synthesis_enabled(plan.config.synthesis, default=False)


def protocol_fn(plan: Plan) -> ProtocolFn:
    """The plan's protocol as the engine runs it: a function of the Session alone; with
    `asks_synthesis`, a chairman's synthesis follows a text outcome."""
    record, options = plan.record, plan.options
    synthesize = asks_synthesis(plan)

    async def protocol(session: Session) -> Outcome:
        outcome = await record.conduct.run(session, session.task, options)
        if not synthesize or outcome.status == "failed":
            return outcome
        if not outcome.final_answer.strip() and not outcome.positions:
            return outcome  # nothing picked and nothing answered: nothing to write from
        if record.feedback is not None:
            said = record.feedback(outcome.details, list(session.journal.events))
        else:
            said = synthesis.default_feedback(outcome)
        return await synthesis.synthesize(session, session.task, outcome, said)

    return protocol


def config_schema() -> dict[str, Any]:
    """The JSON Schema of config files: the shared settings plus every protocol's section."""
    import msgspec

    names = protocols.names()
    options = [protocols.get(name).options for name in names]
    (top, *sections), defs = msgspec.json.schema_components([RunConfig, *options])
    schema: dict[str, Any] = dict(defs.pop(top["$ref"].rpartition("/")[2]))
    properties = schema.setdefault("properties", {})
    properties.pop("sections", None)
    properties["protocol"] = {
        "enum": names,
        "default": "arena",
        "description": "the deliberation protocol",
    }
    for name, section in zip(names, sections, strict=True):
        properties[name] = section
    schema["$defs"] = defs
    schema["additionalProperties"] = False
    return schema
