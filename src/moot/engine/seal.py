"""Results sealed to their journal: `result.json` carries the journal head it was computed from
and a seal over its own content (an HMAC with MOOT_JOURNAL_KEY), and the faces refuse to show
a result that does not match the journal as it stands."""

from __future__ import annotations

from msgspec.structs import replace

from moot.engine.evidence import TAMPERED, tampering
from moot.engine.journal import Journal, key_from_env
from moot.engine.result import MISMATCH, Result, unsealed
from moot.engine.store import FORMAT_VERSION, SessionFolder, folder_version
from moot.errors import JournalError

__all__ = ["check_result", "folder_result_problem", "result_problem", "seal_result"]


def seal_result(result: Result, journal: Journal) -> Result:
    """`result` carrying the journal's head and a seal over its content (with the key if the
    journal has one)."""
    stub = unsealed(result, len(journal.events), journal.last_hash, journal.signed)
    assert stub.journal is not None
    seal = journal.seal_text(stub.to_json())
    return replace(stub, journal=replace(stub.journal, seal=seal))


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
    expected = journal.seal_text(unsealed(result, seal.events, seal.head, seal.signed).to_json())
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
    if not folder.result_json.exists():
        return None
    if folder_version(folder) < FORMAT_VERSION:
        return f"written by an older moot; upgrade it with: moot migrate {folder.id}"
    try:
        journal, _ = Journal.open(folder.events, key_from_env(), repair=False)
    except JournalError as exc:
        return f"journal refused: {exc}"
    evidence = tampering(folder, journal)
    if evidence:
        return f"{TAMPERED}: " + "; ".join(str(e) for e in evidence)
    try:
        result = Result.read(folder.result_json.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"{MISMATCH}: result.json cannot be read ({type(exc).__name__})"
    sealed = bool((folder.meta() or {}).get("journal_head"))
    problem = result_problem(result, journal, sealed_folder=sealed)
    return None if problem is None else f"{MISMATCH}: {problem}"
