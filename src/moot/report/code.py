"""A code task's changes in the reports: per agent (or per candidate worktree, for refine's
implementation tournament) its status, diff stats (files, +/-), each verify command's result
(exit status and the tail of its output) and its patch, and which change was chosen.

The rows are typed by the result (`moot.engine.result.code_rows`, which reads what
protocols/codework.py `rows` recorded); every text here is model output or shaped by it, so it
is cleaned of control sequences there and escaped (HTML) or fenced (Markdown) where it is shown.
"""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

from moot.engine.result import Check, CodeRow, code_rows

__all__ = [
    "APPLIED_FILE",
    "Check",
    "CodeRow",
    "code_html",
    "code_markdown",
    "code_rows",
    "fence",
    "read_applied",
    "table_head",
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


_BACKTICKS = re.compile(r"`+")


def fence(text: str, info: str = "text") -> str:
    """Text shown verbatim in Markdown, in a fence longer than any run of backticks inside it
    (for every section of report.md: markdown.py imports this module)."""
    longest = max(map(len, _BACKTICKS.findall(text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def table_head(*columns: str) -> list[str]:
    """A Markdown table's header row and the rule under it."""
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]


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
            lines += [fence(check.tail.strip() or "(no output)"), ""]
        lines += [fence((row.patch or "(no change)").rstrip(), "diff"), ""]
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
