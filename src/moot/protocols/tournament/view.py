"""What the tournament adds to its reports (report.md, `moot show`, report.html): the bracket,
drawn with the agents' names, and each match in a table that names its sides, its arbiter and
its winner. An arbiter's verdict names a side by a letter ("winner": "B"); the table says which
agent each letter was in that match, so no reader has to work it out."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from moot.protocols.definition import ReportSection
from moot.protocols.tournament.bracket import worded
from moot.text import cut
from moot.types import Event, Step, alias_label

__all__ = ["bracket_lines", "report_sections", "turn_reading"]

_VERDICT = re.compile(r"match_(\d+)_verdict")


def report_sections(details: Mapping[str, Any], events: list[Event]) -> list[ReportSection]:
    """The bracket section, once the outcome is known (a running or paused session has no
    bracket in its details yet)."""
    bracket = details.get("bracket")
    if not isinstance(bracket, Mapping) or not bracket.get("matches"):
        return []
    matches: list[Mapping[str, Any]] = list(bracket["matches"])
    champion = bracket.get("champion")
    lines = ["```text", *bracket_lines(matches, champion), "```", ""]
    lines += [
        "| Match | Side A | Side B | Arbiter | Winner | How |",
        "|---|---|---|---|---|---|",
    ]
    for m in matches:
        sides = [str(s) for s in m.get("sides") or []]
        a, b = (alias_label(s) if s else "-" for s in [*sides, "", ""][:2])
        winner = m.get("winner")
        won = "none" if m.get("decided_by") == "no winner" else "-"
        if winner:
            letter = "A" if sides and winner == sides[0] else "B"
            won = f"{alias_label(str(winner))} (side {letter})"
        arbiter = alias_label(str(m["arbiter"])) if m.get("arbiter") else "-"
        lines.append(f"| {m.get('match')} | {a} | {b} | {arbiter} | {won} | {_how(m)} |")
    lines += [
        "",
        "An arbiter's verdict names the winning side by its letter: side A is the match's "
        "first side (the leader), side B the challenger, as in the table.",
    ]
    return [("Bracket", "\n".join(lines))]


def _how(m: Mapping[str, Any]) -> str:
    """How a match ended, in a few words."""
    decided = str(m.get("decided_by") or "-")
    if m.get("converged"):
        return f"converged ({m.get('progression', '')}), {decided}".replace(" ()", "")
    progression = m.get("progression")
    return f"{decided}, did not converge ({progression})" if progression else decided


def bracket_lines(matches: list[Mapping[str, Any]], champion: object) -> list[str]:
    """The bracket as text: the first two seeds meet, the winner meets the next challenger,
    and so on, each match's winner drawn where its lines join.

        Agent B ──┐
                  ├── Agent C ──┐
        Agent C ──┘             ├── Agent A
        Agent A ────────────────┘
    """
    if not matches:
        return []
    names = [alias_label(str(s)) for s in matches[0].get("sides") or []][:2]
    width = max(len(n) for n in [*names, "?"])
    first = names[0] if names else "?"
    lines = [f"{first.ljust(width)} ──┐"]
    column = width + 3  # where the joining line of the match before stands
    for i, m in enumerate(matches):
        sides = [str(s) for s in m.get("sides") or []]
        if m.get("winner"):
            winner = alias_label(str(m["winner"]))
        else:  # neither side held a valid answer: the leader stays, without a win
            winner = f"no winner, {alias_label(sides[0]) if sides else '?'} stays"
        if m.get("winner") and str(m.get("winner")) == str(champion) and i == len(matches) - 1:
            winner += " (champion)"
        challenger = alias_label(sides[1]) if len(sides) > 1 else "?"
        lines.append(" " * column + f"├── {winner}" + (" ──┐" if i < len(matches) - 1 else ""))
        if i == 0:
            lines.append(f"{challenger.ljust(width)} ──┘")
        else:
            lines.append(challenger + " " + "─" * max(column - len(challenger) - 1, 1) + "┘")
        column += len(winner) + 7  # "├── " + the name + " ──┐"
    for row, line in enumerate(lines[:-1]):  # a winner's line down to its next match
        below = lines[row + 1]
        at = len(line) - 1
        if line.endswith("┐") and len(below) <= at:
            lines[row + 1] = below.ljust(at) + "│"
    return lines


def turn_reading(step: str, text: str, details: Mapping[str, Any]) -> str | None:
    """An arbiter's verdict ("winner": "B") read as the agent that side was in its match:
    "chose side B, Agent C's position, in match 1: <its reasons>". None for any other reply,
    or before the outcome names the match's sides."""
    found = _VERDICT.fullmatch(Step.parse(step).phase or "")
    bracket = details.get("bracket")
    if found is None or not isinstance(bracket, Mapping):
        return None
    number = int(found.group(1))
    match = next((m for m in bracket.get("matches") or [] if m.get("match") == number), None)
    try:
        reply = json.loads(text)
    except ValueError:
        return None
    if match is None or not isinstance(reply, dict):
        return None
    letter = str(reply.get("winner", "")).strip().upper()
    sides = [str(s) for s in match.get("sides") or []]
    if letter not in ("A", "B") or len(sides) != 2:
        return None
    chosen = alias_label(sides[0 if letter == "A" else 1])
    reasons = reply.get("reasons")
    said = [str(r) for r in reasons if worded(str(r))] if isinstance(reasons, list) else []
    why = "; ".join(said)
    chose = f"chose side {letter}, {chosen}'s position, in match {number}"
    return cut(f"{chose}: {why}", 280) if why else chose
