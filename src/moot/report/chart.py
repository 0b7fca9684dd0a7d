"""The per-round chart of the HTML report, as inline SVG: convergence scores (arena) or vote
tallies (court). No script and no library: numbers in, markup out."""

from __future__ import annotations

import math
from html import escape

from moot.text.rounds import round_result
from moot.types import RoundSummary
from moot.types import alias_label as label

__all__ = ["score_chart", "tally_chart"]

WIDTH, HEIGHT = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 44, 16, 40, 40
_DECISION_COLOURS = {"CONSENSUS": "#2e7d32", "CONVERGED": "#2e7d32", "CONTINUE": "#e08a00"}
_VOTE_COLOURS = {"yes": "#2e7d32", "no": "#c62828", "abstain": "#9e9e9e", "failed": "#5d4037"}
_PALETTE = ("#1565c0", "#6a1b9a", "#00838f", "#ad1457", "#4e342e", "#546e7a")


def _f(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _frame(title: str, y_max: float, ticks: list[float], body: list[str]) -> str:
    plot_h = HEIGHT - TOP - BOTTOM
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
    ]
    for tick in ticks:
        y = TOP + plot_h - plot_h * tick / y_max
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{_f(y)}" y2="{_f(y)}" '
            'stroke="#e0e0e0" stroke-width="1"/>'
            f'<text x="{LEFT - 8}" y="{_f(y + 4)}" text-anchor="end" font-size="11" '
            f'fill="#616161">{_f(tick)}</text>'
        )
    parts.append(
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{TOP + plot_h}" y2="{TOP + plot_h}" '
        'stroke="#9e9e9e" stroke-width="1"/>'
    )
    parts += body
    parts.append("</svg>")
    return "".join(parts)


def _slots(count: int) -> tuple[float, float]:
    """(slot width, left edge) so that `count` rounds share the plot's width."""
    plot_w = WIDTH - LEFT - RIGHT
    return plot_w / max(count, 1), float(LEFT)


