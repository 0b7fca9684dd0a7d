"""Hunk line counts of a model's diff, recomputed.

Models rarely count hunk lines right, and `git apply --recount` cannot help with the diffs they
usually write: without `diff --git` lines between files, git's recount reads the next file's
`--- a/...` header as a removed line. Here a file header is recognised by its shape (`--- `,
`+++ `, then `@@ `), which no hunk body can take, so each hunk ends where the next begins.
"""

from __future__ import annotations

import re

__all__ = ["recount"]

_HUNK = re.compile(rb"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)", re.DOTALL)


def _file_header(lines: list[bytes], i: int) -> bool:
    return (
        lines[i].startswith(b"--- ")
        and i + 2 < len(lines)
        and lines[i + 1].startswith(b"+++ ")
        and lines[i + 2].startswith(b"@@ ")
    )


def _body_line(lines: list[bytes], i: int) -> bool:
    line = lines[i]
    if line.startswith(b"--- ") and _file_header(lines, i):
        return False
    return line == b"" or line[:1] in (b" ", b"-", b"+", b"\\")


def recount(patch: bytes) -> bytes:
    """`patch` with each hunk header's line counts set to what its body holds.

    Blank lines closing a hunk are ambiguous: an empty context line whose leading space the
    model dropped, or spacing before the next file or some prose. As many count as the model's
    own header asked for; the rest are left outside the hunk."""
    ends_with_newline = patch.endswith(b"\n")
    lines = patch.split(b"\n")
    if ends_with_newline:
        lines.pop()  # the empty "line" after the final newline is no line of the diff
    out: list[bytes] = []
    i = 0
    while i < len(lines):
        match = _HUNK.fullmatch(lines[i])
        if match is None:
            out.append(lines[i])
            i += 1
            continue
        end = i + 1
        while end < len(lines) and _body_line(lines, end):
            end += 1
        body = lines[i + 1 : end]
        blank = 0
        while blank < len(body) and body[len(body) - 1 - blank] == b"":
            blank += 1
        kept = body[: len(body) - blank]
        old = sum(1 for line in kept if line[:1] in (b" ", b"-", b""))
        new = sum(1 for line in kept if line[:1] in (b" ", b"+", b""))
        claimed = re.match(rb"@@ -\d+(?:,(\d+))?", lines[i])
        asked = int(claimed.group(1)) if claimed and claimed.group(1) else 1
        extra = min(blank, max(0, asked - old))
        kept += body[len(kept) : len(kept) + extra]
        old, new = old + extra, new + extra
        start_old, start_new, rest = match.groups()
        out.append(b"@@ -%s,%d +%s,%d @@%s" % (start_old, old, start_new, new, rest))
        out.extend(kept)
        i += 1 + len(kept)
    return b"\n".join(out) + (b"\n" if ends_with_newline else b"")
