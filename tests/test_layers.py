"""The import rules of docs/architecture.md, checked on the source: every `import` and
`from ... import` of every module (lazy ones inside functions included), and no test for a
protocol's name outside that protocol's folder."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from moot import protocols

SRC = Path(__file__).resolve().parent.parent / "src" / "moot"

ABOVE_TYPES = (
    "moot.config",
    "moot.result",
    "moot.deliberation",
    "moot.models",
    "moot.engine",
    "moot.protocols",
    "moot.workspace",
    "moot.api",
    "moot.cli",
    "moot.display",
    "moot.report",
    "moot.bench",
)
# module prefix -> prefixes it must never import
FORBIDDEN: dict[str, tuple[str, ...]] = {
    # the bottom: data shared by every layer
    "moot.types": ABOVE_TYPES,
    "moot.errors": ("moot.",),
    "moot.text": ABOVE_TYPES,
    "moot.textsafe": ("moot.",),
    "moot.version": ("moot.",),
    "moot.lazy": ("moot.",),
    "moot.config": (
        "moot.models",
        "moot.engine",
        "moot.protocols",
        "moot.api",
        "moot.cli",
        "moot.display",
        "moot.report",
        "moot.bench",
        "moot.workspace",
        "moot.deliberation",
    ),
    "moot.result": ("moot.engine", "moot.protocols", "moot.api", "moot.cli", "moot.display"),
    # pure functions usable above the engine
    "moot.deliberation": (
        "moot.engine",
        "moot.models",
        "moot.protocols",
        "moot.api",
        "moot.cli",
        "moot.display",
        "moot.report",
        "moot.workspace",
    ),
    # providers never reach up
    "moot.models": (
        "moot.engine",
        "moot.protocols",
        "moot.api",
        "moot.cli",
        "moot.display",
        "moot.report",
        "moot.bench",
    ),
    # the engine imports no protocol and no face
    "moot.engine": (
        "moot.protocols",
        "moot.api",
        "moot.cli",
        "moot.display",
        "moot.report",
        "moot.bench",
        "moot.migrate",
    ),
    # protocols reach the world only through the Session: no provider, no workspace, no face
    "moot.protocols": (
        "moot.models.",
        "moot.workspace",
        "moot.api",
        "moot.cli",
        "moot.display",
        "moot.report",
        "moot.bench",
    ),
    # faces never import each other
    "moot.display": ("moot.report", "moot.cli", "moot.api", "moot.bench"),
    "moot.report": ("moot.display", "moot.cli", "moot.api", "moot.bench"),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(tree: ast.AST, module: str) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import: resolve against this module's package
                package = module.split(".")[: -node.level or None]
                base = ".".join([*package, base]) if base else ".".join(package)
            yield node.lineno, base
            for alias in node.names:  # `from moot import protocols` imports moot.protocols
                yield node.lineno, f"{base}.{alias.name}"


def sources() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def test_every_module_keeps_the_import_rules() -> None:
    broken = []
    for path in sources():
        module = module_name(path)
        rules = [bans for prefix, bans in FORBIDDEN.items() if module.startswith(prefix)]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, target in imports(tree, module):
            for bans in rules:
                for ban in bans:
                    if target == ban.rstrip(".") or target.startswith(ban):
                        if ban == "moot." and target.startswith(module):
                            continue
                        broken.append(f"{module}:{line} imports {target} (banned: {ban})")
    assert broken == []


def test_the_rules_are_checked_on_real_code() -> None:
    """The checker sees lazy imports and `from moot import x`; a checker that finds nothing
    would pass vacuously."""
    found = dict.fromkeys(("moot.api", "moot.protocols", "moot.display.live"), False)
    for path in sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for _, target in imports(tree, module_name(path)):
            if target in found:
                found[target] = True
    assert all(found.values()), found
    sample = ast.parse("def f():\n    from moot import protocols\n    import moot.cli\n")
    assert {t for _, t in imports(sample, "moot.engine.x")} >= {"moot.protocols", "moot.cli"}


@pytest.mark.parametrize("name", protocols.names())
def test_no_code_outside_a_protocols_folder_tests_for_its_name(name: str) -> None:
    """Comparing anything with a protocol's name (`config.protocol == "court"`) or keying on it
    belongs in that protocol's folder (its record) or in the registry's one line."""
    folder = SRC / "protocols" / name
    registry = SRC / "protocols" / "__init__.py"
    found = []
    for path in sources():
        if path.is_relative_to(folder) or path == registry:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                for side in (node.left, *node.comparators):
                    # `x == "court"`, and `x in (None, "refine")` too
                    members = (
                        side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
                    )
                    if any(isinstance(m, ast.Constant) and m.value == name for m in members):
                        found.append(f"{path.relative_to(SRC)}:{node.lineno}")
            elif isinstance(node, ast.Subscript):
                key = node.slice
                if isinstance(key, ast.Constant) and key.value == name:
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert found == []


def test_the_package_reads_its_version_from_version_py() -> None:
    """Issue 8: `from moot import __version__` inside the package runs moot/__init__ (the
    library face) from below it; the version has its own module, moot.version."""
    found = []
    for path in sources():
        if path == SRC / "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "moot" and not node.level:
                if any(alias.name == "__version__" for alias in node.names):
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert found == []
