"""A project config that names its models as the user config does (`models = [...]`, from the
README's user config) is told how a project config names its agents, and no unknown key is
pointed to an unrelated one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli import moot


@pytest.mark.parametrize("key", ["models", "modles"])
def test_models_in_a_project_config_points_to_agents_tables(
    key: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`models = [...]` (and a typo of it) was told: "unknown key; did you mean 'code'?"."""
    path = tmp_path / "moot.toml"
    path.write_text(f'{key} = ["local:smollm2", "local:smollm2"]\n', encoding="utf-8")
    code, out, err = moot(capsys, "validate", str(path))
    assert code == 1 and "Traceback" not in err
    assert "'code'" not in out
    assert f"{key}: unknown key" in out
    assert "[[agents]]" in out and 'model = "local:smollm2"' in out
    assert "`models = [...]` belongs to the user config" in out


@pytest.mark.parametrize(
    ("key", "unrelated"),
    [("colour", "court"), ("modes", "code"), ("sed", "seed")],
)
def test_did_you_mean_names_no_unrelated_key(
    key: str, unrelated: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "moot.toml"
    path.write_text(f"{key} = 1\n", encoding="utf-8")
    code, out, _ = moot(capsys, "validate", str(path))
    assert code == 1 and f"{key}: unknown key" in out
    if unrelated == "seed":  # a letter left out is still a typo of it
        assert "did you mean 'seed'?" in out
    else:
        assert f"did you mean {unrelated!r}" not in out
