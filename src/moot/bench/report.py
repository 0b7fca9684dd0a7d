"""The bench's outputs: report.md, a self-contained report.html (inline SVG, no script) and
bench.json with every number. Everything printed is computed in `moot.bench.runner`."""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING, Any

from moot.bench.statistics import wilson_interval
from moot.deliberation.trust import is_tiny
from moot.engine.store import atomic_write
from moot.report.chart import HEIGHT, WIDTH
from moot.report.code import table_head
from moot.text import plural

if TYPE_CHECKING:
    from moot.bench.runner import BenchReport, ProtocolRow

__all__ = ["accuracy_chart", "cost_chart", "label_box", "markdown", "write_report"]

_LEFT, _RIGHT, _TOP, _BOTTOM = 52, 16, 30, 48
_COLOURS = ("#1565c0", "#6a1b9a", "#00838f", "#ad1457", "#4e342e", "#546e7a", "#2e7d32")


def _f(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def honesty(report: BenchReport) -> str:
    """Which models produced the numbers, and what tiny models' numbers can prove."""
    models = ", ".join(report.models)
    tiny = [m for m in report.models if is_tiny(m) or m.startswith("scripted:")]
    line = f"These numbers were produced by: {models}."
    if tiny:
        line += (
            f" {', '.join(tiny)} {'is' if len(tiny) == 1 else 'are'} tiny or scripted: "
            "these numbers only prove the plumbing, not whether a protocol is worth its calls "
            "with real models (see docs/bench.md)."
        )
    return line


def data(report: BenchReport) -> dict[str, Any]:
    options = report.options
    return {
        "suite": report.suite.name,
        "questions": len(report.suite.questions),
        "seed": options.seed,
        "alpha": options.alpha,
        "models": report.models,
        "note": honesty(report),
        "batches": report.batches,
        "wall_seconds": round(report.seconds, 3),
        "protocols": [row.to_json() for row in report.rows],
    }


def markdown(report: BenchReport) -> str:
    rows = report.rows
    lines = [
        f"# moot bench: {report.suite.name}, {plural(len(report.suite.questions), 'question')}",
        "",
        honesty(report),
        "",
        f"Wall time {report.seconds:.1f}s; seed {report.options.seed}; "
        f"level {report.options.alpha:g}.",
        "",
        *table_head(
            "protocol",
            "accuracy",
            "95% interval",
            "calls/q",
            "tokens/q",
            "cost/q",
            "session time (sum)",
            "failed",
        ),
    ]
    for row in rows:
        interval = wilson_interval(sum(row.correct), row.n)
        lines.append(
            f"| {row.name} | {row.accuracy:.1%} | {interval.low:.1%} - {interval.high:.1%} | "
            f"{row.mean([float(c) for c in row.calls]):.1f} | "
            f"{row.mean([float(t) for t in row.tokens]):,.0f} | {_money(row.cost_per_question)}"
            f" | {row.seconds:.1f}s | {row.failed} |"
        )
    lines += ["", "## Against vote at about the same number of calls", ""]
    compared = [row for row in rows if row.comparison]
    for row in compared:
        assert row.comparison is not None
        lines.append(f"- {row.comparison['sentence']} {calls_sentence(row, report)}")
    if not compared:
        lines.append("- (no protocol other than vote was run)")
    flipping = [row for row in rows if row.flips]
    if flipping:
        lines += ["", "## How answers changed between rounds", ""]
        lines += table_head("protocol", "round", "right -> wrong", "wrong -> right", "net")
        for row in flipping:
            for flip in row.flips:
                lines.append(
                    f"| {row.name} | {flip.round - 1} -> {flip.round} | {flip.correct_to_wrong} |"
                    f" {flip.wrong_to_correct} | {flip.net:+d} |"
                )
    audits = [row for row in rows if row.swap_audit]
    if audits:
        lines += ["", "## Judge swap audit", ""]
        lines += [f"- {row.name}: {_audit(row.swap_audit)}" for row in audits if row.swap_audit]
    lines += [
        "",
        f"Every question is an ordinary session (batches {', '.join(report.batches)}): "
        "`moot show SESSION_ID` explains any single result; bench.json lists them.",
        "",
    ]
    return "\n".join(lines)


def calls_sentence(row: ProtocolRow, report: BenchReport) -> str:
    """The calls the protocol and its baseline actually made, counted in their journals, and
    whether they were equal or only approximately so (vote's calls come in steps of its agent
    count, so they can match a protocol's only approximately)."""
    assert row.comparison is not None
    calls, base_calls = int(row.comparison["calls"]), int(row.comparison["baseline_calls"])
    base = next((r for r in report.rows if r.name == row.comparison["baseline"]), None)
    n = max(row.n, 1)
    base_n = max(base.n, 1) if base else n
    made = (
        f"Calls made: {row.name} {calls} ({calls / n:.1f} per question), "
        f"{row.comparison['baseline']} {base_calls} ({base_calls / base_n:.1f} per question)"
    )
    if calls == base_calls:
        return made + ": equal calls."
    more = (base_calls - calls) / calls if calls else 0.0
    return (
        made + f": approximately equal calls (the baseline made {abs(more):.0%} "
        f"{'more' if more > 0 else 'fewer'})."
    )


def _audit(audit: dict[str, Any]) -> str:
    if "note" in audit:
        return str(audit["note"])
    if not audit["judged"]:
        asked = plural(int(audit["asked_swapped"]), "judgement")
        return f"{asked} asked swapped; no usable verdict came back"
    low, high = audit["interval_95"]
    return (
        f"{audit['stable']} of {audit['judged']} verdicts named the same candidate with the order "
        f"swapped ({audit['stability']:.0%}, 95% interval {low:.0%} - {high:.0%}; "
        f"{audit['unusable']} unusable; {audit['judgements']} pairwise judgements in all). "
        "A judge that follows the order, not the texts, is noise."
    )


def _frame(title: str, x_label: str, body: list[str]) -> str:
    plot_h = HEIGHT - _TOP - _BOTTOM
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<text x="{_LEFT}" y="16" font-size="12" font-weight="600" fill="#212121">'
        f"{escape(title)}</text>",
    ]
    for tick in (0, 25, 50, 75, 100):
        y = _TOP + plot_h - plot_h * tick / 100
        parts.append(
            f'<line x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{_f(y)}" y2="{_f(y)}" '
            'stroke="#e0e0e0" stroke-width="1"/>'
            f'<text x="{_LEFT - 8}" y="{_f(y + 4)}" text-anchor="end" font-size="11" '
            f'fill="#616161">{tick}%</text>'
        )
    parts.append(
        f'<text x="{(WIDTH + _LEFT) / 2}" y="{HEIGHT - 6}" text-anchor="middle" font-size="11" '
        f'fill="#616161">{escape(x_label)}</text>'
    )
    return "".join(parts + body + ["</svg>"])


