"""The layer rules of docs/architecture.md, checked on the source by tests/layers.py: every
module has a floor and imports only below it (lazy, `TYPE_CHECKING` and `importlib` imports
included), no import loops, and no test for a protocol's name outside that protocol's folder.
The checker itself is tested on planted trees: each kind of violation makes it report."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest
from _pytest.mark import ParameterSet

from tests.layers import Allowed, Problem, Tree, check, imports

SRC = Path(__file__).resolve().parent.parent / "src" / "moot"

# Today's known violations of the rules the docs state. Each is work left for issue 28, which
# removes it; the checker fails on any one that no longer occurs, so the list only shrinks.
TODAY = Allowed(
    loops=frozenset(
        {
            # suites builds gym suites and gym names suites' Question/Suite types (issue 28)
            frozenset({"moot.bench.gym", "moot.bench.suites"}),
            # runner writes the report, the report reads runner's BenchReport (issue 28)
            frozenset({"moot.bench.report", "moot.bench.runner"}),
        }
    ),
    names=frozenset(
        {
            # Not the vote protocol: the word. A court juror's reply is JSON with a "vote"
            # field (yes/no/abstain); court's folder keys and reads that field.
            ("moot.protocols.court", "vote"),
        }
    ),
)


@pytest.fixture(scope="module")
def real() -> Tree:
    return Tree.load(SRC)


def test_every_module_keeps_the_layers(real: Tree) -> None:
    problems = check(real, TODAY)
    assert [str(p) for p in problems] == []


def test_the_checker_sees_every_kind_of_import_on_real_code(real: Tree) -> None:
    """A checker that finds nothing would pass vacuously: it sees lazy and named imports and
    `from moot import x`."""
    found = {(i.source, i.target, i.how) for i in imports(real)}
    assert ("moot.protocols.arena.run", "moot.deliberation.markup", "lazy") in found
    assert ("moot.cli", "moot.cli.batch", "names") in found
    assert ("moot.protocols", "moot.protocols.court", "names") in found
    assert ("moot.bench.runner", "moot.batch", "import") in found
    assert len(found) > 500


def test_the_package_reads_its_version_from_version_py(real: Tree) -> None:
    """Issue 8: `from moot import __version__` inside the package runs moot/__init__ (the
    library face) from below it; the version has its own module, moot.version."""
    found = []
    for module, nodes in real.modules.items():
        for node in nodes:
            if isinstance(node, ast.ImportFrom) and node.module == "moot" and not node.level:
                if module != "moot" and any(a.name == "__version__" for a in node.names):
                    found.append(f"{module}:{node.lineno}")
    assert found == []


# A small tree laid out like src/moot that keeps every rule: each module imports below it.
CLEAN: dict[str, str] = {
    "__init__.py": '_LAZY = {"run": "moot.api", "Session": "moot.engine.session"}\n',
    "cli/__init__.py": (
        "import importlib\n"
        "from moot import api\n"
        "from moot.lifecycle import code, migrate\n"
        "from moot.display import board\n"
        'COMMANDS = {"batch": "moot.cli.batch"}\n'
        'batch = importlib.import_module("moot.cli.batch")\n'
    ),
    "cli/batch.py": "from moot import batch\nfrom moot.bench import runner\n",
    "api.py": "from moot.lifecycle import migrate, plan\nimport moot.engine.lifecycle\n",
    "display/__init__.py": "",
    "display/board.py": "from moot import batch, protocols\nfrom moot.engine import session\n",
    "bench/__init__.py": "",
    "bench/runner.py": "from moot import batch\nfrom moot.bench import stats\n",
    "bench/stats.py": "from moot.deliberation import claims\n",
    "batch/__init__.py": "from moot.lifecycle import plan\nfrom moot.engine import session\n",
    "batch/ray.py": "from moot import batch\n",
    "lifecycle/__init__.py": "",
    "lifecycle/migrate.py": "from moot.lifecycle import plan\nfrom moot.report import markdown\n",
    "lifecycle/code.py": "from moot.engine import session\nfrom moot.code import git\n",
    "lifecycle/plan.py": "from moot import protocols\nfrom moot.protocols import definition\n",
    "report/__init__.py": "",
    "report/markdown.py": (
        "from moot.engine import session\nfrom moot.protocols import definition\n"
    ),
    "report/view.py": "from moot.engine import session\n",
    "protocols/__init__.py": (
        'BUILTIN = {"arena": "moot.protocols.arena", "court": "moot.protocols.court"}\n'
    ),
    "protocols/definition.py": (
        "from moot.engine import session\nfrom moot.protocols import shown\n"
    ),
    "protocols/shown.py": "from moot.deliberation import claims\n",
    "protocols/arena/__init__.py": "from moot.protocols.arena import run\n",
    "protocols/arena/run.py": (
        "from typing import TYPE_CHECKING\n"
        "from moot import lazy\n"
        "from moot.protocols import definition\n"
        "from . import weigh\n"
        "if TYPE_CHECKING:\n"
        "    from moot.deliberation import claims\n"
        "    from moot.code.changes import CodeChange\n"
        "else:\n"
        '    (claims,) = lazy.modules("moot.deliberation", "claims")\n'
        "def phase(step: str) -> str:\n"
        '    return "arena" if step == "arena" else step\n'
    ),
    "protocols/arena/weigh.py": "from ..definition import ProtocolDefinition\n",
    "protocols/court/__init__.py": "from moot.protocols import definition\n",
    "deliberation/__init__.py": "",
    "deliberation/claims.py": "from moot import text, types\n",
    "engine/__init__.py": "",
    "engine/lifecycle.py": "from moot.engine import result, session\n",
    "engine/session.py": (
        "from moot import config\nfrom moot.engine import result\nfrom moot.models import base\n"
        "import moot.code.git\n"
    ),
    "engine/result.py": "from moot import lazy, types\n",
    "code/__init__.py": "from moot.code.git import apply\n",
    "code/git.py": "from moot import errors, text\nfrom moot.models import base\n",
    "code/changes.py": "",
    "models/__init__.py": "",
    "models/base.py": 'from moot import config\nPROVIDER = {"ai": "moot.models.openai_chat"}\n',
    "models/openai_chat.py": "from moot.models import base\n",
    "config.py": "from moot import errors, text, types\n",
    "text/__init__.py": "from moot import types\nfrom moot.text import safe\n",
    "text/safe.py": "",
    "types.py": "from moot import errors, lazy\n",
    "errors.py": "",
    "version.py": "",
    "lazy.py": "",
}


def plant(root: Path, files: Mapping[str, str]) -> Path:
    """CLEAN with `files` added to (or appended to) its modules, written under root/moot."""
    tree = dict(CLEAN)
    for name, source in files.items():
        tree[name] = tree.get(name, "") + source
    for name, source in tree.items():
        path = root / "moot" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root / "moot"


def test_a_clean_tree_reports_nothing(tmp_path: Path) -> None:
    assert [str(p) for p in check(plant(tmp_path, {}))] == []


TYPE_CHECKING_ = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
LAZY = "from moot import lazy\n"
MATCH = (
    "def f(p: object) -> int:\n    match p:\n        case {}:\n            return 1\n    return 0\n"
)


def returns(expression: str) -> str:
    """A function testing its argument `p` with `expression`."""
    return f"def f(p: object) -> object:\n    return {expression}\n"


def plants(
    name: str, files: dict[str, str], kind: str, module: str, target: str | None = None
) -> ParameterSet:
    """`files` planted in the clean tree must give a problem of `kind` in `module` (importing
    `target`, where the way it is found matters)."""
    return pytest.param(files, kind, module, target, id=name)


PLANTED = [
    # an entry-point group's name is no import only in the plugin loader
    plants(
        "a group's name outside the plugin loader",
        {"engine/session.py": 'GROUPS = {"moot.protocols": "protocol"}\n'},
        "upward",
        "moot.engine.session",
        "moot.protocols",
    ),
    # upward, in each form an import takes
    plants(
        "engine imports a protocol",
        {"engine/session.py": "from moot.protocols import definition\n"},
        "upward",
        "moot.engine.session",
    ),
    plants(
        "relative import upward",
        {"engine/session.py": "from ..protocols import definition\n"},
        "upward",
        "moot.engine.session",
    ),
    plants(
        "import x.y upward",
        {"engine/session.py": "import moot.api\n"},
        "upward",
        "moot.engine.session",
    ),
    plants(
        "upward inside a function",
        {"models/base.py": "def f():\n    from moot import cli\n"},
        "upward",
        "moot.models.base",
    ),
    plants(
        "upward under TYPE_CHECKING",
        {"types.py": TYPE_CHECKING_ + "    from moot import config\n"},
        "upward",
        "moot.types",
    ),
    plants(
        "importlib upward",
        {"engine/session.py": 'import importlib\nimportlib.import_module("moot.api")\n'},
        "upward",
        "moot.engine.session",
    ),
    plants(
        "importlib of an f-string upward",
        {"engine/session.py": 'import importlib\nimportlib.import_module(f"moot.protocols.{x}")\n'},
        "upward",
        "moot.engine.session",
    ),
    plants(
        "relative importlib upward",
        {"engine/session.py": 'import importlib\nimportlib.import_module(".api", "moot")\n'},
        "upward",
        "moot.engine.session",
    ),
    plants(
        "__import__ upward",
        {"models/base.py": '__import__("moot.report.markdown")\n'},
        "upward",
        "moot.models.base",
    ),
    plants(
        "lazy loader upward",
        {"models/base.py": LAZY + '(s,) = lazy.modules("moot.engine", "session")\n'},
        "upward",
        "moot.models.base",
        "moot.engine.session",
    ),
    plants(
        "a table names a module above",
        {"engine/session.py": '_LAZY = {"x": "moot.cli:main"}\n'},
        "upward",
        "moot.engine.session",
    ),
    plants("the root package from below", {"config.py": "import moot\n"}, "upward", "moot.config"),
    # one from each package the old deny-list did not check
    plants(
        "code imports the engine",
        {"code/git.py": "from moot.engine import session\n"},
        "upward",
        "moot.code.git",
    ),
    plants("api imports cli", {"api.py": "from moot import cli\n"}, "upward", "moot.api"),
    plants(
        "batch imports a face",
        {"batch/__init__.py": "from moot.display import board\n"},
        "upward",
        "moot.batch",
    ),
    plants(
        "a code session's end imports cli",
        {"lifecycle/code.py": "import moot.cli\n"},
        "upward",
        "moot.lifecycle.code",
    ),
    plants(
        "the lifecycle imports the library face",
        {"lifecycle/migrate.py": "from moot.api import replay\n"},
        "upward",
        "moot.lifecycle.migrate",
    ),
    plants(
        "a report imports the lifecycle",
        {"report/view.py": "from moot.lifecycle import plan\n"},
        "upward",
        "moot.report.view",
    ),
    plants(
        "the Ray executor imports a face",
        {"batch/ray.py": "from moot.cli import batch\n"},
        "upward",
        "moot.batch.ray",
    ),
    plants(
        "migrate imports cli",
        {"lifecycle/migrate.py": "from moot.cli import main\n"},
        "upward",
        "moot.lifecycle.migrate",
    ),
    plants(
        "bench imports the api",
        {"bench/stats.py": "from moot import api\n"},
        "upward",
        "moot.bench.stats",
    ),
    # sideways, and into protocols from the wrong side
    plants(
        "a protocol imports another",
        {"protocols/court/__init__.py": "from moot.protocols.arena import run\n"},
        "sideways",
        "moot.protocols.court",
    ),
    plants(
        "a protocol lazily imports another",
        {
            "protocols/court/__init__.py": LAZY
            + '(w,) = lazy.modules("moot.protocols.arena", "weigh")\n'
        },
        "sideways",
        "moot.protocols.court",
        "moot.protocols.arena.weigh",
    ),
    plants(
        "a protocol imports the registry",
        {"protocols/court/__init__.py": "from moot.protocols import BUILTIN\n"},
        "upward",
        "moot.protocols.court",
    ),
    plants(
        "a shared helper imports a protocol",
        {"protocols/shown.py": "from moot.protocols.court import x\n"},
        "upward",
        "moot.protocols.shown",
    ),
    plants(
        "faces import each other",
        {"display/board.py": "from moot.api import start\n"},
        "upward",
        "moot.display.board",
    ),
    # skipping floors the docs forbid
    plants(
        "a protocol imports a provider",
        {"protocols/arena/run.py": "from moot.models import openai_chat\n"},
        "banned",
        "moot.protocols.arena.run",
    ),
    plants(
        "a protocol imports git code",
        {"protocols/arena/weigh.py": "from moot.code import git\n"},
        "banned",
        "moot.protocols.arena.weigh",
    ),
    plants(
        "deliberation imports config",
        {"deliberation/claims.py": "from moot import config\n"},
        "reach",
        "moot.deliberation.claims",
    ),
    plants(
        "deliberation lazily imports the engine",
        {"deliberation/claims.py": LAZY + '(s,) = lazy.modules("moot.engine", "session")\n'},
        "reach",
        "moot.deliberation.claims",
        "moot.engine.session",
    ),
    # a module no floor knows
    plants(
        "a package with no floor",
        {"server/__init__.py": "", "server/app.py": "from moot import api\n"},
        "no floor",
        "moot.server.app",
    ),
    plants(
        "a loose protocols module",
        {"protocols/helpers.py": ""},
        "no floor",
        "moot.protocols.helpers",
    ),
    # loops
    plants(
        "a loop of two",
        {"bench/stats.py": "from moot.bench import runner\n"},
        "loop",
        "moot.bench.runner",
    ),
    plants(
        "a loop of three",
        {
            "engine/a.py": "from moot.engine import b\n",
            "engine/b.py": "from moot.engine import c\n",
            "engine/c.py": "def f():\n    from moot.engine import a\n",
        },
        "loop",
        "moot.engine.a",
    ),
    plants(
        "a loop under TYPE_CHECKING",
        {
            "engine/a.py": "from moot.engine import b\n",
            "engine/b.py": TYPE_CHECKING_ + "    from moot.engine.a import A\n",
        },
        "loop",
        "moot.engine.a",
    ),
    plants(
        "a loop through importlib",
        {
            "engine/a.py": "from moot.engine import b\n",
            "engine/b.py": 'import importlib\nimportlib.import_module("moot.engine.a")\n',
        },
        "loop",
        "moot.engine.a",
    ),
    plants(
        "a package and its module",
        {
            "engine/__init__.py": "from moot.engine import a\n",
            "engine/a.py": "from moot.engine import X\n",
        },
        "loop",
        "moot.engine",
    ),
    # a protocol's name outside its folder
    plants(
        "== on a protocol name", {"cli/batch.py": returns('p == "arena"')}, "name", "moot.cli.batch"
    ),
    plants(
        "in a tuple of names",
        {"lifecycle/plan.py": returns('p in (None, "court")')},
        "name",
        "moot.lifecycle.plan",
    ),
    plants(
        "a dict keyed by a protocol name",
        {"api.py": 'TITLES = {"court": "Court"}\n'},
        "name",
        "moot.api",
    ),
    plants("a subscript by a protocol name", {"api.py": returns('p["court"]')}, "name", "moot.api"),
    plants(
        ".get by a protocol name",
        {"report/markdown.py": returns('p.get("arena")')},
        "name",
        "moot.report.markdown",
    ),
    plants(
        "match/case on a protocol name",
        {"report/markdown.py": MATCH.format('"court"')},
        "name",
        "moot.report.markdown",
    ),
    plants(
        "case on one of several names",
        {"report/markdown.py": MATCH.format('"x" | "arena"')},
        "name",
        "moot.report.markdown",
    ),
    plants(
        "case in a mapping pattern",
        {"report/markdown.py": MATCH.format('{"arena": x}')},
        "name",
        "moot.report.markdown",
    ),
    plants(
        "startswith on a protocol name",
        {"display/board.py": returns('p.startswith("court/r1")')},
        "name",
        "moot.display.board",
    ),
    plants(
        "endswith on names",
        {"display/board.py": returns('p.endswith((":x", ":arena"))')},
        "name",
        "moot.display.board",
    ),
    plants(
        "a shared protocol helper names a protocol",
        {"protocols/definition.py": returns('"court" != p')},
        "name",
        "moot.protocols.definition",
    ),
    plants(
        "one protocol names another",
        {"protocols/court/__init__.py": returns('p == "arena"')},
        "name",
        "moot.protocols.court",
    ),
]


@pytest.mark.parametrize(("files", "kind", "module", "target"), PLANTED)
def test_each_planted_violation_is_reported(
    tmp_path: Path, files: dict[str, str], kind: str, module: str, target: str | None
) -> None:
    problems = check(plant(tmp_path, files))
    assert any(
        p.kind == kind and p.module == module and target in (None, p.target) for p in problems
    ), problems


def test_a_package_loop_is_reported_where_no_module_loops(tmp_path: Path) -> None:
    """batch -> engine.session and engine.lifecycle -> batch: no module loops, the packages do.
    With the upward import allowed, the package loop is still reported."""
    files = {"engine/lifecycle.py": "from moot import batch\n"}
    allowed = Allowed(imports=frozenset({("moot.engine.lifecycle", "moot.batch")}))
    problems = check(plant(tmp_path, files), allowed)
    assert [p.kind for p in problems] == ["package loop"], problems


def test_an_allowance_that_no_longer_matches_is_reported(tmp_path: Path) -> None:
    allowed = Allowed(
        imports=frozenset({("moot.engine.session", "moot.api")}),
        loops=frozenset({frozenset({"moot.bench.stats", "moot.bench.runner"})}),
        names=frozenset({("moot.api", "court")}),
    )
    problems = check(plant(tmp_path, {}), allowed)
    assert [p.kind for p in problems] == ["stale"] * 3, problems


def test_an_allowed_violation_passes_and_a_new_one_beside_it_fails(tmp_path: Path) -> None:
    files = {
        "batch/__init__.py": "from moot import api\nfrom moot.serve import app\n",
        "serve/__init__.py": "",
        "serve/app.py": "",
    }
    allowed = Allowed(imports=frozenset({("moot.batch", "moot.api")}))
    problems: list[Problem] = check(plant(tmp_path, files), allowed)
    assert [(p.kind, p.target) for p in problems] == [("upward", "moot.serve.app")], problems
