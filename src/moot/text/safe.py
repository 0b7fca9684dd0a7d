"""Model text made safe to print on a terminal.

A model's reply is untrusted input, and a terminal obeys what it prints: an escape sequence can
change the window title, clear the screen, move the cursor over earlier lines, write the
clipboard (OSC 52) or hide a link behind innocent words (OSC 8). `terminal_safe` removes every
escape sequence (CSI, OSC, DCS, SOS, PM, APC, in their 7-bit and 8-bit forms, and the short
ESC commands) and shows every other control character as a visible escape such as `\\x07`,
so nothing is hidden and nothing is obeyed. Newlines and tabs stay; a CRLF becomes a newline.
Bidirectional overrides and isolates (the "Trojan Source" trick) and lone surrogates (which
make `print` raise) are shown the same way.

This module imports nothing from moot: any face (CLI, live view, status lines) can use it.
"""

from __future__ import annotations

import re

from moot import lazy

__all__ = ["strip_sequences", "terminal_safe"]

# One pattern, tried left to right; every part is linear (no nested repeats), so a hostile
# reply of many megabytes costs one pass. An introducer whose sequence never ends (ESC [,
# ESC ], ESC P, ESC X, ESC ^, ESC _ cut short) is left for _CONTROL to show as \x1b.
_SEQUENCE = lazy.pattern(
    r"""
      (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])   # OSC, DCS, SOS, PM, APC: a string ...
      [^\x07\x1b\x80-\x9f]*                     # (stops at any introducer: linear)
      (?:\x07|\x1b\\|\x9c)                      # ... ended by BEL or ST
    | (?:\x1b\[|\x9b)                           # CSI: cursor, erase, colours, modes
      [\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]
    | \x1b[\x20-\x2f]+[\x30-\x7e]               # nF: character set designations
    | \x1b[\x30-\x4f\x51-\x57\x59\x5a\x5c\x60-\x7e]  # Fp Fe Fs: ESC c (reset), ESC 7 ...
    """,
    re.VERBOSE,
)
# What is left after the sequences are gone and is still not text: C0 controls but newline
# and tab, DEL, C1 controls, bidirectional embeddings, overrides and isolates (the marks LRM,
# RLM and ALM stay: right-to-left scripts use them and they cannot reorder a line), and lone
# surrogates.
_CONTROL = lazy.pattern("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# What every sequence above starts with: ESC, or an 8-bit introducer.
_INTRODUCER = lazy.pattern("[\x1b\x90\x98\x9b\x9d-\x9f]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """`text` with escape sequences removed and other control characters made visible;
    newlines and tabs are kept. The result holds no character a terminal would obey."""
    text = strip_sequences(text).replace("\r\n", "\n")
    # Run after the removal, so a sequence that removing another one put together (or an
    # unterminated one) cannot survive: its ESC is shown as \x1b.
    return _CONTROL.sub(_visible, text)


def strip_sequences(text: str) -> str:
    """`text` without terminal escape sequences (CSI, OSC, DCS, ... and the short ESC
    commands), their payload included; other characters are left as they are. A text with
    no introducer holds none (most model text, and an answer is read several times): that is
    seen in C, where the pattern would be tried at every character."""
    if "\x1b" not in text and (text.isascii() or _INTRODUCER.search(text) is None):
        return text
    return _SEQUENCE.sub("", text)
