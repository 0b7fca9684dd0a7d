"""Evidence of tampering outside the journal: the files beside it that remember it.

The hash chain and the sealed head catch a line edited or cut. In an unsigned session, someone
who can rewrite the folder can also cut the tail and write a head to match; what they leave
behind still remembers the journal it came from:

- `result.json` records the journal head it was computed from (events and last hash, sealed
  with the result); `report.md` and `report.html` say it too ("Computed from the journal: N
  events, last hash H"). One that names more events than the journal holds, or another hash at
  that length, proves the journal was cut or rewritten.
- `session.json` is covered by the chain: the begin event records the SHA-256 of its content
  (`SESSION_DIGEST`), so an edit to it is seen. Sessions begun before that carry no digest.

A session with such evidence is *tampered*: `moot show` refuses it (exit 1, as for a broken
chain) and `moot resume` refuses to continue it (it would re-ask the lost steps and overwrite
the evidence) unless the user passes `--accept-tampered`; the resume then journals what it
accepted (`ACCEPTED`), and that evidence is not raised again.
"""

from __future__ import annotations

import time
from pathlib import Path

from msgspec import Struct

from moot import lazy
from moot.engine.journal import UNSIGNED_ACCEPTED, Journal
from moot.engine.result import Result, unsealed
from moot.engine.store import SESSION_DIGEST, SessionFolder, read_json, session_digest
from moot.errors import JournalError
from moot.types import Event, EventKind

__all__ = [
    "ACCEPTED",
    "TAMPERED",
    "Evidence",
    "admit",
    "check_evidence",
    "tampering",
]

ACCEPTED = "accepted_tampering"  # a warning's key: the evidence a resume went past knowingly
TAMPERED = "tampered"

# what the reports say of the journal they were computed from (JournalSeal.describe)
_REPORT_HEAD = lazy.pattern(r"Computed from the journal: (\d+) events, last hash ([0-9a-f]{64})")


class Evidence(Struct, frozen=True):
    """One file that proves the journal is not the one it should be."""

    source: str  # the file: result.json, report.md, session.json
    problem: str  # what it proves, in a sentence
    token: str  # what a resume records when its user accepts it

    def __str__(self) -> str:
        return f"{self.source}: {self.problem}"


def _accepted(events: list[Event]) -> set[str]:
    return {
        str(token)
        for e in events
        if e.kind == EventKind.WARNING
        for token in e.data.get(ACCEPTED) or []
    }


def _session_json(folder: SessionFolder, events: list[Event]) -> Evidence | None:
    recorded = events[0].data.get(SESSION_DIGEST) if events else None
    if not isinstance(recorded, str):
        return None  # begun before session.json was covered by the chain
    content = read_json(folder.session_json)
    if content is None:
        problem = "it is missing or not a JSON object, but the begin event records its digest"
        return Evidence("session.json", problem, "session.json:missing")
    digest = session_digest(content)
    if digest == recorded:
        return None
    problem = "it was edited after the session began (its digest is not the begin event's)"
    return Evidence("session.json", problem, f"session.json:{digest}")


def _against(source: str, events: int, head: str, journal: Journal) -> Evidence | None:
    """Evidence from a file computed from a journal of `events` events ending in `head`."""
    count = len(journal.events)
    token = f"{source}:{events}:{head}"
    if events > count:
        return Evidence(
            source,
            f"it was computed from a journal of {events} events (last hash {head[:12]}), but "
            f"events.jsonl holds {count}: events were cut off and the head rewritten",
            token,
        )
    if events and journal.hashes[events - 1] != head:
        return Evidence(
            source,
            f"it was computed from a journal whose event {events} has the hash {head[:12]}, "
            f"but events.jsonl's has {journal.hashes[events - 1][:12]}: it was rewritten",
            token,
        )
    return None


def _result_json(folder: SessionFolder, journal: Journal) -> Evidence | None:
    """A result.json of this session whose own seal holds: an edited or foreign one is the
    result check's business (`seal.check_result`), not evidence about the journal."""
    try:
        result = Result.read(folder.result_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    seal = result.journal
    if seal is None or result.session_id != folder.id or seal.signed != journal.signed:
        return None
    content = unsealed(result, seal.events, seal.head, seal.signed).to_json()
    if journal.seal_text(content) != seal.seal:
        return None
    return _against("result.json", seal.events, seal.head, journal)


def _report(path: Path, journal: Journal) -> Evidence | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    found = _REPORT_HEAD.search(text)
    if found is None:
        return None
    return _against(path.name, int(found.group(1)), found.group(2), journal)


def tampering(folder: SessionFolder, journal: Journal) -> list[Evidence]:
    """Every file in `folder` that proves its (verified) journal was cut or rewritten, or
    that session.json was edited, less what a resume has accepted. Read-only."""
    found = [
        _session_json(folder, journal.events),
        _result_json(folder, journal),
        _report(folder.report_md, journal),
        _report(folder.report_html, journal),
    ]
    accepted = _accepted(journal.events)
    return [e for e in found if e is not None and e.token not in accepted]


def check_evidence(folder: SessionFolder, journal: Journal, *, resuming: bool = False) -> None:
    """Refuse a tampered session, naming the evidence and what to do."""
    evidence = tampering(folder, journal)
    if not evidence:
        return
    listed = "; ".join(str(e) for e in evidence)
    then = (
        f"continuing would ask the lost steps again and overwrite the evidence: restore the "
        f"folder from a backup, or continue knowingly with `moot resume {folder.id} "
        "--accept-tampered` (recorded in the journal)"
        if resuming
        else f"restore the folder from a backup, or go on knowingly with `moot resume "
        f"{folder.id} --accept-tampered` (recorded in the journal)"
    )
    raise JournalError(f"session {folder.id} is {TAMPERED}: {listed}. Refusing: {then}")


def admit(folder: SessionFolder, journal: Journal, *, accept_tampered: bool) -> None:
    """Before a resume appends to `journal`: refuse a tampered session unless
    `accept_tampered`, and journal what its user accepted (this evidence, or a signed session
    continued without its key, `Journal.open(accept_unsigned=True)`)."""
    evidence = tampering(folder, journal)
    if evidence and not accept_tampered:
        journal.close()
        check_evidence(folder, journal, resuming=True)
    if evidence:
        listed = "; ".join(str(e) for e in evidence)
        journal.append(
            _warning(
                f"resumed with --accept-tampered past evidence of tampering: {listed}",
                ACCEPTED,
                [e.token for e in evidence],
            )
        )
    if journal.unverified:
        journal.append(
            _warning(
                f"resumed with --accept-unsigned without MOOT_JOURNAL_KEY, though the session "
                f"was signed ({', '.join(journal.unverified)} say so): its earlier lines are "
                "unverified, its later ones unsigned",
                UNSIGNED_ACCEPTED,
                journal.unverified,
            )
        )


def _warning(message: str, key: str, accepted: list[str]) -> Event:
    return Event(kind=EventKind.WARNING, ts=time.time(), data={"message": message, key: accepted})
