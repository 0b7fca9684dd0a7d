"""`load_run`: a run's options (`RunOptions`, as `moot run`, `moot.run` and `moot mcp` take
them) land where the config keeps them, and the shared flags reach the protocol that runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from moot.errors import ConfigError
from moot.lifecycle.plan import load_run

MODELS = ["openai:gpt-5.4", "anthropic:claude-sonnet-4-6"]


def test_a_runs_options_land_in_the_config() -> None:
    plan = load_run(
        protocol="arena",
        models=MODELS,
        seed=3,
        max_cost=2.0,
        max_tokens=9000,
        timeout=30.0,
        rounds=2,
        verify=["pytest -q"],
    )
    config = plan.config
    assert [a.model for a in config.agents] == MODELS
    assert (config.seed, config.limits.max_cost, config.limits.max_tokens) == (3, 2.0, 9000)
    assert config.limits.timeout == 30.0
    # with no repository the shared flags set the protocol's own options
    assert (plan.options.max_rounds, plan.options.verify_commands) == (2, ["pytest -q"])
    assert config.code is None


def test_on_a_code_task_verify_runs_in_every_worktree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    plan = load_run(models=MODELS, repo=repo, context=["*.py"], verify=["pytest -q"])
    assert plan.config.code is not None
    code = plan.config.code
    assert (code.repo, code.context, code.verify_commands) == (
        str(repo.resolve()),
        ["*.py"],
        ["pytest -q"],
    )
    assert plan.options.verify_commands == []


def test_context_without_a_repository_is_refused() -> None:
    with pytest.raises(ConfigError, match="context needs a repository"):
        load_run(models=MODELS, context=["*.py"])
