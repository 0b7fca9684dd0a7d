"""The layer checker behind tests/test_layers.py: floors, import loops and protocol names.

Every module under `moot/` sits on a floor (`FLOORS`: one line per package or root module, top
first, in the order of docs/architecture.md). A module may import its own package, and any other
package only on a lower floor: never up, never sideways onto its own floor (faces never import
each other; protocol folders never import each other). An import is every `import` and `from ...
import` (inside functions and under `TYPE_CHECKING` too), every `importlib.import_module("moot.x")`
or `__import__`, every module handed to moot's lazy loader (`lazy.modules("moot.x", "y")`), and
every string naming a moot module (`{"batch": "moot.cli_batch"}`, then imported by name).

Loops are found on the graph of imports (a string in a registry table is a reference: it keeps
to the floors, but a registry naming the plug-ins that import it is how plug-ins are found, not a
loop), both between modules and between the packages of `FLOORS`.

No code outside a protocol's folder tests for that protocol's name: `==`, `in`, a dict's key or
a subscript, `.get`, a `case`, `startswith`/`endswith`. The registry (`protocols/__init__.py`)
names each one once.

Each file is parsed once; `check` takes the `moot/` folder, so tests run it on planted trees.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Top first. A higher number may import a lower one; the same number is a sibling (no import).
# The order is docs/architecture.md's: faces (cli, integrations > serve > mcp; api, the
# library face; display) > batch, bench, pipeline > lifecycle (config -> plan -> session ->
# outcome, replay, a code session's end) > report > protocols > deliberation (pure) > engine >
# code > models > config > text > types > errors. Within the faces, cli composes the rest.
FLOORS: dict[str, int] = {
    # the faces: composition roots over the library
    "moot.__main__": 25,  # the console script: pauses the collector, then runs the CLI
    "moot": 24,  # moot/__init__ only: `import moot`, naming the library face lazily
    "moot.cli": 23,  # the composition root: parses, calls the library, maps exit codes
    "moot.integrations": 23,  # MCP server, inline delegation, plugins, llm plugin
    "moot.serve": 22,  # `moot serve`: the local web view; its runs are the MCP server's
    "moot.mcp": 21,  # `moot mcp`: the MCP server, a face over the lifecycle (cli starts it)
    "moot.api": 20,  # the library face: start, resume, replay
    "moot.display": 19,  # the live view; faces never import each other
    # many sessions: below the faces, above one run
    "moot.pipeline": 18,  # seed 004: plan, tasks, gates, roles, lessons
    "moot.bench": 18,  # suites and statistics
    "moot.batch": 16,  # many sessions, locally or as Ray tasks
    # one run, from its config to its result and reports
    "moot.lifecycle": 15,  # plan, projection, start/resume/replay, migrate, a code session's end
    "moot.report": 14,  # Markdown and HTML reports of a session folder
    # the protocols: the registry names each folder; folders share only the helpers below them
    "moot.protocols": 13,  # protocols/__init__.py, the registry
    # (every protocols/<name>/ folder: PROTOCOL_FLOOR, 12)
    # (the shared protocol helpers, PROTOCOL_HELPERS: 11)
    "moot.deliberation": 10,  # pure functions usable above the engine (REACH below)
    "moot.engine": 9,  # the session, journal, result: no protocol, no face
    "moot.code": 8,  # git worktrees, patches and verify runs for code tasks
    "moot.models": 7,  # providers never import the engine, protocols or faces
    "moot.config": 6,  # the run config and the user config: Structs, read with every problem
    "moot.text": 5,  # wording shared by every face; terminal-safe text
    "moot.types": 4,  # the data every layer shares
    "moot.errors": 3,  # the exception tree: imports nothing of moot
    "moot.plugins": 3,  # entry-point plugins: found and told their kind, importing nothing of moot
    "moot.version": 3,
    "moot.lazy": 3,
    "moot.collector": 3,  # start-up without the garbage collector: the standard library only
    "moot.files": 3,  # atomic file writes
}
PROTOCOL_FLOOR = 12
# Modules of protocols/ that every protocol folder may share; one unit on one floor.
PROTOCOL_HELPERS = (
    "answered",
    "codework",
    "definition",
    "scripting",
    "shown",
    "substantive",
    "synthesis",
)
HELPERS_FLOOR = 11
HELPERS_UNIT = "moot.protocols.{" + ",".join(PROTOCOL_HELPERS) + "}"
# A unit that may import only up to a floor below its own.
REACH: dict[str, int] = {
    # deliberation is pure: shared data and text only, nothing with effects
    "moot.deliberation": FLOORS["moot.text"],
}
# Floors a unit must not reach even though they are lower: (unit prefix, target prefixes).
BANNED: dict[str, tuple[str, ...]] = {
    # protocols reach the world only through the Session: no provider, no git
    "moot.protocols": ("moot.models", "moot.code"),
}
# Modules under a banned prefix that are plain data a Session hands back (read, never run).
DATA: frozenset[str] = frozenset({"moot.code.changes"})
PREFIX_METHODS = {"startswith", "endswith", "removeprefix", "removesuffix"}
KEY_METHODS = {"get", "pop", "setdefault"}
_MODULE_STRING = re.compile(r"moot(\.\w+)+")
# Entry-point groups whose names happen to be module names too: in the plugin loader (only
# there) such a string names a group to read, not a module to import.
ENTRY_POINT_GROUPS: dict[str, frozenset[str]] = {
    "moot.plugins": frozenset({"moot.plugins", "moot.protocols", "moot.gates"}),
}


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    how: str  # "import", "importlib", "lazy" or "names"


@dataclass(frozen=True)
class Problem:
    kind: str  # "no floor", "upward", "sideways", "reach", "banned", "loop", "package loop",
    # "name", "stale"
    module: str
    line: int
    text: str
    target: str = ""  # the module imported, or the protocol name tested for

    def __str__(self) -> str:
        return f"{self.kind}: {self.module}:{self.line} {self.text}"


@dataclass(frozen=True)
class Allowed:
    """Today's known violations: each must still occur (a fixed one is struck off)."""

    imports: frozenset[tuple[str, str]] = frozenset()  # (importing module, imported module)
    loops: frozenset[frozenset[str]] = frozenset()  # the modules (or packages) of each loop
    names: frozenset[tuple[str, str]] = frozenset()  # (module or package, protocol name)


