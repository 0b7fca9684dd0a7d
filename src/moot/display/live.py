"""The live terminal view (rich Live on stderr): one row per agent with its round, phase,
status, elapsed time, tokens and cost; session totals; the latest score or vote tally; and
progress through the rounds. Driven by the session's events, never by reading files.

Elapsed is an agent's time in asks, from being asked to the answer (ticking while one is in
flight); the total row shows the session's running time over all its runs, as `moot status`,
`moot list` and the limits count it. An ask waiting for a free slot shows as queued until its
call starts. Model names stay hidden while the session runs unless `reveal` is set: the person
watching judges the arguments, not the brands. They appear once the session ends."""

from __future__ import annotations

import contextlib
import io
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.measure import Measurement
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from moot.display.board import Board
from moot.display.face import Face
from moot.display.names import short_models
from moot.display.plain import format_event, result_lines
from moot.text import place_words, plural
from moot.text.rounds import round_result
from moot.text.safe import terminal_safe
from moot.types import Event
from moot.types import alias_label as label

if TYPE_CHECKING:
    from moot.engine.result import Result

__all__ = ["LiveView", "render_board"]

_STATUS_STYLES = {
    "waiting": "dim",
    "queued": "dim",
    "thinking": "bold yellow",
    "retrying": "bold magenta",
    "done": "green",
    "failed": "bold red",
    "stopped": "red",
}
_ENDED_STYLES = {"consensus": "bold green", "no_consensus": "bold yellow", "failed": "bold red"}
# Events whose line stays in the scrollback above the table.
_ABOVE = {
    "opened",
    "attempt",
    "shell",
    "warning",
    "round_result",
    "context_fresh",
    "limits_changed",
    "stopped",
    "failed",
}


def duration(seconds: float) -> str:
    """'4.2s', '42s', '3m 05s', '1h 02m'."""
    if seconds < 10:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"


