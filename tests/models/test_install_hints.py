"""Install hints match how moot was installed (issue 24): under pipx or `uv tool` a missing extra
is added by installing the tool again with the extras it has and the new one, in an environment
uv made by `uv pip`, in an editable checkout from the checkout, else by pip. The pip is the one of
the environment moot runs in: a bare `pip` only where that environment is the shell's."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from moot.models import base
from moot.text import install


@pytest.fixture
def package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """moot as a package (not a checkout) in the environment `tmp_path`, installed by pip with
    the openai extra, that environment the active one."""
    monkeypatch.setattr(install, "editable_checkout", lambda: None)
    monkeypatch.setattr(install, "_installer", lambda: "pip")
    monkeypatch.setattr(install, "installed_extras", lambda: {"openai"})
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path))
    return tmp_path


def test_pip_installs_the_extra(package: Path) -> None:
    assert install.extra_install_hint("redis") == "pip install 'moot[redis]'"


def test_a_uv_tool_is_installed_again_with_its_extras(package: Path) -> None:
    (package / "uv-receipt.toml").write_text("[tool]\n")
    assert install.extra_install_hint("redis") == "uv tool install 'moot[openai,redis]'"
    info = base.provider_info("anthropic")
    assert info is not None
    assert info.install_hint() == "uv tool install 'moot[anthropic,openai]'"


def test_a_pipx_install_is_forced_again_with_its_extras(package: Path) -> None:
    (package / "pipx_metadata.json").write_text("{}")
    assert install.extra_install_hint("ray") == "pipx install --force 'moot[openai,ray]'"


def test_an_environment_uv_made_gets_uv_pip(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install, "_installer", lambda: "uv")
    assert install.extra_install_hint("redis") == "uv pip install 'moot[redis]'"
    monkeypatch.setattr(install, "editable_checkout", lambda: "/src/moot")
    assert install.extra_install_hint("redis") == "uv pip install -e '/src/moot[redis]'"


def test_an_environment_not_active_is_named_by_its_python(
    package: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The README runs `.venv/bin/moot` from a shell with no virtualenv active (or another one):
    a bare `pip` there installs into some other Python, so the hint names this one's."""
    python = tmp_path / "my env" / "bin" / "python"
    monkeypatch.setattr(sys, "executable", str(python))
    monkeypatch.setattr(install, "editable_checkout", lambda: "/src/moot")
    quoted = shlex.quote(str(python))
    for active in (None, str(tmp_path / "other")):
        if active is None:
            monkeypatch.delenv("VIRTUAL_ENV")
        else:
            monkeypatch.setenv("VIRTUAL_ENV", active)
        assert (
            install.extra_install_hint("embed") == f"{quoted} -m pip install -e '/src/moot[embed]'"
        )
    monkeypatch.setattr(install, "_installer", lambda: "uv")
    assert install.extra_install_hint("embed") == (
        f"uv pip --python {quoted} install -e '/src/moot[embed]'"
    )


def test_the_hint_for_this_checkout_installs_into_this_environment() -> None:
    """Run as a new user would, with no virtualenv active: the hint names this environment's pip
    and this checkout."""
    env = {"PATH": "/usr/bin:/bin"}  # no virtualenv active
    hint = subprocess.run(
        [
            sys.executable,
            "-c",
            "from moot.text.install import extra_install_hint as h; print(h('dev'))",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.strip()
    words = shlex.split(hint)
    assert words[:3] == [sys.executable, "-m", "pip"], hint
    checkout = Path(__file__).resolve().parents[2]
    assert words[-1] == f"{checkout}[dev]"


def test_the_installed_extras_are_those_whose_packages_are_all_there() -> None:
    # this checkout's environment has the provider SDKs the tests use, and not llama-cpp-python
    found = install.installed_extras()
    assert {"openai", "anthropic"} <= found
    assert "llama" not in found
    assert install._installer() in ("pip", "uv")
