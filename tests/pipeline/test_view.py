"""What `moot status` and the reports show of a pipeline session (issue 22): every task's state,
attempts, commit and evidence counts, the plan, each task's path through the states and the
branch's final diff; for a finished run and for one paused by a blocked task (no outcome
details: all of it from the journal). The runs are test_execute.py's scripted ones."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from moot import api
from moot.pipeline.view import report_sections, status_lines
from moot.types import Event, EventKind
from tests.cli.test_cli import moot
from tests.code import test_code_tasks as base
from tests.pipeline import scripts
from tests.pipeline.test_execute import config
from tests.scripts import no_sleep

# model text in the plan that must never become the report's HTML or Markdown structure
PLAN: dict[str, Any] = copy.deepcopy(scripts.PLAN)
PLAN["summary"] = "Two small functions. <script>alert('plan')</script>\n# Not a heading"
PLAN["tasks"][1]["title"] = "Add multiply(a, b) | <img src=x onerror=alert(1)>"


def sections(markdown: str) -> dict[str, str]:
    """report.md's `## ` sections by title."""
    parts = re.split(r"^## ", markdown, flags=re.MULTILINE)[1:]
    return {part.split("\n", 1)[0]: part.split("\n", 1)[1].strip("\n") for part in parts}


def task_lines(out: str) -> dict[str, list[str]]:
    """`moot status`'s task lines: id -> [its row, its evidence line, (why it is blocked)]."""
    found: dict[str, list[str]] = {}
    current = ""
    for line in out.splitlines():
        row = re.match(r"^  (T\d+) ", line)
        if row:
            current = row.group(1)
            found[current] = [line.split(None, 1)[1]]
        elif current and line.startswith("         "):
            found[current].append(line.strip())
    return found


