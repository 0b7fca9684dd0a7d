"""Install hints match how moot was installed (issue 24): under pipx or `uv tool` a missing extra
is added by installing the tool again with the extras it has and the new one, in an environment
uv made by `uv pip`, in an editable checkout from the checkout, else by pip."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from moot.models import base


@pytest.fixture
def package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """moot as a package (not a checkout) in the environment `tmp_path`, installed by pip with
    the openai extra."""
    monkeypatch.setattr(base, "editable_checkout", lambda: None)
    monkeypatch.setattr(base, "_installer", lambda: "pip")
    monkeypatch.setattr(base, "installed_extras", lambda: {"openai"})
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    return tmp_path


def test_pip_installs_the_extra(package: Path) -> None:
    assert base.extra_install_hint("redis") == "pip install 'moot[redis]'"


def test_a_uv_tool_is_installed_again_with_its_extras(package: Path) -> None:
    (package / "uv-receipt.toml").write_text("[tool]\n")
    assert base.extra_install_hint("redis") == "uv tool install 'moot[openai,redis]'"
    info = base.provider_info("anthropic")
    assert info is not None
    assert info.install_hint() == "uv tool install 'moot[anthropic,openai]'"


def test_a_pipx_install_is_forced_again_with_its_extras(package: Path) -> None:
    (package / "pipx_metadata.json").write_text("{}")
    assert base.extra_install_hint("ray") == "pipx install --force 'moot[openai,ray]'"


def test_an_environment_uv_made_gets_uv_pip(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "_installer", lambda: "uv")
    assert base.extra_install_hint("redis") == "uv pip install 'moot[redis]'"
    monkeypatch.setattr(base, "editable_checkout", lambda: "/src/moot")
    assert base.extra_install_hint("redis") == "uv pip install -e '/src/moot[redis]'"


def test_the_installed_extras_are_those_whose_packages_are_all_there() -> None:
    # this checkout's environment has the provider SDKs the tests use, and not llama-cpp-python
    found = base.installed_extras()
    assert {"openai", "anthropic"} <= found
    assert "llama" not in found
    assert base._installer() in ("pip", "uv")
