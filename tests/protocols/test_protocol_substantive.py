"""The test every answer the finding reads is held to (protocols/substantive.py): an answer that
copies a quote fence of its prompt back (moot's markup around another participant's answer,
with its id) is none of its author's own, in the arena and the court as in MoA."""

from __future__ import annotations

from moot.deliberation.anonymize import quote
from moot.protocols.substantive import answer_problem, copied_fence

TASK = "What is 3+4?"
THEIRS = "3 and 4 make 7."
FENCE_ID = "f362b5d4917a"
PROMPT = (
    f"Task: {TASK}\nThe other experts' answers:\n"
    + quote("Agent B", THEIRS, nonce=FENCE_ID, limit=2000)
    + "\nRevise your answer."
)


def test_a_copied_fence_is_no_answer_of_ones_own() -> None:
    copy = f'<quoted from="An Answer" id="{FENCE_ID}">\n{THEIRS}\n</quoted id="{FENCE_ID}">'
    for reply in (copy, f"{copy}\nFinal answer: 7", f"As {FENCE_ID} says: 7."):
        problem = answer_problem(reply, [PROMPT], TASK)
        assert problem is not None and "copies moot's quote markup" in problem, reply
        assert FENCE_ID in problem


def test_an_answer_of_ones_own_is_no_copy() -> None:
    for reply in ("3 and 4 make 7.", "Agent B is right: 7.", "7"):
        assert copied_fence(reply, [PROMPT], TASK) is None, reply
        assert answer_problem(reply, [PROMPT], TASK) is None, reply
    # a prompt with no fence: nothing can be copied from it
    assert copied_fence(f"id {FENCE_ID}", [f"Task: {TASK}"], TASK) is None
