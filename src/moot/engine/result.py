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

import msgspec
from msgspec import Struct
from msgspec.structs import replace

from moot.engine.store import FORMAT_VERSION
from moot.text import clean_text, plural, status_words
from moot.types import (
    ChangeOfMind,
    ClaimAt,
    Finding,
    ModelVerdict,
    Outcome,
    RunVerdict,
    Synthesis,
    alias_label,
    dump,
    load,
    load_json,
)

__all__ = [
    "MISMATCH",
    "AgentUsage",
    "Check",
    "CodeRow",
    "JournalSeal",
    "Result",
    "Status",
    "build_result",
    "code_rows",
    "exit_code_for",
    "unsealed",
]
MISMATCH = "result does not match the journal"

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


class AgentUsage(Struct, forbid_unknown_fields=True):
    model: str
    prompt_tokens: int
    completion_tokens: int
    tokens_estimated: bool
    cost: float | None  # None: unknown
    calls: int
    failures: int


class JournalSeal(Struct, forbid_unknown_fields=True):
    """The journal head a result was computed from, and a seal over the result."""

    events: int  # how many events the journal held
    head: str  # the hash of the last of them
    signed: bool  # the seal is an HMAC with MOOT_JOURNAL_KEY, not a plain SHA-256
    seal: str  # over the result's JSON with this field's seal left empty

    def describe(self) -> str:
        """For reports: which journal head this result was computed from."""
        return f"{self.events} events, last hash {self.head}"


class Result(Struct, kw_only=True, forbid_unknown_fields=True):
    """A session's result.json. `read` reads one (checked); `to_json` writes it."""

    format_version: int = FORMAT_VERSION
    session_id: str
    protocol: str
    task: str
    status: Status
    consensus: bool
    how: str
    trust: str = ""  # how far to trust the outcome, in plain words; shown first everywhere
    final_answer: str
    rounds: int
    disagreements: list[str]
    positions: dict[str, str]
    # moot's finding on the agents' final answers and what it weighed (deliberation/finding.py).
    # Absent from results written before labels were moot's finding, and from outcomes with no
    # claims to compare (a code change picked): left out of the JSON when empty.
    finding: Finding | None = None
    claims: list[ClaimAt] = []
    changes: list[ChangeOfMind] = []
    verdicts: list[ModelVerdict] = []
    synthesis: Synthesis | None = None  # a chairman's final answer (absent: none was asked)
    details: dict[str, Any]
    aliases: dict[str, str]
    agents: dict[str, AgentUsage]
    tokens: int
    cost: float | None
    stop_message: str | None = None
    journal: JournalSeal | None = None  # None: written before results carried it

    @property
    def round_records(self) -> list[Mapping[str, Any]]:
        """The protocol's own records of its rounds, opaque to every face: only the protocol's
        record reads them (`Conduct.describe_round` gives a typed `RoundSummary`)."""
        records = self.details.get("rounds")
        if not isinstance(records, list):
            return []
        return [r for r in records if isinstance(r, Mapping)]

    def code_changes(self, applied: str | None = None) -> list[CodeRow]:
        """A code task's changes, typed (none for a question); `applied` names the change
        `moot apply` applied."""
        return code_rows(self.details, applied)

    @property
    def picked_by(self) -> str | None:
        """Who chose the outcome ("human", "judge", "none") when it is a choice among code
        changes, not agents agreeing. A code task's choice has no typed field in the outcome
        yet: it is the one fact read from the details of a pick."""
        picked = self.details.get("picked_by")
        return picked if isinstance(picked, str) else None

    @property
    def status_words(self) -> str:
        """The status as the outcome line says it: a choice among changes (`picked_by`) is
        "change chosen" or "no change chosen", since nobody deliberated; any other outcome
        moot labels "chosen" (the feature pipeline's) is "chosen", never "consensus"."""
        if self.picked_by is not None:
            if self.status == "consensus":
                return "change chosen"
            if self.status == "no_consensus":
                return "no change chosen"
        if self.status == "consensus" and self.finding is not None:
            if self.finding.label == "chosen":  # a plan approved, a plan carried out
                return "chosen"
        return status_words(self.status)

    def to_json(self) -> str:
        # Without a journal head the field is left out, so a result.json written before it
        # existed reads and writes back byte for byte.
        exclude = {"journal"} if self.journal is None else set()
        if not self.trust:  # results from before trust statements read back byte for byte
            exclude.add("trust")
        # ... and so do results from before moot's finding, and outcomes without claims
        exclude |= {name for name in _TYPED_OUTCOME if not getattr(self, name)}
        data = {k: v for k, v in dump(self).items() if k not in exclude}
        # Indented as pydantic wrote it before (results from then read back byte for byte);
        # the one difference is a float's exponent of 16 or more, written 1e16, not 1e+16.
        return msgspec.json.format(msgspec.json.encode(data), indent=2).decode() + "\n"

    @classmethod
    def read(cls, text: str | bytes) -> Result:
        """A result.json's text, checked: a ValueError names what does not fit."""
        return load_json(text, cls)

    def same_as_stored(self, stored: str) -> bool:
        """Whether `stored` (a result.json's text) is this result, byte for byte; a stored
        result from before results carried their journal head is compared without it."""
        if stored == self.to_json():
            return True
        try:
            old = json.loads(stored)
        except ValueError:
            return False
        unsealed = replace(self, journal=None)
        return isinstance(old, dict) and "journal" not in old and stored == unsealed.to_json()


