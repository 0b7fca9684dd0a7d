"""moot's own folders for this user (moot/files.py): where platformdirs would put them."""

from __future__ import annotations

import sys
from pathlib import Path

import platformdirs
import pytest

from moot.files import user_folder


@pytest.mark.skipif(sys.platform != "linux", reason="the XDG rule is read by moot on Linux only")
@pytest.mark.parametrize("kind", ["config", "data"])
@pytest.mark.parametrize("given", [None, "absolute", "relative", "", "absolute/"])
@pytest.mark.parametrize("home", ["absolute", "relative", ""])
def test_a_user_folder_is_where_platformdirs_puts_it(
    kind: str,
    given: str | None,
    home: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """moot reads the XDG rule itself on Linux, not to import platformdirs before a run's first
    request: it must agree with platformdirs, whatever the variables hold (a relative or empty
    HOME: platformdirs looks the home folder up instead)."""
    variable = "XDG_CONFIG_HOME" if kind == "config" else "XDG_DATA_HOME"
    homes = {"absolute": str(tmp_path / "home"), "relative": "home", "": ""}
    monkeypatch.setenv("HOME", homes[home])
    if given is None:
        monkeypatch.delenv(variable, raising=False)
    elif given == "absolute":
        monkeypatch.setenv(variable, str(tmp_path / "xdg"))
    elif given == "absolute/":
        monkeypatch.setenv(variable, f"{tmp_path / 'xdg'}/")
    elif given == "relative":
        monkeypatch.setenv(variable, "xdg")  # not absolute: ignored, as the spec says
    else:
        monkeypatch.setenv(variable, "")
    found = user_folder(kind)  # type: ignore[arg-type]
    if kind == "config":
        expected = platformdirs.user_config_dir("moot", appauthor=False)
    else:
        expected = platformdirs.user_data_dir("moot", appauthor=False)
    assert found == Path(expected)
