"""docs/architecture.md's layout matches the package: every package it names exists, every package
exists in it, each says in one line what it owns, and the root holds only a handful of modules."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "moot"
DOC = ROOT / "docs" / "architecture.md"
# the root holds the library face (api), the data every layer shares (config, types, errors,
# version) and two leaf helpers every floor uses (lazy imports, atomic file writes): nothing else
ROOT_MODULES_AT_MOST = 7
_NAME = re.compile(r"^[a-z_]+(?:/|\.py)$")


def layout_block(text: str) -> list[str]:
    """The lines of the first fenced block under '## Layers and imports'."""
    section = text.split("## Layers and imports", 1)[1]
    return section.split("```", 2)[1].strip("\n").splitlines()


def documented(lines: list[str]) -> tuple[set[str], set[str]]:
    """(packages, root modules) named at the start of a layout line: `engine/   session.py, ...`
    names a package (its description may name its modules), `config.py errors.py` names root
    modules (a line may name several)."""
    packages: set[str] = set()
    modules: set[str] = set()
    for line in lines:
        if not line or line[0].isspace():
            continue  # a description's continuation
        for word in line.split():
            if not _NAME.match(word):
                break  # the description begins
            if word.endswith("/"):
                packages.add(word.rstrip("/"))
                break  # one package a line; its description may name its modules
            else:
                modules.add(word.removesuffix(".py"))
    return packages, modules


def packages() -> set[str]:
    return {p.parent.name for p in SRC.glob("*/__init__.py")}


def root_modules() -> set[str]:
    return {p.stem for p in SRC.glob("*.py") if p.stem not in ("__init__", "__main__")}


def test_the_layout_names_every_package_and_no_other() -> None:
    named, _ = documented(layout_block(DOC.read_text(encoding="utf-8")))
    assert sorted(named - packages()) == [], "docs/architecture.md names packages that are gone"
    assert sorted(packages() - named) == [], "packages missing from docs/architecture.md"


def test_the_layout_names_every_root_module_and_no_other() -> None:
    _, named = documented(layout_block(DOC.read_text(encoding="utf-8")))
    assert sorted(named - root_modules()) == []
    assert sorted(root_modules() - named) == []


def test_the_root_holds_a_handful_of_modules() -> None:
    assert len(root_modules()) <= ROOT_MODULES_AT_MOST, sorted(root_modules())


@pytest.mark.parametrize("package", sorted(packages()))
def test_each_package_says_in_one_line_what_it_owns(package: str) -> None:
    source = (SRC / package / "__init__.py").read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source))
    assert doc, f"moot/{package}/__init__.py has no docstring"
    first = doc.splitlines()[0]
    assert first.endswith("."), f"moot/{package}: the docstring's first line is not a sentence"


def test_the_reader_sees_what_the_docs_say() -> None:
    """The parser is checked on a layout of its own: a continuation line names nothing, a line
    may name several modules, and a package name stops at its description."""
    lines = [
        "cli/                   click commands; engine/ is named here only in prose",
        "                       api.py in a continuation line names nothing",
        "config.py errors.py",
        "engine/                session.py, journal.py",
    ]
    assert documented(lines) == ({"cli", "engine"}, {"config", "errors"})


def test_the_tests_folder_mirrors_the_package() -> None:
    """tests/<path>/test_*.py tests the package moot/<path> (cross-cutting tests, of layers,
    faces or the library as a whole, stay at the root); a root test names no package's module."""
    tests = ROOT / "tests"
    folders = {p.parent.relative_to(tests) for p in tests.rglob("test_*.py")} - {Path(".")}
    assert folders, "no test lives in a package's folder"
    strays = [str(f) for f in sorted(folders) if not (SRC / f / "__init__.py").is_file()]
    assert strays == [], "test folders with no package of that path under src/moot"
    loose = {p.stem.removeprefix("test_") for p in tests.glob("test_*.py")}
    assert sorted(loose & packages()) == [], "a package's tests belong in its folder"
