"""`moot models` and `moot doctor`: what is installed, what is configured, and never a key."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from moot.cli import main
from tests.fakes.fake_agent import install

SECRET = "sk-test-NEVERSHOWN0123456789abcdef"


def moot(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out + err


def test_models_lists_every_provider_with_its_state_and_an_example(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = moot(capsys, "models")
    assert code == 0
    for name in (
        "openai",
        "openai-compat",
        "ollama",
        "vllm",
        "openrouter",
        "lmstudio",
        "anthropic",
        "google",
        "gemini",
        "cli",
        "cursor",
        "local",
        "scripted",
    ):
        assert any(line.startswith(f"{name} ") for line in out.splitlines()), name
    assert "openai-compat:http://127.0.0.1:8080/v1#qwen3" in out
    assert "claude (not on PATH)" in out or "claude (found)" in out


def test_doctor_defaults_to_the_local_agents(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = moot(capsys, "doctor")
    assert code == 0, out
    assert out.splitlines()[0] == "local:smollm2"
    assert "1 of 1 model ready" in out


def test_doctor_reports_missing_keys_and_commands_by_name_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no CLI tool found
    code, out = moot(
        capsys,
        "doctor",
        "--models",
        "anthropic:claude-haiku-4-5",
        "--models",
        "cli:codex",
        "--models",
        "openai:gpt-5.4-mini",
    )
    assert code == 1
    assert "FAIL  no key: set ANTHROPIC_API_KEY" in out
    assert "install the Codex CLI" in out
    assert "ok    key in OPENAI_API_KEY (set)" in out
    assert "MOOT_ALLOW_NETWORK" in out  # the real API is refused under tests
    assert SECRET not in out


def test_doctor_pings_a_cli_agent_and_shows_its_version(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = install(tmp_path / "bin", ("gemini",))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    code, out = moot(capsys, "doctor", "--models", "cli:gemini", "--ping")
    assert code == 0, out
    assert "gemini 9.9.9 (fake)" in out
    assert "ping answered in" in out
    monkeypatch.setenv("FAKE_MODE", "auth")
    code, out = moot(capsys, "doctor", "--models", "cli:gemini", "--ping")
    assert code == 1 and "ping failed (rate_limit)" in out


def test_doctor_reads_a_config_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "moot.toml"
    config.write_text(
        '[[agents]]\nmodel = "cursor:auto"\napi_key_env = "MY_CURSOR_KEY"\n'
        '[[agents]]\nmodel = "scripted:@nobody"\n'
    )
    code, out = moot(capsys, "doctor", "--config", str(config))
    assert code == 1
    assert "no key: set MY_CURSOR_KEY" in out
    assert "no script registered as 'nobody'" in out


def test_help_imports_no_sdk() -> None:
    probe = (
        "import sys\nfrom moot.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
        "    pass\nheavy = [m for m in sys.modules if m.split('.')[0] in "
        "('openai', 'anthropic', 'google', 'httpx', 'httpx2', 'llama_cpp')]\nprint(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_a_missing_extra_names_the_install_that_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    """An editable checkout is told to reinstall from the checkout, a package by its name."""
    from moot.models import base
    from moot.text import install

    info = base.ProviderInfo("x", "m", "a", "openai", ("no_such_module_x",), "", "")
    monkeypatch.setattr(install, "_active", lambda prefix: True)  # this environment's pip
    monkeypatch.setattr(install, "editable_checkout", lambda: "/src/moot")
    assert info.install_hint() == "pip install -e '/src/moot[openai]'"
    monkeypatch.setattr(install, "editable_checkout", lambda: None)
    assert info.install_hint() == "pip install 'moot[openai]'"
    monkeypatch.undo()
    here = install.editable_checkout()  # this checkout is installed editable by scripts/setup.sh
    assert here is not None and (Path(here) / "pyproject.toml").exists()


def test_the_cache_and_ray_extras_name_the_install_that_fits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not only providers: a Redis cache without redis and `--executor ray` without Ray tell an
    editable checkout to reinstall from the checkout, as a missing provider SDK does."""
    import importlib.util

    from moot.batch.ray import ray_runner
    from moot.engine.cache import RedisCache
    from moot.errors import ConfigError
    from moot.text import install

    monkeypatch.setattr(install, "editable_checkout", lambda: "/src/moot")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "redis" else real(name, *a)
    )
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(ConfigError, match=re.escape("pip install -e '/src/moot[redis]'")):
        RedisCache("redis://127.0.0.1:1")
    with pytest.raises(ConfigError, match=re.escape("pip install -e '/src/moot[ray]'")):
        ray_runner()
