"""Protocol markup never survives into an answer (issue 9: `</quoted id="0c218a4f73d5">` was
found in 2 of 6 final answers)."""

from __future__ import annotations

import time

import pytest

from moot.deliberation.anonymize import RESERVED_TAGS, neutralize, quote
from moot.deliberation.markup import find_markup, strip_markup
from moot.protocols.arena import prompts as arena
from moot.protocols.court import prompts as court

TASK = "What is the capital of France?"


def _quoted(text: str, label: str = "Agent B", nonce: str = "0c218a4f73d5") -> str:
    return quote(label, text, nonce=nonce, limit=4000)


def _every_prompt() -> dict[str, str]:
    """Each prompt the protocols send, rendered with quoted material, as a model could echo it."""
    solution = (
        "<solution>\nThe capital of France is Paris.\n</solution>\n<analysis>None.</analysis>"
    )
    quoted = _quoted(solution) + "\n\n" + _quoted("Paris.", "Agent C", "77aa01bc92de")
    return {
        "arena system": arena.SYSTEM.format(n=3),
        "arena solve": arena.SOLVE.format(task=TASK, format=arena.FORMAT),
        "arena evaluate": arena.EVALUATE.format(solutions=quoted),
        "arena revise": arena.REVISE.format(critiques=quoted, format=arena.REVISED_FORMAT),
        "arena verify": arena.VERIFY.format(
            task=TASK,
            solutions=quoted,
            analyses=quoted,
            evidence=arena.EVIDENCE.format(
                results=_quoted("ok", 'command: pytest -q > log ("exit code 0")', "5e5e5e5e5e5e")
            ),
            example="Agent B",
        ),
        "arena verdict reminder": arena.VERDICT_REMINDER,
        "arena fresh context": arena.FRESH_CONTEXT.format(task=TASK, own=_quoted("x" * 9000)),
        "court agent system": court.AGENT_SYSTEM.format(
            label="Agent A", n=3, topic=TASK, question="", role="", format=court.AGENT_FORMAT
        ),
        "court vote": court.VOTE.format(
            round=2,
            rounds=5,
            candidate="0123456789ab",
            candidate_text=_quoted("Paris.", "candidate position 0123456789ab"),
            history=court.HISTORY.format(note="", rounds=quoted),
        ),
        "court judge": court.JUDGE.format(
            round=1,
            rounds=3,
            count=2,
            positions=quoted,
            previous=court.JUDGE_PREVIOUS.format(evaluations=quoted),
        ),
    }


@pytest.mark.parametrize("name", sorted(_every_prompt()))
def test_each_prompts_markup_fed_back_as_a_reply_leaves_none(name: str) -> None:
    prompt = _every_prompt()[name]
    for reply in (prompt, neutralize(prompt), prompt.replace("<", "&lt;").replace(">", "&gt;")):
        cleaned = strip_markup(reply)
        assert find_markup(cleaned) == [], cleaned
        for tag in RESERVED_TAGS:
            assert f"<{tag}" not in cleaned.lower() and f"</{tag}" not in cleaned.lower()
            assert f"‹{tag}" not in cleaned.lower() and f"‹/{tag}" not in cleaned.lower()
    if "The capital of France is Paris." in prompt:
        # the content between the fences is kept
        assert "The capital of France is Paris." in strip_markup(prompt)


def test_the_fence_seen_in_the_field_goes_and_the_answer_stays() -> None:
    assert strip_markup('The capital of France is Paris.\n</quoted id="0c218a4f73d5">') == (
        "The capital of France is Paris."
    )
    # cut off mid-tag at the end of a truncated reply
    assert strip_markup('Paris.\n</quoted id="0c218a4f73d5') == "Paris."
    # inline, uppercase, spaced, self-closing and defused forms
    assert strip_markup("A <SOLUTION >b</ solution> c <analysis/> ‹/verdict> d") == "A b c   d"


def test_whole_tag_lines_leave_no_blank_lines() -> None:
    reply = (
        "<solution>\n## PLAN\n1. Use SQLite.\n</solution>\n<analysis>\n## RISKS\nNone.\n</analysis>"
    )
    assert strip_markup(reply) == "## PLAN\n1. Use SQLite.\n## RISKS\nNone."


def test_cut_marks_from_quoting_go_too() -> None:
    fenced = _quoted("a" * 5000 + "b" * 5000)
    assert find_markup(fenced)
    cleaned = strip_markup(fenced)
    assert find_markup(cleaned) == [] and "cut for length" not in cleaned
    assert cleaned.startswith("a") and cleaned.endswith("b")


@pytest.mark.parametrize(
    "text",
    [
        "Wrap it in <solutions> and <div class='x'>",
        "if a<b and c>d: return a <= b",
        "HTML &lt;p&gt; stays",
        "The <evidenced> list",
        "```xml\n<config>\n  <quotedString>x</quotedString>\n</config>\n```",
    ],
)
def test_ordinary_markup_and_code_are_left_alone(text: str) -> None:
    assert strip_markup(text) == text
    assert find_markup(text) == []


def test_hostile_input_is_scanned_in_linear_time() -> None:
    hostile = [
        "<quoted " + "a" * 1_000_000,
        ("<solution x" + " " * 250) * 4000,
        '<quoted from="' * 100_000,
        "<" * 1_000_000,
    ]
    started = time.perf_counter()
    for text in hostile:
        strip_markup(text)
    assert time.perf_counter() - started < 10
