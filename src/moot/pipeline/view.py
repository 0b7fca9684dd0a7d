"""What the faces show of a pipeline session, through the definition's hooks: `moot status`
lists every task's state, attempts, commit and evidence counts (`status_lines`); the reports add
the plan, that table, each task's path through the states and the final diff
(`report_sections`).

Both read the journal: the plan is in the begin event's config (an execute session's
`pipeline.plan`), each transition is a `note` at `t<n>/state/<k>` holding the task's attempts,
commit and evidence counts so far (task.py `move`). A paused session (a task blocked: no
outcome details) shows as much as a finished one; a finished execute session's details add the
branch's cumulative patch, a finished plan session's the plan it drafted."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from msgspec import Struct, field

from moot.errors import FormatError
from moot.pipeline.document import PlanDoc, parse_plan, render_markdown
from moot.protocols.definition import ReportSection
from moot.report.code import fence, table_head
from moot.report.markdown import quoted
from moot.text import one_line
from moot.types import Event, EventKind

__all__ = ["TaskView", "report_sections", "status_lines", "task_views"]

_STATE_STEP = re.compile(r"^t(\d+)/state/(\d+)$")


class TaskView(Struct):
    """One task as the journal shows it so far."""

    id: str
    title: str
    state: str = "pending"
    attempts: int | None = 0
    commit: str = ""
    evidence: dict[str, int] | None = field(default_factory=dict)
    path: list[dict[str, str]] = field(default_factory=list)

    @property
    def counts(self) -> str:
        """'developer 3, gates 5, review 2'; '-' for a note journaled without counts."""
        if self.evidence is None:
            return "-"
        listed = (f"{kind.replace('_', ' ')} {n}" for kind, n in self.evidence.items())
        return ", ".join(listed) or "none"

    @property
    def reason(self) -> str:
        return self.path[-1]["why"] if self.state == "blocked" and self.path else ""


def _section(events: list[Event]) -> Mapping[str, Any]:
    """The session's `pipeline` config section, as its begin event recorded it."""
    if not events or events[0].kind != EventKind.BEGIN:
        return {}
    section = (events[0].data.get("config") or {}).get("pipeline")
    return section if isinstance(section, Mapping) else {}


def _executed_plan(events: list[Event]) -> PlanDoc | None:
    plan = _section(events).get("plan")
    if _section(events).get("phase") != "execute" or not isinstance(plan, str):
        return None
    try:
        return parse_plan(plan)
    except FormatError:
        return None


def task_views(events: list[Event]) -> list[TaskView]:
    """Every task of an execute session in the order it runs (t1, t2, ...), with its state
    transitions so far; [] for a plan session."""
    doc = _executed_plan(events)
    if doc is None:
        return []
    tasks = [TaskView(spec.id, spec.title) for spec in doc.order()]
    notes: dict[int, dict[int, Mapping[str, Any]]] = {}
    for event in events:
        found = _STATE_STEP.match(event.step or "") if event.kind == EventKind.NOTE else None
        if found:
            notes.setdefault(int(found.group(1)), {})[int(found.group(2))] = event.data
    for number, task in enumerate(tasks, 1):
        for _, data in sorted(notes.get(number, {}).items()):
            state = str(data.get("state", "?"))
            task.path.append({"from": task.state, "to": state, "why": str(data.get("why", ""))})
            task.state = state
            attempts, evidence = data.get("attempts"), data.get("evidence")
            task.attempts = attempts if isinstance(attempts, int) else None
            task.evidence = dict(evidence) if isinstance(evidence, Mapping) else None
            task.commit = str(data.get("commit") or "")
    return tasks


# A task's states (task.py's names, as journaled) in the words the views say them in.
STATE_WORDS = {
    "pending": "not started",
    "in_progress": "in progress",
    "coded": "change made",
    "auto_gated": "QA gates passed",
    "reviewed": "reviewed",
    "tested": "tested",
    "tournamented": "tournament played",
    "complete": "complete",
    "blocked": "blocked",
    "skipped": "skipped",
}


def worded(state: str) -> str:
    return STATE_WORDS.get(state, state.replace("_", " "))


def _attempts(task: TaskView) -> str:
    return "-" if task.attempts is None else str(task.attempts)


def status_lines(events: list[Event]) -> list[str]:
    """The tasks under `moot status`'s board: id, state, attempts, commit, title; then the
    evidence counts, and why a blocked task waits."""
    tasks = task_views(events)
    if not tasks:
        return []
    lines = [f"Tasks ({len(tasks)}):"]
    for task in tasks:
        commit = task.commit[:12] or "-"
        state = worded(task.state)
        lines.append(
            f"  {task.id:<6} {state:<15} attempts {_attempts(task):<3} commit {commit:<12}  "
            + one_line(task.title, 80)
        )
        lines.append(f"         evidence: {task.counts}")
        if task.reason:
            lines.append(f"         blocked: {one_line(task.reason, 300)}")
    return lines


def _cell(text: str, limit: int = 200) -> str:
    """Model text as one Markdown table cell: one line, no pipe ending the cell, no raw HTML."""
    flat = one_line(text, limit)
    return flat.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")


def _plan(details: Mapping[str, Any], events: list[Event]) -> PlanDoc | None:
    drafted = details.get("plan")
    if isinstance(drafted, Mapping):  # a plan session's
        try:
            return PlanDoc.model_validate(drafted)
        except ValueError:
            return None
    return _executed_plan(events)


def report_sections(details: Mapping[str, Any], events: list[Event]) -> list[ReportSection]:
    """The plan, the tasks' table, each task's path and the final diff, as Markdown whose model
    text is quoted, fenced or escaped (the HTML report renders it as untrusted Markdown)."""
    own = details.get("pipeline")
    own = own if isinstance(own, Mapping) else {}
    sections: list[ReportSection] = []
    doc = _plan(own, events)
    if doc is not None:
        sections.append(("Plan", quoted(render_markdown(doc))))
    tasks = task_views(events)
    if not tasks:
        return sections
    rows = table_head("Task", "Title", "State", "Attempts", "Commit", "Evidence")
    for task in tasks:
        commit = f"`{task.commit[:12]}`" if task.commit else "-"
        state = worded(task.state)
        rows.append(
            f"| {_cell(task.id)} | {_cell(task.title)} | {state} | {_attempts(task)} | "
            f"{commit} | {_cell(task.counts)} |"
        )
    sections.append(("Tasks", "\n".join(rows)))
    paths: list[str] = []
    for task in tasks:
        paths += [f"**{_cell(task.id)}: {_cell(task.title)}**", ""]
        steps = [
            f"1. {worded(p['from'])} → {worded(p['to'])}: {_cell(p['why'], 600)}" for p in task.path
        ]
        paths += [*(steps or ["- not started"]), ""]
    sections.append(("Task Paths", "\n".join(paths).rstrip()))
    final = own.get("final_diff")
    if isinstance(final, str) and final.strip():
        branch = own.get("branch")
        where = f"The branch {_cell(str(branch))} against your HEAD:\n\n" if branch else ""
        sections.append(("Final Diff", where + fence(final.rstrip(), "diff")))
    elif any(t.state == "blocked" for t in tasks):
        sections.append(
            ("Final Diff", "None yet: a task is blocked; `moot resume` continues the plan.")
        )
    return sections
