"""How a round ended, in the words every face shows (`RoundSummary`): a judge's decision and
score, and/or a tally of votes or answers."""

from __future__ import annotations

from moot import lazy
from moot.types import RoundSummary
from moot.types import alias_label as label

__all__ = ["round_result"]


def round_result(summary: RoundSummary) -> str:
    """How a round ended, in words: the judge, its decision and score, and/or the tally."""
    if summary.votes and summary.out_of:
        return _counted(summary)
    parts = []
    if summary.judge:
        parts.append(f"judge {label(summary.judge)}")
    if summary.decision:
        parts.append(str(summary.decision))
        needed = summary.threshold
        if (
            str(summary.decision).upper() == "CONSENSUS"
            and needed is not None
            and summary.score is not None
            and summary.score < needed
        ):  # the judge's word, overruled by its own score
            parts[-1] += f" (not taken: it needs a score of {_num(needed)})"
    if summary.score is not None:
        how = f" ({summary.method})" if summary.method else ""
        parts.append(f"convergence score {_num(summary.score)}/{summary.scale}{how}")
    if summary.votes:
        parts.append("votes " + ", ".join(f"{_key(k)} {_num(v)}" for k, v in summary.votes.items()))
        if summary.needed:
            parts.append(f"{_num(summary.needed)} needed")
    if summary.problem:  # beside what it qualifies: "no valid answer (3 of 3 answers invalid)"
        if parts:
            parts[-1] += f" ({summary.problem})"
        else:
            parts.append(f"({summary.problem})")
    return ", ".join(parts) if parts else "no result recorded"


def _counted(summary: RoundSummary) -> str:
    """A tally of answers out of all asked, each answer in quotes so its own numbers do not
    run into the counts: "no majority: '7' 2 of 6, '9' 1, '5' 1; 4 of 6 needed; 1 of 6
    answers invalid" (it read "no majority: 7 has 2 of 6, votes 7 2, 9 1, 5 1, 4 needed")."""
    counts = [f"{_quoted(k)} {_num(v)}" for k, v in summary.votes.items()]
    counts[0] += f" of {summary.out_of}"
    parts = [", ".join(counts)]
    if summary.decision:
        parts[0] = f"{summary.decision}: {parts[0]}"
    if summary.needed:
        parts.append(f"{_num(summary.needed)} of {summary.out_of} needed")
    if summary.problem:
        parts.append(summary.problem)
    return "; ".join(parts)


# an answer voted for, shown bare when it is one word ("42", "Paris"), else quoted, so that its
# own commas and numbers do not run into the counts ("'However, when dealing with' 1")
_BARE_KEY = lazy.pattern(r"[\w.+-]{1,40}")


def _key(answer: str) -> str:
    if _BARE_KEY.fullmatch(answer):
        return answer
    return _quoted(answer)


def _quoted(answer: str) -> str:
    flat = " ".join(answer.split())
    return f"'{flat if len(flat) <= 60 else flat[:57] + '...'}'"  # not repr: faces clean it


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"
