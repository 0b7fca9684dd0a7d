"""`report.md` (seed 000 section 9): verdict first, then the final solutions, every round's
exchanges as the journal recorded them, and usage. Works for any protocol and for sessions
that stopped early."""

from __future__ import annotations

from moot.engine.state import parse_step
from moot.result import Result
from moot.types import Event

__all__ = ["render_report", "transcript"]

_STATUS = {
    "consensus": "Consensus reached",
    "no_consensus": "No consensus",
    "failed": "Failed",
    "paused": "Paused by a limit (resumable)",
    "interrupted": "Interrupted (resumable)",
}


def _label(alias: str) -> str:
    return "Agent " + alias.rsplit("_", 1)[-1].upper()


def transcript(events: list[Event]) -> list[tuple[str, list[Event]]]:
    """Model answers grouped by (round, phase) in journal order: [("Round 1: evaluate", [...])]."""
    groups: dict[str, list[Event]] = {}
    for event in events:
        if event.kind not in ("ask", "shell"):
            continue
        round_no, phase = parse_step(event.step)
        title = f"Round {round_no}: {phase}" if round_no is not None else (phase or "other")
        groups.setdefault(title, []).append(event)
    return list(groups.items())


def _fence(text: str) -> str:
    ticks = "````" if "```" in text else "```"
    return f"{ticks}text\n{text}\n{ticks}"


def render_report(result: Result, events: list[Event]) -> str:
    title = result.protocol.capitalize()
    lines = [
        f"# {title} Report",
        "",
        f"**Task:** {result.task}",
        "",
        f"**Status:** {_STATUS.get(result.status, result.status)}: {result.how}",
        f"**Rounds:** {result.rounds}",
        f"**Consensus:** {'Yes' if result.consensus else 'No'}",
        "**Alias mapping:** "
        + ", ".join(f"{_label(a)} = `{spec}`" for a, spec in result.aliases.items()),
        "",
    ]
    if result.final_answer:
        lines += ["## Final Answer", "", result.final_answer, ""]
    verdict = result.details.get("verdict")
    if isinstance(verdict, dict):
        lines += [
            "## Final Verdict",
            "",
            f"Judge: {_label(str(verdict.get('judge')))}, decision "
            f"{verdict.get('decision')}, convergence score "
            f"{verdict.get('convergence_score')}/10, base solution "
            f"{verdict.get('base_solution')}",
            "",
        ]
        if verdict.get("modifications"):
            lines += ["Modifications to apply:", "", str(verdict["modifications"]), ""]
        lines += [
            "<details><summary>Full verdict</summary>",
            "",
            _fence(str(verdict.get("text"))),
            "",
            "</details>",
            "",
        ]
    if result.disagreements:
        lines += ["## Remaining Disagreements", ""]
        lines += [f"- {item}" for item in result.disagreements]
        lines.append("")
    if result.positions:
        lines += ["## Final Solutions", ""]
        for alias, text in result.positions.items():
            lines += [
                f"### {_label(alias)} (`{result.aliases.get(alias, 'unknown')}`)",
                "",
                text,
                "",
            ]
    groups = transcript(events)
    if groups:
        lines += ["## Rounds", ""]
        for title, items in groups:
            lines += [f"### {title}", ""]
            for event in items:
                who = event.data.get("agent") or ""
                if event.kind == "shell":
                    res = event.data["result"]
                    lines += [
                        f"#### `{event.data['command']}`: exit code {res['exit_code']}",
                        "",
                        _fence((res["stdout"] + res["stderr"]).strip() or "(no output)"),
                        "",
                    ]
                    continue
                completion = event.data["completion"]
                suffix = " (re-asked)" if str(event.step).endswith("/reask") else ""
                lines += [f"#### {_label(who)}{suffix}", ""]
                if completion.get("status") != "ok":
                    failure = completion.get("failure") or {}
                    lines += [f"*Failed: {failure.get('kind')}: {failure.get('message')}*", ""]
                else:
                    lines += [_fence(completion.get("text") or "(empty)"), ""]
    lines += [
        "## Usage",
        "",
        "| Agent | Model | Calls | Failures | Tokens | Cost (USD) |",
        "|---|---|---|---|---|---|",
    ]
    for alias, usage in result.agents.items():
        tokens = usage.prompt_tokens + usage.completion_tokens
        approx = "~" if usage.tokens_estimated else ""
        cost = "unknown" if usage.cost is None else f"{usage.cost:.4f}"
        lines.append(
            f"| {_label(alias)} | `{usage.model}` | {usage.calls} | {usage.failures} | "
            f"{approx}{tokens:,} | {cost} |"
        )
    total_cost = "unknown" if result.cost is None else f"{result.cost:.4f}"
    lines += ["", f"Total: {result.tokens:,} tokens, cost {total_cost} USD.", ""]
    if result.stop_message:
        lines += [f"> {result.stop_message}", ""]
    return "\n".join(lines)
