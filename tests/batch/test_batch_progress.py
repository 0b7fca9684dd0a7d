"""The progress of `moot batch` and `moot bench` moves as each model call ends, not only when a
whole session does, and its ETA counts the calls left."""

from __future__ import annotations

import io

from moot.batch import BatchLine, LineResult, create_batch, run_batch_sync
from moot.config import RunConfig
from moot.display.batch import BatchProgress
from moot.models.scripted import register_script


class Watched(BatchProgress):
    """The rich bar on a string, with what it showed after every call and every end."""

    def __init__(self) -> None:
        super().__init__(io.StringIO(), rich=True)
        self.seen: list[tuple[str, float, str]] = []  # (what happened, bar, status)

    def _bar(self) -> float:
        return float(self._progress.tasks[0].completed)  # type: ignore[attr-defined]

    def called(self, line: BatchLine) -> None:
        super().called(line)
        self.seen.append(("call", self._bar(), self.status()))

    def ended(self, result: LineResult) -> None:
        super().ended(result)
        self.seen.append(("end", self._bar(), self.status()))


def _config() -> RunConfig:
    register_script("agree-2", lambda request: "<solution>\nThe answer is 2.\n</solution>")
    return RunConfig.read({"agents": [{"model": "scripted:@agree-2"}] * 3})


def test_the_bar_and_the_count_move_with_every_call() -> None:
    batch = create_batch([(f"q{i}", f"What is 1+{i}?", _config()) for i in range(3)])
    progress = Watched()
    summary = run_batch_sync(batch, concurrency=1, observer=progress)
    progress.close()
    assert summary.failed == [] and len(summary.results) == 3
    calls = [seen for seen in progress.seen if seen[0] == "call"]
    assert len(calls) == sum(r.calls for r in summary.results) > 3
    first_end = next(i for i, seen in enumerate(progress.seen) if seen[0] == "end")
    before = [bar for _, bar, _ in progress.seen[:first_end]]
    assert len(before) >= 3 and before == sorted(before) and before[-1] > before[0] > 0
    assert "3 calls" in progress.seen[2][2] and "0/3 ended" in progress.seen[2][2]
    # every call of the second session moves the bar on from where the first session left it
    second = [bar for kind, bar, _ in progress.seen[first_end + 1 :] if kind == "call"]
    assert second[0] > progress.seen[first_end][1] - 1e-9 and second == sorted(second)
    assert progress.seen[-1][1] == 1000 and "ETA 0s" in progress.seen[-1][2]


def test_the_eta_counts_the_calls_left_at_this_runs_rate() -> None:
    batch = create_batch([(f"q{i}", f"What is 1+{i}?", _config()) for i in range(3)])
    now = [0.0]
    progress = BatchProgress(io.StringIO(), rich=False, clock=lambda: now[0], every=1e9)
    progress.begun(3, [])
    first, second, _ = batch.lines
    progress.started(first)
    for _ in range(10):  # 10 calls in 20 seconds
        now[0] += 2.0
        progress.called(first)
    progress.ended(LineResult(first.index, first.label, "s1", "consensus", calls=10))
    progress.started(second)
    for _ in range(4):
        now[0] += 2.0
        progress.called(second)
    # 6 calls left in the running session, 10 in the waiting one, at 2 seconds a call
    assert progress.eta() == 32.0
    assert "14 calls" in progress.status() and "ETA 32s" in progress.status()
    assert progress.share() == 14 / 30


def test_a_session_without_consensus_is_said_in_words_not_the_code_word() -> None:
    """The walkthrough read "Q1: no_consensus: session ..." and "(1 no_consensus)"; the
    results file (JSON) keeps the code value."""
    from moot.batch import BatchSummary
    from moot.display.batch import summary_lines

    stream = io.StringIO()
    progress = BatchProgress(stream, rich=False, every=1e9)
    progress.begun(2, [])
    ended = [
        LineResult(0, "Q1", "s1", "no_consensus", calls=3),
        LineResult(1, "Q2", "s2", "budget_exceeded", error="over the budget", calls=2),
    ]
    for result in ended:
        progress.ended(result)
    said = stream.getvalue()
    assert "Q1: no consensus: session s1 | " in said, said
    assert "Q2: budget exceeded: over the budget | " in said, said
    counts = {"budget_exceeded": 1, "no_consensus": 1}
    lines = summary_lines(BatchSummary("b1", ended, 1.0, counts=counts), 2)
    assert "2 of 2 sessions ended (1 budget exceeded, 1 no consensus)" in lines[0], lines
    assert "  Q2 (session s2): budget exceeded: over the budget" in lines
    assert "no_consensus" not in said + "\n".join(lines)
