"""Model text printed on a terminal: hostile escape sequences are not obeyed, nothing is hidden,
ordinary text (newlines, tabs, any script) is untouched."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moot.text import clean_text
from moot.text.safe import strip_sequences, terminal_safe

# Anything a terminal would act on rather than print.
OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        # window title (OSC 0 and 2), ended by BEL and by ST
        ("before\x1b]0;pwned title\x07after", "beforeafter"),
        ("before\x1b]2;pwned title\x1b\\after", "beforeafter"),
        # screen clear and cursor home, then a fake prompt
        ("secret\x1b[2J\x1b[Hall good", "secretall good"),
        # cursor up and erase line: hides the lines printed before
        ("line one\n\x1b[1A\x1b[2Kreplaced", "line one\nreplaced"),
        # full terminal reset, alternate screen, hidden text, colours
        ("a\x1bcb", "ab"),
        ("a\x1b[?1049hb\x1b[?1049l", "ab"),
        ("\x1b[8minvisible\x1b[0m \x1b[1;31mred\x1b[m", "invisible red"),
        # OSC 8: words that link somewhere else; the link goes, the words stay
        ("see \x1b]8;;https://evil.example/x\x1b\\the docs\x1b]8;;\x1b\\.", "see the docs."),
        ("see \x1b]8;id=1;https://evil.example\x07docs\x1b]8;;\x07", "see docs"),
        # OSC 52: write the clipboard
        ("copy\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07", "copy"),
        # DCS (DECRQSS), APC, PM, SOS
        ("a\x1bP$qm\x1b\\b", "ab"),
        ("a\x1b_apc payload\x1b\\b\x1b^pm\x1b\\c\x1bXsos\x1b\\d", "abcd"),
        # 8-bit C1 forms: CSI, OSC ended by ST, DCS
        ("a\x9b2Jb\x9d0;title\x9cc\x90payload\x9cd", "abcd"),
        # charset designation (nF) and save/restore cursor (Fp)
        ("a\x1b(0b\x1b7c\x1b8", "abc"),
        # 8-bit forms beside non-ASCII text (no ESC in it), and text with no sequence at all
        ("8-bit \x9b31mred\x9b0m, ünïcode\n", "8-bit red, ünïcode\n"),
        ("ünïcode and \x90payload\x9c\n", "ünïcode and \n"),
        ("plain\nlines\n", "plain\nlines\n"),
        ("ünïcode\n", "ünïcode\n"),
    ],
)
def test_escape_sequences_are_removed(hostile: str, shown: str) -> None:
    assert terminal_safe(hostile) == shown
    assert strip_sequences(hostile) == shown


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        # carriage return and backspace would overwrite what was printed: shown instead
        ("rm -rf ~\rls -l    ", "rm -rf ~\\x0dls -l    "),
        ("safe\x08\x08\x08\x08evil", "safe\\x08\\x08\\x08\\x08evil"),
        ("bell\x07 nul\x00 del\x7f vt\x0b ff\x0c", "bell\\x07 nul\\x00 del\\x7f vt\\x0b ff\\x0c"),
        # a lone ESC, an unterminated OSC, a CSI cut short: nothing left to obey
        ("a\x1b", "a\\x1b"),
        ("a\x1b[", "a\\x1b["),
        ("x\x9b", "x\\x9b"),
        ("a\x1b]0;never ended", "a\\x1b]0;never ended"),
        # tmux passthrough doubles the ESC inside its DCS: the DCS ends there, the rest shows
        ("a\x1bPtmux;\x1b\x1b]0;x\x07\x1b\\b", "a\\x1bPtmux;\\x1bb"),
        # removing one sequence must not complete another
        ("\x1b\x1b[31m[2J", "\\x1b[2J"),
        ("\x1b]\x1b]0;t\x07\\", "\\x1b]\\"),
        # Trojan Source: a right-to-left override reorders what the reader sees
        ("access = 'user\u202e \u2066// admin\u2069\u2066'", None),
        # a lone surrogate makes print() raise on a UTF-8 terminal
        ("half \udcff pair", "half \\udcff pair"),
    ],
)
def test_other_controls_are_made_visible(hostile: str, shown: str | None) -> None:
    safe = terminal_safe(hostile)
    if shown is not None:
        assert safe == shown
    assert not OBEYED.search(safe)
    safe.encode("utf-8")  # printable on a UTF-8 terminal


def test_bidi_overrides_are_shown_by_code_point() -> None:
    assert terminal_safe("a\u202eb\u2066c\u2069") == "a\\u202eb\\u2066c\\u2069"


def test_ordinary_text_is_unchanged() -> None:
    text = (
        "## PLAN\n1. Use `re`.\n\tindented\n"
        "Ünïcödé, 中文, \u200fالعربية\u200f, emoji 👍🏽 and 👨‍👩‍👧 (zero-width joiners kept)\n"
        "a backslash \\x1b written out stays as written; [bold]not markup[/bold]"
    )
    assert terminal_safe(text) == text


def test_windows_newlines_become_newlines() -> None:
    assert terminal_safe("one\r\ntwo\r\n") == "one\ntwo\n"


def test_a_huge_hostile_reply_is_cleaned_in_one_pass() -> None:
    # each part would cost a quadratic pattern hours: an introducer, then a long unended run
    hostile = ("\x1b]" * 100_000) + ("\x1b[" * 100_000) + ("\x9d" + "x" * 10) * 20_000
    started = time.perf_counter()
    safe = terminal_safe(hostile)
    assert time.perf_counter() - started < 5
    assert not OBEYED.search(safe)


@given(st.text(alphabet=st.characters(codec=None, max_codepoint=0x3000), max_size=200))
def test_nothing_a_terminal_obeys_survives(text: str) -> None:
    safe = terminal_safe(text)
    assert not OBEYED.search(safe)
    assert safe.count("\n") >= text.count("\n") - text.count("\r\n")
    assert terminal_safe(safe) == safe  # what is safe is left alone


@given(
    st.lists(
        st.one_of(
            st.text(alphabet="ab \n\t", max_size=5),
            st.sampled_from(["\x1b", "\x1b[", "\x1b]", "\x07", "\x1b\\", "\x9b", "\x9c", "\r"]),
            st.sampled_from(["0;", "2J", "8;;", "1A", "m", "P", "?25l", "c"]),
        ),
        max_size=40,
    )
)
def test_fragments_of_sequences_never_combine_into_one(parts: list[str]) -> None:
    safe = terminal_safe("".join(parts))
    assert not OBEYED.search(safe)


@given(
    st.lists(
        st.one_of(
            st.text(alphabet="ab \n\t", max_size=5),
            st.text(alphabet=st.characters(codec=None, max_codepoint=0x3000), max_size=3),
            st.sampled_from(["\x1b[31m", "\x9b2J", "\x07", "\r", "\u202e", "\u2069", "\udcff"]),
            # not printable, or not ASCII
            st.sampled_from(["\u00a0", "\u200f", "\u2028", "ü", "中"]),
        ),
        max_size=30,
    )
)
def test_clean_text_removes_what_its_patterns_remove_and_nothing_else(parts: list[str]) -> None:
    """clean_text returns a text as it is where it holds nothing to remove, seen in C (issue
    23: a resume cleans every answer, and no answer of several lines is printable)."""
    text = "".join(parts)
    assert clean_text(text) == OBEYED.sub("", strip_sequences(text))
    assert clean_text("one\n\ttwo\n") == "one\n\ttwo\n"
    assert clean_text("one\n\ttwo\x07\n") == "one\n\ttwo\n"
