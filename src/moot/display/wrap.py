"""Paragraphs fitted to a terminal's width at word boundaries.

A terminal wraps a long line wherever its last column falls, mid-word; the outcome printed
after a run (the answer, how it ended, how far to trust it) reads better broken between words.
Only for a terminal: piped text keeps its lines as they are, for the scripts that read it."""

from __future__ import annotations

import re
import textwrap

__all__ = ["fit_paragraphs"]

_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+")


def fit_paragraphs(text: str, width: int) -> str:
    """`text` with each line longer than `width` broken between words; a continuation keeps
    the line's indent (under a list item, the item's text). Lines inside a code fence, and
    words longer than the width (an address), stay whole."""
    if width < 20:  # too narrow to help: the terminal wraps it anyway
        return text
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        if fenced or len(line) <= width or not line.strip():
            out.append(line)
            continue
        indent = re.match(r"\s*", line)
        item = _LIST.match(line)
        hang = " " * len(item.group(0)) if item else (indent.group(0) if indent else "")
        out += textwrap.wrap(
            line,
            width,
            subsequent_indent=hang,
            break_long_words=False,
            break_on_hyphens=False,
            drop_whitespace=True,
        ) or [line]
    return "\n".join(out)
