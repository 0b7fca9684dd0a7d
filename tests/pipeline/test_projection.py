"""The pipeline's projection of its tournaments' calls (`moot run --dry-run`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from moot.cli import cli
from moot.config import read
from moot.pipeline.definition import _tournament_calls
from moot.pipeline.options import PipelineOptions
from tests.pipeline import scripts


@pytest.mark.parametrize("which", ["plan", "impl"])
@pytest.mark.parametrize(("passes", "k"), [(1, 2), (1, 3), (2, 2), (15, 2), (2, 5)])
def test_a_tournament_capped_below_convergence_projects_its_fewest_within_its_most(
    which: str, passes: int, k: int
) -> None:
    """A tournament ends on convergence (k passes) or at max_passes, whichever comes first:
    with max_passes below k (the crash test's implementation tournament: 1 pass, k = 2) its
    fewest calls were k passes' and came out above its most."""
    settings = {"max_passes": passes, "convergence_k": k}
    options = read(PipelineOptions, {f"{which}_tournament": settings})
    fewest, most = _tournament_calls(options, which)
    judges = getattr(options, f"{which}_tournament").judges
    assert fewest == min(passes, k) * (3 + judges)
    assert 0 < fewest <= most


def _capped_scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scripted models that report the embedded model's caps: 320 tokens an answer, a context
    window of 8,192."""
    from moot.models.base import Capabilities
    from moot.models.scripted import ScriptedModel

    original = ScriptedModel.from_spec

    def capped(spec, settings):  # type: ignore[no-untyped-def]
        model = original(spec, settings)
        model.capabilities = Capabilities(seed=True, context_window=8192, max_tokens=320)
        return model

    monkeypatch.setattr(ScriptedModel, "from_spec", staticmethod(capped))


def test_the_projection_before_a_plan_runs_is_the_dry_run_s_and_names_the_window(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walkthrough: --dry-run said 'up to 3,386 tokens each', the run 'up to 24,602' (no
    model caps), past the model's 8,192-token window without a word."""
    from moot.cli.pipeline import projected_lines
    from moot.lifecycle.plan import load_config

    _capped_scripted(monkeypatch)
    roles = scripts.write_script(tmp_path)
    model = f"scripted:{roles}#planner"
    args = ["plan", "Add subtract", "--repo", str(repo), "--models", model]
    dry = CliRunner().invoke(cli, [*args, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    overrides = {
        "protocol": "pipeline",
        "agents": [{"model": model}],
        "code.repo": str(repo),
        "pipeline.phase": "plan",
    }
    before = "\n".join(projected_lines(load_config(None, overrides), "Add subtract"))
    assert before.splitlines()[1:] == dry.output.strip().splitlines()[1:]
    assert "(before it runs)" in before and "(nothing was run)" in dry.output
    assert "holds 8,192 tokens a call (its context window)" in before
    assert "(explorer)" in before
    architect = next(x for x in before.splitlines() if x.strip().startswith("architect:"))
    each = int(architect.split("up to ")[1].split(" tokens")[0].replace(",", ""))
    assert each > 2 * 2048  # a revision's prompt quotes a plan, and its answer is a plan
    assert not any(f"up to {n:,} tokens" in before for n in range(8193, 40_000))
