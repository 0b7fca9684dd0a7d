"""Shared fixtures: every test gets its own MOOT_HOME and working directory, and no test may
open a network connection beyond loopback."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from moot.models import keys

_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0]
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback:
            raise RuntimeError(f"tests may not reach the network: connect to {address!r}")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "moot-home"
    monkeypatch.setenv("MOOT_HOME", str(home))
    # without MOOT_HOME moot's home is the user data folder: never the real user's in a test
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    # nor the real user's config file (moot/config/user.py): none unless a test writes it
    monkeypatch.setenv("MOOT_CONFIG", str(tmp_path / "user-config" / "config.toml"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("MOOT_TESTING", "1")  # network providers refuse remote hosts
    monkeypatch.delenv("MOOT_JOURNAL_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    # the keys a process has read are masked for the rest of it: each test starts with none,
    # so one test's key never masks a piece of another test's text
    monkeypatch.setattr(keys, "_SECRETS", set())
    yield home
