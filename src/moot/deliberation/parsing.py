"""Pulling structure out of model text: XML-like sections, JSON, the judge's verdict.

Model text is untrusted: it may be empty, huge, malformed, or try to forge our tags. Parsers
raise `FormatError` with a message that can be quoted back to the model in a re-ask.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from msgspec import Struct

from moot import lazy
from moot.errors import FormatError
from moot.text import jsonfix
from moot.text.jsonfix import BALANCE_SCANS, REPAIR_CAP
from moot.types import CUT_MARK

if TYPE_CHECKING:  # pydantic is imported by the first reply a schema reads, not at start-up
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")

__all__ = [
    "BALANCE_SCANS",
    "CONFIDENCE_FIELD",
    "REPAIR_CAP",
    "TEXT_FIELD",
    "JudgeVerdict",
    "extract_json",
    "extract_section",
    "json_object",
    "json_parser",
    "parse_solution",
    "parse_verdict",
    "strict_object",
    "verdict_fields",
]


def extract_section(text: str, tag: str) -> str | None:
    """Text between the first `<tag>` and the first `</tag>` after it; None if either is
    missing. The first closing tag ends the section: whatever follows it (a forged
    `</solution><verdict>...` included) is not part of the answer."""
    opening = re.search(rf"<{tag}\s*>", text, re.IGNORECASE)
    if opening is None:
        return None
    closing = re.search(rf"</{tag}\s*>", text[opening.end() :], re.IGNORECASE)
    if closing is None:
        return None
    return text[opening.end() : opening.end() + closing.start()].strip()


def parse_solution(text: str) -> tuple[str, str]:
    """(solution, analysis) of an answer written in the arena's format."""
    solution = extract_section(text, "solution")
    if solution is None:
        raise FormatError("it has no <solution>...</solution> section")
    if not solution:
        raise FormatError("its <solution> section is empty")
    return solution, extract_section(text, "analysis") or ""


class JudgeVerdict(Struct, frozen=True):
    """A judge's verdict, parsed."""

    decision: Literal["CONSENSUS", "CONTINUE"]
    score: int
    remaining_disagreements: int | None
    base_solution: str | None
    modifications: str
    raw: str


_FIELD = lazy.pattern(r"^\s*[-*]?\s*([a-z_ ]+?)\s*:\s*(.*)$", re.IGNORECASE)


def parse_verdict(text: str) -> JudgeVerdict:
    """The judge's `<verdict>` block. The last block counts: a judge quoting an earlier one
    still has the final word. No block, or no decision and score, is a format error."""
    blocks = re.findall(r"<verdict\s*>(.*?)</verdict\s*>", text, re.IGNORECASE | re.DOTALL)
    if not blocks:
        raise FormatError("it has no <verdict>...</verdict> block")
    fields = verdict_fields(blocks[-1])
    decision_text = fields.get("decision", "").upper()
    if "CONSENSUS" in decision_text and "CONTINUE" not in decision_text:
        decision: Literal["CONSENSUS", "CONTINUE"] = "CONSENSUS"
    elif "CONTINUE" in decision_text:
        decision = "CONTINUE"
    else:
        raise FormatError("its verdict has no 'decision: CONSENSUS' or 'decision: CONTINUE' line")
    score_match = re.search(r"\d+", fields.get("convergence_score", ""))
    if score_match is None:
        raise FormatError("its verdict has no 'convergence_score: N' line with N from 1 to 10")
    score = int(score_match.group())
    if not 1 <= score <= 10:
        raise FormatError(f"its convergence_score {score} is not between 1 and 10")
    remaining = re.search(r"\d+", fields.get("remaining_disagreements", ""))
    base = fields.get("base_solution", "").strip().strip('"').strip() or None
    return JudgeVerdict(
        decision=decision,
        score=score,
        remaining_disagreements=int(remaining.group()) if remaining else None,
        base_solution=base,
        modifications=fields.get("modifications", ""),
        raw=text,
    )


_KEYS = {
    "decision",
    "convergence_score",
    "remaining_disagreements",
    "base_solution",
    "modifications",
}


def verdict_fields(block: str) -> dict[str, str]:
    """A `<verdict>` block's fields as written: `key: value` lines, a value going on over the
    lines that follow it until the next known key."""
    fields: dict[str, str] = {}
    current: str | None = None
    for line in block.strip().splitlines():
        match = _FIELD.match(line)
        key = match.group(1).strip().lower().replace(" ", "_") if match else None
        if match and key in _KEYS:
            current = key
            fields[current] = match.group(2).strip()
        elif current is not None and line.strip():
            fields[current] = (fields[current] + "\n" + line.strip()).strip()
    return fields


# A reply larger than this is not parsed as plain JSON (a recorded reply read back)
_MAX_JSON = 200_000


