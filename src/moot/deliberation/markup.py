"""Protocol markup out of answers: the tags and fences moot's prompts use must never reach an
answer, a report or `result.json` (issue 9).

Models echo what they were shown: a `</quoted id="0c218a4f73d5">` fence, a `<solution>` tag, or
its defused form `‹solution>` (see `anonymize.neutralize`). `strip_markup` removes every such tag
and leaves the text between them; `find_markup` lists what is left, for tests and checks.
"""

from __future__ import annotations

import re

from moot.deliberation.anonymize import CUT_MARK, RESERVED_TAGS

__all__ = ["find_markup", "strip_markup"]

_NAMES = "|".join(RESERVED_TAGS)
# An opening or closing reserved tag with any attributes: `<solution>`, `< / Verdict >`,
# `<quoted from="Agent B" id="...">`, `</quoted id="...">`, the defused `‹/quoted ...>`, and the
# escaped `&lt;solution&gt;` of a text that went through HTML once. The name must end at a
# space, `/` or `>` so `<solutions>` (someone's own markup) stays. A quoted attribute may hold
# `>` (a quoted command's label: `from="command: ls > out"`). Attributes are bounded and
# single-line, so hostile text cannot make the scan quadratic; a tag cut off at the very end of
# a text (a truncated reply) still counts.
_TAG_BODY = (
    r"(?:<|‹|&lt;)\s*/?\s*(?:" + _NAMES + r")(?=[\s/>›]|&gt;|$)"
    r"(?:\"[^\"\n]{0,300}(?:\"|$)|[^<>\n\"‹›&]|&(?!gt;|lt;)){0,300}?(?:>|›|&gt;|$)"
)
_TAG = re.compile(_TAG_BODY, re.IGNORECASE)
# A line that holds nothing but tags goes whole, newline included, so no blank lines remain.
_TAG_LINE = re.compile(
    r"^[ \t]*(?:(?:" + _TAG_BODY + r")[ \t]*)+(?:\n|\Z)", re.IGNORECASE | re.MULTILINE
)
_CUT = re.compile(
    r"^[ \t]*" + re.escape(CUT_MARK) + r"[ \t]*(?:\n|\Z)|" + re.escape(CUT_MARK), re.M
)

# what every tag or cut mark starts with: a text with none of them holds no markup
_OPENERS = ("<", "‹", "&", CUT_MARK)


def strip_markup(text: str) -> str:
    """`text` without any of moot's protocol tags or quote fences (plain or defused) and
    without the marks `quote` leaves where it cut; the content between them is kept and the
    result is trimmed. Call it on every text that becomes an answer, report entry or result."""
    if not any(opener in text for opener in _OPENERS):
        return text.strip()  # nothing to strip: the patterns need not scan it
    text = _TAG_LINE.sub("", text)
    text = _TAG.sub("", text)
    return _CUT.sub("", text).strip()


def find_markup(text: str) -> list[str]:
    """The protocol tags and cut marks left in `text`, in order; empty when it is clean."""
    found = [m.group() for m in _TAG.finditer(text)]
    return found + [CUT_MARK] * text.count(CUT_MARK)