def score_chart(results: list[RoundSummary]) -> str:
    """Bars of each round's convergence score, coloured by the judge's decision, with the
    consensus threshold as a dashed line."""
    scale = results[0].scale if results else 10
    threshold = next((r.threshold for r in results if r.threshold is not None), None)
    plot_h = HEIGHT - TOP - BOTTOM
    slot, left = _slots(len(results))
    bar_w = min(56.0, slot * 0.55)
    body: list[str] = []
    points = []
    for i, r in enumerate(results):
        centre = left + slot * (i + 0.5)
        body.append(
            f'<text x="{_f(centre)}" y="{HEIGHT - BOTTOM + 18}" text-anchor="middle" '
            f'font-size="12" fill="#424242">{escape(r.title)}</text>'
        )
        if r.score is None:
            body.append(
                f'<text class="missing" x="{_f(centre)}" y="{TOP + plot_h - 6}" '
                'text-anchor="middle" font-size="11" fill="#9e9e9e">no verdict</text>'
            )
            continue
        height = max(plot_h * min(r.score, scale) / scale, 1.0)
        y = TOP + plot_h - height
        colour = _DECISION_COLOURS.get(str(r.decision).upper(), "#757575")
        tip = f"{r.title}: {round_result(r)}"
        body.append(
            f'<rect class="bar" x="{_f(centre - bar_w / 2)}" y="{_f(y)}" width="{_f(bar_w)}" '
            f'height="{_f(height)}" rx="3" fill="{colour}"><title>{escape(tip)}</title></rect>'
            f'<text x="{_f(centre)}" y="{_f(y - 6)}" text-anchor="middle" font-size="12" '
            f'font-weight="600" fill="#212121">{_f(r.score)}</text>'
        )
        points.append(f"{_f(centre)},{_f(y)}")
    if len(points) > 1:
        body.insert(
            0,
            f'<polyline class="trend" points="{" ".join(points)}" fill="none" '
            'stroke="#90a4ae" stroke-width="1.5" stroke-dasharray="2 3"/>',
        )
    if threshold is not None:
        y = TOP + plot_h - plot_h * threshold / scale
        body.append(
            f'<line class="threshold" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{_f(y)}" '
            f'y2="{_f(y)}" stroke="#2e7d32" stroke-width="1.5" stroke-dasharray="6 4"/>'
            f'<text x="{WIDTH - RIGHT}" y="{_f(y - 5)}" text-anchor="end" font-size="11" '
            f'fill="#2e7d32">consensus at {threshold:g}</text>'
        )
    legend = [
        f'<rect x="{LEFT}" y="6" width="10" height="10" rx="2" fill="#2e7d32"/>'
        f'<text x="{LEFT + 14}" y="15" font-size="11" fill="#424242">CONSENSUS</text>'
        f'<rect x="{LEFT + 96}" y="6" width="10" height="10" rx="2" fill="#e08a00"/>'
        f'<text x="{LEFT + 110}" y="15" font-size="11" fill="#424242">CONTINUE</text>'
    ]
    ticks = [float(t) for t in range(0, scale + 1, max(2, scale // 5))]  # 0-10 by 2, 0-100 by 20
    return _frame("Convergence score by round", float(scale), ticks, body + legend)


def tally_chart(results: list[RoundSummary]) -> str:
    """Grouped bars of each round's votes (yes, no, abstain, then any other count)."""
    keys: list[str] = []
    for r in results:
        keys += [k for k in r.votes if k not in keys]
    top = max(
        [v for r in results for v in r.votes.values()] + [r.needed or 0.0 for r in results],
        default=1.0,
    )
    y_max = float(max(1, math.ceil(top)))
    step = max(1, math.ceil(y_max / 5))
    ticks = [float(t) for t in range(0, int(y_max) + 1, step)]
    plot_h = HEIGHT - TOP - BOTTOM
    slot, left = _slots(len(results))
    group_w = slot * 0.7
    bar_w = group_w / max(len(keys), 1)
    colours = {
        k: _VOTE_COLOURS.get(k.lower(), _PALETTE[i % len(_PALETTE)]) for i, k in enumerate(keys)
    }
    body: list[str] = []
    for i, r in enumerate(results):
        centre = left + slot * (i + 0.5)
        body.append(
            f'<text x="{_f(centre)}" y="{HEIGHT - BOTTOM + 18}" text-anchor="middle" '
            f'font-size="12" fill="#424242">{escape(r.title)}</text>'
        )
        for j, key in enumerate(keys):
            value = r.votes.get(key)
            if value is None:
                continue
            height = max(plot_h * value / y_max, 1.0)
            x = centre - group_w / 2 + j * bar_w
            y = TOP + plot_h - height
            tip = f"{r.title}: {key} {_f(value)}"
            body.append(
                f'<rect class="bar" x="{_f(x + 1)}" y="{_f(y)}" width="{_f(max(bar_w - 2, 1))}" '
                f'height="{_f(height)}" rx="2" fill="{colours[key]}"><title>{escape(tip)}'
                f'</title></rect><text x="{_f(x + bar_w / 2)}" y="{_f(y - 4)}" '
                f'text-anchor="middle" font-size="11" fill="#212121">{_f(value)}</text>'
            )
        if r.needed:
            y = TOP + plot_h - plot_h * r.needed / y_max
            body.append(
                f'<line class="threshold" x1="{_f(centre - group_w / 2 - 4)}" '
                f'x2="{_f(centre + group_w / 2 + 4)}" y1="{_f(y)}" y2="{_f(y)}" stroke="#2e7d32" '
                f'stroke-width="1.5" stroke-dasharray="5 3"><title>{_f(r.needed)} yes votes '
                "needed</title></line>"
            )
    x = float(LEFT)
    for key in keys:
        body.append(
            f'<rect x="{_f(x)}" y="6" width="10" height="10" rx="2" fill="{colours[key]}"/>'
            f'<text x="{_f(x + 14)}" y="15" font-size="11" fill="#424242">'
            f"{escape(label(key))}</text>"
        )
        x += 24 + 7 * len(key)
    return _frame("Votes by round", y_max, ticks, body)
