"""The judges' verdicts as moot weighs them: each one as evidence (a `ModelVerdict`, never the
decision), how many of them were invalid over the panel's rounds, and why the panel's last
round decided nothing. Counts say what they count (verdicts, judges, judge rounds), and the
status, the trust statement and the round lines count the same verdicts:

    asked    = one verdict per seated judge in every judge round
    invalid  = a reply that is no valid verdict (panel.py says why); failed = no reply
    reasons  = each distinct reason once, with how many verdicts gave it and whose they were
"""

from __future__ import annotations

from collections.abc import Sequence

from moot.deliberation.consensus import Evaluation
from moot.deliberation.finding import names
from moot.protocols.court.document import Court, label
from moot.text import one_line, plural
from moot.text.safe import terminal_safe
from moot.types import ModelVerdict

__all__ = ["invalid_sentence", "judge_verdicts", "panel_count", "undecided"]


def judge_verdicts(c: Court) -> list[ModelVerdict]:
    """Every judge's reply, as evidence: its pick and the judge round it was made in; a valid
    one says what moot checked of it, an invalid one why it is invalid. A failed call is no
    verdict."""
    out = []
    for rnd in c.judge_rounds:
        for e in rnd.evaluations:
            if e.selected is None:
                continue  # no reply to weigh: the judge failed
            # (a position's control characters shown, not obeyed nor hidden)
            text = one_line(terminal_safe(c.texts.get(e.selected, "")), 60)
            says = f"selected position {e.selected} ('{text}') in judge round {rnd.number}"
            if e.ok:
                says += ", its own top score, with reasoning moot's check reads as an argument"
            out.append(
                ModelVerdict(
                    by=label(e.judge),
                    role="judge",
                    says=says,
                    round=rnd.number,
                    valid=e.ok,
                    problem="" if e.ok else (e.error or "invalid"),
                )
            )
    return out


def _bad(evaluations: Sequence[Evaluation]) -> tuple[int, int]:
    """(invalid replies, failed calls) among `evaluations`."""
    invalid = sum(1 for e in evaluations if not e.ok and e.selected is not None)
    failed = sum(1 for e in evaluations if e.selected is None)
    return invalid, failed


def _were(invalid: int, failed: int) -> str:
    """What became of verdicts that were not valid, agreeing with their count."""
    if not failed:
        return "was invalid" if invalid == 1 else "were invalid"
    if not invalid:
        return "failed"
    return f"were not valid ({invalid} invalid, {failed} failed)"


def panel_count(c: Court) -> str:
    """'8 of the 9 verdicts of the 3 judges in 3 judge rounds were invalid'; "" when every
    verdict was valid."""
    every = [e for rnd in c.judge_rounds for e in rnd.evaluations]
    invalid, failed = _bad(every)
    if not invalid and not failed:
        return ""
    return (
        f"{invalid + failed} of the {plural(len(every), 'verdict')} of the "
        f"{plural(len(c.judges), 'judge')} in {plural(len(c.judge_rounds), 'judge round')} "
        + _were(invalid, failed)
    )


def _rounds(numbers: Sequence[int]) -> str:
    shown = [str(n) for n in numbers]
    word = "judge round" if len(shown) == 1 else "judge rounds"
    return f"{word} {names(shown, str)}"


def _whose(given: Sequence[ModelVerdict]) -> str:
    """'Judge A and Judge B in judge rounds 1 and 3; Judge C in judge round 2'."""
    by_judge: dict[str, list[int]] = {}
    for v in given:
        by_judge.setdefault(v.by, []).append(v.round or 0)
    by_rounds: dict[tuple[int, ...], list[str]] = {}
    for judge in sorted(by_judge):
        by_rounds.setdefault(tuple(sorted(set(by_judge[judge]))), []).append(judge)
    return "; ".join(
        f"{names(judges, str)} in {_rounds(rounds)}" for rounds, judges in by_rounds.items()
    )


def invalid_sentence(c: Court, weighed: Sequence[ModelVerdict]) -> str:
    """The trust statement's account of the invalid verdicts: their count, then each distinct
    reason once, with how many verdicts gave it and whose they were; "" when none was."""
    invalid = [v for v in weighed if not v.valid]
    count = panel_count(c)
    if not invalid:
        return f"{count[0].upper()}{count[1:]}." if count else ""
    reasons: dict[str, list[ModelVerdict]] = {}
    for v in invalid:
        reasons.setdefault(v.problem, []).append(v)
    said = "; ".join(
        f"{len(given)} because {problem} ({_whose(given)})" for problem, given in reasons.items()
    )
    return f"{count[0].upper()}{count[1:]}: {said}."


def undecided(c: Court) -> str:
    """Why the panel's last round decided nothing: the leader's selections against the quorum
    of the seated panel, or the confidence; that round's invalid verdicts; and those of every
    judge round."""
    rnd = c.judge_rounds[-1]
    result, seated = rnd.result, len(c.judges)
    share = f"{c.opts.judge_consensus_threshold:.0%} of {seated} judges"
    if result.position_id is not None:  # enough selections, not enough confidence
        why = (
            f"position {result.position_id} had the selections a decision needs, but their average "
            f"confidence {result.confidence:.2f} is below {c.opts.judge_min_confidence:g}"
        )
    elif result.votes:
        top = max(result.votes.values())
        leaders = sorted(pid for pid, n in result.votes.items() if n == top)
        which = (
            f"position {leaders[0]} had {top}"
            if len(leaders) == 1
            else f"positions {', '.join(leaders)} had {top} each"
        )
        why = f"{which} of the {result.required} selections a decision needs ({share})"
    else:
        why = f"no valid verdict selected a position ({result.required} selections needed: {share})"
    why = f"in judge round {rnd.number}, {why}"
    invalid, failed = _bad(rnd.evaluations)
    if invalid or failed:
        of_its = f"{invalid + failed} of its {plural(len(rnd.evaluations), 'verdict')}"
        why += f": {of_its} {_were(invalid, failed)}"
    count = panel_count(c)
    if count and len(c.judge_rounds) > 1:
        why += f"; {count}"
    return f"the judges did not decide: {why}"
