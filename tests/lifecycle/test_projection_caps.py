"""A projection counts each answer at its model's own completion cap (`Capabilities.max_tokens`),
not at the 4,096 tokens it assumes of a model it knows nothing of: the embedded model writes at
most 320 tokens a call, and a dry run that counted 4,096 predicted that its refine calls would
overflow the 8,192-token window and fail, which no run of it comes near."""

from __future__ import annotations

import re
from typing import Any

import pytest

from moot.lifecycle.plan import load_config
from moot.lifecycle.projection import Estimate, estimate
from moot.models.base import create_model
from moot.models.local import DEFAULT_MAX_TOKENS, DEFAULT_TEXT_MAX_TOKENS
from moot.protocols.definition import ASSUMED_MAX_TOKENS
from moot.types import ModelSettings
from tests.cli.test_cli import moot

TASK = "How should the service store its sessions?"
SPEC = "scripted:@capped"
CAP = 100


def _tokens(est: Estimate | None) -> dict[str, int]:
    assert est is not None
    return {line.role: line.tokens_per_call for line in est.lines}


def _plan(data: dict[str, Any]) -> Any:
    return load_config(None, data)


def test_an_agent_without_max_tokens_is_counted_at_its_models_cap() -> None:
    plan = _plan({"agents": [{"model": SPEC}, {"model": SPEC, "max_tokens": 700}]})
    assumed, capped = _tokens(estimate(plan, TASK)), _tokens(estimate(plan, TASK, {SPEC: CAP}))
    # the arena's prompt is its context budget whatever the caps: the answer is the difference
    assert capped["Agent A"] == assumed["Agent A"] - ASSUMED_MAX_TOKENS + CAP
    assert capped["Agent B"] == assumed["Agent B"]  # its own max_tokens stands
    assert _tokens(estimate(plan, TASK, {"scripted:@other": CAP})) == assumed  # another model's


def test_a_role_in_the_protocols_options_is_capped_as_the_agents_are() -> None:
    """refine's judge is configured in its options, not among the agents; the caps reach it,
    and the prompts that quote answers count them at the caps."""
    judge = "scripted:@judge"

    def data(max_tokens: int | None) -> dict[str, Any]:
        own = {} if max_tokens is None else {"max_tokens": max_tokens}
        return {
            "protocol": "refine",
            "agents": [{"model": SPEC, **own}, {"model": SPEC, **own}],
            "refine": {"roles": {"judge": {"model": judge, **own}}},
        }

    capped = _tokens(estimate(_plan(data(None)), TASK, {SPEC: CAP, judge: CAP}))
    assert capped == _tokens(estimate(_plan(data(CAP)), TASK))  # as if each had set max_tokens
    assumed = _tokens(estimate(_plan(data(None)), TASK))
    assert set(capped) == set(assumed) and all(capped[r] < assumed[r] for r in assumed)
    judged = [role for role in capped if "judge" in role.lower()]
    only_agents = _tokens(estimate(_plan(data(None)), TASK, {SPEC: CAP}))
    assert judged and all(only_agents[r] > capped[r] for r in judged)


def test_the_embedded_models_cap_is_the_larger_of_its_defaults() -> None:
    model = create_model("local:smollm2", ModelSettings(), prepare=False)
    assert model.capabilities.max_tokens == max(DEFAULT_MAX_TOKENS, DEFAULT_TEXT_MAX_TOKENS)
    own = create_model("local:smollm2", ModelSettings(max_tokens=900), prepare=False)
    assert own.capabilities.max_tokens == 900


def _per_call(out: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(r"up to ([\d,]+) tokens each", out)]


@pytest.mark.parametrize("protocol", ["refine", "council", "vote"])
def test_a_dry_run_on_the_embedded_model_predicts_no_call_beyond_its_window(
    protocol: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """refine and council projected calls of 16,000 to 17,000 tokens on the embedded model,
    twice its window ("the model refuses it (the call fails)"); vote, 4,144-token calls."""
    code, out, err = moot(capsys, "run", "What is 2+2?", "--protocol", protocol, "--dry-run")
    assert code == 0, err
    assert "context window" not in out and "fails" not in out
    per_call = _per_call(out)
    # each call's answer counted at 320 tokens, not the 4,096 assumed of an unknown model
    assert per_call and max(per_call) < ASSUMED_MAX_TOKENS
