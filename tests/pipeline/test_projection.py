"""The pipeline's projection of its tournaments' calls (`moot run --dry-run`)."""

from __future__ import annotations

import pytest

from moot.pipeline.definition import _tournament_calls
from moot.pipeline.options import PipelineOptions


@pytest.mark.parametrize("which", ["plan", "impl"])
@pytest.mark.parametrize(("passes", "k"), [(1, 2), (1, 3), (2, 2), (15, 2), (2, 5)])
def test_a_tournament_capped_below_convergence_projects_its_fewest_within_its_most(
    which: str, passes: int, k: int
) -> None:
    """A tournament ends on convergence (k passes) or at max_passes, whichever comes first:
    with max_passes below k (the crash test's implementation tournament: 1 pass, k = 2) its
    fewest calls were k passes' and came out above its most."""
    settings = {"max_passes": passes, "convergence_k": k}
    options = PipelineOptions.model_validate({f"{which}_tournament": settings})
    fewest, most = _tournament_calls(options, which)
    judges = getattr(options, f"{which}_tournament").judges
    assert fewest == min(passes, k) * (3 + judges)
    assert 0 < fewest <= most
