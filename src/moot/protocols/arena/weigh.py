"""What the arena weighs, read from recorded text: a judge's verdict as evidence (a
`ModelVerdict`, invalid where its own fields contradict each other), and the evaluators' marks of
solutions that do not answer the question.

    verdict  -> claims agreement: decision CONSENSUS with a score at the threshold or above
             -> invalid: CONSENSUS while listing remaining disagreements, or a base solution
                that names no agent still in the debate
    critique -> one line per solution it read, "Agent B ANSWERS THE QUESTION: no"; more than half
                of a solution's reviewers saying no makes that answer invalid

Pure and deterministic: the same texts give the same evidence on every resume.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from moot.deliberation.finding import majority, names
from moot.deliberation.parsing import JudgeVerdict, extract_json, verdict_fields
from moot.errors import FormatError
from moot.text import cut
from moot.types import ModelVerdict, alias_label

__all__ = ["answer_part", "model_verdict", "not_answering", "read_marks", "resolve_alias"]

# A base solution that names no agent on purpose: the prompt allows "merged".
_NO_BASE = frozenset({"merged", "merge", "none", "n/a", "na", "-", "null", "nil"})
_NONE_LISTED = re.compile(r"(?:none|no|nil|n/a|zero|0+)\b", re.IGNORECASE)
_VERDICT_BLOCK = re.compile(r"<verdict\s*>(.*?)</verdict\s*>", re.IGNORECASE | re.DOTALL)
_MARK = re.compile(r"answers?\s+the\s+(?:question|task)", re.IGNORECASE)
_SAYS = re.compile(r"^[\s*_`'\"]*[:=\-–—]?[\s*_`'\"]*(yes|no)\b", re.IGNORECASE)
_AGENT = re.compile(r"\bagent[\s_-]*([a-z]{1,2})\b", re.IGNORECASE)


# The format's answer line copied as it stands: it says nothing, so the claim is read from the
# rest of the solution (three copies of it must not agree with each other).
_ECHOED_ANSWER_LINE = re.compile(
    r"^[ \t]*final answer:[ \t]*your answer(?: now)?,? in a few words\.?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
# The CHANGES heading's own words copied into an answer, with the form it names or another
# ("3+4 = 7; the answer itself: a precise description.", "... a single sentence." from the
# embedded model): template, not a claim, so two copies that differ in it do not differ.
_CHANGES_ECHO = re.compile(
    r"[ \t]*[;,-]?[ \t]*the answer itself[ \t]*:[ \t]*(?:a unified diff, code,? or[ \t]+)?"
    r"(?:an?[ \t]+)?(?:[a-z]+[ \t]+)?(?:description|sentence|diff|code|answer)\b\.?",
    re.IGNORECASE,
)
_ANSWER_LINE = re.compile(
    r"^[ \t*_#>-]*(?:final\s+)?answer[ \t*_]*:[ \t]*\S", re.IGNORECASE | re.MULTILINE
)
_CHANGES = re.compile(r"^[ \t]*#{1,6}[ \t]*CHANGES\b[^\n]*\n?", re.IGNORECASE | re.MULTILINE)
_NEXT_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]*\S", re.MULTILINE)


def answer_part(solution: str) -> str:
    """The part of a solution that answers: the whole solution where it ends with a final
    answer line (the claim is read from that line), else its CHANGES section (the format's
    "answer itself"), else the whole solution. A copy of the template's answer line is no
    answer and is dropped first, as are the CHANGES heading's words copied."""
    # A pattern searched where it cannot match still tries every character of a long solution
    # (and a resume reads every answer): each below needs a character that `in` finds in C, a
    # colon for the answer lines and the copied heading, a `#` for a heading (both caseless,
    # so IGNORECASE matches each only as itself).
    colon = ":" in solution
    if colon:
        solution = _ECHOED_ANSWER_LINE.sub("", solution)
    # (its scan costs a resume most of the time of this function: only where it can match)
    if colon and ("itself" in solution or "Itself" in solution or "ITSELF" in solution):
        solution = _CHANGES_ECHO.sub("", solution)
    solution = solution.strip()
    if colon and _ANSWER_LINE.search(solution):
        return solution
    heading = _CHANGES.search(solution) if "#" in solution else None
    if heading is None:
        return solution
    headed = solution.find("#", heading.end()) >= 0
    following = _NEXT_HEADING.search(solution, heading.end()) if headed else None
    part = solution[heading.end() : following.start() if following else len(solution)].strip()
    return part or solution


def resolve_alias(name: str | None, active: Sequence[str]) -> str | None:
    """'Agent B', 'agent_b', 'B' or 'Agent B's solution' -> agent_b, if that agent is active."""
    if not name:
        return None
    match = re.fullmatch(r"\W*(?:agent[\s_-]*)?([a-z]{1,2})\W*", name, re.IGNORECASE) or re.search(
        r"agent[\s_-]*([a-z]{1,2})\b", name, re.IGNORECASE
    )
    if match is None:
        return None
    alias = f"agent_{match.group(1).lower()}"
    return alias if alias in active else None


