"""Wording every face shares, and model text made safe to show.

Text helpers shared by the faces (live view, plain lines, JSON logs, reports, `moot show`):
model text made safe to show, short summaries of answers, and moot's finding in words (its label
and reason, each agent's claim after every round, who changed their mind, the model verdicts
weighed as evidence, marked where moot's check does not bear them out). Pure functions.

The finding is read from the typed outcome (`Result.finding`, `claims`, `changes`,
`verdicts`), never from a protocol's details. Claims and verdicts quote model text: the lines
here are one line each, without control characters; each face still escapes them for its
medium (HTML, Markdown, a terminal)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from msgspec import Struct

from moot import lazy
from moot.types import ChangeOfMind, ClaimAt, Finding, ModelVerdict, Step, stage_title
from moot.types import alias_label as label

if TYPE_CHECKING:
    from moot.text import safe
else:
    (safe,) = lazy.modules("moot.text", "safe")  # text that is not printable as it is

__all__ = [
    "FINDING_LABELS",
    "ClaimsTable",
    "bound_problem",
    "change_line",
    "claims_table",
    "clean_text",
    "cut",
    "finding_line",
    "joined",
    "label_text",
    "one_line",
    "outcome_lines",
    "parted",
    "place_words",
    "plural",
    "round_title",
    "round_words",
    "rounds_words",
    "status_words",
    "step_place",
    "summarize",
    "verdict_line",
]

# Category Cc (C0, DEL, C1) except tab and newline, bidirectional embeddings, overrides and
# isolates (they reorder what a terminal or a browser shows, as text.safe says), and lone
# surrogates (Cs): one regex pass instead of a per-character category lookup (reports of long
# sessions clean megabytes).
_CONTROL = lazy.pattern("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name `name` most likely misspells, if one is close (for a "did you mean")."""
    import difflib  # here: only a mistake needs it, and a run starts without it

    # 0.7, not difflib's 0.6: "nope" is no misspelling of "openai" (0.6), and every typo
    # tried (a letter missed, doubled or swapped: "antropic", "lamma", "pik") is 0.8 or more
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.7)
    return close[0] if close else None


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 agent`, `2 agents`; `many` where adding an s is wrong (`pass`, `passes`)."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def status_words(status: str) -> str:
    """A session status or finding label in words, for a person: 'no consensus', 'budget
    exceeded' (the JSON keeps its code value, 'no_consensus')."""
    return status.replace("_", " ")


# A missed bound (config/reading.py's Problem kind) -> the limit it names and how the value
# misses it
_MISSED = {
    "greater_than_equal": ("ge", "is less than"),
    "greater_than": ("gt", "is not more than"),
    "less_than_equal": ("le", "is more than"),
    "less_than": ("lt", "is not less than"),
}


def bound_problem(
    kind: str, value: object, limits: dict[str, float], whole: bool, owner: str | None = None
) -> str | None:
    """A number out of its bounds in words, with what is taken: '50 is more than 10; the court
    protocol takes a whole number from 1 to 10' (`owner`, who sets the bounds), else '...; give
    a number from 0 to 2'. `kind` is the validation error's type, `limits` the field's bounds
    (ge, gt, le, lt); None for another kind of error."""
    if kind not in _MISSED or _MISSED[kind][0] not in limits:
        return None
    key, missed = _MISSED[kind]

    def shown(number: float) -> str:
        return f"{number:g}"

    low = limits.get("ge", limits.get("gt"))
    high = limits.get("le", limits.get("lt"))
    what = "a whole number" if whole else "a number"
    if "ge" in limits and "le" in limits:
        takes = f"{what} from {shown(limits['ge'])} to {shown(limits['le'])}"
    elif low is not None and high is not None:
        above = "at least" if "ge" in limits else "more than"
        below = "at most" if "le" in limits else "less than"
        takes = f"{what} {above} {shown(low)} and {below} {shown(high)}"
    elif low is not None:
        at_least = "of {} or more" if "ge" in limits else "more than {}"
        takes = f"{what} " + at_least.format(shown(low))
    else:
        at_most = "of at most" if "le" in limits else "less than"
        takes = f"{what} {at_most} {shown(high or 0)}"
    said = f"{value!r} {missed} {shown(limits[key])}"
    return f"{said}; {owner} takes {takes}" if owner else f"{said}; give {takes}"


def round_words(number: int) -> str:
    """A round in words: round 0 holds the first, independent answers, before any further
    round ('the first answers'); the others are 'round N'."""
    return "the first answers" if number == 0 else f"round {number}"


def round_title(stage: str, number: int | None) -> str:
    """A round's heading: 'First answers' for round 0, else 'Round 2', 'Judge round 1'."""
    if stage == "round" and number == 0:
        return "First answers"
    return stage_title(stage, number)


def place_words(stage: str | None, number: int | None, phase: str | None = None) -> str:
    """Where a session is, in words: 'the first answers (solve)', 'round 2 (evaluate)',
    'judge round 1 (score)', 'task 3 (state)'."""
    if number is None:
        where = (stage or "").replace("_", " ")
    elif stage in (None, "round"):
        where = round_words(number)
    else:
        where = stage_title(stage, number).lower()
    return f"{where} ({phase.replace('_', ' ')})" if phase else where


def rounds_words(done: int, most: int | None = None) -> str:
    """The rounds a session did after its first answers: 'no round after the first answers
    (of at most 2)', '1 round of at most 2'."""
    if done == 0:
        return "no round after the first answers" + (f" (of at most {most})" if most else "")
    return plural(done, "round") + (f" of at most {most}" if most and done <= most else "")


def step_place(step: str | None) -> str:
    """Where a step id is, in words, without its agent (the line names it): 'round 1
    (evaluate)', 'the first answers (solve), asked again', 'judge round 2 (score)'. A step id
    that is no stage (a free name) is returned as it is."""
    parsed = Step.parse(step)
    if parsed.number is None:
        return step or "-"
    where = place_words(parsed.stage, parsed.number, parsed.phase)
    return where + (", asked again" if parsed.reask else "")


def clean_text(text: str) -> str:
    """Model text without escape sequences (payload included: an OSC title or hyperlink
    leaves nothing behind), control characters and bidirectional overrides and isolates;
    newlines and tabs stay."""
    # Nothing to remove in a printable text, nor in one that is printable but for its newlines
    # and tabs (no answer of several lines is printable): each test runs in C, where the
    # patterns would be tried at every character, and an ASCII text's in one pass of bytes.
    if text.isprintable():
        return text
    if text.isascii():
        if not text.encode("ascii").translate(None, _ASCII_KEPT):
            return text
    elif text.replace("\n", "").replace("\t", "").isprintable():
        return text
    return _CONTROL.sub("", safe.strip_sequences(text))


# The ASCII that clean_text keeps as it is: the printable characters, newline and tab (each
# other one is a control character, or ESC, which starts a sequence)
_ASCII_KEPT = bytes([ord("\t"), ord("\n"), *range(0x20, 0x7F)])


_VERDICT = lazy.pattern(r"<verdict\s*>(.*?)</verdict\s*>", re.IGNORECASE | re.DOTALL)
_SECTION = lazy.pattern(r"<solution\s*>(.*?)(?:</solution\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_TAG = lazy.pattern(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?>")
_EMPHASIS = lazy.pattern(r"\*\*|__|`")


