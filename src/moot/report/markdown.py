"""`report.md` (seed 000 section 9) and `moot show`: the outcome first (moot's finding, the
claims per round, changes of mind, model verdicts as evidence), then every round's exchanges,
scores or votes, remaining disagreements, final solutions and usage. One renderer
for both: `full=True` gives every answer whole (report.md, `show --full`), `full=False` one
summary line per answer."""

from __future__ import annotations

import re

from moot.report.code import code_markdown, fence
from moot.report.view import SessionView, Turn, label, summarize
from moot.text import (
    ClaimsTable,
    change_line,
    claims_table,
    finding_line,
    round_title,
    rounds_words,
    verdict_line,
)
from moot.text.rounds import round_result
from moot.types import RoundSummary

__all__ = ["fence", "finding_markdown", "quoted", "render_markdown"]


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^( {0,3})(?=#{1,6}(?:[ \t]|$))")
_UNDERLINE = re.compile(r"^( {0,3})(?==+[ \t]*$|-+[ \t]*$)")
_TICKS = re.compile(r"(`+)")


def _defused(line: str) -> str:
    """One line of model text that cannot be the report's structure: a heading's `#` and a
    setext underline are escaped (shown as typed), and `<` outside code spans is an entity, so
    no raw HTML (a heading, a `<verdict>` block) renders."""
    line = _UNDERLINE.sub(r"\1\\", _HEADING.sub(r"\1\\", line))
    parts, out, i = _TICKS.split(line), [], 0
    while i < len(parts):
        part = parts[i]
        if part.startswith("`") and part in parts[i + 1 :]:  # a code span shows `<` as typed
            end = parts.index(part, i + 1)
            out += parts[i : end + 1]
            i = end + 1
            continue
        out.append(part if part.startswith("`") else part.replace("<", "&lt;"))
        i += 1
    return "".join(out)


def quoted(text: str) -> str:
    """Model text in report.md: a blockquote, each line defused outside fenced code, so nothing
    an agent writes renders as moot's own heading, verdict or label (issue 30)."""
    lines, fence_mark = [], ""
    for line in text.strip().splitlines() or ["(empty)"]:
        opened = _FENCE.match(line)
        if fence_mark:
            if (
                opened
                and opened.group(1)[0] == fence_mark[0]
                and len(opened.group(1)) >= len(fence_mark)
            ):
                fence_mark = ""
            lines.append(f"> {line}".rstrip())
        elif opened:
            fence_mark = opened.group(1)
            lines.append(f"> {line}".rstrip())
        else:
            lines.append(f"> {_defused(line)}".rstrip())
    return "\n".join(lines)


def _cell(text: str) -> str:
    """Text for a Markdown table cell: a pipe cannot end the cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|")


def finding_markdown(view: SessionView) -> list[str]:
    """moot's finding: the label and its reason, each agent's claim after every round, who
    changed their mind, and the model verdicts weighed as evidence."""
    finding = view.finding
    if finding is None:
        return []
    lines = ["## moot's Finding", "", f"**{finding_line(finding)}**", ""]
    if finding.label == "consensus" and finding.independent is not None:  # persuasion says it
        lines += [
            f"{finding.independent} of the {finding.started} agents held this answer in their "
            "first, independent answer.",
            "",
        ]
    table = claims_table(view.claims)
    if table.rows:
        moved = {(c.agent, c.round) for c in view.changes}
        lines += [
            "### Claims by Round",
            "",
            "| Agent | " + " | ".join(round_title("round", r) for r in table.rounds) + " |",
            "|---|" + "---|" * len(table.rounds),
        ]
        for agent, cells in table.rows:
            shown = []
            for r, claim in zip(table.rounds, cells, strict=True):
                text = _cell(table.cell(claim))
                if claim is not None and not claim.valid:
                    text = f"*{text}*"
                if (agent, r) in moved:
                    text += " (changed)"
                shown.append(text)
            lines.append(f"| {label(agent)} | " + " | ".join(shown) + " |")
        lines.append("")
    lines += _bullets("### Changes of Mind", [f"{change_line(c)}." for c in view.changes])
    lines += _bullets(
        "### Model Verdicts",
        [f"{verdict_line(v)}." for v in view.verdicts],
        intro="Weighed as evidence; moot's check decides.",
    )
    return lines


def _bullets(heading: str, items: list[str], intro: str = "") -> list[str]:
    """A section of one bullet an item, `intro` above them; nothing at all without items."""
    if not items:
        return []
    return [heading, "", *([intro, ""] if intro else []), *(f"- {item}" for item in items), ""]


def _cost(cost: float | None) -> str:
    return "unknown" if cost is None else f"{cost:.4f}"


def _turn(turn: Turn, full: bool) -> list[str]:
    tokens = f" ({turn.tokens:,} tokens)" if turn.kind == "answer" and turn.ok else ""
    if turn.cut:
        tokens += f" **[{turn.cut}]**"
    if not full:
        return [f"- **{turn.who}**{tokens}: {turn.summary}"]
    lines = [f"##### {turn.who}{tokens}", ""]
    if turn.kind == "command":
        status = "timed out" if turn.exit_code is None else f"exit code {turn.exit_code}"
        lines += [f"*{status}*", "", fence(turn.text), ""]
    elif not turn.ok:
        lines += [f"*Failed: {turn.failure}*", ""]
    else:
        lines += [f"*{_defused(turn.reading)}*", ""] if turn.reading else []
        lines += [fence(turn.text or "(empty)"), ""]
    return lines


def _tally_table(title: str, results: list[RoundSummary]) -> list[str]:
    keys: list[str] = []
    for r in results:
        keys += [k for k in r.votes if k not in keys]
    lines = [
        f"## {title}",
        "",
        # (a word is a heading, "Yes"; an id is kept as written, "d84c84aff245")
        "| Round | "
        + " | ".join(k.capitalize() if k.isalpha() else k for k in keys)
        + " | Needed |",
        "|---|" + "---|" * (len(keys) + 1),
    ]
    for r in results:
        cells = [f"{r.votes[k]:g}" if k in r.votes else "-" for k in keys]
        needed = "-" if r.needed is None else f"{r.needed:g}"
        lines.append(f"| {r.round} | " + " | ".join(cells) + f" | {needed} |")
    return [*lines, ""]


def _scores_table(view: SessionView) -> list[str]:
    results = view.results
    if not results:
        return []
    lines: list[str] = []
    rounds = [r for r in results if r.stage == "round"]
    if any(r.score is not None for r in rounds):
        method = any(r.method for r in rounds)  # a protocol with several ways to score
        lines += [
            "## Scores by Round",
            "",
            "| Round | Judge | Decision | Score |" + (" Measured by |" if method else ""),
            "|---|---|---|---|" + ("---|" if method else ""),
        ]
        for r in rounds:
            score = "-" if r.score is None else f"{r.score:g}/{r.scale}"
            lines.append(
                f"| {r.round} | {label(r.judge) if r.judge else '-'} | {r.decision or '-'} | "
                f"{score} |" + (f" {r.method or '-'} |" if method else "")
            )
        lines.append("")
    elif any(r.votes for r in rounds):
        lines += _tally_table("Votes by Round", rounds)
    judged = [r for r in results if r.stage == "judges" and r.votes]
    if judged:
        lines += _tally_table("Judge Votes by Round", judged)
    return lines


def render_markdown(view: SessionView, *, full: bool = True) -> str:
    lines = [
        f"# {view.protocol.capitalize()} Report",
        "",
        f"**Task:** {view.task}",
        "",
        f"**Status:** {view.status_text}: {view.how}",
        "",
        *([f"**How far to trust it:** {view.trust}", ""] if view.trust else []),
        f"**Rounds:** {rounds_words(view.rounds_done, view.max_rounds)}",
        "",
        f"**{view.decision[0]}:** {view.decision[1]}",
        "",
        "**Alias mapping:** "
        + ", ".join(f"{label(a)} = `{spec}`" for a, spec in view.aliases.items()),
        "",
    ]
    lines += finding_markdown(view)
    if view.final_answer and view.code:  # a patch: shown verbatim
        lines += ["## Final Answer", "", fence(view.final_answer), ""]
    elif view.final_answer:
        lines += ["## Final Answer", "", quoted(view.final_answer), ""]
    lines += code_markdown(view.code, view.session_id)
    for title, text in view.sections:  # the protocol's own, its model text already quoted
        lines += [f"## {title}", "", text, ""]
    if view.rounds:
        lines += ["## Rounds", ""]
        for round_ in view.rounds:
            lines += [f"### {round_.title}", ""]
            for phase in round_.phases:
                lines += [f"#### {phase.name.replace('_', ' ').capitalize()}", ""]
                for turn in phase.turns:
                    lines += _turn(turn, full)
                if not full:
                    lines.append("")
            if round_.result is not None:
                lines += [f"**{round_.title} result:** {round_result(round_.result)}", ""]
    lines += _scores_table(view)
    lines += _bullets(
        "## Remaining Disagreements",
        [" ".join(_defused(line) for line in item.splitlines()) for item in view.disagreements],
    )
    lines += _bullets(
        "## Agents Without a Valid Final Answer",
        [
            f"{label(c.agent)} ({round_title('round', c.round).lower()}): "
            + ClaimsTable.cell(c, 300)
            for c in view.without_answer
        ],
    )
    if view.positions:
        lines += ["## Final Solutions", ""]
        for alias, text in view.positions.items():
            lines += [f"### {label(alias)} (`{view.aliases.get(alias, 'unknown')}`)", ""]
            lines += [quoted(text if full else summarize(text)), ""]
    lines += [
        "## Usage",
        "",
        "| Agent | Model | Calls | Failures | Tokens | Cost (USD) |",
        "|---|---|---|---|---|---|",
    ]
    for agent in view.agents:
        approx = "~" if agent.tokens_estimated else ""
        lines.append(
            f"| {agent.label} | `{agent.model}` | {agent.calls} | {agent.failures} | "
            f"{approx}{agent.tokens:,} | {_cost(agent.cost)} |"
        )
    lines += ["", f"Total: {view.tokens:,} tokens, cost {_cost(view.cost)} USD.", ""]
    if view.journal_head:
        lines += [f"Computed from the journal: {view.journal_head}.", ""]
    lines += _bullets("## Notes from you", view.human_notes)
    lines += _bullets("## Warnings", view.warnings)
    if view.stop_message:
        lines += [f"> {view.stop_message}", ""]
    return "\n".join(lines)