def model_verdict(
    verdict: JudgeVerdict | None,
    problem: str | None,
    *,
    judge: str,
    round: int,
    active: Sequence[str],
    threshold: int,
) -> ModelVerdict:
    """The round's verdict as evidence. A judge that gave no parseable verdict is an invalid
    verdict with the parser's problem; one whose fields contradict each other is invalid with
    the contradiction named. Either weighs nothing."""
    by = alias_label(judge)
    if verdict is None:
        return ModelVerdict(
            by=by,
            role="judge",
            round=round,
            says="gave no verdict",
            valid=False,
            problem=problem or "it gave no verdict",
        )
    claims = verdict.decision == "CONSENSUS" and verdict.score >= threshold
    if claims:
        says = f"judged it consensus (score {verdict.score}/10)"
    elif verdict.decision == "CONSENSUS":
        says = f"judged it consensus with too low a score ({verdict.score}/10, {threshold} needed)"
    else:
        says = f"judged that the debate should continue (score {verdict.score}/10)"
    contradiction = _contradiction(verdict, active)
    return ModelVerdict(
        by=by,
        role="judge",
        round=round,
        says=says,
        claims_agreement=claims,
        valid=contradiction is None,
        problem=contradiction or "",
    )


def _contradiction(verdict: JudgeVerdict, active: Sequence[str]) -> str | None:
    remaining = remaining_disagreements(verdict)
    if verdict.decision == "CONSENSUS" and _lists_some(remaining):
        return (
            "it says CONSENSUS but lists remaining disagreements "
            f"({cut(' '.join(remaining.split()), 80)})"
        )
    base = (verdict.base_solution or "").strip()
    named = base.strip(" .*_`'\"").lower() not in _NO_BASE
    if base and named and resolve_alias(base, active) is None:
        shown = cut(" ".join(base.split()), 40)
        return f"its base solution '{shown}' names no agent in the debate"
    return None


def remaining_disagreements(verdict: JudgeVerdict) -> str:
    """The verdict's remaining disagreements field as the judge wrote it ("" when absent): the
    parsed count keeps only a number, and "the cache TTL" is a disagreement listed too."""
    blocks = _VERDICT_BLOCK.findall(verdict.raw)
    if blocks:
        return verdict_fields(blocks[-1]).get("remaining_disagreements", "")
    try:
        data = extract_json(verdict.raw)
    except FormatError:
        data = None
    value = data.get("remaining_disagreements") if isinstance(data, dict) else None
    if isinstance(value, list):
        return "; ".join(str(v) for v in value)
    if value is None:
        return (
            "" if verdict.remaining_disagreements is None else str(verdict.remaining_disagreements)
        )
    return str(value)


def _lists_some(remaining: str) -> bool:
    """Whether a remaining-disagreements field lists any: a count above zero, or any text but
    "none" ("0", "None.", "none (only naming)" list none)."""
    text = remaining.strip().strip("\"'*_`[]()").strip()
    if not text or _NONE_LISTED.match(text):
        return False
    count = re.match(r"\d+", text)
    return count is None or int(count.group()) > 0


def read_marks(critique: str, shown: Sequence[str]) -> dict[str, bool]:
    """Which of the solutions it was shown a critique says answer the question: alias -> yes
    (True) or no (False), from lines like "Agent B ANSWERS THE QUESTION: no". A solution the
    critique gives no such line for is left out; the last line for a solution counts."""
    marks: dict[str, bool] = {}
    for line in critique.splitlines():
        mark = _MARK.search(line)
        if mark is None:
            continue
        said = _SAYS.match(line[mark.end() :])
        who = _AGENT.search(line)
        if said is None or who is None:
            continue
        alias = resolve_alias(who.group(0), shown)
        if alias is not None:
            marks[alias] = said.group(1).lower() == "yes"
    return marks


def not_answering(
    marks: Mapping[str, Mapping[str, bool]], reviewers: Mapping[str, Sequence[str]], round: int
) -> dict[str, str]:
    """The solutions that more than half of their reviewers marked as not answering the
    question, each with the reason naming them. `marks[reviewer][alias]` as `read_marks` gives;
    `reviewers[alias]`: every agent that was shown that solution to critique (one that wrote
    nothing counts as not saying no)."""
    found: dict[str, str] = {}
    for alias, who in reviewers.items():
        said_no = [r for r in who if marks.get(r, {}).get(alias) is False]
        if said_no and majority(len(said_no), len(who)):
            found[alias] = (
                f"{names(said_no)} ({len(said_no)} of its {len(who)} reviewers) marked its "
                f"answer as not answering the question in round {round}"
            )
    return found