@dataclass
class Tree:
    """The parsed `moot/` folder."""

    root: Path
    modules: dict[str, list[ast.AST]] = field(default_factory=dict)  # each one's nodes
    packages: set[str] = field(default_factory=set)
    protocols: tuple[str, ...] = ()

    @classmethod
    def load(cls, root: Path) -> Tree:
        tree = cls(root)
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root.parent).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
                tree.packages.add(".".join(parts))
            body = ast.parse(path.read_text(encoding="utf-8"))
            tree.modules[".".join(parts)] = list(ast.walk(body))  # the one walk of each file
        folder = root / "protocols"
        if folder.is_dir():
            tree.protocols = tuple(
                sorted(p.name for p in folder.iterdir() if (p / "__init__.py").is_file())
            )
        return tree

    def resolve(self, name: str) -> str | None:
        """The moot module that importing `name` runs last: its longest module prefix."""
        parts = name.split(".")
        while parts:
            if ".".join(parts) in self.modules:
                return ".".join(parts)
            parts.pop()
        return None

    def unit(self, module: str) -> str | None:
        """The package (a key of FLOORS, a protocol folder or the helpers) a module is in."""
        parts = module.split(".")
        if parts[:2] == ["moot", "protocols"] and len(parts) > 2:
            if parts[2] in self.protocols:
                return ".".join(parts[:3])
            return HELPERS_UNIT if parts[2] in PROTOCOL_HELPERS and len(parts) == 3 else None
        if module == "moot":
            return module
        for end in range(len(parts), 1, -1):
            if ".".join(parts[:end]) in FLOORS:
                return ".".join(parts[:end])
        return None

    def floor(self, unit: str) -> int:
        if unit == HELPERS_UNIT:
            return HELPERS_FLOOR
        if unit.startswith("moot.protocols."):
            return PROTOCOL_FLOOR
        return FLOORS[unit]


def _own_package(tree: Tree, module: str) -> list[str]:
    parts = module.split(".")
    return parts if module in tree.packages else parts[:-1]


