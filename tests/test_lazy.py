"""Modules imported on first use, or when the engine's loop first waits (moot/lazy.py)."""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from moot import lazy
from moot.lifecycle.run import run_sync


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A package `lazy_probe` whose modules count their imports in `lazy_probe.runs`."""
    root = tmp_path / "lazy_probe"
    root.mkdir()
    (root / "__init__.py").write_text("runs: list[str] = []\n")
    for name in ("one", "two"):
        (root / f"{name}.py").write_text(
            f"import lazy_probe\nlazy_probe.runs.append({name!r})\nVALUE = {name!r}\n"
        )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "lazy_probe"
    lazy.load()  # nothing of this test is left pending for the next
    for name in [n for n in sys.modules if n == "lazy_probe" or n.startswith("lazy_probe.")]:
        del sys.modules[name]


def runs(package: str) -> list[str]:
    """The package's modules that have run (none while the package itself is not imported)."""
    return list(sys.modules[package].runs) if package in sys.modules else []


def test_a_lazy_module_runs_its_code_on_first_use(package: str) -> None:
    (one,) = lazy.modules(package, "one")
    assert runs(package) == []
    assert one.VALUE == "one"
    assert runs(package) == ["one"]
    assert one.VALUE == "one" and runs(package) == ["one"]


def test_an_import_of_a_lazy_module_gets_the_module_it_stands_for(package: str) -> None:
    (one,) = lazy.modules(package, "one")
    from lazy_probe import one as imported

    assert imported is sys.modules["lazy_probe.one"] and imported.VALUE == one.VALUE == "one"
    assert runs(package) == ["one"]


def test_load_runs_every_module_not_used_yet(package: str) -> None:
    one, two = lazy.modules(package, "one", "two")
    assert runs(package) == []
    lazy.load()
    assert sorted(runs(package)) == ["one", "two"]
    assert {"lazy_probe.one", "lazy_probe.two"} <= set(sys.modules)
    assert one.VALUE == "one" and two.VALUE == "two" and sorted(runs(package)) == ["one", "two"]


def test_threads_reading_a_lazy_module_at_once_all_see_it_whole(
    package: str, tmp_path: Path
) -> None:
    """Batch replays run protocols in worker threads: a thread that reads a module while
    another imports it must wait for it whole (3.11's LazyLoader handed out a half-run one)."""
    (tmp_path / "lazy_probe" / "slow.py").write_text(
        "import time, lazy_probe\nlazy_probe.runs.append('slow')\ntime.sleep(0.05)\n"
        "VALUE = 'slow'\n"
    )
    (slow,) = lazy.modules(package, "slow")
    start = threading.Barrier(8)
    seen: list[object] = []

    def read() -> None:
        start.wait()
        try:
            seen.append(slow.VALUE)
        except AttributeError as exc:
            seen.append(exc)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == ["slow"] * 8
    assert runs(package) == ["slow"]


def test_a_used_module_is_read_without_importing_it_again(
    package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in keeps the module once imported (a resume reads a protocol's functions
    through stand-ins on every step); what it reads is the module's attribute as it is now."""
    (one,) = lazy.modules(package, "one")
    assert one.VALUE == "one"
    imported: list[str] = []
    real = lazy.importlib.import_module

    def counted(name: str) -> object:
        imported.append(name)
        return real(name)

    monkeypatch.setattr(lazy.importlib, "import_module", counted)
    monkeypatch.setattr(sys.modules["lazy_probe.one"], "VALUE", "patched")
    assert one.VALUE == "patched" and imported == []
    with pytest.raises(AttributeError):
        one.NOT_THERE  # noqa: B018


def test_a_missing_module_fails_on_first_use_and_not_in_load(package: str) -> None:
    (three,) = lazy.modules(package, "three")
    lazy.load()  # as the engine's loop does: it must not break the loop
    with pytest.raises(ModuleNotFoundError, match=r"lazy_probe\.three"):
        _ = three.VALUE


def _handed_out() -> list[tuple[str, str]]:
    """(where, module) for every module moot's source hands out with `lazy.modules(...)`."""
    found = []
    for path in sorted((Path(lazy.__file__).parent).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "modules"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "lazy"
            ):
                package, *names = [ast.literal_eval(arg) for arg in node.args]
                found += [(f"{path.name}:{node.lineno}", f"{package}.{n}") for n in names]
    return found


def test_every_module_moot_hands_out_exists() -> None:
    """`lazy.modules` no longer looks its names up (a millisecond of start-up): this does."""
    handed = _handed_out()
    assert len(handed) >= 15
    missing = [(at, name) for at, name in handed if importlib.util.find_spec(name) is None]
    assert missing == []


def test_the_engine_loads_them_when_its_loop_first_waits(package: str) -> None:
    seen: dict[str, list[str]] = {}

    async def run() -> None:
        lazy.modules(package, "one", "two")
        await asyncio.sleep(0)  # runnable again at once: no wait
        seen["busy"] = runs(package)
        await asyncio.sleep(0.01)  # nothing to do for 10 ms: the loop waits
        seen["waited"] = sorted(runs(package))

    run_sync(run)  # type: ignore[arg-type]
    assert seen == {"busy": [], "waited": ["one", "two"]}


def test_a_pattern_is_compiled_on_its_first_use_and_then_read_directly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Modules a run imports before its first request compile their regular expressions only
    when a reply first needs one."""
    compiled: list[str] = []
    real = re.compile

    def counting(source: str, flags: int = 0) -> re.Pattern[str]:
        compiled.append(source)
        return real(source, flags)

    monkeypatch.setattr(re, "compile", counting)
    word = lazy.pattern(r"\bcat\b", re.IGNORECASE)
    assert compiled == []
    assert word.sub("dog", "Cat and cat") == "dog and dog"
    assert compiled == [r"\bcat\b"]
    assert word.search("a CAT") is not None and word.pattern == r"\bcat\b"
    assert word.flags & re.IGNORECASE
    assert compiled == [r"\bcat\b"]  # once


def test_a_wrong_pattern_fails_on_its_first_use() -> None:
    broken = lazy.pattern("(unclosed")
    with pytest.raises(re.error):
        broken.search("x")
