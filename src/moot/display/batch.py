"""The progress of a batch (`moot batch`, `moot bench`) on stderr: a rich progress bar on a
terminal, plain lines otherwise (one per ended session, with the running totals), and the summary
at the end."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from moot.text import clean_text, plural

if TYPE_CHECKING:
    from moot.batch import BatchLine, BatchSummary, LineResult

__all__ = ["BatchProgress", "summary_lines"]


def _money(cost: float | None) -> str:
    return "cost unknown" if cost is None else f"${cost:.4f}"


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "ETA -"
    minutes, secs = divmod(int(seconds), 60)
    return f"ETA {minutes}m{secs:02d}s" if minutes else f"ETA {secs}s"


class BatchProgress:
    """A `BatchObserver` that shows done, running, failed, ETA, tokens and cost."""

    def __init__(self, stream: TextIO | None = None, *, rich: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.rich = self.stream.isatty() if rich is None else rich
        self.total = self.done = self.failed = self.running = self.tokens = 0
        self.cost: float | None = 0.0
        self._began = time.monotonic()
        self._ran = 0  # ended in this run: the ETA's rate
        self._progress: object | None = None
        self._task: object | None = None

    # -- totals ------------------------------------------------------------------------------
    def _add(self, result: LineResult) -> None:
        if result.status in ("consensus", "no_consensus"):
            self.done += 1
        else:
            self.failed += 1
        self.tokens += result.tokens
        self.cost = None if self.cost is None or result.cost is None else self.cost + result.cost

    def eta(self) -> float | None:
        left = self.total - self.done - self.failed
        if not self._ran:
            return None
        return left * (time.monotonic() - self._began) / self._ran

    def status(self) -> str:
        return (
            f"{self.done + self.failed}/{self.total} ended, {self.running} running, "
            f"{self.failed} failed, {_eta(self.eta())}, {self.tokens:,} tokens, "
            f"{_money(self.cost)}"
        )

    # -- observer ----------------------------------------------------------------------------
    def begun(self, total: int, already: Sequence[LineResult]) -> None:
        """A batch begins (`moot bench` runs several with one progress): count it from zero."""
        self.close()
        self.done = self.failed = self.running = self.tokens = self._ran = 0
        self.cost = 0.0
        self._began = time.monotonic()
        self.total = total
        for result in already:
            self._add(result)
        if self.rich:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn

            progress = Progress(
                BarColumn(),
                TextColumn("{task.fields[status]}"),
                console=Console(file=self.stream),
                transient=True,
            )
            self._task = progress.add_task(
                "batch", total=total, completed=self.done + self.failed, status=self.status()
            )
            progress.start()
            self._progress = progress
        elif already:
            self._line(f"{plural(len(already), 'session')} had already finished; {self.status()}")

    def started(self, line: BatchLine) -> None:
        self.running += 1
        self._refresh()

    def ended(self, result: LineResult) -> None:
        self.running -= 1
        self._ran += 1
        self._add(result)
        if self.rich:
            self._refresh()
            if result.error:
                self._print(f"{result.label}: {result.status}: {result.error}")
        else:
            shown = result.error or f"session {result.session_id}"
            self._line(f"{result.label}: {result.status}: {shown[:120]} | {self.status()}")

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()  # type: ignore[attr-defined]
            self._progress = None

    # -- output ------------------------------------------------------------------------------
    def _refresh(self) -> None:
        if self._progress is not None:
            self._progress.update(  # type: ignore[attr-defined]
                self._task, completed=self.done + self.failed, status=self.status()
            )

    def _print(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(clean_text(text), markup=False, highlight=False)  # type: ignore[attr-defined]

    def _line(self, text: str) -> None:
        self.stream.write(clean_text(text) + "\n")
        self.stream.flush()


def summary_lines(summary: BatchSummary, total: int) -> list[str]:
    """The end of a batch in a few lines: counts, usage, failures with their errors, and how
    to continue."""
    results = summary.results
    calls = sum(r.calls for r in results)
    tokens = sum(r.tokens for r in results)
    costs = [r.cost for r in results]
    cost = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
    counts = ", ".join(f"{n} {status}" for status, n in sorted(summary.counts.items()))
    lines = [
        f"batch {summary.batch_id}: {len(results)} of {plural(total, 'session')} ended "
        f"({counts or 'none'})"
        f" in {summary.seconds:.1f}s; {calls:,} calls, {tokens:,} tokens, {_money(cost)}"
    ]
    failed = summary.failed
    if failed:
        lines.append(f"{len(failed)} did not reach an outcome:")
        for result in failed[:50]:
            where = f" (session {result.session_id})" if result.session_id else ""
            lines.append(f"  {result.label}{where}: {result.status}: {result.error or '-'}")
        if len(failed) > 50:
            lines.append(f"  ... and {len(failed) - 50} more (see the batch journal)")
    if not summary.complete:
        lines.append(f"continue with: moot batch --resume {summary.batch_id}")
    return [clean_text(line) for line in lines]