def _cost(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


def _header(board: Board, now: float) -> RenderableType:
    line = Text()
    line.append("moot ", style="bold")
    line.append(board.protocol or "session", style="bold cyan")
    if board.session_id:
        line.append(f"  {board.session_id}", style="dim")
    if board.ended is not None:  # no progress to show: how far it got
        line.append(_ended_where(board))
        return line
    if board.round is not None:
        line.append("  ")
        line.append(place_words(board.stage, board.round).removeprefix("the "), style="bold")
        if board.max_rounds and board.stage == "round" and board.round:
            line.append(f" of {board.max_rounds}")
        if board.phase:
            line.append(f" ({board.phase.replace('_', ' ')})")
    if not board.max_rounds:
        return line
    progress = Table.grid(padding=(0, 1))
    progress.add_column()
    progress.add_column(width=24)
    progress.add_column()
    bar = ProgressBar(
        total=board.max_rounds, completed=min(board.rounds_done, board.max_rounds), width=24
    )
    progress.add_row(line, bar, Text(f"{board.rounds_done}/{board.max_rounds} rounds done"))
    return progress


def _ended_where(board: Board) -> str:
    """Where an ended session stopped, with its rounds done: `  finished in round 1 (verify);
    1 of at most 1 round done`, `  finished at the first answers (solve); 0 of at most 2 rounds
    done`, or `  paused in task 2 (state); ...`."""
    ended = board.ended or ""
    said = "finished" if ended in ("consensus", "no_consensus") else ended.replace("_", " ")
    where = ""
    if board.round is not None:
        at = " at " if board.stage == "round" and board.round == 0 else " in "
        where = at + place_words(board.stage, board.round, board.phase)
    done = ""
    if board.max_rounds:
        done = f"; {board.rounds_done} of at most {plural(board.max_rounds, 'round')} done"
    return f"  {said}{where}{done}"


def _latest(board: Board) -> Text | None:
    if board.latest is None:
        return None
    latest = board.latest
    text = Text("Latest: ", style="bold")
    text.append(terminal_safe(f"{latest.title.lower()}: {round_result(latest)}"))
    if latest.threshold is not None and latest.score is not None:
        text.append(f" (consensus at {latest.threshold:g})", style="dim")
    return text


def render_board(
    board: Board,
    now: float,
    *,
    reveal: bool = False,
    width: int | None = None,
    outcome: Sequence[str] = (),
) -> RenderableType:
    """The view for one moment. Models are shown with `reveal` or once the session ended;
    `outcome` lines (moot's finding, changes of mind) follow the end line once known.
    Below 100 columns, or where the wide table does not fit (long model names need about 115),
    the table drops its vertical rules and cuts long model names, so each agent keeps one line
    and every column stays on screen (readable at 80x24)."""
    if not board.agents:
        return Text("moot: starting…", style="dim")
    show_models = reveal or board.ended is not None
    narrow = width is not None and width < 100
    table = _table(board, now, show_models=show_models, narrow=narrow)
    if width is not None and not narrow and _too_wide(table, width):
        narrow = True
        table = _table(board, now, show_models=show_models, narrow=True)
    if narrow and show_models and width is not None:
        room = width - _measure(_table(board, now, show_models=False, narrow=True)) - 2
        table = _table(board, now, show_models=True, narrow=True, model_width=room)
    parts: list[RenderableType] = [_header(board, now)]
    if board.task:
        task = " ".join(terminal_safe(board.task).split())
        parts.append(Text(f"Task: {task[:200]}", overflow="ellipsis", no_wrap=True, style="dim"))
    parts.append(table)
    latest = _latest(board)
    if latest is not None:
        parts.append(latest)
    if board.ended is not None:
        ended = Text("Ended: ", style="bold")
        ended.append(board.ended.replace("_", " "), style=_ENDED_STYLES.get(board.ended, "bold"))
        if board.message:
            ended.append(f"  {terminal_safe(board.message)}", style="dim")
        parts.append(ended)
    for line in outcome:
        parts.append(Text(terminal_safe(line), style="bold" if line.startswith("finding") else ""))
    return Group(*parts)


def _too_wide(table: Table, width: int) -> bool:
    """Whether `table` needs more than `width` columns to show every cell whole."""
    return _measure(table) > width


def _measure(table: Table) -> int:
    """The columns `table` needs to show every cell whole."""
    measure = Console(width=10_000, file=io.StringIO())  # measures, never prints
    return Measurement.get(measure, measure.options, table).maximum


def _table(
    board: Board, now: float, *, show_models: bool, narrow: bool, model_width: int = 12
) -> Table:
    """The agents' table; narrow, without edges and with each model in `model_width`
    characters (cut where models differ least, so that different ones stay apart)."""
    table = Table(
        expand=False,
        show_footer=True,
        header_style="bold",
        footer_style="bold",
        box=box.SIMPLE_HEAD if narrow else box.HEAVY_HEAD,
        padding=(0, 1),
        collapse_padding=narrow,
        pad_edge=not narrow,
        show_edge=not narrow,
    )
    table.add_column("Agent", footer="Total", no_wrap=True, min_width=7)
    if show_models:
        model_width = max(12, min(model_width, 32)) if narrow else 32
        table.add_column("Model", no_wrap=True, overflow="ellipsis", max_width=model_width)
        models = iter(short_models([row.model for row in board.agents.values()], model_width))
    table.add_column("Round", justify="right", no_wrap=True)
    table.add_column("Phase", no_wrap=True, overflow="ellipsis", max_width=8 if narrow else None)
    table.add_column("Status", no_wrap=True, min_width=8)
    elapsed = duration(board.elapsed(now))
    table.add_column("Elapsed", justify="right", footer=elapsed, no_wrap=True)
    table.add_column("Calls", justify="right", footer=str(board.calls), no_wrap=True)
    table.add_column("Tokens", justify="right", footer=f"{board.tokens:,}", no_wrap=True)
    table.add_column("Cost", justify="right", footer=_cost(board.cost), no_wrap=True)
    code = any(row.change for row in board.agents.values())  # a code task's diff and checks
    if code:
        table.add_column("Change", no_wrap=True, overflow="ellipsis")
    for row in board.agents.values():
        cells: list[RenderableType] = [label(row.alias)]
        if show_models:
            cells.append(next(models))
        cells += [
            "-" if row.round is None else f"{'J' if row.stage == 'judges' else ''}{row.round}",
            row.phase or "-",
            Text(row.status, style=_STATUS_STYLES.get(row.status, "")),
            duration(row.elapsed(now)),
            str(row.calls),
            f"{row.tokens:,}",
            _cost(row.cost if row.cost_known else None),
        ]
        if code:
            cells.append(row.change or "-")
        table.add_row(*cells)
    return table


class LiveView(Face):
    """A session subscriber that draws the board on a terminal; use it as a context manager
    around the run so that the display is torn down whatever happens."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        reveal: bool = False,
        clock: Callable[[], float] = time.time,
        refresh_per_second: float = 4,
        auto_refresh: bool = True,
    ) -> None:
        self.console = console or Console(stderr=True)
        self.reveal = reveal
        self.clock = clock
        self.board = Board()
        self.outcome_lines: list[str] = []  # moot's finding, once the run's outcome is known
        self._open = False  # inside the caller's `with`: the only time the display may draw
        self._paused = False  # the user is answering a question: no drawing
        self._lock = threading.Lock()  # events arrive on the loop; refreshes on rich's thread
        self._live = Live(
            console=self.console,
            get_renderable=self.renderable,
            refresh_per_second=refresh_per_second,
            auto_refresh=auto_refresh,
            transient=False,
        )

    def renderable(self) -> RenderableType:
        with self._lock:
            width = self.console.width
            return render_board(
                self.board,
                self.clock(),
                reveal=self.reveal,
                width=width,
                outcome=self.outcome_lines,
            )

    def handle(self, event: Event) -> None:
        with self._lock:
            self.board.apply(event)
        if not self._live.is_started and self._open and not self._paused:
            self._live.start()  # on the first event: a run that never starts draws nothing
        line = None
        if event.kind in _ABOVE or (
            event.kind == "ask" and (event.data.get("completion") or {}).get("status") != "ok"
        ):
            line = format_event(event, reveal=self.reveal)
        if line:
            self.console.print(Text(line), soft_wrap=True, highlight=False)
        if self._live.is_started:
            self._live.refresh()

    def show_outcome(self, result: Result) -> None:
        """The end of the view: how the run ended and moot's finding, drawn in the last frame
        (or printed, if the view never drew)."""
        with self._lock:
            self.board.ended = result.status
            self.outcome_lines = result_lines(result) if self.finding else []
        if self._live.is_started:
            self._live.refresh()
        else:
            for line in self.outcome_lines:  # wrapped at words, as in the last frame
                self.console.print(Text(terminal_safe(line)), highlight=False)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The board stops redrawing (its last frame stays) while the user types an answer."""
        started = self._live.is_started
        self._paused = True
        if started:
            self._live.stop()
        try:
            yield
        finally:
            self._paused = False
            if started and self._open:
                self._live.start()

    def open(self) -> None:
        self._open = True

    def close(self) -> None:
        self._open = False
        if self._live.is_started:
            self._live.refresh()
            self._live.stop()
