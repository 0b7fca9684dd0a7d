"""Anonymity between agents: aliases, and quoting that other agents' text cannot escape."""

from __future__ import annotations

import re
import string

__all__ = ["CUT_MARK", "RESERVED_TAGS", "alias_for", "neutralize", "quote"]

# Tags the protocols parse or use as delimiters; agent text must not be able to open or close them.
RESERVED_TAGS = ("solution", "analysis", "verdict", "critique", "quoted", "evidence")
# What `quote` puts where it cut a long text; `markup.strip_markup` removes it from answers.
CUT_MARK = "[... cut for length ...]"
_TAG = re.compile(r"<(\s*/?\s*(?:" + "|".join(RESERVED_TAGS) + r")\b)", re.IGNORECASE)


def alias_for(index: int, role: str = "agent") -> str:
    """agent_a, agent_b, ... agent_z, agent_aa, ... (judge_a, ... with role "judge")"""
    letters = string.ascii_lowercase
    name = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        name = letters[rem] + name
    return f"{role}_{name}"


def neutralize(text: str) -> str:
    """Defuse every reserved tag in `text` by turning its `<` into a look-alike `‹`."""
    return _TAG.sub(r"‹\1", text)


def quote(label: str, text: str, *, nonce: str, limit: int) -> str:
    """`text` by `label`, fenced by a nonce the author never saw, reserved tags defused and
    cut to `limit` characters (head and tail kept)."""
    body = neutralize(text.strip())
    if len(body) > limit:
        half = limit // 2
        body = body[:half] + f"\n{CUT_MARK}\n" + body[-half:]
    return f'<quoted from="{label}" id="{nonce}">\n{body or "(empty)"}\n</quoted id="{nonce}">'
