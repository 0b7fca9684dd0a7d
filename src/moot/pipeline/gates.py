"""QA gates (seed 004: syntax -> lint -> build -> tests -> secret scan), in that order.

Each gate is a command the project configures (`[pipeline.gates]`), or one detected from the
repository ("auto"), or skipped (""); installed packages add gates of their own as plugins
(moot/plugins/: a `GatePlugin` in the `moot.plugins` entry-point group, or a bare callable in
the older `moot.gates` group) that run after the tests, before the secret scan: each checks
`(worktree: Path, patch: str) -> tuple[bool, str]` (passed, output), once per change as a
journaled effect. Detection reads the repository's files once per session
(a journaled effect, so resume and replay run the same gates): a Python project gets
`python3 -m compileall` for syntax, `ruff check .` for lint when it configures ruff and ruff is
installed, `python3 -m pytest -q` for tests when it has tests; a Node project its package.json
scripts (lint, build, test). The secret scan is moot's own: it reads the task's diff for keys.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from msgspec import Struct

from moot.pipeline.options import GATE_NAMES, Gates

__all__ = ["PLUGINS", "Gate", "detect", "plugins", "resolve", "run_plugin", "scan_secrets"]


PLUGINS = "moot.gates"  # the older entry-point group of gates (moot.plugins is read too)


class Gate(Struct, frozen=True):
    name: str
    command: str  # "" for the secret scan (moot's own) and for a plugin
    plugin: str = ""  # a plugin's `module:attribute`

    @property
    def shown(self) -> str:
        """How reports name it: `tests: pytest -q`, `licence (plugin pkg.mod:check)`."""
        if self.plugin:
            return f"{self.name} (plugin {self.plugin})"
        return self.name + (f": {self.command}" if self.command else "")


def plugins() -> dict[str, str]:
    """Gate name -> `module:attribute`, of the gates installed packages offer as plugins; one
    named as moot's own gates is skipped with a warning."""
    from moot import plugins as found

    offered = {}
    for plugin in found.of_kind("gate"):
        if plugin.name in GATE_NAMES:
            found.skip(plugin, f"moot already has a gate {plugin.name!r}")
        else:
            offered[plugin.name] = plugin.target
    return offered


def run_plugin(target: str, worktree: Path, patch: str) -> tuple[bool, str]:
    """Load and run one plugin gate (a GatePlugin, or the older bare callable); a plugin that
    cannot be loaded, raises or answers something else fails its gate, saying why (a broken
    plugin never passes a change)."""
    import importlib

    from moot.plugins import GatePlugin

    module, _, attribute = target.partition(":")
    try:
        gate: Any = importlib.import_module(module)
        for part in attribute.split("."):
            gate = getattr(gate, part)
        check = gate.check if isinstance(gate, GatePlugin) else gate
        passed, output = check(worktree, patch)
    except Exception as exc:  # the plugin's own failure is the gate's output
        return False, f"the plugin {target} failed: {type(exc).__name__}: {exc}"
    if not isinstance(passed, bool) or not isinstance(output, str):
        return False, f"the plugin {target} did not answer (passed: bool, output: str)"
    return passed, output


def _python(root: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8", errors="replace") if pyproject.is_file() else ""
    has_python = bool(text) or (root / "setup.py").is_file() or any(root.glob("*.py"))
    if not has_python:
        has_python = any(root.glob("*/*.py")) or any(root.glob("src/*/*.py"))
    if not has_python:
        return found
    found["syntax"] = "python3 -m compileall -q -x '(^|/)[.][^/]' ."
    uses_ruff = (
        "[tool.ruff" in text or (root / "ruff.toml").is_file() or (root / ".ruff.toml").is_file()
    )
    if uses_ruff and shutil.which("ruff"):
        found["lint"] = "ruff check ."
    tests = (root / "tests").is_dir() or any(root.glob("test_*.py")) or any(root.glob("*_test.py"))
    if tests or "pytest" in text:
        found["tests"] = "python3 -m pytest -q -p no:cacheprovider"
    return found


def _node(root: Path) -> dict[str, str]:
    manifest = root / "package.json"
    if not manifest.is_file():
        return {}
    try:
        scripts = json.loads(manifest.read_text(encoding="utf-8")).get("scripts") or {}
    except (ValueError, AttributeError):
        return {}
    found = {}
    for gate, script in (("lint", "lint"), ("build", "build"), ("tests", "test")):
        if isinstance(scripts, dict) and script in scripts:
            found[gate] = f"npm run --silent {script}"
    return found


def detect(root: Path) -> dict[str, str]:
    """The gate commands the repository at `root` suggests, by gate name."""
    return {**_node(root), **_python(root)}


def resolve(
    settings: Gates, detected: dict[str, str], offered: dict[str, str] | None = None
) -> list[Gate]:
    """The gates that run, in order: configured commands win, "auto" takes the detected one;
    `offered` plugins (name -> target) run after the tests."""
    gates = []
    for name in GATE_NAMES:
        if name == "secrets":
            gates += [Gate(n, "", target) for n, target in sorted((offered or {}).items())]
            if settings.secrets:
                gates.append(Gate(name, ""))
            continue
        value = getattr(settings, name)
        command = detected.get(name, "") if value == "auto" else value
        if command.strip():
            gates.append(Gate(name, command))
    return gates


_SECRETS = (
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b")),
    ("a Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b")),
    ("an API key (sk-...)", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    (
        "a hard-coded secret",
        re.compile(
            r"""(?i)\b(?:api[_-]?key|secret|token|passw(?:or)?d)\w*\s*[:=]\s*["'][^"'\s]{16,}["']"""
        ),
    ),
)


def scan_secrets(patch: str) -> list[str]:
    """What looks like a secret on the lines a diff adds: "path:line: what" each (the secret
    itself is never repeated)."""
    found = []
    path, number = "?", 0
    for line in patch.splitlines():
        if line.startswith("+++ "):
            path = line[4:].removeprefix("b/").strip()
            continue
        if line.startswith("@@"):
            match = re.search(r"\+(\d+)", line)
            number = int(match.group(1)) - 1 if match else 0
            continue
        if line.startswith("+"):
            number += 1
            for what, pattern in _SECRETS:
                if pattern.search(line):
                    found.append(f"{path}:{number}: {what}")
                    break
        elif not line.startswith("-"):
            number += 1
    return found