def _imports_of(tree: Tree, module: str, nodes: Sequence[ast.AST]) -> Iterator[Import]:
    used: set[int] = set()  # string constants read as part of an import call
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, node.lineno, "import")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: against this module's package
                package = _own_package(tree, module)
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, base]) if base else ".".join(package)
            for alias in node.names:  # `from moot import protocols` imports moot.protocols
                full = f"{base}.{alias.name}"
                yield Import(module, full if full in tree.modules else base, node.lineno, "import")
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            args = [a for a in node.args if isinstance(a, ast.Constant | ast.JoinedStr)]
            strings = [_head(a) for a in args]
            if args[:1] != node.args[:1] or not strings[0]:
                continue
            if name in ("import_module", "__import__"):
                used.update(id(a) for a in args[:2])
                target = strings[0]
                if target.startswith(".") and len(strings) > 1:  # import_module(".x", "moot.y")
                    target = strings[1] + target
                yield Import(module, target, node.lineno, "importlib")
            elif name == "modules":  # moot.lazy.modules(package, *names)
                used.update(id(a) for a in args)
                for sub in strings[1:]:
                    yield Import(module, f"{strings[0]}.{sub}", node.lineno, "lazy")
    for node in nodes:
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in used
            and node.value not in ENTRY_POINT_GROUPS.get(module, frozenset())
            and _MODULE_STRING.fullmatch(node.value.split(":")[0])
            and node.value.split(":")[0] in tree.modules
        ):
            yield Import(module, node.value.split(":")[0], node.lineno, "names")


def _head(node: ast.expr) -> str:
    """A string constant, or the constant start of an f-string up to its last dot
    (f"moot.protocols.{name}" names moot.protocols: at least that much is imported)."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else ""
    first = node.values[0] if isinstance(node, ast.JoinedStr) and node.values else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value.rpartition(".")[0]
    return ""


def imports(tree: Tree) -> list[Import]:
    """Every import of a moot module by a moot module, resolved to the module it runs."""
    found = []
    for module, nodes in tree.modules.items():
        for imp in _imports_of(tree, module, nodes):
            if imp.target != "moot" and not imp.target.startswith("moot."):
                continue
            target = tree.resolve(imp.target)
            if target is not None and target != module:
                found.append(Import(imp.source, target, imp.line, imp.how))
    return found


def _rank_problems(tree: Tree, found: Sequence[Import]) -> Iterator[Problem]:
    seen: set[tuple[str, str]] = set()
    for imp in found:
        source, target = tree.unit(imp.source), tree.unit(imp.target)
        if source is None or target is None or source == target:
            continue
        if (imp.source, imp.target) in seen:
            continue
        seen.add((imp.source, imp.target))
        low, high = tree.floor(target), tree.floor(source)
        verb = {"import": "imports", "importlib": "imports (importlib)"}.get(
            imp.how, f"imports ({imp.how})"
        )
        where = f"{verb} {imp.target}"
        if low > high:
            yield Problem(
                "upward",
                imp.source,
                imp.line,
                f"{where}: {target} (floor {low}) is above {source} (floor {high})",
                imp.target,
            )
        elif low == high:
            yield Problem(
                "sideways",
                imp.source,
                imp.line,
                f"{where}: {target} and {source} are siblings on floor {low}",
                imp.target,
            )
        elif source in REACH and low > REACH[source]:
            limit = f"{where}: {source} imports floors <= {REACH[source]}"
            yield Problem("reach", imp.source, imp.line, limit, imp.target)
        else:
            for prefix, bans in BANNED.items():
                if (
                    _under(imp.source, prefix)
                    and any(_under(imp.target, b) for b in bans)
                    and imp.target not in DATA
                ):
                    yield Problem(
                        "banned", imp.source, imp.line, f"{where}: {prefix} never does", imp.target
                    )


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Each loop of `graph` (its strongly connected parts of two or more), as one path around."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    parts: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:  # Tarjan's, without recursion
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.add(member)
                    if member == node:
                        break
                if len(part) > 1:
                    parts.append(part)
    return [_path_around(graph, part) for part in parts]


def _path_around(graph: Mapping[str, set[str]], part: set[str]) -> list[str]:
    """The shortest way from the part's first member back to itself, inside the part."""
    start = min(part)
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        ahead = []
        for node in frontier:
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if nxt in part and nxt not in came:
                    came[nxt] = node
                    ahead.append(nxt)
        frontier = ahead
    return sorted(part)  # unreachable: a strongly connected part has a way around


