"""The command that adds one of moot's extras, for how this moot was installed.

Every face and layer that finds an extra missing (a provider's SDK, the embedding model, the
web view, Redis, reasoning-gym) says the same command, made here: an editable checkout (PEP
610's direct_url.json) installs from the checkout's path, a pipx or `uv tool` install is
installed again with the extras it has and the new one (the only way either adds one), an
environment uv made gets `uv pip`, anything else pip. The pip is the one of the environment
moot runs in: named by its interpreter when that environment is not the active one (the
README's `.venv/bin/moot` from a shell with no virtualenv active), where a bare `pip` would
install into another Python, or fail. Standard library only, imported when a hint is made.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["editable_checkout", "extra_install_hint", "installed_extras"]


def extra_install_hint(extra: str) -> str:
    """The command that adds moot's `extra` (a provider's, `embed`, `redis`, `ray`)."""
    checkout = editable_checkout()
    if checkout is not None:
        return f"{_pip()} install -e '{checkout}[{extra}]'"
    prefix = Path(sys.prefix)
    extras = ",".join(sorted({*installed_extras(), extra}))
    if (prefix / "uv-receipt.toml").is_file():  # the tool environments of `uv tool install`
        return f"uv tool install 'moot[{extras}]'"
    if (prefix / "pipx_metadata.json").is_file():  # pipx's venvs
        return f"pipx install --force 'moot[{extras}]'"
    return f"{_pip()} install 'moot[{extra}]'"


def _pip() -> str:
    """pip (or `uv pip`) for the environment moot runs in."""
    uv = _installer() == "uv"
    if _active(Path(sys.prefix)):
        return "uv pip" if uv else "pip"
    python = shlex.quote(sys.executable)
    return f"uv pip --python {python}" if uv else f"{python} -m pip"


def _active(prefix: Path) -> bool:
    """Whether a bare `pip` in this shell is the one of `prefix`: `prefix` is the virtualenv
    the shell activated, or no virtualenv is active and moot runs in no virtualenv."""
    active = os.environ.get("VIRTUAL_ENV")
    if active:
        return _same(Path(active), prefix)
    return sys.prefix == sys.base_prefix


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _installer() -> str:
    """Who installed moot, from its dist-info's INSTALLER file ("pip", "uv"; "" unknown)."""
    try:
        return (metadata.distribution("moot").read_text("INSTALLER") or "").strip().lower()
    except metadata.PackageNotFoundError:
        return ""


def installed_extras() -> set[str]:
    """moot's extras whose every package is installed: an install that adds one keeps them."""
    try:
        requires = metadata.requires("moot") or []
    except metadata.PackageNotFoundError:
        return set()
    needs: dict[str, set[str]] = {}
    for line in requires:
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", line)
        name = re.match(r"[A-Za-z0-9._-]+", line)
        if extra and name:
            needs.setdefault(extra.group(1), set()).add(name.group(0))
    return {extra for extra, names in needs.items() if all(map(_distributed, names))}


def _distributed(name: str) -> bool:
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def editable_checkout() -> str | None:
    """The folder moot is installed from in editable mode, or None for an ordinary install."""
    try:
        text = metadata.distribution("moot").read_text("direct_url.json")
        data = json.loads(text) if text else {}
    except (metadata.PackageNotFoundError, ValueError):
        return None
    if not isinstance(data, dict) or not (data.get("dir_info") or {}).get("editable"):
        return None
    url = urlparse(str(data.get("url", "")))
    return unquote(url.path) if url.scheme == "file" and url.path else None
