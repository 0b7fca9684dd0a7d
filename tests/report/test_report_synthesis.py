"""The Synthesis section says what stands where a chairman's text is rejected: the picked
answer, or, where nothing was picked (a --synthesize chairman over a protocol that picked no
answer), that there is no final answer; never a "(none)" under "The picked answer"."""

from __future__ import annotations

from moot.report.view import synthesis_section
from moot.types import Synthesis


def _rejected(picked: str) -> str:
    synthesis = Synthesis(
        chairman="chairman_a",
        step="synthesis",
        picked=picked,
        text="The Council of Experts will continue to evaluate their work.",
        reason="it talks about the debate instead of answering",
    )
    title, body = synthesis_section(synthesis)
    assert title == "Synthesis"
    return body


def test_a_rejected_synthesis_leaves_the_picked_answer() -> None:
    body = _rejected("Rome.")
    assert "The picked answer stands." in body
    assert "**The picked answer:**" in body and "Rome." in body


def test_with_nothing_picked_a_rejected_synthesis_leaves_no_final_answer() -> None:
    body = _rejected("")
    assert "There is no final answer." in body
    assert "The picked answer" not in body and "(none)" not in body
