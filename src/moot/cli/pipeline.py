"""`moot plan` and `moot execute`: seed 004's feature pipeline (moot/pipeline/). Each starts a
session of the `pipeline` protocol; `moot resume` continues either; `moot status` shows a plan's
tasks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from msgspec import Struct

from moot.cli.common import (
    Whole,
    config_option,
    context_option,
    display_options,
    exit_with,
    fail,
    limit_options,
    limit_overrides,
    models_option,
    quick_start,
    run_face,
    task_file_option,
    task_text,
    tmux_for,
    tmux_option,
    with_tmux,
)
from moot.cli.outcome import chooser, shown
from moot.cli.run import dry_run_option, projection_gate

__all__ = ["execute", "lessons", "plan", "projected_lines"]

_PROTOCOL = "pipeline"


class _Shared(Struct, frozen=True):
    """The options `plan` and `execute` share (`_options`)."""

    models: tuple[str, ...]
    config_path: Path | None
    max_cost: float | None
    max_tokens: int | None
    timeout: float | None
    seed: int | None
    dry_run: bool
    display: str | None
    quiet: bool
    reveal: bool
    json_logs: bool

    def overrides(self, repo: str | None) -> dict[str, Any]:
        found: dict[str, Any] = {"protocol": _PROTOCOL}
        if self.models:
            found["agents"] = [{"model": spec} for spec in self.models]
        if self.seed is not None:
            found["seed"] = self.seed
        for key, value in limit_overrides(self.max_cost, self.max_tokens, self.timeout).items():
            found[f"limits.{key}"] = value
        if repo is not None:
            found["code.repo"] = str(Path(repo).expanduser().resolve())
        return found

    def run(self, task: str, overrides: dict[str, Any]) -> None:
        """Load the config, print the projection (--dry-run stops there), run, exit."""
        from moot.api import start
        from moot.lifecycle.plan import load_config

        plan = load_config(self.config_path, overrides)
        projection_gate(plan, task, self.dry_run, cost_flag=self.max_cost is not None)
        if not self.quiet:  # seed 004: the projected calls and cost, before anything runs
            from moot.cli.common import say

            for line in projected_lines(plan, task):
                say(line, err=True)
        face = run_face(self.quiet, self.json_logs, self.reveal)
        with with_tmux(face, tmux_for(self.display)) as face:
            finished = start(
                task,
                plan,
                subscribers=[face],
                chooser=chooser(face),
                on_outcome=shown(face, self.quiet),
            )
        note = leftover_ref(finished, plan)
        if note:
            from moot.cli.common import say

            say(note, err=True)
        exit_with(finished.exit_code)


def leftover_ref(finished: Any, plan: Any) -> str | None:
    """A plan that ended without a plan to execute (failed, rejected, not approved) leaves
    nothing moot uses again but the git ref that keeps its baseline commit alive in the
    repository (refs/moot/<session>/baseline): say so, and how to remove it."""
    import subprocess

    options = plan.options
    if getattr(options, "phase", "plan") != "plan" or finished.result.status not in (
        "failed",
        "no_consensus",
    ):
        return None
    code = plan.config.code
    ref = f"refs/moot/{finished.session_id}/baseline"
    if code is None or not code.repo:
        return None
    found = subprocess.run(
        ["git", "-C", str(code.repo), "show-ref", "--verify", "--quiet", ref],
        capture_output=True,
        check=False,
    )
    if found.returncode != 0:
        return None
    return (
        f"The repository keeps a git ref of this plan ({ref}); nothing else of it is left "
        f"there. Remove it with: moot clean {finished.session_id}"
    )


def projected_lines(plan: Any, task: str) -> list[str]:
    """The projection printed before a run, as `--dry-run` prints it (cli/run.py): each
    participant's model made, not started, to learn the tokens its answers may take and its
    context window; every call at most that window, and a note where a prompt and its answer
    may not fit it. The same inputs give the same numbers either way."""
    from moot.errors import MootError
    from moot.lifecycle.plan import make_models, participants
    from moot.lifecycle.projection import estimate, render, within_windows

    windows: dict[str, int] = {}
    caps: dict[str, int] = {}
    for agent in participants(plan, plan.config.seed or 0):
        try:
            make_models([agent], prepare=False, plan=plan)
        except MootError:  # the run says what is wrong with it; the projection goes on
            continue
        if agent.model is not None:
            known = agent.model.capabilities
            windows[agent.spec] = max(known.context_window, windows.get(agent.spec, 0))
            if known.max_tokens is not None:
                caps[agent.spec] = max(known.max_tokens, caps.get(agent.spec, 0))
    projected = estimate(plan, task, caps)
    if projected is None:
        return []
    fitted, notes = within_windows(plan, projected, windows)
    return [render(fitted, before_run=True), *notes]


def _options(command: Any) -> Any:
    decorators: list[Any] = [
        models_option("One agent per use; roles take them in turn (see [pipeline.roles])."),
        config_option("TOML, JSON or YAML config file ([pipeline] section)."),
        limit_options,
        click.option("--seed", type=int, default=None, help="Seed for aliases and shuffles."),
        dry_run_option,
        tmux_option,
        display_options,
        quick_start,
    ]
    for option in reversed(decorators):
        command = option(command)
    return command


@click.command()
@click.argument("feature", required=False, default="")
@task_file_option("Read the feature request from this file.")
@click.option(
    "--repo",
    default=".",
    show_default=True,
    metavar="PATH",
    help="The git repository to build the feature in.",
)
@context_option("Files API models see whole (repeatable); none: a file listing.")
@click.option(
    "--no-plan-tournament",
    is_flag=True,
    help="Skip the plan tournament: the critic gates the architect's plan as drafted.",
)
@_options
def plan(
    feature: str,
    task_file: Path | None,
    repo: str,
    context: tuple[str, ...],
    no_plan_tournament: bool,
    **shared: Any,
) -> None:
    """Plan FEATURE: explore the repository, draft a phased plan, refine it in a tournament and
    gate it with a critic. The approved plan is written as plan.json in the session folder (read
    it, edit it), then `moot execute SESSION` runs it."""
    options = _Shared(**shared)
    overrides = options.overrides(repo)
    overrides["pipeline.phase"] = "plan"
    if context:
        overrides["code.context"] = list(context)
    if no_plan_tournament:
        overrides["pipeline.plan_tournament.enabled"] = False
    options.run(task_text(feature, task_file), overrides)


def _latest_plan() -> Any:
    """The newest plan session (not an execute session, which holds a plan.json too)."""
    from moot.engine.store import list_sessions

    for folder in reversed(list_sessions()):
        meta = folder.meta() or {}
        phase = ((meta.get("config") or {}).get(_PROTOCOL) or {}).get("phase", "plan")
        if meta.get("protocol") == _PROTOCOL and phase == "plan":
            return folder
    fail('no plan session yet: plan one with moot plan "FEATURE" --repo PATH')


def _plan_source(ref: str) -> tuple[str, str | None, str, dict[str, Any]]:
    """(the plan's JSON, the plan as approved or None, the feature, the plan session's config)
    from a plan file or a plan session."""
    from moot.engine.store import find_session, read_json
    from moot.pipeline.document import parse_plan

    path = Path(ref).expanduser()
    if path.is_file():
        text = path.read_text(encoding="utf-8")
        folder = path.resolve().parent
        meta = read_json(folder / "session.json") or {}
    else:
        found = _latest_plan() if ref in ("last", "latest") else find_session(ref)
        folder, meta = found.path, found.meta() or {}
        path = folder / "plan.json"
        if not path.is_file():
            fail(
                f"session {found.id} holds no approved plan ({path} is missing); plan one with "
                'moot plan "FEATURE", or give a plan file'
            )
        text = path.read_text(encoding="utf-8")
    approved = None
    result = read_json(folder / "result.json") or {}
    recorded = (result.get("details") or {}).get("pipeline") or {}
    if meta.get("protocol") == _PROTOCOL and isinstance(recorded.get("plan"), dict):
        approved = json.dumps(recorded["plan"], indent=2, ensure_ascii=False) + "\n"
    try:
        doc = parse_plan(text)
    except Exception as exc:  # FormatError, ValueError: the user's file
        fail(f"{path}: not a valid plan: {exc}; fix the file and run again")
    feature = str(meta.get("task") or f"{doc.title}\n\n{doc.summary}")
    return text, approved, feature, dict(meta.get("config") or {})


@click.command()
@click.argument("plan_ref", metavar="PLAN", required=False, default="last")
@click.option(
    "--task",
    "task_id",
    default=None,
    metavar="ID",
    help="Run this task (and the tasks it depends on) only.",
)
@click.option("--no-impl-tournament", is_flag=True, help="Skip the implementation tournaments.")
@click.option("--repo", default=None, metavar="PATH", help="The repository (default: the plan's).")
@click.option(
    "--branch",
    default=None,
    metavar="NAME",
    help="Commit the tasks on this branch (default: moot-plan/<session>).",
)
@_options
def execute(
    plan_ref: str,
    task_id: str | None,
    no_impl_tournament: bool,
    repo: str | None,
    branch: str | None,
    **shared: Any,
) -> None:
    """Execute PLAN (a plan session's id, default the latest, or a plan JSON file): each task
    through developer, QA gates, review, tests and an implementation tournament, committed on a
    branch of its own. Your branch and working tree are untouched."""
    options = _Shared(**shared)
    text, approved, feature, recorded = _plan_source(plan_ref)
    code = recorded.get("code") or {}
    if repo is None:
        repo = str(code.get("repo") or ".")
    overrides = options.overrides(repo)
    if not options.models and options.config_path is None and recorded.get("agents"):
        overrides["agents"] = recorded["agents"]
    if options.config_path is None and isinstance(recorded.get(_PROTOCOL), dict):
        for key in ("roles", "gates", "guardrails", "impl_tournament", "qa_retry_limit", "lessons"):
            if key in recorded[_PROTOCOL]:
                overrides[f"pipeline.{key}"] = recorded[_PROTOCOL][key]
    overrides.update(
        {"pipeline.phase": "execute", "pipeline.plan": text, "pipeline.plan_from": str(plan_ref)}
    )
    if approved is not None:
        overrides["pipeline.approved"] = approved
    if task_id is not None:
        overrides["pipeline.task"] = task_id
    if no_impl_tournament:
        overrides["pipeline.impl_tournament.enabled"] = False
    if branch is not None:
        overrides["pipeline.branch"] = branch
    options.run(feature, overrides)


@click.command()
@click.option("--repo", default=".", show_default=True, metavar="PATH", help="The repository.")
@click.option(
    "--reject",
    type=Whole(1),
    default=None,
    metavar="N",
    help="Move lesson N to the block list: never offered or learnt again.",
)
def lessons(repo: str, reject: int | None) -> None:
    """The lessons the feature pipeline learnt in a repository (from failed gates and reviews),
    best first, as they are offered to later plans' architect and developers."""
    from moot.cli.common import say
    from moot.pipeline import lessons as kept

    root = _repo_root(repo)
    if reject is not None:
        try:
            gone = kept.reject(root, reject)
        except IndexError as exc:
            fail(f"{exc}; `moot lessons --repo {repo}` lists them")
        say(f"Rejected: {gone}")
        return
    found = kept.ranked(root, limit=1000)
    if not found:
        say(f"No lessons for {root} yet.")
        return
    for number, text in enumerate(found, 1):
        say(f"{number}. {text}")


def _repo_root(repo: str) -> str:
    """The repository's top folder, as the pipeline names it (its config's `code.repo`)."""
    from moot.code.workspace import check_repo
    from moot.config import CodeSettings
    from moot.errors import WorkspaceError

    try:
        return check_repo(CodeSettings(repo=str(Path(repo).expanduser().resolve()))).repo
    except WorkspaceError as exc:
        fail(str(exc))
