"""The bench's report.html: its tables are HTML tables, not Markdown's pipes, and no two chart
labels overlap, however many protocols and however close their points."""

from __future__ import annotations

import html
import itertools
import re
from pathlib import Path

from moot.bench.report import accuracy_chart, cost_chart, markdown
from moot.bench.report import html as bench_html
from moot.bench.runner import BenchOptions, BenchReport, ProtocolRow
from moot.bench.suites import arithmetic_suite
from moot.report.chart import WIDTH

NAMES = [
    "arena",
    "vote (samples=3)",
    "court (judges=3)",
    "moa (layers=2)",
    "debate (rounds=4)",
    "refine (rounds=3)",
    "tournament (agents=4)",
]


def _row(name: str, right: int, cost: float) -> ProtocolRow:
    return ProtocolRow(
        name=name,
        protocol=name.split()[0],
        correct=[True] * right + [False] * (10 - right),
        calls=[6] * 10,
        tokens=[900] * 10,
        costs=[cost] * 10,
        seconds=12.0,
        sessions=[None] * 10,
        failed=0,
    )


def _report(tmp_path: Path, rows: list[ProtocolRow]) -> BenchReport:
    options = BenchOptions(suite="arithmetic", protocols=[r.protocol for r in rows])
    return BenchReport(
        options=options,
        suite=arithmetic_suite(10),
        rows=rows,
        models=["scripted:@bench-agent"],
        batches=["b1"],
        seconds=3.0,
        folder=tmp_path,
    )


def _labels(svg: str) -> list[tuple[float, float, float, float, str]]:
    """Each protocol label's box, as 11px text about 6.6px a character would draw it."""
    boxes = []
    pattern = (
        r'<text x="([\d.-]+)" y="([\d.-]+)" text-anchor="(\w+)" font-size="11" fill="#424242">'
    )
    for match in re.finditer(pattern + r"(?:<title>.*?</title>)?([^<]*)</text>", svg):
        x, y, anchor, text = float(match[1]), float(match[2]), match[3], html.unescape(match[4])
        width = 6.6 * len(text)
        left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
        boxes.append((left, y - 9, left + width, y + 2, text))
    return boxes


def _apart(boxes: list[tuple[float, float, float, float, str]]) -> bool:
    return not any(
        a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
        for a, b in itertools.combinations(boxes, 2)
    )


def test_the_page_shows_its_tables_as_tables(tmp_path: Path) -> None:
    report = _report(tmp_path, [_row("arena", 8, 0.002), _row("vote (samples=3)", 7, 0.002)])
    report.rows[0].baseline = "vote (samples=3)"
    page = bench_html(report, markdown(report))
    assert "<table>" in page and "<th>protocol</th>" in page and "<td>arena</td>" in page
    assert not re.search(r"^\|?\s*-{3}", page, re.MULTILINE) and "|---|" not in page
    assert "| arena |" not in page
    assert page.count("<h1>") == 1  # the report's own title is the page's, once
    assert "<script" not in page


def test_chart_labels_never_overlap(tmp_path: Path) -> None:
    # seven protocols with long names, the same accuracy and nearly the same cost
    rows = [_row(name, 7, 0.002 + i * 0.00001) for i, name in enumerate(NAMES)]
    for chart in (accuracy_chart(rows), cost_chart(rows)):
        boxes = _labels(chart)
        assert len(boxes) == len(NAMES), chart
        assert _apart(boxes), boxes
        assert all(box[0] >= 0 and box[2] <= WIDTH for box in boxes)
    shown = {box[4] for box in _labels(cost_chart(rows))}
    assert shown == set(NAMES)  # beside their points, whole


def test_a_bench_of_one_question_says_one_question(tmp_path: Path) -> None:
    """The walkthrough read "arithmetic, 1 questions"."""
    row = ProtocolRow(
        name="arena", protocol="arena", correct=[True], calls=[6], tokens=[900], costs=[0.1],
        seconds=1.0, sessions=[None], failed=0,
    )  # fmt: skip
    report = _report(tmp_path, [row])
    report.suite = arithmetic_suite(1)
    assert markdown(report).startswith("# moot bench: arithmetic, 1 question\n")
