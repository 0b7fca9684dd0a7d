"""What the live view shows: the session's tally (`engine.standing`, the same one the Session and
`state.json` keep) plus what a screen needs to frame it: the session id, protocol and task, and
the protocol's number of rounds. Pure state, no terminal: the live view renders it, and
`moot status` fills one from `state.json`.

Times come from the events' own timestamps and an injected clock, so a test can freeze them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from moot import protocols
from moot.engine.standing import AgentStanding, Standing
from moot.errors import ConfigError
from moot.types import Completion, Event, EventKind

if TYPE_CHECKING:
    from moot.engine.state import Seen

__all__ = ["AgentRow", "Board"]

AgentRow = AgentStanding  # one row of the table: an agent's tally


class Board(Standing):
    session_id: str = ""
    protocol: str = ""
    task: str = ""
    max_rounds: int | None = None

    # -- events -----------------------------------------------------------------------------
    def open(self, meta: Mapping[str, Any], past: Iterable[Event] = ()) -> None:
        """Start from a session's begin meta and the events journaled before this run."""
        self.session_id = str(meta.get("session_id", self.session_id))
        self.protocol = str(meta.get("protocol", self.protocol))
        self.task = str(meta.get("task", self.task))
        try:
            record = protocols.get(self.protocol)
        except ConfigError:  # a protocol this process does not have: no round count
            record = None
        if record is not None:
            self.max_rounds = record.max_rounds(record.options_from(meta.get("config")))
        for alias, spec in (meta.get("aliases") or {}).items():
            self.row(str(alias)).model = str(spec)
        self.absorb(past)

    def apply(self, event: Event, completion: Completion | None = None) -> None:
        if event.kind == EventKind.OPENED:
            self.open(event.data.get("meta") or {}, event.data.get("past") or ())
            return
        super().apply(event, completion)

    # -- state.json -------------------------------------------------------------------------
    @classmethod
    def from_seen(cls, seen: Seen, meta: Mapping[str, Any] | None = None) -> Board:
        """A board from another process's state.json snapshot as `seen_state` reads it (`moot
        status`): a crashed session's clock stopped at its last update."""
        board = cls()
        if meta:
            board.open(meta)
        state, tally = seen.state, seen.standing()
        for name in (
            "round",
            "stage",
            "phase",
            "rounds_done",
            "latest",
            "retries",
            "events",
            "active_before",
            "run_started",
            "ended_at",
        ):
            setattr(board, name, getattr(tally, name))
        for alias, row in tally.agents.items():
            row.model = row.model or (board.agents[alias].model if alias in board.agents else "")
            board.agents[alias] = row
        board.session_id = str(state.get("session_id", board.session_id))
        board.protocol = str(state.get("protocol", board.protocol))
        board.task = str(state.get("task", board.task))
        if board.round == 0 and board.phase is None:
            board.round = None  # nothing asked yet
        board.ended = None if seen.status == "running" else seen.status
        board.message = state.get("message")
        return board