# The typed outcome's fields: left out of result.json when empty.
_TYPED_OUTCOME = ("finding", "claims", "changes", "verdicts", "synthesis")


class Check(Struct, RunVerdict, frozen=True):
    command: str
    exit_code: int | None
    timed_out: bool
    tail: str
    cut: bool


class CodeRow(Struct, frozen=True):
    """One change: `name` is the worktree (an agent's alias, or a candidate like `b1`)."""

    name: str
    agent: str | None
    status: str
    problem: str
    files: int
    insertions: int
    deletions: int
    checks: tuple[Check, ...]
    patch: str
    chosen: bool
    applied: bool = False

    @property
    def marks(self) -> str:
        """'winner', 'applied', both or neither."""
        return ", ".join(m for m, on in (("winner", self.chosen), ("applied", self.applied)) if on)

    @property
    def title(self) -> str:
        own = "_" in self.name and self.name.rsplit("_", 1)[0].isalpha()
        if own:
            return alias_label(self.name)
        if not self.agent:  # a candidate no agent wrote: the user's change (refine's --input)
            return f"Worktree {self.name}"
        return f"Worktree {self.name} ({alias_label(self.agent)})"

    @property
    def stats(self) -> str:
        return f"{plural(self.files, 'file')}, +{self.insertions} -{self.deletions}"

    @property
    def verified(self) -> str:
        if not self.checks:
            return "not verified"
        passed = sum(1 for c in self.checks if c.passed)
        return f"{passed}/{len(self.checks)} passed"


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def code_rows(details: Mapping[str, Any], applied: str | None = None) -> list[CodeRow]:
    """The changes a result records, the chosen one and the applied one marked (none for a
    question)."""
    rows = details.get("code")
    if not isinstance(rows, Mapping):
        return []
    winner = details.get("winner")
    found = []
    for name, row in rows.items():
        if not isinstance(row, Mapping):
            continue
        checks = tuple(
            Check(
                command=clean_text(str(c.get("command", ""))),
                exit_code=c.get("exit_code") if isinstance(c.get("exit_code"), int) else None,
                timed_out=bool(c.get("timed_out")),
                tail=clean_text(str(c.get("tail", ""))),
                cut=bool(c.get("cut")),
            )
            for c in row.get("checks") or []
            if isinstance(c, Mapping)
        )
        agent = row.get("agent")
        found.append(
            CodeRow(
                name=str(name),
                agent=str(agent) if isinstance(agent, str) else None,
                status=str(row.get("status", "?")),
                problem=clean_text(str(row.get("problem") or "")),
                files=_int(row.get("files")),
                insertions=_int(row.get("insertions")),
                deletions=_int(row.get("deletions")),
                checks=checks,
                patch=clean_text(str(row.get("patch") or "")),
                chosen=name == winner,
                applied=name == applied,
            )
        )
    return found


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
) -> Result:
    """The result of a session (`engine.seal.seal_result` seals it to its journal)."""
    known = [a.cost for a in agents.values()]
    cost = None if any(c is None for c in known) else round(sum(c or 0.0 for c in known), 6)
    tokens = sum(a.prompt_tokens + a.completion_tokens for a in agents.values())
    built = Result(
        session_id=session_id,
        protocol=protocol,
        task=task,
        status=status,
        consensus=bool(outcome and outcome.consensus),
        how=outcome.how if outcome else (stop_message or status),
        trust=outcome.trust if outcome else "",
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
        finding=outcome.finding if outcome else None,
        claims=list(outcome.claims) if outcome else [],
        changes=list(outcome.changes) if outcome else [],
        verdicts=list(outcome.verdicts) if outcome else [],
        synthesis=outcome.synthesis if outcome else None,
    )
    # Read back as result.json will be: a whole cost summed to 0 is the float 0.0 there
    return load(dump(built), Result)


def unsealed(result: Result, events: int, head: str, signed: bool) -> Result:
    stub = JournalSeal(events=events, head=head, signed=signed, seal="")
    return replace(result, journal=stub)
