"""How far to trust a refine outcome (issue 9: "Every outcome carries a short plain
statement"): that converged means the judges preferred the text k passes in a row, never a
consensus (issue 29); how the final text was chosen (Borda rankings by N judges, passes, the
incumbent's streak against k), who failed or wrote an invalid text (named, with the reason),
whether judges ranked their own texts, and that a tiny model's text is a demonstration."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from moot.deliberation.trust import plain_reason, tiny_note
from moot.text import plural
from moot.types import alias_label

__all__ = ["qualifiers", "trust_statement"]

_SHOWN = 6  # issues named one by one; the rest are counted
_KIND = {"B": "revision", "AB": "synthesis"}


def _origin(writer: str | None, adopted: tuple[int, str] | None) -> str:
    if writer is None:
        return "the user's --input, unchanged"  # a text, or a code task's diff
    if adopted is None:
        return f"{alias_label(writer)}'s first draft"
    number, name = adopted
    return f"{alias_label(writer)}'s {_KIND.get(name, name)}, adopted in pass {number}"


def _issue(entry: Mapping[str, Any]) -> str:
    who = alias_label(entry["by"])
    what = "failed" if entry["status"] == "failed" else "was invalid"
    reason = f": {plain_reason(entry['reason'], limit=160)}" if entry.get("reason") else ""
    return f"{who} as {entry['role']} in pass {entry['pass']} {what}{reason}"


def qualifiers(issues: Sequence[Mapping[str, Any]]) -> list[str]:
    """Short counts for the outcome's one-line `how`: "2 invalid replies", "1 call failed"."""
    invalid = sum(1 for i in issues if i["status"] == "invalid")
    failed = sum(1 for i in issues if i["status"] == "failed")
    out = []
    if invalid:
        out.append(f"{invalid} invalid {'reply' if invalid == 1 else 'replies'}")
    if failed:
        out.append(f"{plural(failed, 'call')} failed")
    return out


def trust_statement(
    *,
    converged: bool,
    passes: int,
    k: int,
    streak: int,
    judges: int,
    rounds: Sequence[Mapping[str, Any]],
    writer: str | None,
    adopted: tuple[int, str] | None,
    issues: Sequence[Mapping[str, Any]],
    specs: Mapping[str, str],
) -> str:
    """The plain statement shown first with a refine outcome. `specs`: alias -> model spec of
    every participant (agents and configured roles)."""
    tiny = tiny_note(specs.values())
    sentences: list[str] = [tiny] if tiny else []
    origin = _origin(writer, adopted)
    method = (
        f"{plural(judges, 'judge')} per pass ranked the incumbent A, author B's revision and "
        "the synthesis AB by Borda count, ties going to the incumbent"
    )
    if converged:
        held = rounds[-k:]
        valid = sum(int((r.get("borda") or {}).get("valid_rankings", 0)) for r in held)
        asked = sum(len(r.get("judges") or []) for r in held)
        sentences.append(
            f"Converged: the judges preferred this text {plural(k, 'pass', 'passes')} in a row; "
            "that is a preference, not agents agreeing on an answer."
        )
        sentences.append(
            f"The final text ({origin}) won {plural(k, 'pass', 'passes')} in a row as the "
            f"incumbent (convergence k = {k}) after {plural(passes, 'pass', 'passes')}: "
            f"{method}; those passes had {valid} valid rankings of {asked}."
        )
        sentences.append(
            "Borda rankings say which text the judges preferred, not that it is correct."
        )
    else:
        sentences.append(
            f"No convergence: after {plural(passes, 'pass', 'passes')} the incumbent had won "
            f"{streak} of the {k} passes in a row it needs ({method}); the final text is the "
            f"last incumbent ({origin})."
        )
    if any((r.get("roles") or {}).get("self_judging") for r in rounds):
        sentences.append("With too few agents, judges ranked texts they had written.")
    if issues:
        named = "; ".join(_issue(i) for i in issues[:_SHOWN])
        more = len(issues) - _SHOWN
        tail = f"; and {more} more" if more > 0 else ""
        sentences.append(f"Failed or invalid, so not counted: {named}{tail}.")
    else:
        sentences.append("No participant failed or wrote an invalid text.")
    return " ".join(sentences)
