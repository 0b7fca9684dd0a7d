"""Per model, over every session: how often its final answer was valid, agreed with the answer
moot found, was the final answer itself (picked), changed under critique, and what it spent
(`moot stats`, the web view's models page). Read from each session's result.json (sessions
with no result yet are left out)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from msgspec import Struct
from msgspec.structs import asdict

from moot.engine.store import SessionFolder

__all__ = ["ModelStats", "model_stats"]


class ModelStats(Struct):
    """One model's record over the sessions it took part in (as one agent or several)."""

    model: str
    sessions: int = 0
    agents: int = 0  # agent seats it held, over every session
    valid: int = 0  # seats whose last claim was a valid answer
    agreed: int = 0  # seats among those holding the claim moot found agreed
    picked: int = 0  # seats whose own final answer is the session's final answer
    changed: int = 0  # seats that changed their mind at least once
    calls: int = 0
    failures: int = 0
    tokens: int = 0
    cost: float = 0.0
    cost_known: bool = True

    def rate(self, count: int) -> float | None:
        """`count` as a share of its seats (None with no seat)."""
        return count / self.agents if self.agents else None

    def share(self, count: int) -> str | None:
        """`count` of its seats as faces print it ("2/3 (67%)"; None with no seat)."""
        rate = self.rate(count)
        return f"{count}/{self.agents} ({rate:.0%})" if rate is not None else None

    def as_json(self) -> dict[str, Any]:
        """Every figure, in field order; the cost rounded, or None where a price was unknown."""
        figures = asdict(self)
        del figures["cost_known"]
        figures["cost"] = round(self.cost, 6) if self.cost_known else None
        return figures


def _last_claims(claims: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    last: dict[str, dict[str, Any]] = {}
    for claim in claims:
        agent = str(claim.get("agent", ""))
        if agent not in last or int(claim.get("round", 0)) >= int(last[agent].get("round", 0)):
            last[agent] = claim
    return last


def _absorb(stats: dict[str, ModelStats], result: dict[str, Any]) -> None:
    finding = result.get("finding") or {}
    agreed = set(finding.get("agreed") or ()) if isinstance(finding, dict) else set()
    last = _last_claims([c for c in result.get("claims") or [] if isinstance(c, dict)])
    changed = {str(c.get("agent")) for c in result.get("changes") or [] if isinstance(c, dict)}
    final = str(result.get("final_answer") or "").strip()
    positions = result.get("positions") or {}
    picked = {
        alias
        for alias, text in (positions.items() if isinstance(positions, dict) else ())
        if final and isinstance(text, str) and text.strip() == final
    }
    seen: set[str] = set()
    for alias, usage in (result.get("agents") or {}).items():
        if not isinstance(usage, dict):
            continue
        model = str(usage.get("model", "?"))
        row = stats.setdefault(model, ModelStats(model))
        row.agents += 1
        if model not in seen:
            row.sessions += 1
            seen.add(model)
        row.valid += bool(last.get(alias, {}).get("valid", False))
        row.agreed += alias in agreed
        row.picked += alias in picked
        row.changed += alias in changed
        row.calls += int(usage.get("calls") or 0)
        row.failures += int(usage.get("failures") or 0)
        row.tokens += int(usage.get("prompt_tokens") or 0) + int(
            usage.get("completion_tokens") or 0
        )
        cost = usage.get("cost")
        if isinstance(cost, int | float):
            row.cost += float(cost)
        else:
            row.cost_known = False


def model_stats(folders: Iterable[SessionFolder]) -> list[ModelStats]:
    """Every model's record over `folders`, most seats first."""
    stats: dict[str, ModelStats] = {}
    for folder in folders:
        try:
            result = json.loads(folder.result_json.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # no outcome yet (running, crashed) or unreadable: nothing to count
        if isinstance(result, dict):
            _absorb(stats, result)
    return sorted(stats.values(), key=lambda s: (-s.agents, s.model))
