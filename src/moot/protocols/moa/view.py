"""What the faces show of a Mixture-of-Agents run, through its definition's hooks: `moot
status` counts each layer's answers from the journal (`status_lines`); the reports show every
layer's answers side by side, each answer's text and the aggregator's text
(`report_sections`); `moot run --dry-run` counts every call (`project`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from moot.config import RunConfig
from moot.protocols.answered import agents, answer_texts, cell, writer, writer_section
from moot.protocols.definition import Projection, ReportSection, completion_cap
from moot.protocols.moa.options import MoaOptions
from moot.protocols.moa.outcome import AGGREGATOR
from moot.types import Event, EventKind, Step, alias_label

__all__ = ["project", "report_sections", "status_lines"]

PROMPT_TOKENS = 200  # a prompt's own instructions, beyond the task and the answers it quotes
CELL = 120  # characters of an answer or a problem in the side-by-side table and the layers


def report_sections(details: Mapping[str, Any], events: list[Event]) -> list[ReportSection]:
    """The answers by layer side by side (each agent's final answer per layer), each layer's
    texts, and the aggregator's text; [] before there is a result."""
    layers = details.get("layers")
    if not isinstance(layers, list) or not layers:
        return []
    agents = [row["agent"] for row in layers[0]]
    head = "| Agent | " + " | ".join(f"Layer {k}" for k in range(1, len(layers) + 1)) + " |"
    rows = [head, "|---" * (len(layers) + 1) + "|"]
    for agent in agents:
        cells = []
        for layer in layers:
            row = next((r for r in layer if r["agent"] == agent), None)
            if row is None:
                cells.append("-")
            elif row["status"] == "valid":
                cells.append(cell(row["answer"], CELL))
            else:
                cells.append(f"*{row['status']}*: {cell(row['problem'] or '', CELL)}")
        rows.append(f"| {alias_label(agent)} | " + " | ".join(cells) + " |")
    sections: list[ReportSection] = [("Answers by Layer", "\n".join(rows))]
    for k, layer in enumerate(layers, 1):
        seen = "answered alone" if k == 1 else "shown layer " + str(k - 1) + "'s valid answers"
        sections.append((f"Layer {k} ({seen})", answer_texts(layer, CELL)))
    agg = details.get("aggregator")
    if isinstance(agg, Mapping):
        sections.append(writer_section("The Aggregator", agg, "Aggregator", AGGREGATOR))
    return sections


def status_lines(events: list[Event]) -> list[str]:
    """How far the layers have come, from the journal: answers journaled per layer, and
    whether the aggregator has written."""
    if not events or events[0].kind != EventKind.BEGIN:
        return []
    agents = [a for a in events[0].data.get("aliases") or {} if str(a).startswith("agent_")]
    done: dict[int, int] = {}
    aggregated = False
    for event in events:
        if event.kind == EventKind.ASK and event.step:
            step = Step.parse(event.step)
            if step.phase == "propose":
                layer = step.number or 0
                done[layer] = done.get(layer, 0) + 1
            aggregated = aggregated or step.phase == "aggregate"
    layers = ", ".join(f"layer {k} {n} of {len(agents)}" for k, n in sorted(done.items()))
    return [
        f"MoA: answers {layers or 'none yet'}; aggregator {'written' if aggregated else 'not yet'}"
    ]


def project(config: RunConfig, options: MoaOptions) -> Projection:
    """Every agent answers once per layer; the aggregator writes once. An answer that fails or
    is invalid removes no call (the next layer still asks every agent), so the fewest equal the
    most (a run whose last layer has no valid answer skips the aggregator). The default
    aggregator is Agent A's model, unknown before the aliases are drawn: it is counted at the
    agent model whose answers may be longest."""
    caps = [completion_cap(a) for a in config.agents]
    quoted = sum(min(cap, options.max_quote_chars // 4) for cap in caps)
    shown = quoted if options.layers > 1 else 0
    lines = agents(config, options.layers, [PROMPT_TOKENS + shown] * len(caps))
    last = writer(
        config, options.aggregator, "Aggregator", "Agent A's model", caps, PROMPT_TOKENS + quoted
    )
    return [*lines, last]
