"""Mutation testing of the deliberation modules: how many mutants do their fast tests kill?

Run from the repository root (the `dev` extra installs mutmut):

    .venv/bin/python benchmarks/mutation.py                # every module in TARGETS
    .venv/bin/python benchmarks/mutation.py substance borda

For each module in TARGETS (a path under src/moot/ and the fast test files that pin it), mutmut
mutates that module alone and runs only those test files against each mutant, one module after
the other. It prints one line per module,

    substance.py: 212/230 killed (92.2%)

and writes the diff of every mutant that was not killed to a file (its path is printed last;
`--survivors PATH` chooses it). A module or test file that does not exist yet is skipped with a
note, so a module can be listed before it is written.

Never in the checkout: src/, tests/ and pyproject.toml are copied to a temporary folder (the
working tree as it is, or `--rev REV` from git), the mutmut section is added to that copy's
pyproject.toml, mutmut runs there (it writes its mutants/ beside them) and the folder is removed
at the end. Bounded: a mutant whose tests run longer than (their normal time + the
`--timeout-constant`) x the `--timeout-multiplier` is stopped and counts as killed (a mutant
that hangs the tests is found out); a whole module's run is stopped after `--module-timeout`
seconds. `--jobs` mutants run at once (1 by default: the machine is shared).

Counted: killed = the tests failed or timed out. Everything else is not killed: survived, not
reached by any of the module's tests ("no tests"), or "suspicious" (mutmut could not tell). A
mutant that cannot change behaviour (an equivalent mutant) may be excluded by a `# pragma: no
mutate` comment on its line, with a comment saying why; it is then not generated nor counted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Module (under src/moot/) -> the fast test files that pin it. Adding a module is one line.
TARGETS: dict[str, tuple[str, ...]] = {
    "deliberation/substance.py": ("tests/deliberation/test_substance.py",),
    "deliberation/echo.py": ("tests/deliberation/test_substance.py",),
    # the substance check's word lists and rules that moved out of substance.py
    "deliberation/directive.py": ("tests/deliberation/test_substance.py",),
    "deliberation/question.py": ("tests/deliberation/test_substance.py",),
    "deliberation/selftalk.py": ("tests/deliberation/test_substance.py",),
    "deliberation/swaps.py": (
        "tests/deliberation/test_claims.py",
        "tests/deliberation/test_named.py",
    ),
    "deliberation/borda.py": ("tests/deliberation/test_borda.py",),
    "deliberation/agreement.py": ("tests/deliberation/test_agreement.py",),
    "deliberation/answers.py": ("tests/deliberation/test_answers.py",),
    "deliberation/claims.py": ("tests/deliberation/test_claims.py",),
    "deliberation/finding.py": ("tests/deliberation/test_finding.py",),
}

# mutmut's exit code for a mutant -> what it means here (mutmut's own table, `mutmut.stats`)
KILLED = "killed"
TIMEOUT = "timeout"
STATUS = {
    1: KILLED,
    3: KILLED,  # pytest's internal error: the mutant broke the import or a fixture
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    37: "caught by type check",
    36: TIMEOUT,
    24: TIMEOUT,
    -24: TIMEOUT,  # SIGXCPU: over its CPU limit
    152: TIMEOUT,
    255: TIMEOUT,
}
DETECTED = {KILLED, TIMEOUT}


@dataclass(frozen=True)
class Score:
    module: str
    statuses: dict[str, str]  # mutant name -> status

    @property
    def killed(self) -> int:
        return sum(status in DETECTED for status in self.statuses.values())

    @property
    def total(self) -> int:
        return len(self.statuses)

    def line(self) -> str:
        name = Path(self.module).name
        percent = 100 * self.killed / self.total if self.total else 0.0
        line = f"{name}: {self.killed}/{self.total} killed ({percent:.1f}%)"
        others = Counter(s for s in self.statuses.values() if s not in (KILLED, "survived"))
        if others:
            line += " - " + ", ".join(f"{n} {status}" for status, n in sorted(others.items()))
        return line


def _copy_checkout(into: Path, rev: str | None) -> None:
    """src/, tests/ and pyproject.toml, from the working tree or from `rev`."""
    if rev is not None:
        archive = subprocess.run(
            ["git", "archive", rev, "src", "tests", "pyproject.toml"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
        return
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", ".mypy_cache", ".pytest_cache")
    for folder in ("src", "tests"):
        shutil.copytree(ROOT / folder, into / folder, ignore=junk)
    shutil.copy2(ROOT / "pyproject.toml", into / "pyproject.toml")


def _configure(work: Path, module: str, tests: tuple[str, ...], args: argparse.Namespace) -> None:
    pyproject = work / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    if any(line.strip() == "[tool.mutmut]" for line in text.splitlines()):
        raise SystemExit("pyproject.toml has its own [tool.mutmut]: this script writes that")
    section = {
        "source_paths": ["src"],
        "only_mutate": [f"src/moot/{module}"],
        "pytest_add_cli_args_test_selection": list(tests),
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-x", "-q"],
        "timeout_multiplier": args.timeout_multiplier,
        "timeout_constant": args.timeout_constant,
    }
    lines = [f"{key} = {json.dumps(value)}" for key, value in section.items()]
    pyproject.write_text(text + "\n[tool.mutmut]\n" + "\n".join(lines) + "\n", encoding="utf-8")


def _run_mutmut(work: Path, args: argparse.Namespace, log: Path) -> bool:
    """Run mutmut in `work`; False when the module's time ran out (the run is stopped)."""
    command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(args.jobs)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=work, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            process.wait(timeout=args.module_timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # mutmut and the mutants it forked
            process.wait()
            return False
    if process.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
        raise SystemExit(f"mutmut failed (exit {process.returncode}):\n{tail}")
    return True


def _statuses(work: Path, module: str) -> dict[str, str]:
    meta = work / "mutants" / "src" / "moot" / f"{module}.meta"
    if not meta.exists():
        return {}
    codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    return {
        name: "not checked" if code is None else STATUS.get(code, "suspicious")
        for name, code in sorted(codes.items())
    }


def _diff(work: Path, mutant: str) -> str:
    shown = subprocess.run(
        [sys.executable, "-m", "mutmut", "show", mutant],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return shown.stdout.strip() or shown.stderr.strip()


def _one(module: str, tests: tuple[str, ...], args: argparse.Namespace) -> tuple[Score, str]:
    work = Path(tempfile.mkdtemp(prefix="moot-mutation-"))
    try:
        _copy_checkout(work, args.rev)
        _configure(work, module, tests, args)
        finished = _run_mutmut(work, args, work / "mutmut.log")
        score = Score(module, _statuses(work, module))
        if not finished:
            print(f"  {module}: stopped after {args.module_timeout:.0f} s; counted as far as run")
        report = [
            f"## {module}: {name} ({status})\n\n{_diff(work, name)}\n"
            for name, status in score.statuses.items()
            if status not in DETECTED
        ]
        return score, "\n".join(report)
    finally:
        if args.keep:
            print(f"  kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _select(names: list[str]) -> dict[str, tuple[str, ...]]:
    if not names:
        return dict(TARGETS)
    chosen: dict[str, tuple[str, ...]] = {}
    for name in names:
        stem = Path(name).stem
        found = [m for m in TARGETS if Path(m).stem == stem or m == name]
        if not found:
            raise SystemExit(f"{name!r} is not in TARGETS: {', '.join(TARGETS)}")
        chosen.update((m, TARGETS[m]) for m in found)
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Mutation testing of the deliberation modules.")
    parser.add_argument("modules", nargs="*", help="module names or paths (default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once")
    parser.add_argument("--timeout-multiplier", type=float, default=5.0)
    parser.add_argument("--timeout-constant", type=float, default=5.0, help="seconds")
    parser.add_argument("--module-timeout", type=float, default=3600.0, help="seconds")
    parser.add_argument("--rev", help="mutate this git revision instead of the working tree")
    parser.add_argument(
        "--survivors",
        type=Path,
        default=Path(tempfile.gettempdir()) / "moot-mutation-survivors.txt",
        help="where the diffs of the mutants not killed go",
    )
    parser.add_argument("--fail-under", type=float, help="exit 1 if a module scores below")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copies")
    args = parser.parse_args(argv)

    scores: list[Score] = []
    reports: list[str] = []
    for module, tests in _select(args.modules).items():
        missing = [p for p in (f"src/moot/{module}", *tests) if not (ROOT / p).exists()]
        if missing:
            print(f"{Path(module).name}: skipped, {', '.join(missing)} does not exist yet")
            continue
        started = time.monotonic()
        score, report = _one(module, tests, args)
        scores.append(score)
        reports.append(report)
        print(f"{score.line()}  [{time.monotonic() - started:.0f} s]", flush=True)
    args.survivors.write_text("\n".join(r for r in reports if r), encoding="utf-8")
    print(f"survivors' diffs: {args.survivors}")
    if args.fail_under is not None and any(
        100 * s.killed < args.fail_under * s.total for s in scores
    ):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
