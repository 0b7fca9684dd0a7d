"""`weigh.answer_part` skips a pattern where the text lacks a character it needs (a resume reads
every answer): the part it finds is the one the patterns alone find, whatever the text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from moot.protocols.arena import weigh
from moot.protocols.arena.weigh import answer_part


def patterns_alone(solution: str) -> str:
    """answer_part as the patterns alone read it: every one of them searched, always."""
    solution = weigh._ECHOED_ANSWER_LINE.sub("", solution)
    if "itself" in solution or "Itself" in solution or "ITSELF" in solution:
        solution = weigh._CHANGES_ECHO.sub("", solution)
    solution = solution.strip()
    if weigh._ANSWER_LINE.search(solution):
        return solution
    heading = weigh._CHANGES.search(solution)
    if heading is None:
        return solution
    following = weigh._NEXT_HEADING.search(solution, heading.end())
    part = solution[heading.end() : following.start() if following else len(solution)].strip()
    return part or solution


# Pieces of the arena's format and near misses of each pattern, joined at random.
PIECES = [
    "## PLAN\n",
    "## CHANGES\n",
    "### changes: the answer\n",
    "## NOTES\n",
    "  # RISKS\n",
    "#",
    "# ",
    "x #3 ",
    ":",
    " : ",
    "\n",
    "\t",
    " ",
    "Final answer: 408",
    "final answer: your answer in a few words.",
    "FINAL ANSWER:YOUR ANSWER NOW, in a few words",
    "*Answer*: Paris",
    "answer 408",
    "the answer is 42",
    "; the answer itself: a precise description.",
    "The answer Itself: a unified diff, code, or a sentence",
    "ıtself",
    "Use a queue worker.",
    "x = 408",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_the_part_that_answers_is_the_one_the_patterns_alone_find(pieces: list[str]) -> None:
    solution = "".join(pieces)
    assert answer_part(solution) == patterns_alone(solution)


def test_a_solution_without_a_colon_or_another_heading_keeps_its_changes_section() -> None:
    """The benchmark's shape (issue 23): a plan, a CHANGES section of plain lines ending in
    the claim, and no colon anywhere; and the same with an answer line or a later heading."""
    body = "\n".join(f"Line {i} of the change." for i in range(40)) + "\nSo the answer is 42."
    plain = f"## PLAN\n1. the answer is 42\n## CHANGES\n{body}"
    assert answer_part(plain) == body
    assert answer_part(f"{plain}\n## RISKS\nnone") == body
    assert answer_part(f"{plain}\nFinal answer: 42") == f"{plain}\nFinal answer: 42"
    assert answer_part(body) == body  # no heading at all