def summarize(text: str, limit: int = 280) -> str:
    """A short, one-paragraph account of a model's answer: the fields of its last verdict
    block, the scalar fields of a JSON answer, or else the opening of its solution."""
    text = clean_text(text).strip()
    if not text:
        return "(empty)"
    verdicts = _VERDICT.findall(text)
    if verdicts:
        fields = [line.strip(" -*") for line in verdicts[-1].strip().splitlines() if line.strip()]
        return cut("; ".join(fields), limit)
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            scalars = [
                f"{key}: {value}"
                for key, value in data.items()
                if isinstance(value, str | int | float | bool) and str(value).strip()
            ]
            if scalars:
                return cut("; ".join(scalars), limit)
    section = _SECTION.search(text)
    body = section.group(1) if section else text
    lines = []
    for raw in body.splitlines():
        line = raw.strip()
        heading = line.startswith("#")
        line = line.lstrip("#>*-` ").strip()
        if line:
            lines.append(line + ":" if heading and not line.endswith(":") else line)
    return cut(" ".join(lines), limit)


def cut(text: str, limit: int) -> str:
    """One line of at most `limit` characters, tags and emphasis marks removed."""
    text = _EMPHASIS.sub("", _TAG.sub(" ", text))
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def parted(before: str, after: str, limit: int) -> tuple[str, str]:
    """`before` and `after` flattened to one line, and, when their first `limit` characters are
    the same but the texts are not, both taken from a little before where they part, behind a
    "…": quoted to `limit`, "{{Your answer}}, Your …" twice would say nothing changed."""
    a, b = " ".join(before.split()), " ".join(after.split())
    if a == b or a[:limit] != b[:limit]:
        return a, b
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    start = a.rfind(" ", 0, max(0, at - limit // 3)) + 1  # a word's start, a third back
    return "…" + a[start:], "…" + b[start:]


# -- moot's finding in words ---------------------------------------------------------------
FINDING_LABELS = {
    "consensus": "Consensus",
    "persuasion": "Converged by persuasion",
    "no_consensus": "No consensus",
    "tie": "Tie",
    "converged": "Converged",
    "chosen": "Chosen",
}


def one_line(text: str, limit: int = 200) -> str:
    """Model text as one printable line of at most `limit` characters."""
    return cut(" ".join(clean_text(text).split()), limit)


def label_text(label_: str) -> str:
    return FINDING_LABELS.get(label_, label_.replace("_", " ").capitalize())


def finding_line(finding: Finding) -> str:
    """'No consensus: the final answers differ: 408 (A); 418 (B)'; a reason that already names
    its label ('converged by persuasion: ...', 'a tie: ...') is not prefixed twice."""
    name = label_text(finding.label)
    reason = one_line(finding.reason, 600)
    said = reason.lower()
    if said.startswith((name.lower(), "a " + name.lower())):
        return reason[:1].upper() + reason[1:]
    return f"{name}: {reason}"


def joined(words: Sequence[str]) -> str:
    """`A`, `A and B`, `A, B and C`."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _names(agents: Sequence[str]) -> str:
    return joined([label(a) for a in agents])


def change_line(change: ChangeOfMind) -> str:
    """'Agent B moved from '418' to '408' in round 1 after Agent A's critique'."""
    after = f" after {_names(change.critics)}'s critique" if change.critics else ""
    before, now = parted(change.before, change.after, 60)
    return (
        f"{label(change.agent)} moved from '{one_line(before, 60)}' to "
        f"'{one_line(now, 60)}' in round {change.round}{after}"
    )


def not_upheld(verdict: ModelVerdict) -> str:
    """Why a verdict is not borne out, in the words every face uses."""
    role = one_line(verdict.role, 40) or "model"
    if verdict.claims_agreement:
        return f"the {role} called it consensus; moot's check does not bear it out"
    return f"the {role} did not call it consensus; moot's check finds agreement"


def verdict_line(verdict: ModelVerdict) -> str:
    """'Agent C (judge, round 1): called it consensus (10/10); not upheld: the judge called it
    consensus; moot's check does not bear it out'."""
    by = one_line(verdict.by, 60)
    if verdict.role and verdict.role.lower() not in by.lower():  # "Agent C", not "... (judge)"
        where = one_line(verdict.role, 40)
        where += f", round {verdict.round}" if verdict.round is not None else ""
        by = f"{by} ({where})"
    head = f"{by}: {one_line(verdict.says)}"
    if not verdict.valid:
        return f"{head}; invalid verdict: {one_line(verdict.problem)}"
    if not verdict.upheld:
        return f"{head}; not upheld: {not_upheld(verdict)}"
    return f"{head}; upheld by moot's check"


class ClaimsTable(Struct, frozen=True):
    """Each agent's claim after every round: `rows` in the order agents first appear, one cell
    per round (None: no record for that round)."""

    rounds: list[int]
    rows: list[tuple[str, list[ClaimAt | None]]]

    @staticmethod
    def cell(claim: ClaimAt | None, limit: int = 60) -> str:
        if claim is None:
            return "-"
        if not claim.valid:
            return f"invalid: {one_line(claim.reason or 'no valid answer', limit)}"
        if claim.kept:  # the round's own answer was not taken: say why, not just the old one
            return f"kept: {one_line(claim.claim, limit)} ({one_line(claim.kept, limit)})"
        return one_line(claim.claim, limit) or "(empty)"


def claims_table(claims: Sequence[ClaimAt]) -> ClaimsTable:
    rounds = sorted({c.round for c in claims})
    agents: list[str] = []
    at: dict[tuple[str, int], ClaimAt] = {}
    for c in claims:
        if c.agent not in agents:
            agents.append(c.agent)
        at[(c.agent, c.round)] = c
    return ClaimsTable(rounds, [(a, [at.get((a, r)) for r in rounds]) for a in agents])


def outcome_lines(
    finding: Finding | None,
    changes: Sequence[ChangeOfMind] = (),
    verdicts: Sequence[ModelVerdict] = (),
) -> list[str]:
    """The finding as plain lines, for the end of a run (plain log, live view)."""
    if finding is None:
        return []
    lines = [f"finding: {finding_line(finding)}"]
    lines += [f"changed their mind: {change_line(c)}" for c in changes]
    lines += [f"model verdict: {verdict_line(v)}" for v in verdicts if not v.valid or not v.upheld]
    return lines
