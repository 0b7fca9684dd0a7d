"""The arena's outcome, labelled by moot's finding over every agent's answer after every round
(deliberation/finding): what each agent answers now, whether the remaining agents already agree,
and the outcome once the debate ends (consensus only where moot's check bears it out; a
judge's verdict is evidence, never the decision).

Loaded only once replies are in (run.py hands it to moot/lazy.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

from msgspec.structs import replace

from moot.deliberation import claims, finding, trust
from moot.deliberation.markup import strip_markup
from moot.deliberation.parsing import JudgeVerdict
from moot.engine.session import Session
from moot.protocols import codework
from moot.protocols.arena import weigh
from moot.protocols.arena.state import State, label
from moot.text import cut, plural
from moot.types import ModelVerdict, Outcome

__all__ = ["answers", "conclude", "find", "matching", "ran_out", "settled"]


def answers(s: Session, st: State) -> dict[str, str | None]:
    """Each agent's answer now, as moot's finding reads it: a code task's diff, else the
    solution; None for an agent that failed or whose answer was invalid."""
    active = st.active
    now: dict[str, str | None] = {}
    for alias in s.aliases:
        work = st.works.get(alias)
        if alias not in active:
            now[alias] = None
        elif work is not None and work.change is not None and work.change.patch.strip():
            now[alias] = work.change.patch
        else:
            now[alias] = weigh.answer_part(st.solutions[alias])
    return now


def settled(s: Session, st: State, r: int) -> Outcome | None:
    """When every remaining agent's answer already agrees with every other's by moot's check,
    the debate ends here instead of revising a settled answer into a worse one (and without a
    judge: nothing it says could change the finding). So it does when that agreement is no
    consensus only because no first answer held it: no later round can change that."""
    active = st.active
    if not st.opts.stop_on_agreement or len(active) < 2:
        return None
    judgement = find(s, st, ())
    found = judgement.finding
    # agreement that no first answer held is no consensus, and no revision can change that
    echoed = found.independent == 0 and [set(g) for _, g in found.groups] == [set(active)]
    if not echoed and (not found.consensus or set(found.agreed) != set(active)):
        return None
    when = "in their first answers" if r == 0 else f"after round {r}'s revisions"
    # "remaining" only where some left the debate: "the 3 agents" when all 3 are in it
    remaining = " remaining" if len(active) < len(st.conversations) else ""
    how = f"the {len(active)}{remaining} agents gave the same answer {when}"
    if found.label == "persuasion" or echoed:
        how = f"{how}; {found.reason}"
    judgement = replace(judgement, verdicts=tuple(st.verdicts))
    evidence = None if echoed else matching(s, st, found.agreed)
    return conclude(s, st, judgement, how, None, None, r, evidence)


def matching(s: Session, st: State, agreed: Sequence[str]) -> trust.MatchingAnswers:
    """How the agreed answers match: word for word (one normalised claim), or not quite."""
    now = answers(s, st)
    keys = {claims.extract_claim(now[a] or "").key for a in agreed}
    return trust.MatchingAnswers("exact" if len(keys) == 1 else "similar")


def find(s: Session, st: State, verdicts: Sequence[ModelVerdict]) -> finding.Judgement:
    """moot's finding over every round's answers, weighing `verdicts`."""
    return finding.judge_answers(
        st.history,
        started=s.aliases,
        verdicts=verdicts,
        critics=st.critics,
        reasons={**st.failed, **st.invalid},
        task=st.task,
        kept=st.kept,
    )


def conclude(
    s: Session,
    st: State,
    judgement: finding.Judgement,
    how: str,
    verdict: JudgeVerdict | None,
    judge: str | None,
    rounds: int,
    evidence: trust.Evidence | None = None,
) -> Outcome:
    """The outcome, labelled by moot's finding: consensus only where more than half of the
    agents that started agree by moot's check (a judge's verdict is evidence, never the
    decision); the agents that failed or gave junk are named, and so is who changed their
    mind. The final answer is the agreed group's (the judge's base solution if it is in that
    group, else the group's first member); with no consensus, the judge's base solution or the
    first remaining agent's, which the outcome does not call agreed; where moot holds no final
    answer an answer, there is none."""
    found = judgement.finding
    active = st.active
    # an invalid verdict weighs nothing, its base solution included
    valid = bool(st.verdicts) and st.verdicts[-1].valid and st.verdicts[-1].round == rounds
    base = weigh.resolve_alias(verdict.base_solution if verdict and valid else None, active)
    no_answer = judgement.no_answer()
    # a code task: agreement on a change that fails its verify commands is no consensus
    failing = found.consensus and any(codework.fails(st.works.get(a)) for a in found.agreed)
    if failing:
        found = replace(found, label="no_consensus", reason=_FAILING)
        judgement = replace(judgement, finding=found)
    if found.consensus:
        chosen: str | None = base if base in found.agreed else found.agreed[0]
    else:  # the base solution, else the first remaining agent's, if moot holds it an answer
        shown = [a for a in (base, *active) if a is not None]
        chosen = next((a for a in shown if a not in no_answer), None)
    picked = chosen  # moot's own verify results come before the judge's base solution
    if not found.consensus:
        chosen = codework.prefer_passing(
            st.works, chosen, [a for a in active if a not in no_answer]
        )
    final = st.solutions[chosen] if chosen else ""
    assessed = trust.assess(
        _participants(s, st, found.agreed if found.consensus else (), no_answer),
        reached=found.consensus or failing,
        evidence=evidence,
        checks=st.checks,
        models=list(s.meta.get("aliases", {}).values()),
        unheld=found.unheld,
    )
    consensus = assessed.consensus_allowed and not failing
    how = trust.qualified(how, assessed, found.consensus)
    sentences = [assessed.statement, *judgement.sentences()]
    if failing:
        how = f"{how}; {_FAILING}"
        sentences.append("The agreed change fails its verify commands, so no consensus is claimed.")
    if chosen is not None:
        if picked is not None and chosen != picked:
            why = (
                f"its change passes the verify commands and {label(picked)}'s fails them "
                "(moot's own check comes before a judge's pick)"
            )
        elif chosen == base:
            why = f"the judge named it as the base solution{_mods(verdict)}"
        elif consensus:
            why = "it is the first of the agreeing agents' answers"
        elif base is not None:
            why = f"the judge's base solution, {label(base)}'s, is no answer"
        elif not st.verdicts:  # no round ran: one agent left, or none asked
            why = "no judge was asked, so it is the first remaining agent's"
        else:
            why = "no judge named a valid base solution, so it is the first remaining agent's"
        agreed = "" if consensus else ", which the agents did not agree on"
        sentences.append(f"The final answer is {label(chosen)}'s solution{agreed}: {why}.")
    else:
        sentences.append("No agent gave a valid answer, so there is no final answer.")
    details: dict[str, object] = {
        "rounds": st.rounds,
        "judges": st.judges,
        "failed_agents": st.failed,
        "invalid_agents": st.invalid,
        "fresh_conversations_from": st.fresh_from,
        "final_from": chosen,
        "verdict": None
        if verdict is None
        else {
            "judge": judge,
            "decision": verdict.decision,
            "convergence_score": verdict.score,
            "remaining_disagreements": verdict.remaining_disagreements,
            "base_solution": base or verdict.base_solution,
            "modifications": verdict.modifications,
            "text": verdict.raw,
        },
    }
    if st.works:  # a code task: what `moot apply` applies, and each agent's change
        sentences.append(codework.verify_note(list(st.works.values()), label))
        details["code"] = codework.rows(list(st.works.values()))
        details["winner"] = chosen
        work = st.works.get(chosen) if chosen is not None else None
        final = work.change.patch if work is not None and work.change else final
    return Outcome(
        protocol="arena",
        status="consensus" if consensus else "no_consensus",
        consensus=consensus,
        how=how,
        trust=" ".join(x for x in sentences if x),
        final_answer=final,
        rounds=rounds,
        disagreements=() if consensus else (_disagreements(st) or (found.reason,)),
        positions={a: st.solutions[a] for a in active},
        details=details,
        **judgement.outcome_fields(),
    )


_FAILING = "no consensus: the agreed change fails its verify commands"


def ran_out(
    s: Session,
    st: State,
    verdict: JudgeVerdict | None,
    judge: str | None,
    last: ModelVerdict | None,
    rounds: int,
) -> Outcome:
    """The rounds ran out (or too few agents remain): the finding over the final answers,
    weighing `last`, the verdict over the answers as they are now."""
    judgement = replace(find(s, st, [last] if last else []), verdicts=tuple(st.verdicts))
    found = judgement.finding
    score = st.rounds[-1]["convergence_score"] if st.rounds else None
    after = f"after {plural(rounds, 'round')}"
    said = f"last score {score if score is not None else 'none (no valid verdict)'}"
    if last is not None and not last.valid and score is not None:
        said += ", from an invalid verdict"
    if found.consensus:
        how = f"{found.reason}, {after} ({said})"
    else:
        how = f"no consensus {after}; {said}: {found.reason}"
    evidence: trust.Evidence | None = None
    weighed = verdict is not None and last is not None and last.valid
    if found.consensus and found.confirmed_by and verdict and judge:
        evidence = trust.JudgeScore(label(judge), verdict.score)
    elif found.consensus:
        evidence = matching(s, st, found.agreed)
    elif verdict and judge and weighed:
        evidence = trust.JudgeScore(label(judge), verdict.score)
    return conclude(s, st, judgement, how, verdict, judge, rounds, evidence)


def _participants(
    s: Session, st: State, agreed: Sequence[str], no_answer: Mapping[str, str]
) -> list[trust.Participant]:
    people = []
    for alias in s.aliases:
        if alias in st.failed:
            people.append(trust.Participant(label(alias), "failed", st.failed[alias]))
        elif alias in st.invalid or alias in no_answer:
            why = st.invalid.get(alias) or no_answer[alias]
            people.append(trust.Participant(label(alias), "invalid", why))
        else:
            status: Literal["agreed", "dissented"] = "agreed" if alias in agreed else "dissented"
            people.append(trust.Participant(label(alias), status))
    return people


def _mods(verdict: JudgeVerdict | None) -> str:
    mods = (verdict.modifications or "").strip() if verdict else ""
    if not mods or mods.lower() in ("none", "none."):
        return ""
    return f" (the judge's modifications are listed with the verdict: {cut(mods, 160)})"


_DISAGREEMENTS = re.compile(
    r"##\s*DISAGREEMENTS?\b[:\t ]*(.*?)(?=\n##\s|\Z)", re.IGNORECASE | re.DOTALL
)


def _disagreements(st: State) -> tuple[str, ...]:
    found = []
    for alias in st.active:
        # the section runs from its heading (what follows on the heading's own line included:
        # "## DISAGREEMENTS None.") to the next heading or the end, protocol tags left out
        section = _DISAGREEMENTS.search(st.analyses.get(alias, ""))
        text = strip_markup(section.group(1)).strip() if section else ""
        if text and not re.fullmatch(r"[\s\"'*_-]*none\.?[\s\"'*_-]*", text, re.IGNORECASE):
            found.append(f"{label(alias)}: {text}")
    return tuple(found)