def test_a_finished_run_shows_its_tasks_plan_paths_and_final_diff(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = config(tmp_path, repo, "happy", plan=json.dumps(PLAN))
    run = api.start("Add subtract and multiply", cfg, sleep=no_sleep)
    assert run.exit_code == 0, run.message
    capsys.readouterr()
    details = run.result.details["pipeline"]
    branch = details["branch"]
    sha = {t["id"]: t["commit"][:12] for t in details["tasks"]}

    code, out, _ = moot(capsys, "status", run.session_id)
    assert code == 0
    tasks = task_lines(out)
    assert re.match(rf"complete +attempts 3 +commit {sha['T1']}  Add subtract", tasks["T1"][0])
    assert tasks["T1"][1] == "evidence: developer 3, gates 4, review 2, test 1"
    assert re.match(rf"complete +attempts 1 +commit {sha['T2']}  Add multiply", tasks["T2"][0])
    assert tasks["T2"][1] == "evidence: developer 1, gates 2, review 1, test 1"

    report = sections((run.folder / "report.md").read_text())
    plan = report["Plan"]
    assert "> \\# Subtract and multiply" in plan  # quoted: the plan's heading is not the report's
    assert "&lt;script>alert('plan')" in plan and "<script>" not in plan
    table = report["Tasks"].splitlines()
    assert table[0] == "| Task | Title | State | Attempts | Commit | Evidence |"
    assert f"| T1 | Add subtract(a, b) | complete | 3 | `{sha['T1']}` |" in table[2]
    assert "Add multiply(a, b) \\|" in table[3]  # the title's pipe does not end its cell
    paths = report["Task Paths"]
    t1 = paths.split("**T2")[0]
    assert "1. not started → in progress: developer assigned" in t1
    assert "1. change made → in progress: QA gate syntax failed" in t1
    assert "1. QA gates passed → in progress: the reviewer asked for changes" in t1
    assert f"1. tournament played → complete: committed {sha['T1']} on {branch}" in t1
    final = report["Final Diff"]
    patch = (run.folder / "final.patch").read_text()
    assert patch == details["final_diff"] and patch.rstrip() in final
    # the final diff is the branch's cumulative change: both tasks, tests included
    in_patch = sorted(re.findall(r"^\+\+\+ b/(\S+)$", patch, re.MULTILINE))
    on_branch = sorted(base.sh(repo, "diff", "--name-only", f"main..{branch}").split())
    assert in_patch == on_branch == ["mul.py", "sub.py", "tests/test_mul.py", "tests/test_sub.py"]
    assert '+    """a minus b"""' in final

    html = (run.folder / "report.html").read_text()
    assert "<h2>Plan</h2>" in html and "<h2>Task Paths</h2>" in html
    assert "<h2>Final Diff</h2>" in html and "+def multiply(a, b):" in html
    assert "&lt;script&gt;alert(&#x27;plan&#x27;)" in html or "&lt;script&gt;alert('plan')" in html
    assert "<script>" not in html and "<img" not in html
    assert "Not a heading</h" not in html  # the plan's `#` line is text, not a heading


def test_a_paused_run_shows_the_blocked_tasks_then_the_resumed_ones(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = api.start(
        "Add subtract and multiply",
        config(tmp_path, repo, "stuck", qa_retry_limit=1),
        sleep=no_sleep,
    )
    assert run.exit_code == 3, run.message  # paused: result.json holds no details
    capsys.readouterr()
    code, out, _ = moot(capsys, "status", run.session_id)
    assert code == 0
    tasks = task_lines(out)
    assert re.match(r"blocked +attempts 2 +commit - +Add subtract", tasks["T1"][0])
    assert tasks["T1"][1] == "evidence: developer 2, gates 2, sounding board 1"
    for kind, count in (("developer", 2), ("gates", 2), ("sounding_board", 1)):  # as written
        assert len(json.loads((run.folder / f"evidence/T1-{kind}.json").read_text())) == count
    assert tasks["T1"][2].startswith("blocked: retries exhausted (1 after the first try)")
    assert re.match(r"blocked +attempts 0 +commit - +Add multiply", tasks["T2"][0])
    assert tasks["T2"][1:] == ["evidence: none", "blocked: depends on T1 (blocked)"]

    code, shown, _ = moot(capsys, "show", run.session_id)
    report = sections(shown)
    assert "Subtract and multiply" in report["Plan"]
    assert "| T1 | Add subtract(a, b) | blocked | 2 | - |" in report["Tasks"]
    assert "1. change made → in progress: QA gate syntax failed" in report["Task Paths"]
    assert report["Final Diff"].startswith("None yet: a task is blocked")
    # roles by name, states in words: no alias or state as the code spells it
    assert "Sounding board A = " in shown and "Test engineer A = " in shown
    for raw in ("sounding_board_a", "test_engineer_a", "in_progress", "sounding_board 1"):
        assert raw not in shown, raw

    (tmp_path / "agents.log.fixed").write_text("")  # the user fixes the cause
    again = api.resume(run.session_id, sleep=no_sleep)
    assert again.exit_code == 0, again.message
    capsys.readouterr()
    code, out, _ = moot(capsys, "status", run.session_id)
    tasks = task_lines(out)
    assert [tasks[t][0].split()[0] for t in ("T1", "T2")] == ["complete", "complete"]
    report = sections((run.folder / "report.md").read_text())
    assert "1. blocked → in progress: moot resume: a new attempt" in report["Task Paths"]
    final = report["Final Diff"]
    assert "+def subtract(a, b):" in final and "+def multiply(a, b):" in final


def _note(n: int, k: int, **data: object) -> Event:
    return Event(kind=EventKind.NOTE, step=f"t{n}/state/{k}", data=data)


def test_status_reads_notes_journaled_without_counts() -> None:
    """A transition journaled before the notes held counts shows '-', not a made-up zero."""
    begin = Event(
        kind=EventKind.BEGIN,
        data={"config": {"pipeline": {"phase": "execute", "plan": scripts.plan_json()}}},
    )
    events = [begin, _note(1, 1, task="T1", state="in_progress", why="developer assigned")]
    lines = status_lines(events)
    assert lines[0] == "Tasks (2):"
    assert re.match(r"  T1 +in progress +attempts - +commit - ", lines[1])
    assert lines[2].strip() == "evidence: -"
    assert re.match(r"  T2 +not started +attempts 0 ", lines[3])
    assert status_lines([Event(kind=EventKind.BEGIN, data={"config": {}})]) == []


def test_a_plan_session_reports_the_plan_it_drafted_and_no_tasks() -> None:
    begin = Event(kind=EventKind.BEGIN, data={"config": {"pipeline": {"phase": "plan"}}})
    details = {"pipeline": {"phase": "plan", "gates": [], "plan": PLAN}}
    shown = report_sections(details, [begin])
    assert [title for title, _ in shown] == ["Plan"]
    assert "> \\## T2: Add multiply(a, b) | &lt;img" in shown[0][1]
    assert report_sections({}, [begin]) == [] and status_lines([begin]) == []
