"""What the faces show of a protocol whose agents answer and one more member writes the final
answer from their answers (council's chairman, moa's aggregator): Markdown for the reports
(each answer's text, the writer's section) and the writer's line of a `--dry-run` projection."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from moot.config import AgentConfig, RunConfig
from moot.protocols.definition import Projected, ReportSection
from moot.text import one_line
from moot.types import alias_for, alias_label

__all__ = ["agents", "answer_texts", "cell", "fenced", "writer", "writer_section"]

_TICKS = re.compile(r"`{3,}")


def fenced(text: str) -> str:
    """Model text as a fenced block no line of it can close (it renders as text, never as
    the report's own structure)."""
    longest = max((len(m) for m in _TICKS.findall(text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}text\n{text.strip() or '(empty)'}\n{fence}"


def cell(text: str, limit: int = 300) -> str:
    """Model text as one Markdown table cell or inline note: one line, no pipe ending the
    cell, no raw HTML."""
    flat = one_line(text, limit)
    return flat.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")


def answer_texts(rows: Sequence[Mapping[str, Any]], limit: int = 300) -> str:
    """Each answer row's agent (with its status and problem, cut at `limit`, when it is not
    valid) and its text, fenced."""
    lines: list[str] = []
    for row in rows:
        state = ""
        if row["status"] != "valid":
            state = f" ({row['status']}: {cell(row['problem'], limit)})"
        lines += [f"**{alias_label(row['agent'])}**{state}", ""]
        if row.get("text"):
            lines += [fenced(row["text"]), ""]
    return "\n".join(lines).rstrip()


def writer_section(
    title: str, row: Mapping[str, Any], role: str, alias: str, *, text_under: str | None = None
) -> ReportSection:
    """The final writer's section: who wrote (`role` when it is the writer's own `alias`, else
    the agent's label) and why, whether its answer is valid, and its text, unless another
    section (`text_under`) shows that text already."""
    who = role if row["agent"] == alias else alias_label(row["agent"])
    head = f"**{who}** ({cell(row.get('why', ''))})"
    if row["status"] != "valid":
        head += f": no valid answer ({cell(row['problem'])})"
    if text_under is not None and row.get("text"):
        return title, f"{head}\n\nIts text, with moot's check of it, is under {text_under}."
    body = [head, ""] + ([fenced(row["text"])] if row.get("text") else [])
    return title, "\n".join(body).rstrip()


def agents(config: RunConfig, calls: int, prompt_tokens: Sequence[int]) -> list[Projected]:
    """Each agent's calls, `calls` at the fewest and the most, agent i's prompts
    `prompt_tokens[i]` tokens each."""
    return [
        Projected(
            member=agent,
            role=alias_label(alias_for(i, "agent")),
            fewest=calls,
            most=calls,
            prompt_tokens=prompt_tokens[i],
        )
        for i, agent in enumerate(config.agents)
    ]


def writer(
    config: RunConfig,
    chosen: AgentConfig | None,
    role: str,
    default: str,
    caps: Sequence[int],
    prompt_tokens: int,
) -> Projected:
    """The final writer's one call: the `chosen` model, else an agent's model that is unknown
    before the run (`default` says whose), counted at the agent model whose answers may be
    longest (`caps`, each agent's completion cap)."""
    if chosen is not None:
        member, named = chosen, role
    else:
        i = caps.index(max(caps))
        member = config.agents[i]
        named = f"{role} ({default}; counted as {alias_label(alias_for(i))}'s)"
    return Projected(member=member, role=named, fewest=1, most=1, prompt_tokens=prompt_tokens)
