"""moot's records are msgspec Structs (issue 23): a frozen dataclass compiles its methods when
its class is made, about 1 ms each, and some forty records are made before a run's first
request. A dataclass that comes back in src/ is caught here."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "moot"


def dataclass_uses(source: str) -> list[int]:
    """The lines of `source` that import the dataclasses module or a name from it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(a.name == "dataclasses" for a in node.names):
            found.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "dataclasses":
            found.append(node.lineno)
    return found


def test_no_module_of_moot_makes_a_dataclass() -> None:
    found = [
        f"{path.relative_to(SRC.parent)}:{line}"
        for path in sorted(SRC.rglob("*.py"))
        for line in dataclass_uses(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "use msgspec.Struct for a record (see pyproject.toml)"


def test_each_way_of_importing_dataclasses_is_seen() -> None:
    planted = (
        "import os\n"
        "import dataclasses\n"
        "from dataclasses import dataclass\n"
        "def f():\n"
        "    from dataclasses import replace\n"
        "import msgspec\n"
    )
    assert dataclass_uses(planted) == [2, 3, 5]
