"""The test network guard: under tests no provider may reach a real remote API.

Tests set MOOT_TESTING=1 (tests/conftest.py); a provider whose endpoint is not on loopback then
refuses to be created unless MOOT_ALLOW_NETWORK=1 or its wire is replaced by a fake transport.
No test can spend money or wait on the internet.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlparse

from moot.errors import ConfigError

__all__ = ["guard_network", "is_loopback_url"]


def is_loopback_url(url: str) -> bool:
    """Whether `url` names this machine (localhost or a loopback address)."""
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def guard_network(url: str, *, provider: str, injected: bool = False) -> None:
    """Under tests (MOOT_TESTING=1) refuse a real remote API unless MOOT_ALLOW_NETWORK=1 or the
    wire is replaced (`injected`): no test may spend money or wait on the internet."""
    if injected or is_loopback_url(url):
        return
    if os.environ.get("MOOT_TESTING") == "1" and os.environ.get("MOOT_ALLOW_NETWORK") != "1":
        raise ConfigError(
            f"provider {provider!r} would reach {urlparse(url).hostname} under tests "
            "(MOOT_TESTING=1); set MOOT_ALLOW_NETWORK=1 to allow it"
        )
