"""Text helpers shared by the faces (live view, plain lines, reports): model text made safe to
show, and short summaries of answers. Pure functions."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from moot.textsafe import strip_sequences

__all__ = ["clean_text", "cut", "plural", "summarize"]

# Category Cc (C0, DEL, C1) except tab and newline, and lone surrogates (Cs): one regex pass
# instead of a per-character category lookup (reports of long sessions clean megabytes).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name `name` most likely misspells, if one is close (for a "did you mean")."""
    import difflib  # here: only a mistake needs it, and a run starts without it

    close = difflib.get_close_matches(name, list(known), n=1)
    return close[0] if close else None


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 agent`, `2 agents`; `many` where adding an s is wrong (`pass`, `passes`)."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def clean_text(text: str) -> str:
    """Model text without escape sequences (payload included: an OSC title or hyperlink
    leaves nothing behind) and control characters; newlines and tabs stay."""
    if text.isprintable():
        return text
    return _CONTROL.sub("", strip_sequences(text))


_VERDICT = re.compile(r"<verdict\s*>(.*?)</verdict\s*>", re.IGNORECASE | re.DOTALL)
_SECTION = re.compile(r"<solution\s*>(.*?)(?:</solution\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?>")
_EMPHASIS = re.compile(r"\*\*|__|`")


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
