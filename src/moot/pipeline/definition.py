"""The pipeline as moot runs it: a protocol definition offered through the `moot.protocols`
entry point (pyproject.toml), so the registry, the lifecycle, `moot resume`, `moot show` and the
reports treat a pipeline session like any other, while the pipeline sits on a floor above them
and composes the refine protocol's sessions.

Roles are participants (`developer_a`, `reviewer_a`, ...). A role set in `[pipeline.roles]` is
played by that model; an unset one by one of the agents given with `--models`: authors (explorer,
domain expert, architect, developer, test engineer) by the first, evaluators (critic, reviewer,
sounding board) by the second, so that with two models or more no role evaluates its own
model's output. The tournaments' critic, author B, synthesizer and judges are refine's casting
over the same agents (with `[pipeline.roles]` critic, reviser, synthesizer, judge)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from moot.config import AgentConfig, RunConfig
from moot.engine.session import Session
from moot.errors import FormatError
from moot.pipeline.document import parse_plan
from moot.pipeline.execution import execute_phase
from moot.pipeline.options import PipelineOptions
from moot.pipeline.planning import plan_phase, plan_tokens
from moot.pipeline.view import report_sections, status_lines
from moot.protocols.definition import (
    Conduct,
    Participants,
    Presentation,
    Projected,
    Projection,
    ProtocolDefinition,
    Role,
    completion_cap,
)
from moot.types import Outcome

__all__ = ["PROTOCOL", "ROLES", "cast"]

# The roles of each phase: (role, who plays it when unset: 0 the first agent, 1 the second).
ROLES: dict[str, tuple[tuple[str, int], ...]] = {
    "plan": (("explorer", 0), ("domain_expert", 0), ("architect", 0), ("critic", 1)),
    "execute": (("developer", 0), ("test_engineer", 0), ("reviewer", 1), ("sounding_board", 1)),
}


def cast(config: RunConfig, options: PipelineOptions) -> dict[str, AgentConfig]:
    """Role -> the model that plays it in this phase."""
    agents = config.agents
    found: dict[str, AgentConfig] = {}
    for name, turn in ROLES[options.phase]:
        given = getattr(options.roles, name)
        found[name] = given if given is not None else agents[turn % len(agents)]
    return found


def _participants(config: RunConfig, options: PipelineOptions) -> list[Role]:
    return [
        Role(name, f"pipeline/{name}", [member]) for name, member in cast(config, options).items()
    ]


async def _run(s: Session, task: str, options: PipelineOptions) -> Outcome:
    if options.phase == "execute":
        return await execute_phase(s, task, options)
    return await plan_phase(s, task, options)


def _check(data: Mapping[str, Any], cwd: Path) -> list[str]:
    problems = []
    if not data.get("code"):
        problems.append("pipeline: it builds a feature in a git repository: give --repo PATH")
    section = data.get("pipeline")
    if isinstance(section, Mapping) and section.get("phase") == "execute":
        plan = section.get("plan")
        if not isinstance(plan, str) or not plan.strip():
            problems.append("pipeline.plan: execute needs a plan: moot execute PLAN")
        else:
            try:
                parse_plan(plan)
            except FormatError as exc:
                problems.append(f"pipeline.plan: {exc}")
    return problems


def _tournament_calls(options: PipelineOptions, which: str) -> tuple[int, int]:
    """(fewest, most) calls of one tournament: k passes of critic, author B, synthesizer and
    judges; at most every pass, each code candidate's diff re-sent once, each judge re-asked."""
    settings = options.plan_tournament if which == "plan" else options.impl_tournament
    if not settings.enabled:
        return 0, 0
    fewest = min(settings.convergence_k, settings.max_passes) * (3 + settings.judges)
    return fewest, settings.max_passes * (5 + 2 * settings.judges)


def _plan_rows(
    config: RunConfig,
    options: PipelineOptions,
    roles: dict[str, AgentConfig],
    shown: Callable[..., int],
) -> list[Projected]:
    """The plan phase's calls: each prompt its instructions (500) and what it quotes."""
    gates = options.gate_revisions + 1
    written = {name: completion_cap(m) for name, m in roles.items()}
    planned = plan_tokens(roles["architect"], options)
    first = completion_cap(config.agents[0])
    plan = max(planned, first)  # the plan shown: the architect's, or a tournament's
    context = config.code.context_budget_tokens if config.code is not None else 20_000
    drafted = shown(written["explorer"], written["domain_expert"])
    rows = [
        Projected(roles["explorer"], "explorer", 1, 1, 500 + context, cut_to_window=False),
        Projected(roles["domain_expert"], "domain expert", 1, 1, 500 + shown(written["explorer"])),
        Projected(
            replace(roles["architect"], max_tokens=planned),
            "architect",
            1,
            2 * gates,
            500 + max(drafted, shown(plan, written["critic"])),
        ),
        Projected(roles["critic"], "critic (plan gate)", 1, gates, 500 + shown(plan)),
    ]
    few, most = _tournament_calls(options, "plan")
    if most:
        prompt = 500 + shown(planned, plan, first)
        rows.append(Projected(config.agents[0], "plan tournaments", few, most * gates, prompt))
    return rows


def project(config: RunConfig, options: PipelineOptions) -> Projection:
    """The worst case: every gate round, every retry, every re-ask, every tournament pass. The
    tournaments are sessions of their own; their calls are counted here under the agents they
    rotate over (the first agent stands for them). A prompt is counted as its instructions and
    the texts it quotes, each at most its writer's completion cap and the quote limit; the
    explorer's as the repository context (code.context_budget_tokens), which is not cut to fit
    a model's context window."""
    roles = cast(config, options)
    cap = max(completion_cap(m) for m in [*roles.values(), *config.agents])
    quoted = options.max_quote_chars // 4
    rows: list[Projected] = []

    def add(name: str, member: AgentConfig, fewest: int, most: int, prompt: int) -> None:
        rows.append(Projected(member, name, fewest, most, min(prompt, 8 * cap) + 500))

    def shown(*caps: int) -> int:
        return sum(min(quoted, c) for c in caps)

    if options.phase == "plan":
        return _plan_rows(config, options, roles, shown)
    tasks = 1
    if options.plan:
        try:
            doc = parse_plan(options.plan)
        except FormatError:
            doc = None
        if doc is not None:  # --task ID: that task and those it needs
            tasks = len(doc.needed_by(options.task) if options.task else doc.tasks)
    tries = options.qa_retry_limit + 1
    add("developer", roles["developer"], tasks, tasks * tries * 2, 3 * quoted)
    add("reviewer", roles["reviewer"], tasks, tasks * tries, 2 * quoted)
    add("test engineer", roles["test_engineer"], tasks, tasks * tries * 2, 2 * quoted)
    add("sounding board", roles["sounding_board"], 0, tasks, quoted)
    few, most = _tournament_calls(options, "impl")
    if most:
        add("implementation tournaments", config.agents[0], few * tasks, most * tasks, 3 * quoted)
    return rows


PROTOCOL = ProtocolDefinition(
    name="pipeline",
    summary="seed 004's feature pipeline: plan (explore, draft, tournament, gate), then execute",
    options=PipelineOptions,
    conduct=Conduct(_run, project=project),
    participants=Participants(_participants),
    code_tasks=True,
    check=_check,
    presentation=Presentation(
        phase_titles={
            "develop": "Developer",
            "review": "Review",
            "test": "Tests",
            "gate": "Plan gate",
        },
        status_lines=status_lines,
        report_sections=report_sections,
    ),
)
