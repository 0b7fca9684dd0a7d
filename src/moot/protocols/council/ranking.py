"""Stage 2 of the council: each agent ranks the others' valid answers, shown under labels drawn
for its prompt alone, with a reason for each; the rankings are aggregated by mean rank.

A ranking is parsed strictly: JSON whose "ranking" names every label shown exactly once and
whose "reasons" give every label a reason, a word at least that does not only name a label or a
rank ("A:", "B", "2" are none; see `_REASON_WORD`). Anything else is that agent's abstention,
named with its reason; there is no re-ask and no repair, so a resume or replay parses the
recorded text to the same result.

Why mean rank rather than Borda: each agent ranks the others' answers, never its own, so the
rankings cover different sets of candidates, and an answer whose author abstained is ranked by
one agent more than the others. A mean of places (1 is best) compares answers ranked by
different numbers of agents fairly; Borda points over lists of unequal length would not.
Answers with the same mean rank are tied, and the tie is reported; an answer no valid ranking
covers is unranked and comes last.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from moot.deliberation.markup import strip_markup
from moot.deliberation.parsing import extract_json
from moot.errors import FormatError

__all__ = ["LABELS", "METHOD", "aggregate", "parse_ranking"]

# Labels an answer is shown under (never A, B, ... which name agents).
LABELS = tuple("PQRSTUVWXYZ")
METHOD = "mean rank"
# A reason holds a word of two letters or more that is not what names an answer or its place:
# "A:", "B", "1", "Answer Q", "#2" give none. A word is enough: "Italia" may be a terse reason,
# and the order stands on its own (a ranking is evidence, never the decision).
_REASON_WORD = re.compile(
    r"\b(?!(?:answers?|labels?|options?|choices?|ranks?|ranked|number)\b)[^\W\d_]{2,}",
    re.IGNORECASE,
)


def parse_ranking(text: str, labels: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The ranking of `labels` (best first) and a reason per label, read strictly from a
    reply; `FormatError` saying what is wrong otherwise (model output is untrusted)."""
    data = extract_json(text, repair=False)
    ranking = data.get("ranking")
    reasons = data.get("reasons")
    if not isinstance(ranking, list) or not all(isinstance(x, str) for x in ranking):
        raise FormatError('"ranking" must be a list of labels')
    ranked = [x.strip() for x in ranking]
    if sorted(ranked) != sorted(labels):
        shown = ", ".join(ranked) or "nothing"
        raise FormatError(f"its ranking ({shown}) does not name each of {', '.join(labels)} once")
    if not isinstance(reasons, dict):
        raise FormatError('"reasons" must give a reason for each label')
    given = {str(k).strip(): v for k, v in reasons.items()}
    missing = [x for x in labels if not isinstance(given.get(x), str) or not given[x].strip()]
    if missing:
        raise FormatError(f"it gives no reason for {', '.join(missing)}")
    said = {x: strip_markup(str(given[x])).strip() for x in labels}
    bare = [x for x in labels if not _REASON_WORD.search(said[x])]
    if bare:
        shown = ", ".join(f"{x} ('{said[x][:20]}')" for x in bare)
        raise FormatError(f"its reason for {shown} only names a label or a rank, not a reason")
    return ranked, said


def aggregate(answered: Sequence[str], rankings: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The mean rank of every valid answer over the valid rankings that cover it (`answered`:
    the agents with a valid answer, in alias order; a ranking's "ranking" lists aliases best
    first, None when it abstained). Best first; ties keep alias order and are listed."""
    places: dict[str, list[int]] = {a: [] for a in answered}
    for row in rankings:
        for place, alias in enumerate(row.get("ranking") or (), start=1):
            if alias in places:
                places[alias].append(place)
    means = {a: Fraction(sum(p), len(p)) for a, p in places.items() if p}
    ranked = sorted(means, key=lambda a: (means[a], answered.index(a)))
    unranked = [a for a in answered if a not in means]
    order: list[dict[str, Any]] = []
    place = 0
    for i, alias in enumerate(ranked):
        if i == 0 or means[alias] != means[ranked[i - 1]]:
            place = i + 1
        order.append(
            {
                "agent": alias,
                "place": place,
                "mean_rank": round(float(means[alias]), 3),
                "rankings": len(places[alias]),
            }
        )
    order += [{"agent": a, "place": None, "mean_rank": None, "rankings": 0} for a in unranked]
    groups: dict[Fraction, list[str]] = {}
    for alias in ranked:
        groups.setdefault(means[alias], []).append(alias)
    ties = [group for group in groups.values() if len(group) > 1]
    top = [a for a in ranked if means[a] == means[ranked[0]]] if ranked else []
    return {
        "method": METHOD,
        "order": order,
        "ties": ties,
        "top": top[0] if top else None,
        "top_tied": top if len(top) > 1 else [],
        "valid_rankings": sum(1 for row in rankings if row.get("ranking")),
    }
