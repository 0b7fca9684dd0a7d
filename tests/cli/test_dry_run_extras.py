"""`moot run --dry-run` with a provider's SDK not installed: the projection needs no SDK, so it
is shown, and every missing extra is named at once with the command that installs them."""

from __future__ import annotations

import pytest

from tests.cli.test_cli import moot


def test_a_dry_run_projects_without_the_providers_sdks_and_names_every_missing_extra(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither SDK installed: the dry run refused naming only anthropic's, and showed no
    projection, though it needs no SDK to make one."""
    from moot.models import base
    from moot.text.install import extra_install_hint

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setattr(
        base.ProviderInfo, "installed", lambda info: info.name not in ("openai", "anthropic")
    )
    args = ["run", "Which DB?", "-m", "openai:gpt-4o", "-m", "anthropic:claude-sonnet-4-6"]
    code, out, err = moot(capsys, *args, "--dry-run")
    assert code == 1, (out, err)
    assert "Projected worst case for the arena protocol" in out
    assert "openai:gpt-4o" in out and "anthropic:claude-sonnet-4-6" in out and "Cost: $" in out
    assert "'anthropic'" in err and "'openai'" in err
    assert extra_install_hint("anthropic,openai") in err
    assert "Traceback" not in err
