"""The architect's plan and its token budget (a new user's `moot plan` on the embedded model):
the plan is asked with room for a plan (`[pipeline] plan_max_tokens`), under the plan's schema
where the model enforces one, and a plan cut at the token limit is said to be cut, naming the
setting to raise, not blamed on the schema it never reached; nor is it re-asked at that limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from moot import api
from moot.config import RunConfig
from moot.models.base import Capabilities
from moot.models.scripted import ScriptedModel, register_script
from moot.pipeline.document import PLAN_SCHEMA, parse_plan
from moot.pipeline.planning import GATE_SCHEMA
from moot.types import Completion, Request, Usage, estimate_tokens
from tests.pipeline import scripts
from tests.scripts import no_sleep

FEATURE = "Add a subtract function"
CUT = '{\n  "id": 3487901562,\n  "name": "FEATURE: Add a subtract function",\n  "description": {\n'


def _config(repo: Path, name: str, **pipeline: Any) -> RunConfig:
    section = {"phase": "plan", "plan_tournament": {"enabled": False}, "lessons": False}
    return RunConfig.read(
        {
            "protocol": "pipeline",
            "agents": [{"model": f"scripted:@{name}"}],
            "seed": 7,
            "code": {"repo": str(repo)},
            "pipeline": {**section, **pipeline},
        }
    )


def _roles(asks: list[Request], *, cut: bool, gate_cut: bool = False) -> Any:
    def reply(request: Request) -> str | Completion:
        asks.append(request)
        step = request.meta["step"]
        if "/draft/" in step:
            if cut:  # as the walkthrough's smollm2 did: free-form JSON, stopped at its cap
                return Completion(
                    text=CUT,
                    model="scripted",
                    usage=Usage(prompt_tokens=500, completion_tokens=request.max_tokens or 0),
                    hit_max_tokens=True,
                )
            return json.dumps(scripts.PLAN)
        if "/gate/" in step:
            if gate_cut:
                text = "The plan is fine but " + "very " * 40
                return Completion(text=text, model="scripted", hit_max_tokens=True)
            if request.json_schema is not None:
                return json.dumps({"problems": ["none that matter"], "verdict": "APPROVED"})
            return "Fine.\nVERDICT: APPROVED"
        return "A Python project: calc.py with add(a, b)."

    return reply


def test_a_plan_cut_at_the_token_limit_says_so_and_names_the_setting_to_raise(
    repo: Path,
) -> None:
    asks: list[Request] = []
    register_script("cut_architect", _roles(asks, cut=True))
    run = api.start(FEATURE, _config(repo, "cut_architect", plan_max_tokens=900), sleep=no_sleep)
    assert run.exit_code == 1
    assert "cut at its token limit (900 tokens)" in run.message, run.message
    assert "plan_max_tokens" in run.message and "[pipeline]" in run.message
    assert "schema" not in run.message and "Field required" not in run.message
    drafts = [r for r in asks if "/draft/" in r.meta["step"]]
    assert [r.meta["step"] for r in drafts] == ["p0/draft/architect_a"]  # no re-ask at the cap
    assert drafts[0].max_tokens == 900


def test_the_plan_is_asked_with_room_for_a_plan_and_the_other_roles_keep_their_caps(
    repo: Path,
) -> None:
    asks: list[Request] = []
    register_script("roomy_architect", _roles(asks, cut=False))
    run = api.start(FEATURE, _config(repo, "roomy_architect"), sleep=no_sleep)
    assert run.exit_code == 0, run.message
    tokens = {r.meta["step"]: r.max_tokens for r in asks}
    assert tokens["p0/draft/architect_a"] == 2048  # the default plan_max_tokens
    assert tokens["p0/explore/explorer_a"] is None  # the model's own default cap
    # an agent's own larger max_tokens wins
    asks.clear()
    cfg = _config(repo, "roomy_architect")
    cfg.agents[0] = replace(cfg.agents[0], **{"max_tokens": 5000})
    assert api.start(FEATURE, cfg, sleep=no_sleep).exit_code == 0
    assert {r.meta["step"]: r.max_tokens for r in asks}["p0/draft/architect_a"] == 5000


def test_a_model_that_enforces_schemas_is_asked_for_the_plan_under_the_plan_schema(
    repo: Path,
) -> None:
    asks: list[Request] = []
    register_script("schema_architect", _roles(asks, cut=False))
    original = ScriptedModel.from_spec

    def enforcing(spec, settings):  # type: ignore[no-untyped-def]
        model = original(spec, settings)
        model.capabilities = Capabilities(json_schema=True, seed=True)
        return model

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ScriptedModel, "from_spec", staticmethod(enforcing))
        run = api.start(FEATURE, _config(repo, "schema_architect"), sleep=no_sleep)
    assert run.exit_code == 0, run.message
    [draft] = [r for r in asks if "/draft/" in r.meta["step"]]
    assert draft.json_schema == PLAN_SCHEMA
    # the critic's verdict is asked as JSON too: a tiny model cut off before a VERDICT line
    # gave none at all
    [gate] = [r for r in asks if "/gate/" in r.meta["step"]]
    assert gate.json_schema == GATE_SCHEMA
    assert run.result.details["pipeline"]["gates"][0]["verdict"] == "APPROVED"
    assert run.result.details["pipeline"]["gates"][0]["reasons"] == "- none that matter"


def _longest(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "object":
        return {k: _longest(v) for k, v in schema["properties"].items()}
    if kind == "array":
        return [_longest(schema["items"]) for _ in range(schema["maxItems"])]
    if kind == "string":
        return "T9" if "pattern" in schema else "x" * schema["maxLength"]
    return schema["maximum"]


def test_the_longest_plan_the_schema_allows_fits_the_default_budget() -> None:
    """At about 4 characters a token (the estimate moot counts with), with room to spare for
    a model that spends more tokens per character."""
    doc = _longest(PLAN_SCHEMA)
    for number, task in enumerate(doc["tasks"], 1):
        task["id"], task["depends_on"] = f"T{number}", []
    text = json.dumps(doc)
    parse_plan(text)  # what the schema allows, moot reads
    assert estimate_tokens(text) * 1.3 < 2048


def test_a_critic_cut_before_its_verdict_is_said_to_be_cut(repo: Path) -> None:
    asks: list[Request] = []
    register_script("cut_critic", _roles(asks, cut=False, gate_cut=True))
    run = api.start(FEATURE, _config(repo, "cut_critic", gate_revisions=0), sleep=no_sleep)
    assert run.exit_code == 2
    assert "did not approve the plan" in run.result.how
    assert "cut at its token limit before its verdict line" in run.result.how
    assert "[pipeline.roles] critic" in run.result.how


def test_a_failed_plan_names_the_git_ref_it_leaves_and_moot_clean_removes_it(
    repo: Path,
) -> None:
    from click.testing import CliRunner

    from moot.cli import cli
    from tests.code import test_code_tasks as base

    register_script("cli_cut_architect", _roles([], cut=True))
    runner = CliRunner()
    ran = runner.invoke(
        cli, ["plan", FEATURE, "--repo", str(repo), "--models", "scripted:@cli_cut_architect"]
    )
    assert ran.exit_code == 1, ran.output
    [session] = base.sh(repo, "for-each-ref", "--format=%(refname)", "refs/moot/").split()
    assert session.endswith("/baseline")
    sid = session.split("/")[2]
    assert f"Remove it with: moot clean {sid}" in ran.output
    cleaned = runner.invoke(cli, ["clean", sid])
    assert cleaned.exit_code == 0, cleaned.output
    assert not base.sh(repo, "for-each-ref", "--format=%(refname)", "refs/moot/").strip()


def test_no_plan_tournament_skips_the_tournament(tmp_path: Path, repo: Path) -> None:
    from click.testing import CliRunner

    from moot.cli import cli

    roles = scripts.write_script(tmp_path)
    args = ["plan", FEATURE, "--repo", str(repo), "--models", f"scripted:{roles}#planner"]
    ran = CliRunner().invoke(cli, [*args, "--no-plan-tournament"])
    assert ran.exit_code == 0, ran.output
    steps = [json.loads(x)["step"] for x in (tmp_path / "agents.log").read_text().splitlines()]
    assert steps == [
        "p0/explore/explorer_a",
        "p0/expert/domain_expert_a",
        "p0/draft/architect_a",
        "p1/gate/critic_a",
    ]
    assert "  plan tournaments:" not in ran.output  # nor projected
