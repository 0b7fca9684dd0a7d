"""What the faces show of a council, through its definition's hooks: `moot status` counts each
stage's calls from the journal (`status_lines`); the reports show the three stages, every
answer, every ranking with its reasons, the aggregate and the chairman's text
(`report_sections`); `moot run --dry-run` counts every call (`project`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from moot.config import RunConfig, synthesis_enabled
from moot.protocols.answered import agents, answer_texts, cell, writer, writer_section
from moot.protocols.council.options import CouncilOptions
from moot.protocols.definition import Projection, ReportSection, completion_cap
from moot.protocols.synthesis import CHAIRMAN
from moot.types import Event, EventKind, Step, alias_label

__all__ = ["project", "report_sections", "status_lines"]

PROMPT_TOKENS = 250  # a prompt's own instructions, beyond the task and the answers it quotes


def report_sections(details: Mapping[str, Any], events: list[Event]) -> list[ReportSection]:
    """Stage 1 (every answer), stage 2 (every ranking and its reasons, or why it abstained),
    the aggregate ranking and stage 3 (the chairman's text); [] before there is a result."""
    answers = details.get("answers")
    if not isinstance(answers, list):
        return []
    sections: list[ReportSection] = [("Stage 1: Answers", answer_texts(answers))]
    second = []
    for row in details.get("rankings") or []:
        who = alias_label(row["ranker"])
        if not row.get("ranking"):
            second += [f"- **{who}** abstains: {cell(row['problem'] or 'no ranking')}"]
            continue
        ranked = " > ".join(alias_label(a) for a in row["ranking"])
        second.append(f"- **{who}** ranks {ranked}")
        second += [
            f"  - {alias_label(a)}: {cell(row['reasons'].get(a, ''))}" for a in row["ranking"]
        ]
    sections.append(("Stage 2: Rankings", "\n".join(second) or "No rankings."))
    agg = details.get("aggregate") or {}
    rows = ["| Place | Answer of | Mean rank | Rankings |", "|---|---|---|---|"]
    for row in agg.get("order") or []:
        place = row["place"] if row["place"] is not None else "unranked"
        mean = f"{row['mean_rank']:g}" if row["mean_rank"] is not None else "-"
        rows.append(f"| {place} | {alias_label(row['agent'])} | {mean} | {row['rankings']} |")
    ties = [" and ".join(alias_label(a) for a in tie) for tie in agg.get("ties") or []]
    note = f"By {agg.get('method', 'mean rank')} (1 is best) over {agg.get('valid_rankings', 0)} "
    note += "valid rankings. " + ("Tied: " + "; ".join(ties) + "." if ties else "No ties.")
    sections.append(("Aggregate Ranking", note + "\n\n" + "\n".join(rows)))
    chair = details.get("chairman")
    if isinstance(chair, Mapping):
        # (the report's Synthesis section shows the chairman's text and the picked answer,
        # where an answer was picked; else the text is shown here)
        under = None if chair.get("recorded_only") else "Synthesis"
        sections.append(
            writer_section("Stage 3: The Chairman", chair, "Chairman", CHAIRMAN, text_under=under)
        )
    return sections


def status_lines(events: list[Event]) -> list[str]:
    """How far each stage has come, from the journal: answers and rankings journaled of the
    agents, and whether the chairman has written."""
    if not events or events[0].kind != EventKind.BEGIN:
        return []
    agents = [a for a in events[0].data.get("aliases") or {} if str(a).startswith("agent_")]
    done: dict[str, int] = {}
    for event in events:
        if event.kind == EventKind.ASK and event.step:
            phase = Step.parse(event.step).phase or ""
            done[phase] = done.get(phase, 0) + 1
    chair = "written" if done.get("chair") else "not yet"
    return [
        f"Council: answers {done.get('answer', 0)} of {len(agents)}, rankings "
        f"{done.get('rank', 0)} of {len(agents)} at most, chairman {chair}"
    ]


def project(config: RunConfig, options: CouncilOptions) -> Projection:
    """Every agent answers once and ranks the others' answers once; the chairman writes once.
    An answer that fails or is invalid only removes calls (a ranking needs two others' valid
    answers, the chairman one), so the fewest equal the most. The default chairman is the
    top-ranked agent's model, unknown before the run: it is counted at the agent model whose
    answers may be longest."""
    caps = [completion_cap(a) for a in config.agents]
    quoted = [min(cap, options.max_quote_chars // 4) for cap in caps]
    lines = agents(config, 2, [PROMPT_TOKENS + sum(quoted) - q for q in quoted])
    chosen = options.chairman or (config.synthesis.chairman if config.synthesis else None)
    if not synthesis_enabled(config.synthesis, default=True):  # `[synthesis] enabled = false`
        return lines
    reasons = 60 * len(config.agents) * (len(config.agents) - 1)
    prompt = PROMPT_TOKENS + sum(quoted) + reasons
    default = "the top-ranked agent's model"
    return [*lines, writer(config, chosen, "Chairman", default, caps, prompt)]