def json_object(reply: str) -> dict[str, Any] | None:
    """A reply that is one JSON object (in a code fence or not) as a dict, else None: strict
    `json.loads`, no repair, for reading recorded replies back."""
    stripped = reply.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`").removeprefix("json").strip()
    if not stripped.startswith("{") or len(stripped) >= _MAX_JSON:
        return None
    return jsonfix.loads_object(stripped)


def extract_json(text: str, *, repair: bool = True) -> dict[str, Any]:
    """The first JSON object in `text` (fenced or not); optionally repaired when malformed.
    Repair is bounded (text/jsonfix.py): a reply the engine cut at its size cap (it ends with
    `CUT_MARK`) or a candidate longer than `REPAIR_CAP` is not repaired but a `FormatError`; a
    repair the session already made (off the event loop, journaled) is taken as it is, and
    inside `jsonfix.deferring()` a repair not made yet raises `RepairNeeded` to its caller."""
    found = jsonfix.strict_object(text)
    if found is not None:
        return found
    if repair and "{" in text:
        if text.endswith(CUT_MARK):
            raise FormatError("its JSON is malformed and it was cut at the size cap: not repaired")
        start = text.find("{")
        if len(text) - start > REPAIR_CAP:
            raise FormatError(
                f"its JSON is malformed and too long to repair ({len(text) - start} characters,"
                f" over {REPAIR_CAP})"
            )
        target = text[start:]
        known, repaired = jsonfix.recall(target)
        if not known:
            if jsonfix.deferring_now():
                raise jsonfix.RepairNeeded(target)
            repaired = jsonfix.repair(target)
            jsonfix.remember(target, repaired)
        if repaired is not None:
            return repaired
    raise FormatError("it holds no JSON object")


def json_parser(schema: type[M], *, repair: bool = True) -> Callable[[str], M]:
    """A parser for the structured-output ladder: extract the first JSON object (repairing it
    if allowed), then validate it strictly against `schema`. Problems become `FormatError`s
    whose text can be quoted back to the model."""

    def parse(text: str) -> M:
        from pydantic import ValidationError

        data = extract_json(text, repair=repair)
        try:
            return schema.model_validate(data, strict=True)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in item['loc']) or 'the object'}: {item['msg']}"
                for item in exc.errors()
            )
            raise FormatError(f"its JSON does not fit the schema ({problems})") from None

    return parse


# -- building a reply's JSON schema -----------------------------------------------------------
TEXT_FIELD: dict[str, Any] = {"type": "string", "minLength": 1}
CONFIDENCE_FIELD: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}


def strict_object(properties: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema of an object with exactly these properties, every one required (a
    strict backend accepts only that; an optional field is given as nullable instead)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


# -- the same answers as JSON, for backends that enforce a schema (constrained decoding) ------
# A small model that cannot keep to a tag format still fills a schema its decoder enforces, so
# the answers may be asked as JSON where the model enforces schemas (the schemas are the
# protocol's, beside its prompts: the first request carries one); these parse either shape.


def parse_solution_any(text: str) -> tuple[str, str]:
    """(solution, analysis) from the tag format, or from a JSON object's `solution` and
    `analysis` strings."""
    # (a reply that does not start as JSON is parse_solution's, which finds its section once)
    if not text.lstrip().startswith("{") or extract_section(text, "solution") is not None:
        return parse_solution(text)
    data = extract_json(text)
    solution = data.get("solution") if isinstance(data, dict) else None
    if not isinstance(solution, str) or not solution.strip():
        raise FormatError('its JSON has no "solution" text')
    analysis = data.get("analysis") if isinstance(data, dict) else ""
    return solution.strip(), analysis.strip() if isinstance(analysis, str) else ""


def parse_verdict_any(text: str) -> JudgeVerdict:
    """The judge's verdict from a `<verdict>` block, or from a JSON object of its fields
    (`decision`, `convergence_score`, ...)."""
    if "<verdict" in text.lower() or not text.lstrip().startswith("{"):
        return parse_verdict(text)
    data = extract_json(text)
    if not isinstance(data, dict):
        raise FormatError("its verdict is not a JSON object")
    decision = str(data.get("decision", "")).upper()
    if decision not in ("CONSENSUS", "CONTINUE"):
        raise FormatError('its verdict\'s "decision" is not CONSENSUS or CONTINUE')
    score = data.get("convergence_score")
    if not isinstance(score, int) or isinstance(score, bool) or not 1 <= score <= 10:
        raise FormatError('its verdict\'s "convergence_score" is not a whole number from 1 to 10')
    remaining = data.get("remaining_disagreements")
    base = data.get("base_solution")
    return JudgeVerdict(
        decision="CONSENSUS" if decision == "CONSENSUS" else "CONTINUE",
        score=score,
        remaining_disagreements=remaining if isinstance(remaining, int) else None,
        base_solution=base.strip() or None if isinstance(base, str) else None,
        modifications=str(data.get("modifications", "")),
        raw=text,
    )