def _y(accuracy: float) -> float:
    plot_h = HEIGHT - _TOP - _BOTTOM
    return _TOP + plot_h - plot_h * accuracy


# A label's box, estimated: 11px text runs about 6.6px a character in a sans-serif font, so 7
# leaves a margin; the box reaches 10px above its baseline and 3px below.
_CHAR_W, _ABOVE, _BELOW = 7.0, 10.0, 3.0


def label_box(x: float, y: float, text: str, anchor: str = "start") -> tuple[float, ...]:
    """(left, top, right, bottom) of an 11px label at baseline `y`, anchored at `x`."""
    width = len(text) * _CHAR_W
    left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
    return (left, y - _ABOVE, left + width, y + _BELOW)


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _label(x: float, y: float, text: str, anchor: str, full: str | None = None) -> str:
    title = f"<title>{escape(full)}</title>" if full and full != text else ""
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}" font-size="11" '
        f'fill="#424242">{title}{escape(text)}</text>'
    )


def _cut(text: str, room: float) -> str:
    """`text` in at most `room` pixels, cut with an ellipsis (its whole name in a tooltip)."""
    fits = max(int(room // _CHAR_W), 2)
    return text if len(text) <= fits else text[: fits - 1] + "…"


def accuracy_chart(rows: list[ProtocolRow]) -> str:
    """Accuracy per protocol as a dot with its 95% interval as a whisker. Names too wide for
    their slot alternate between two lines under the axis (and are cut to two slots' width),
    so that no two overlap."""
    slot = (WIDTH - _LEFT - _RIGHT) / max(len(rows), 1)
    stagger = any(len(row.name) * _CHAR_W > slot - 6 for row in rows)
    body = []
    for i, row in enumerate(rows):
        x = _LEFT + slot * (i + 0.5)
        interval = wilson_interval(sum(row.correct), row.n)
        colour = _COLOURS[i % len(_COLOURS)]
        tip = f"{row.name}: {row.accuracy:.1%} ({interval.low:.1%} - {interval.high:.1%})"
        name = _cut(row.name, (2 * slot if stagger else slot) - 6)
        y = HEIGHT - _BOTTOM + (16 if not stagger or i % 2 == 0 else 30)
        half = len(name) * _CHAR_W / 2  # kept inside the chart at either end
        at = min(max(x, half + 2), WIDTH - half - 2)
        body.append(
            f'<line x1="{_f(x)}" x2="{_f(x)}" y1="{_f(_y(interval.low))}" '
            f'y2="{_f(_y(interval.high))}" stroke="{colour}" stroke-width="2"/>'
            f'<circle cx="{_f(x)}" cy="{_f(_y(row.accuracy))}" r="5" fill="{colour}">'
            f"<title>{escape(tip)}</title></circle>" + _label(at, y, name, "middle", row.name)
        )
    return _frame("Accuracy with 95% interval", "protocol", body)


def _place(
    x: float, y: float, text: str, taken: list[tuple[float, ...]]
) -> tuple[float, float, str]:
    """Where the label of the point (x, y) goes: beside it, right or left, then further up or
    down in steps of a line, at the first place that overlaps no label placed before and stays
    in the chart: (x, baseline, anchor)."""
    low, high = _TOP + _ABOVE, HEIGHT - _BOTTOM - _BELOW
    for away in range(8):
        for shift in (-6 - 13 * away, 14 + 13 * away):
            for at, anchor in ((x + 8, "start"), (x - 8, "end")):
                box = label_box(at, y + shift, text, anchor)
                inside = box[0] >= 0 and box[2] <= WIDTH and low <= y + shift <= high
                if inside and not any(_overlap(box, other) for other in taken):
                    taken.append(box)
                    return (at, y + shift, anchor)
    box = label_box(x + 8, y - 6, text)  # no free place: beside it, as before
    taken.append(box)
    return (x + 8, y - 6, "start")


def cost_chart(rows: list[ProtocolRow]) -> str:
    """Accuracy against cost per question (calls per question when a cost is unknown or zero).
    Each label takes the first place near its point that no other label holds."""
    costs = [row.cost_per_question for row in rows]
    by_cost = all(c is not None and c > 0 for c in costs)
    xs = [
        float(c) if by_cost and c is not None else row.mean([float(k) for k in row.calls])
        for row, c in zip(rows, costs, strict=True)
    ]
    top = max(xs, default=1.0) or 1.0
    plot_w = WIDTH - _LEFT - _RIGHT - 40
    body = []
    taken: list[tuple[float, ...]] = []
    for i, (row, value) in enumerate(zip(rows, xs, strict=True)):
        x = _LEFT + 20 + plot_w * value / top
        colour = _COLOURS[i % len(_COLOURS)]
        shown = f"${value:.4f}" if by_cost else f"{value:.1f} calls"
        at, baseline, anchor = _place(x, _y(row.accuracy), row.name, taken)
        body.append(
            f'<circle cx="{_f(x)}" cy="{_f(_y(row.accuracy))}" r="5" fill="{colour}">'
            f"<title>{escape(f'{row.name}: {row.accuracy:.1%} at {shown}')}</title></circle>"
            + _label(at, baseline, row.name, anchor)
        )
    x_label = "cost per question (USD)" if by_cost else "calls per question (cost unknown or 0)"
    return _frame("Accuracy against cost per question", f"{x_label}; right end {top:g}", body)


def html(report: BenchReport, text: str) -> str:
    """A page that needs nothing else: the charts inline, then the Markdown report rendered
    (its tables as tables) below them; every number is also in bench.json."""
    from moot.report.html import markdown_html

    title = f"moot bench: {report.suite.name}"
    body = text.split("\n", 1)[1] if text.startswith("# ") else text  # the page's own h1
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>body{{font-family:system-ui,sans-serif;"
        "max-width:60rem;margin:2rem auto;padding:0 1rem}svg{display:block;margin:1rem 0}"
        "table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #e0e0e0;"
        "padding:.3rem .6rem;text-align:left}th{background:#fafafa}"
        "h5,h6{font-size:1.2rem;margin:1.5rem 0 .5rem}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        f"{accuracy_chart(report.rows)}{cost_chart(report.rows)}"
        f"{markdown_html(body)}</body></html>\n"
    )


def write_report(report: BenchReport) -> None:
    """Write report.md, report.html and bench.json into the report's folder."""
    report.markdown = markdown(report)
    report.data = data(report)
    report.folder.mkdir(parents=True, exist_ok=True)
    atomic_write(report.folder / "report.md", report.markdown)
    atomic_write(report.folder / "report.html", html(report, report.markdown))
    atomic_write(report.folder / "bench.json", json.dumps(report.data, indent=2) + "\n")
