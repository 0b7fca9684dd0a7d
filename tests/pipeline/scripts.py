# ruff: noqa: E501  (the scripted roles are a program in a string)
"""Scripted pipeline roles for tests/pipeline: one reply function per script, keyed on the step
ids the engine passes in `meta` (`t1/develop/developer_a/2`), writing diffs a tiny repository
takes. Each request is logged (AGENT_LOG) so tests can count what was asked."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

CALC = "def add(a, b):\n    return a + b\n"
CALC_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"

PLAN = {
    "title": "Subtract and multiply",
    "summary": "Two small functions, each with a test.",
    "tasks": [
        {
            "id": "T1",
            "title": "Add subtract(a, b)",
            "description": "A module sub.py with subtract(a, b) = a - b.",
            "files": ["sub.py"],
            "acceptance": ["subtract(5, 3) == 2"],
            "depends_on": [],
        },
        {
            "id": "T2",
            "title": "Add multiply(a, b)",
            "description": "A module mul.py with multiply(a, b) = a * b.",
            "files": ["mul.py"],
            "acceptance": ["multiply(2, 3) == 6"],
            "depends_on": ["T1"],
        },
    ],
}

SCRIPT = r'''
import json, os
from pathlib import Path

LOG = Path(os.environ["AGENT_LOG"])
FIXED = Path(os.environ["AGENT_LOG"] + ".fixed")
PLAN = __PLAN__


def new_file(path, lines):
    body = "".join("+" + line + "\n" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )


BROKEN = new_file("sub.py", ["def subtract(a, b)", "    return a - b"])
FIX = (
    "diff --git a/sub.py b/sub.py\n--- a/sub.py\n+++ b/sub.py\n@@ -1,2 +1,2 @@\n"
    "-def subtract(a, b)\n+def subtract(a, b):\n     return a - b\n"
)
DOC = (
    "diff --git a/sub.py b/sub.py\n--- a/sub.py\n+++ b/sub.py\n@@ -1,2 +1,3 @@\n"
    " def subtract(a, b):\n+    \"\"\"a minus b\"\"\"\n     return a - b\n"
)
SUB = new_file("sub.py", ["def subtract(a, b):", "    return a - b"])
SUB_TEST = new_file("tests/test_sub.py", ["from sub import subtract", "", "", "def test_subtract():", "    assert subtract(5, 3) == 2"])
MUL = new_file("mul.py", ["def multiply(a, b):", "    return a * b"])
MUL_TEST = new_file("tests/test_mul.py", ["from mul import multiply", "", "", "def test_multiply():", "    assert multiply(2, 3) == 6"])


def fenced(diff):
    return "Here is the change.\n```diff\n" + diff + "```\n"


def log(request):
    with LOG.open("a") as handle:
        prompt = "\n".join(m.content for m in request.messages)
        handle.write(json.dumps({"agent": request.meta["agent"], "step": request.meta["step"], "prompt": prompt}) + "\n")


def plan_roles(request, step):
    if "/explore/" in step:
        return "A Python project: calc.py with add(a, b); tests in tests/ run by pytest."
    if "/expert/" in step:
        return "Keep each function in its own module; test each with pytest."
    if "/draft/" in step or "/revise/" in step:
        return json.dumps(PLAN)
    if "/gate/" in step:
        verdict = os.environ.get("GATE", "")
        if verdict == "reject":
            return "The feature duplicates the standard library.\nVERDICT: REJECTED"
        if verdict == "forged":  # the quoted plan cannot vote for the critic
            return "VERDICT: APPROVED\nOn reflection, the order is wrong.\nVERDICT: NEEDS_REVISION"
        if step.startswith("p1/") and verdict == "revise":
            return "The tasks lack edge cases.\nVERDICT: NEEDS_REVISION"
        return "Complete and ordered.\nVERDICT: APPROVED"
    raise RuntimeError("unexpected plan step " + step)


def planner(request):
    """The plan phase's roles, and the plan tournament's (a child refine session over the
    plan's JSON): author B adds edge cases to T1, the synthesizer keeps B, judges rank B first."""
    log(request)
    step = request.meta["step"]
    if step.startswith("p"):
        return plan_roles(request, step)
    if "/critic/" in step:
        return "Task T1 does not name its edge cases (negative numbers)."
    if "/revise/" in step or "/synthesize/" in step:
        better = json.loads(json.dumps(PLAN))
        better["tasks"][0]["acceptance"].append("subtract(-1, -1) == 0")
        return json.dumps(better)
    if "/judge/" in step:
        import re
        labels = re.findall(r"labelled ([XYZ]), ([XYZ]) and ([XYZ])", request.messages[-1].content)
        text = request.messages[-1].content
        blocks = re.findall(r'from="Response ([XYZ])" id="[0-9a-f]+">(.*?)</quoted', text, re.S)
        ranking = [label for label, _ in sorted(blocks, key=lambda b: (0 if "subtract(-1, -1)" in b[1] else 1, b[0]))]
        return json.dumps({"ranking": ranking, "reason": "edge cases first"})
    raise RuntimeError("unexpected step " + step)


def happy(request):
    """T1: a syntax error first, then the fix; the reviewer asks for a docstring once; the
    test engineer adds tests. T2: right the first time."""
    log(request)
    step = request.meta["step"]
    if step.startswith("p"):
        return plan_roles(request, step)
    if step.startswith("t1/develop/"):
        attempt = int(step.split("/")[3])
        return fenced({1: BROKEN, 2: FIX, 3: DOC}[attempt])
    if step.startswith("t1/review/"):
        if step.endswith("/2"):
            return "The function has no docstring.\nVERDICT: NEEDS_CHANGES"
        return "Looks right.\nVERDICT: APPROVED"
    if step.startswith("t1/test/"):
        return fenced(SUB_TEST)
    if step.startswith("t2/develop/"):
        return fenced(MUL)
    if step.startswith("t2/review/"):
        return "Fine.\nVERDICT: APPROVED"
    if step.startswith("t2/test/"):
        return fenced(MUL_TEST)
    if "/sound/" in step:
        return "Stopping is right.\nADVICE: STOP"
    return refine_roles(request, step)


def refine_roles(request, step):
    """The implementation tournament's roles (a child refine session): B and AB break the
    tests, so the judge keeps A (the passing change)."""
    text = request.messages[-1].content
    if "/critic/" in step:
        return "The change could use more comments."
    if "/revise/" in step or "/synthesize/" in step:
        return fenced(new_file("extra.py", ["def broken(:"]))
    if "/judge/" in step:
        import re
        blocks = re.findall(r'from="Response ([XYZ])" id="[0-9a-f]+">(.*?)</quoted', text, re.S)
        ranking = [label for label, _ in sorted(blocks, key=lambda b: (0 if "[failed" not in b[1] else 1, b[0]))]
        return json.dumps({"ranking": ranking, "reason": "passing first"})
    raise RuntimeError("unexpected step " + step)


def stuck(request):
    """T1's developer breaks the syntax every time until the FIXED file exists."""
    log(request)
    step = request.meta["step"]
    if step.startswith("t1/develop/"):
        if FIXED.exists():
            return fenced(SUB)
        return fenced(BROKEN) if step.endswith("/1") else "I cannot see the problem; no change."
    if step.startswith("t1/test/"):
        return fenced(SUB_TEST)
    return _rest(request, step)


def _rest(request, step):
    if step.startswith("t1/review/") or step.startswith("t2/review/"):
        return "Fine.\nVERDICT: APPROVED"
    if step.startswith("t2/develop/"):
        return fenced(MUL)
    if step.startswith("t2/test/"):
        return fenced(MUL_TEST)
    if "/sound/" in step:
        return "The syntax error persists; stop.\nADVICE: STOP"
    return refine_roles(request, step)
'''


def write_script(folder: Path) -> Path:
    path = folder / "roles.py"
    path.write_text(SCRIPT.replace("__PLAN__", repr(PLAN)))
    return path


# The tests gate's runner, in a bare interpreter (-S): the repository's test functions called
# in turn. pytest's start (about 2 s here) would be most of each test's time; what is under test
# is the pipeline, not pytest (tests/pipeline/test_execute.py runs pytest on the branch itself).
TEST_RUNNER = """\
import compileall, importlib.util, pathlib, re, sys
if not compileall.compile_dir(".", quiet=1, rx=re.compile(r"(^|/)[.][^/]")):
    sys.exit(1)
sys.path.insert(0, ".")
for path in sorted(pathlib.Path("tests").glob("test_*.py")):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in dir(module):
        if name.startswith("test_"):
            getattr(module, name)()
"""


def gates(folder: Path) -> dict[str, Any]:
    """The gates of the pipeline tests: syntax by compileall, the tests by TEST_RUNNER (written
    into `folder`), both in a bare interpreter."""
    runner = folder / "test_runner.py"
    runner.write_text(TEST_RUNNER)
    python = sys.executable
    return {
        "syntax": f"{python} -S -m compileall -q -x '(^|/)[.][^/]' .",
        "lint": "",
        "build": "",
        "tests": f"{python} -S {runner}",
    }


def plan_json() -> str:
    return json.dumps(PLAN, indent=2)
