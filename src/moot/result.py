"""`result.json`: the versioned outcome of a session, built from the journal alone.

Everything here derives from journaled data (no clock, no environment), so `moot replay` can
rebuild it byte for byte.

A result carries the journal head it was computed from (how many events, the last one's hash)
and a seal over its own content: a SHA-256, or with MOOT_JOURNAL_KEY an HMAC. `show`, `export`
and `list` check both (`check_result`), so an edited result.json, or one left from before the
journal grew, is reported as not matching the journal instead of being shown. Results written
before this field existed still load; in a folder whose session.json says its journal is sealed
a missing field counts as an edit."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from moot.engine.journal import Journal, key_from_env
from moot.engine.store import SessionFolder
from moot.errors import JournalError
from moot.types import Outcome

__all__ = [
    "FORMAT_VERSION",
    "MISMATCH",
    "AgentUsage",
    "JournalSeal",
    "Result",
    "Status",
    "build_result",
    "check_result",
    "exit_code_for",
    "folder_result_problem",
    "result_problem",
    "seal_result",
]
MISMATCH = "result does not match the journal"

FORMAT_VERSION = 1
Status = Literal["consensus", "no_consensus", "failed", "paused", "interrupted"]

_EXIT_CODES: dict[str, int] = {
    "consensus": 0,
    "no_consensus": 2,
    "failed": 1,
    "paused": 3,
    "interrupted": 130,
}


def exit_code_for(status: str) -> int:
    return _EXIT_CODES.get(status, 1)


class AgentUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    prompt_tokens: int
    completion_tokens: int
    tokens_estimated: bool
    cost: float | None  # None: unknown
    calls: int
    failures: int


class JournalSeal(BaseModel):
    """The journal head a result was computed from, and a seal over the result."""

    model_config = ConfigDict(extra="forbid")

    events: int  # how many events the journal held
    head: str  # the hash of the last of them
    signed: bool  # the seal is an HMAC with MOOT_JOURNAL_KEY, not a plain SHA-256
    seal: str  # over the result's JSON with this field's seal left empty

    def describe(self) -> str:
        """For reports: which journal head this result was computed from."""
        return f"{self.events} events, last hash {self.head}"


class Result(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format_version: int = FORMAT_VERSION
    session_id: str
    protocol: str
    task: str
    status: Status
    consensus: bool
    how: str
    final_answer: str
    rounds: int
    disagreements: list[str]
    positions: dict[str, str]
    details: dict[str, Any]
    aliases: dict[str, str]
    agents: dict[str, AgentUsage]
    tokens: int
    cost: float | None
    stop_message: str | None = None
    journal: JournalSeal | None = None  # None: written before results carried it

    def to_json(self) -> str:
        # Without a journal head the field is left out, so a result.json written before it
        # existed reads and writes back byte for byte.
        exclude = {"journal"} if self.journal is None else None
        return self.model_dump_json(indent=2, exclude=exclude) + "\n"

    def same_as_stored(self, stored: str) -> bool:
        """Whether `stored` (a result.json's text) is this result, byte for byte; a stored
        result from before results carried their journal head is compared without it."""
        if stored == self.to_json():
            return True
        try:
            old = json.loads(stored)
        except ValueError:
            return False
        unsealed = self.model_copy(update={"journal": None})
        return isinstance(old, dict) and "journal" not in old and stored == unsealed.to_json()


def build_result(
    *,
    session_id: str,
    protocol: str,
    task: str,
    aliases: Mapping[str, str],
    agents: Mapping[str, AgentUsage],
    outcome: Outcome | None,
    status: Status,
    stop_message: str | None = None,
    journal: Journal | None = None,
) -> Result:
    """The result of a session; with `journal`, sealed to the journal it was computed from."""
    known = [a.cost for a in agents.values()]
    cost = None if any(c is None for c in known) else round(sum(c or 0.0 for c in known), 6)
    tokens = sum(a.prompt_tokens + a.completion_tokens for a in agents.values())
    result = Result(
        session_id=session_id,
        protocol=protocol,
        task=task,
        status=status,
        consensus=bool(outcome and outcome.consensus),
        how=outcome.how if outcome else (stop_message or status),
        final_answer=outcome.final_answer if outcome else "",
        rounds=outcome.rounds if outcome else 0,
        disagreements=list(outcome.disagreements) if outcome else [],
        positions=dict(outcome.positions) if outcome else {},
        details=dict(outcome.details) if outcome else {},
        aliases=dict(aliases),
        agents=dict(agents),
        tokens=tokens,
        cost=cost,
        stop_message=stop_message,
    )
    return result if journal is None else seal_result(result, journal)


def _unsealed(result: Result, events: int, head: str, signed: bool) -> Result:
    stub = JournalSeal(events=events, head=head, signed=signed, seal="")
    return result.model_copy(update={"journal": stub})


def seal_result(result: Result, journal: Journal) -> Result:
    """`result` carrying the journal's head and a seal over its content (with the key if the
    journal has one)."""
    stub = _unsealed(result, len(journal.events), journal.last_hash, journal.signed)
    assert stub.journal is not None
    seal = journal.seal_text(stub.to_json())
    return stub.model_copy(update={"journal": stub.journal.model_copy(update={"seal": seal})})


def result_problem(result: Result, journal: Journal, *, sealed_folder: bool) -> str | None:
    """Why `result` was not computed from `journal` as it stands, or None if it was (or if it
    predates sealed results). A result from a prefix of the journal is fine when a later run
    started after it: faces then show the journal instead."""
    seal = result.journal
    if seal is None:
        return "result.json carries no journal head (it was edited)" if sealed_folder else None
    if journal.signed and not seal.signed:
        return "result.json is not signed, but the journal is (it was edited)"
    if seal.signed and not journal.signed:
        return "result.json is signed: set MOOT_JOURNAL_KEY to check it"
    expected = journal.seal_text(_unsealed(result, seal.events, seal.head, seal.signed).to_json())
    if seal.seal != expected:
        return "result.json was edited after it was computed (its seal does not match)"
    count = len(journal.events)
    if seal.events > count or (seal.events and journal.hashes[seal.events - 1] != seal.head):
        return (
            f"result.json was computed from a different journal ({seal.events} events, "
            f"head {seal.head[:12]}; this one holds {count})"
        )
    later = [e.kind for e in journal.events[seal.events :]]
    if later and "run_started" not in later:
        return (
            f"result.json was computed from the first {seal.events} of the journal's {count} "
            "events, and no run started after it"
        )
    return None


def check_result(folder: SessionFolder, result: Result, journal: Journal) -> None:
    """Refuse to show `result` unless it was computed from `journal`."""
    sealed = bool((folder.meta() or {}).get("journal_head"))
    problem = result_problem(result, journal, sealed_folder=sealed)
    if problem is not None:
        raise JournalError(
            f"session {folder.id}: {MISMATCH}: {problem}. The journal is the record: "
            f"`moot replay {folder.id}` recomputes the outcome from it, and for a finished "
            f"session `moot resume {folder.id}` rewrites result.json and the reports"
        )


def folder_result_problem(folder: SessionFolder) -> str | None:
    """For `moot list`: None if the folder's result.json (if any) matches its journal, else a
    short line saying why not (the journal itself refused included). Read-only."""
    from moot.migrate import folder_version  # migrate builds on this module

    if not folder.result_json.exists():
        return None
    if folder_version(folder) < FORMAT_VERSION:
        return f"written by an older moot; upgrade it with: moot migrate {folder.id}"
    try:
        journal, _ = Journal.open(folder.events, key_from_env(), repair=False)
    except JournalError as exc:
        return f"journal refused: {exc}"
    try:
        result = Result.model_validate_json(folder.result_json.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"{MISMATCH}: result.json cannot be read ({type(exc).__name__})"
    sealed = bool((folder.meta() or {}).get("journal_head"))
    problem = result_problem(result, journal, sealed_folder=sealed)
    return None if problem is None else f"{MISMATCH}: {problem}"
