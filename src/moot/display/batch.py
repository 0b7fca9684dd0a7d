"""The progress of a batch (`moot batch`, `moot bench`) on stderr: a rich progress bar on a
terminal, plain lines otherwise (one per ended session, with the running totals, and while
sessions run, the totals every few seconds), and the summary at the end.

The bar and the ETA move as each model call ends, not only when a session does: the calls
left are estimated from the calls the sessions that ended took (before any ended, from the
worst case their protocols project), and the ETA is that many calls at this run's rate."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from moot.text import clean_text, plural, status_words

if TYPE_CHECKING:
    from moot.batch import BatchLine, BatchSummary, LineResult

__all__ = ["BatchProgress", "summary_lines"]

_STEPS = 1000  # the bar's scale: a share of the work, whose total moves as estimates do


def _money(cost: float | None) -> str:
    return "cost unknown" if cost is None else f"${cost:.4f}"


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "ETA -"
    minutes, secs = divmod(int(seconds), 60)
    return f"ETA {minutes}m{secs:02d}s" if minutes else f"ETA {secs}s"


def _projected_calls(line: BatchLine) -> int | None:
    """The most calls the line's protocol projects for its session (`moot run --dry-run`)."""
    from moot.lifecycle.projection import estimate

    try:
        projection = estimate(line.plan(), line.task)
    except Exception:  # a plan that cannot be read ends the session soon enough to say why
        return None
    return sum(x.most for x in projection.lines) if projection is not None else None


class BatchProgress:
    """A `BatchObserver` that shows done, running, failed, calls, ETA, tokens and cost."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        rich: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        every: float = 10.0,
    ) -> None:
        self.stream = stream or sys.stderr
        self.rich = self.stream.isatty() if rich is None else rich
        self.clock = clock
        self.every = every  # seconds between plain lines while sessions run
        self.total = self.done = self.failed = self.running = self.tokens = 0
        self.cost: float | None = 0.0
        self.calls = 0  # calls ended in this run: the ETA's rate
        self._began = clock()
        self._said = self._began  # the last plain line
        self._ran = 0  # ended in this run: the ETA's rate where no call is seen
        self._running: dict[int, int] = {}  # a running line's index -> its calls so far
        self._projected: dict[int, int] = {}  # a started line -> its projected calls
        self._ended_calls: list[int] = []  # the calls of each ended session
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

    def _calls_left(self) -> float | None:
        """The calls the sessions not ended will still make, as far as can be told."""
        typical: float | None = None
        if self._ended_calls:
            typical = sum(self._ended_calls) / len(self._ended_calls)
        elif self._projected:
            typical = sum(self._projected.values()) / len(self._projected)
        if typical is None:
            return None
        waiting = self.total - self.done - self.failed - len(self._running)
        running = sum(max(typical - made, 0.0) for made in self._running.values())
        return running + max(waiting, 0) * typical

    def eta(self) -> float | None:
        elapsed = self.clock() - self._began
        left = self._calls_left()
        if self.calls and left is not None:  # at the rate calls end in this run
            return left * elapsed / self.calls
        if not self._ran:
            return None
        return (self.total - self.done - self.failed) * elapsed / self._ran

    def share(self) -> float:
        """How much of the batch is done (0 to 1), in calls where they can be counted."""
        left = self._calls_left()
        made = sum(self._ended_calls) + sum(self._running.values())
        if left is not None and made + left > 0:
            return made / (made + left)
        return (self.done + self.failed) / self.total if self.total else 1.0

    def status(self) -> str:
        return (
            f"{self.done + self.failed}/{self.total} ended, {self.running} running, "
            f"{self.failed} failed, {plural(self.calls, 'call')}, {_eta(self.eta())}, "
            f"{self.tokens:,} tokens, {_money(self.cost)}"
        )

    # -- observer ----------------------------------------------------------------------------
    def begun(self, total: int, already: Sequence[LineResult]) -> None:
        """A batch begins (`moot bench` runs several with one progress): count it from zero."""
        self.close()
        self.done = self.failed = self.running = self.tokens = self._ran = self.calls = 0
        self.cost = 0.0
        self._began = self._said = self.clock()
        self._running, self._projected = {}, {}
        self._ended_calls = [result.calls for result in already]
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
                "batch", total=_STEPS, completed=round(self.share() * _STEPS), status=self.status()
            )
            progress.start()
            self._progress = progress
        elif already:
            self._line(f"{plural(len(already), 'session')} had already finished; {self.status()}")

    def started(self, line: BatchLine) -> None:
        self.running += 1
        self._running[line.index] = 0
        if not self._ended_calls:  # nothing to go by yet: the protocol's worst case
            projected = _projected_calls(line)
            if projected is not None:
                self._projected[line.index] = projected
        self._refresh()

    def called(self, line: BatchLine) -> None:
        """A model call of the line's session ended: the bar, the count and the ETA move."""
        self.calls += 1
        self._running[line.index] = self._running.get(line.index, 0) + 1
        self._refresh()
        if not self.rich and self.clock() - self._said >= self.every:
            self._line(self.status())

    def ended(self, result: LineResult) -> None:
        self.running -= 1
        self._ran += 1
        counted = self._running.pop(result.index, 0)
        self._ended_calls.append(counted or result.calls)  # calls not seen: a remote runner's
        self._add(result)
        if self.rich:
            self._refresh()
            if result.error:
                self._print(f"{result.label}: {status_words(result.status)}: {result.error}")
        else:
            shown = result.error or f"session {result.session_id}"
            said = status_words(result.status)
            self._line(f"{result.label}: {said}: {shown[:120]} | {self.status()}")

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()  # type: ignore[attr-defined]
            self._progress = None

    # -- output ------------------------------------------------------------------------------
    def _refresh(self) -> None:
        if self._progress is not None:
            self._progress.update(  # type: ignore[attr-defined]
                self._task, completed=self.share() * _STEPS, status=self.status()
            )

    def _print(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(clean_text(text), markup=False, highlight=False)  # type: ignore[attr-defined]

    def _line(self, text: str) -> None:
        self._said = self.clock()
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
    counts = ", ".join(
        f"{n} {status_words(status)}" for status, n in sorted(summary.counts.items())
    )
    lines = [
        f"batch {summary.batch_id}: {len(results)} of {plural(total, 'session')} ended "
        f"({counts or 'none'})"
        f" in {summary.seconds:.1f}s; {calls:,} call{'' if calls == 1 else 's'}, "
        f"{tokens:,} token{'' if tokens == 1 else 's'}, {_money(cost)}"
    ]
    failed = summary.failed
    if failed:
        lines.append(f"{len(failed)} did not reach an outcome:")
        for result in failed[:50]:
            where = f" (session {result.session_id})" if result.session_id else ""
            said = status_words(result.status)
            lines.append(f"  {result.label}{where}: {said}: {result.error or '-'}")
        if len(failed) > 50:
            lines.append(f"  ... and {len(failed) - 50} more (see the batch journal)")
    if not summary.complete:
        lines.append(f"continue with: moot batch --resume {summary.batch_id}")
    return [clean_text(line) for line in lines]