def graph(tree: Tree, found: Sequence[Import], *, packages: bool) -> dict[str, set[str]]:
    """Who imports whom: modules, or the packages of FLOORS. A string naming a module is no
    edge here (a registry names the plug-ins that import it)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in found:
        if imp.how == "names":
            continue
        if not packages:
            edges[imp.source].add(imp.target)
            continue
        source, target = tree.unit(imp.source), tree.unit(imp.target)
        if source and target and source != target:
            edges[source].add(target)
    return edges


def _loop_problems(tree: Tree, found: Sequence[Import], allowed: Allowed) -> Iterator[Problem]:
    lines: dict[tuple[str, str], int] = {}
    for imp in found:
        lines.setdefault((imp.source, imp.target), imp.line)
    for kind, packages in (("loop", False), ("package loop", True)):
        for path in cycles(graph(tree, found, packages=packages)):
            if frozenset(path) in allowed.loops:
                continue
            line = lines.get((path[0], path[1]), 0)
            yield Problem(kind, path[0], line, " -> ".join(path))


def _constant_names(node: ast.AST | None, names: Sequence[str]) -> Iterator[str]:
    """Protocol names `node` is, or holds as a tuple, list or set member."""
    members = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    for member in members:
        if isinstance(member, ast.Constant) and isinstance(member.value, str):
            if member.value in names:
                yield member.value


def _prefix_names(node: ast.AST, names: Sequence[str]) -> Iterator[str]:
    """Protocol names a `startswith`-like argument begins or ends with as a word: "court",
    "court/r1", ":court"."""
    members = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    for member in members:
        if isinstance(member, ast.Constant) and isinstance(member.value, str):
            words = re.findall(r"[A-Za-z_]+", member.value)
            ends = {words[0], words[-1]} if words else set()
            yield from sorted(ends & set(names))


def name_tests(nodes: Sequence[ast.AST], names: Sequence[str]) -> Iterator[tuple[int, str, str]]:
    """(line, protocol name, how) for each test of or key on a protocol's name in `nodes`."""
    for node in nodes:
        if isinstance(node, ast.Compare):  # `x == "court"`, `x in (None, "refine")`
            for side in (node.left, *node.comparators):
                for name in _constant_names(side, names):
                    yield node.lineno, name, "compares with"
        elif isinstance(node, ast.Subscript):
            for name in _constant_names(node.slice, names):
                yield node.lineno, name, "subscripts with"
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                for name in _constant_names(key, names):
                    yield getattr(key, "lineno", node.lineno), name, "keys a dict with"
        elif isinstance(node, ast.MatchValue):
            for name in _constant_names(node.value, names):
                yield node.lineno, name, "matches a case on"
        elif isinstance(node, ast.MatchMapping):
            for key in node.keys:
                for name in _constant_names(key, names):
                    yield node.lineno, name, "matches a mapping key on"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr in PREFIX_METHODS:
                for name in _prefix_names(node.args[0], names):
                    yield node.lineno, name, f"tests {node.func.attr} with"
            elif node.func.attr in KEY_METHODS:
                for name in _constant_names(node.args[0], names):
                    yield node.lineno, name, f"looks up (.{node.func.attr}) with"


def names_outside(tree: Tree) -> list[Problem]:
    """Each test for a protocol's name outside its folder and the registry."""
    found = []
    for module, nodes in tree.modules.items():
        if module == "moot.protocols":  # the registry: one line per protocol
            continue
        for line, name, how in name_tests(nodes, tree.protocols):
            if not _under(module, f"moot.protocols.{name}"):
                text = f'{how} "{name}", a protocol\'s name'
                found.append(Problem("name", module, line, text, name))
    return found


def check(root: Path | Tree, allowed: Allowed = Allowed()) -> list[Problem]:
    """Every problem with the layers of the `moot/` folder `root`; none means it keeps them."""
    tree = root if isinstance(root, Tree) else Tree.load(root)
    found = imports(tree)
    problems = [
        Problem("no floor", module, 0, "has no floor: add its package to FLOORS")
        for module in tree.modules
        if tree.unit(module) is None
    ]
    ranked = list(_rank_problems(tree, found))
    problems += [p for p in ranked if (p.module, p.target) not in allowed.imports]
    problems += _loop_problems(tree, found, allowed)
    named = names_outside(tree)
    problems += [
        p for p in named if not any(_under(p.module, m) and p.target == n for m, n in allowed.names)
    ]
    problems += _stale(tree, found, ranked, named, allowed)
    return problems


def _stale(
    tree: Tree,
    found: Sequence[Import],
    ranked: Sequence[Problem],
    named: Sequence[Problem],
    allowed: Allowed,
) -> Iterator[Problem]:
    """Allowances that no longer match a violation: strike them off."""
    broken = {(p.module, p.target) for p in ranked}
    for source, target in sorted(allowed.imports - broken):
        yield Problem("stale", source, 0, f"no longer breaks a rule importing {target}")
    loops = {
        frozenset(path)
        for packages in (False, True)
        for path in cycles(graph(tree, found, packages=packages))
    }
    for loop in sorted(allowed.loops - loops, key=sorted):
        yield Problem("stale", min(loop), 0, f"loop {sorted(loop)} is gone")
    for module, name in sorted(allowed.names):
        if not any(_under(p.module, module) and p.target == name for p in named):
            yield Problem("stale", module, 0, f'no longer tests for "{name}"')
