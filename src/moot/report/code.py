"""A code task's changes in the reports: per agent (or per candidate worktree, for refine's
implementation tournament) its status, diff stats (files, +/-), each verify command's result
(exit status and the tail of its output) and its patch, and which change was chosen.

Read from `result.details["code"]` (protocols/codework.py `rows`) and `details["winner"]`;
every text here is model output or shaped by it, so it is cleaned of control sequences here
and escaped (HTML) or fenced (Markdown) where it is shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from moot.text import clean_text
from moot.types import alias_label

__all__ = [
    "APPLIED_FILE",
    "Check",
    "CodeRow",
    "code_html",
    "code_markdown",
    "code_rows",
    "read_applied",
]

APPLIED_FILE = "applied.json"  # in the session folder, written by `moot apply`


def read_applied(folder: Path) -> str | None:
    """Whose change `moot apply` applied to the user's tree (None: not applied yet)."""
    try:
        data = json.loads((folder / APPLIED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    agent = data.get("agent") if isinstance(data, dict) else None
    return agent if isinstance(agent, str) else None


@dataclass(frozen=True)
class Check:
    command: str
    exit_code: int | None
    timed_out: bool
    tail: str
    cut: bool

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def status(self) -> str:
        if self.timed_out:
            return "timed out"
        return "passed" if self.exit_code == 0 else f"failed (exit code {self.exit_code})"


@dataclass(frozen=True)
class CodeRow:
    """One change: `name` is the worktree (an agent's alias, or a candidate like `b1`)."""

    name: str
    agent: str | None
    status: str
    problem: str
    files: int
    insertions: int
    deletions: int
    checks: tuple[Check, ...]
    patch: str
    chosen: bool
    applied: bool = False

    @property
    def marks(self) -> str:
        """'winner', 'applied', both or neither."""
        return ", ".join(m for m, on in (("winner", self.chosen), ("applied", self.applied)) if on)

    @property
    def title(self) -> str:
        own = "_" in self.name and self.name.rsplit("_", 1)[0].isalpha()
        if own or not self.agent:
            return alias_label(self.name)
        return f"Worktree {self.name} ({alias_label(self.agent)})"

    @property
    def stats(self) -> str:
        return f"{self.files} file(s), +{self.insertions} -{self.deletions}"

    @property
    def verified(self) -> str:
        if not self.checks:
            return "not verified"
        passed = sum(1 for c in self.checks if c.passed)
        return f"{passed}/{len(self.checks)} passed"


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def code_rows(details: Mapping[str, Any], applied: str | None = None) -> list[CodeRow]:
    """The changes a result records, the chosen one and the applied one marked (none for a
    question)."""
    rows = details.get("code")
    if not isinstance(rows, Mapping):
        return []
    winner = details.get("winner")
    found = []
    for name, row in rows.items():
        if not isinstance(row, Mapping):
            continue
        checks = tuple(
            Check(
                command=clean_text(str(c.get("command", ""))),
                exit_code=c.get("exit_code") if isinstance(c.get("exit_code"), int) else None,
                timed_out=bool(c.get("timed_out")),
                tail=clean_text(str(c.get("tail", ""))),
                cut=bool(c.get("cut")),
            )
            for c in row.get("checks") or []
            if isinstance(c, Mapping)
        )
        agent = row.get("agent")
        found.append(
            CodeRow(
                name=str(name),
                agent=str(agent) if isinstance(agent, str) else None,
                status=str(row.get("status", "?")),
                problem=clean_text(str(row.get("problem") or "")),
                files=_int(row.get("files")),
                insertions=_int(row.get("insertions")),
                deletions=_int(row.get("deletions")),
                checks=checks,
                patch=clean_text(str(row.get("patch") or "")),
                chosen=name == winner,
                applied=name == applied,
            )
        )
    return found


def _fence(text: str, info: str = "text") -> str:
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text.rstrip()}\n{ticks}"


def code_markdown(rows: list[CodeRow], session_id: str) -> list[str]:
    """The report.md section: a table of every change, then each one's checks and patch."""
    if not rows:
        return []
    lines = [
        "## Code Changes",
        "",
        "| Change | Status | Diff | Verification | Chosen |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        why = f" ({row.problem})" if row.problem else ""
        status = f"{row.status}{why}".replace("|", "\\|")
        marks = f"**{row.marks}**" if row.marks else ""
        lines.append(f"| {row.title} | {status} | {row.stats} | {row.verified} | {marks} |")
    lines.append("")
    winner = next((r for r in rows if r.chosen), None)
    if winner is not None:
        lines += [f"`moot apply {session_id}` applies {winner.title}'s change.", ""]
    else:
        lines += [f"No change was chosen: `moot apply {session_id} --agent NAME` applies one.", ""]
    for row in rows:
        lines += [f"### {row.title}{f' ({row.marks})' if row.marks else ''}", ""]
        for check in row.checks:
            cut = ", output cut to its tail" if check.cut else ""
            lines += [f"- `{check.command}`: {check.status}{cut}", ""]
            lines += [_fence(check.tail.strip() or "(no output)"), ""]
        lines += [_fence(row.patch or "(no change)", "diff"), ""]
    return lines


def code_html(rows: list[CodeRow], session_id: str) -> str:
    """The report.html section; every text escaped."""
    if not rows:
        return ""
    body = []
    for row in rows:
        why = f" ({row.problem})" if row.problem else ""
        body.append(
            f"<tr><td>{escape(row.title)}</td><td>{escape(row.status + why)}</td>"
            f"<td>{escape(row.stats)}</td><td>{escape(row.verified)}</td>"
            f"<td>{escape(row.marks)}</td></tr>"
        )
    table = (
        '<table class="agents"><thead><tr><th>Change</th><th>Status</th><th>Diff</th>'
        f"<th>Verification</th><th>Chosen</th></tr></thead><tbody>{''.join(body)}</tbody></table>"
    )
    chosen = next((r for r in rows if r.chosen), None)
    how = (
        f"<code>moot apply {escape(session_id)}</code> applies {escape(chosen.title)}'s change."
        if chosen is not None
        else f"No change was chosen: <code>moot apply {escape(session_id)} --agent NAME</code> "
        "applies one."
    )
    details = []
    for row in rows:
        checks = "".join(
            f"<p><code>{escape(c.command)}</code>: {escape(c.status)}"
            f"{', output cut to its tail' if c.cut else ''}</p>"
            f"<pre><code>{escape(c.tail.strip() or '(no output)')}</code></pre>"
            for c in row.checks
        )
        state = "ok" if row.status == "completed" else "failed"
        marks = f" ({row.marks})" if row.marks else ""
        details.append(
            f'<details class="turn position {state}"{" open" if row.chosen else ""}><summary>'
            f'<span class="who">{escape(row.title + marks)}</span> '
            f'<span class="meta">{escape(row.stats)}; verification {escape(row.verified)}'
            f"</span></summary>{checks}"
            f"<pre><code>{escape(row.patch or '(no change)')}</code></pre></details>"
        )
    return (
        f'<section class="card"><h2>Code changes</h2>{table}<p>{how}</p>{"".join(details)}'
        "</section>"
    )
