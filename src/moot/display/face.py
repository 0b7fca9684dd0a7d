"""The base of every display face: a session subscriber that is also a context manager (the
CLI opens it around a run), and that never lets its own bug stop a deliberation."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Self

from moot.types import Event

if TYPE_CHECKING:
    from moot.engine.result import Result

__all__ = ["Face"]


class Face:
    """Subscribe an instance with `Session.subscribe` (or pass it to `runner.start`)."""

    _broken = False
    # Whether the face's end says moot's finding, changes of mind and verdicts not borne out
    # (`show_outcome`); off where the outcome is printed after it (`moot run` without --json),
    # so that a person reads each once. Machine output (JSON logs) keeps it whole.
    finding = True

    def __call__(self, event: Event) -> None:
        if self._broken:
            return
        try:
            self.handle(event)
        except Exception as exc:  # a display bug must not stop a paid deliberation
            self._broken = True
            print(
                f"moot: the display stopped after an error ({type(exc).__name__}: {exc}); "
                "the session goes on",
                file=sys.stderr,
            )

    def handle(self, event: Event) -> None:
        """Show one event; the base face shows nothing (`--quiet`)."""

    def outcome(self, result: Result) -> None:
        """Show how the run ended, once its outcome is known (the CLI calls it before it
        closes the face): moot's finding, changes of mind, verdicts not borne out."""
        if self._broken:
            return
        try:
            self.show_outcome(result)
        except Exception as exc:  # as for events: a display bug must not hide the outcome
            self._broken = True
            print(
                f"moot: the display stopped after an error ({type(exc).__name__}: {exc})",
                file=sys.stderr,
            )

    def show_outcome(self, result: Result) -> None:
        """The base face shows nothing."""

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Stop drawing while the user answers a question on the terminal (a code task's
        pick); the base face draws nothing, so there is nothing to stop."""
        yield

    def open(self) -> None:
        """Begin the run's display (the CLI's `with` enters the face); the base face has
        nothing to begin."""

    def close(self) -> None:
        """End the run's display, whatever happened in it (the `with` exits, or the CLI
        closes the face before it prints the outcome); the base face has nothing to end."""

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
