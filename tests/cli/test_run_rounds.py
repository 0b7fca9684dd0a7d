"""The rounds a protocol needs to reach its end (refine: the incumbent must win convergence_k
passes in a row; a new user's tryout ran one pass and could only end `not converged`): a run
capped below them is warned about before it starts, and still runs; the embedded model's
demonstration gives the protocol one round more than them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli import moot
from tests.refine_scripts import Refinery

SLOGAN = "Write a one-line slogan for a bakery."


def test_the_embedded_demonstration_of_refine_can_converge(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """It ran one pass, so it could only end `not converged ... streak is 1 of 2` (exit 2)."""
    code, out, err = moot(capsys, "run", SLOGAN, "--protocol", "refine", "--dry-run")
    assert code == 0, err
    assert "warning" not in err
    # the first text, then 2 or 3 passes of critic, author B, synthesizer and 3 judges: one
    # more than convergence_k, so that a revision adopted in pass 1 can still converge
    assert "Calls: 13-19\n" in out
    # with the implementation tournament's k = 1 (and 1 judge): 1 or 2 passes
    code, out, err = moot(capsys, "run", SLOGAN, "--preset", "impl-defaults", "--dry-run")
    assert code == 0 and "warning" not in err and "Calls: 5-9\n" in out


def test_rounds_below_convergence_k_are_warned_about_before_anything_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    refine = ["run", SLOGAN, "--protocol", "refine", "--dry-run"]
    code, out, err = moot(capsys, *refine, "--rounds", "1")
    assert code == 0 and "Calls: 7\n" in out
    (line,) = err.splitlines()
    assert line.startswith("moot: warning: --rounds 1 is fewer than the 2 rounds the refine ")
    assert "convergence_k = 2" in line and "cannot converge" in line
    assert "give --rounds 2 or more" in line
    code, _, err = moot(capsys, *refine, "--rounds", "2")
    assert code == 0 and err == ""


def test_a_config_files_max_passes_is_named_in_the_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "moot.toml"
    config.write_text(
        'protocol = "refine"\n[[agents]]\nmodel = "local:smollm2"\n[[agents]]\n'
        'model = "local:smollm2"\n[refine]\nconvergence_k = 3\nmax_passes = 2\n',
        encoding="utf-8",
    )
    code, _, err = moot(capsys, "run", SLOGAN, "--config", str(config), "--dry-run")
    assert code == 0
    assert err.startswith("moot: warning: refine.max_passes = 2 is fewer than the 3 rounds")
    assert "give --rounds 3 or more" in err


def test_the_warning_comes_before_the_run_which_still_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One pass still improves the text; the outcome says it did not converge (exit 2)."""
    r = Refinery(lambda p, j: ["B", "A", "AB"])
    r.config()  # registers the script
    models = ["--models", "scripted:@refinery"] * 4
    code, _, err = moot(capsys, "run", SLOGAN, "--protocol", "refine", "--rounds", "1", *models)
    assert code == 2
    assert err.splitlines()[0].startswith("moot: warning: --rounds 1 is fewer than the 2 rounds")
    assert sum(r.steps.values()) == 1 + 6  # the first text and one pass
