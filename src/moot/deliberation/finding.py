"""moot's finding on a deliberation: does more than half of the agents agree, on what, and how
they got there. A model's verdict is evidence weighed here, never the decision.

    claims    = the claim of every agent after every round (claims.extract_claim)
    groups    = agents whose final claims agree pairwise (claims.group_claims)
    consensus = the largest group holds more than half of the agents that started
                (a judge that says they agree may join pairs the wording cannot confirm,
                 never pairs that contradict)
    tie       = two largest groups of the same size: no final answer, no "leads"
    changes   = an agent whose claim contradicts its claim a round before, toward whom
    persuasion= consensus that the first, independent answers did not already hold

A verdict that claimed agreement where moot finds none is kept as evidence and named in the
reason ("the judge called it consensus; the final answers still differ: 408 (A), 418 (B)").
Pure and deterministic: same answers in, same finding out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

from moot.deliberation.claims import Claim, Relation, compare, extract_claim, group_claims
from moot.text import parted
from moot.types import ChangeOfMind, ClaimAt, Finding, ModelVerdict, alias_label

__all__ = ["Judgement", "OutcomeFields", "judge_answers", "majority", "names"]

Name = Callable[[str], str]


def majority(count: int, started: int) -> bool:
    """More than half of all that started: 2 of 4 is not a majority."""
    return started > 0 and 2 * count > started


def names(agents: Sequence[str], name: Name = alias_label) -> str:
    """ "Agent A", "Agent A and Agent B", "Agent A, Agent B and Agent C"."""
    shown = [name(a) for a in agents]
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def _letters(agents: Sequence[str], name: Name) -> str:
    """Short names for a list in parentheses: "A, B" for agents, full names otherwise."""
    shown = [name(a) for a in agents]
    if all(s.startswith("Agent ") for s in shown):
        return ", ".join(s.removeprefix("Agent ") for s in shown)
    return ", ".join(shown)


def _quote(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    flat = "".join(ch if ch.isprintable() else "?" for ch in flat)
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


class OutcomeFields(TypedDict):
    """The typed parts of an `Outcome` that a judgement fills."""

    finding: Finding
    claims: tuple[ClaimAt, ...]
    changes: tuple[ChangeOfMind, ...]
    verdicts: tuple[ModelVerdict, ...]


@dataclass(frozen=True)
class Judgement:
    """The finding and what it rests on, ready for an `Outcome`."""

    finding: Finding
    claims: tuple[ClaimAt, ...]
    changes: tuple[ChangeOfMind, ...]
    verdicts: tuple[ModelVerdict, ...]

    @property
    def consensus(self) -> bool:
        return self.finding.consensus

    def no_answer(self) -> dict[str, str]:
        """The agents whose final answer the finding holds to be no answer, and why: they are
        invalid in the trust statement too, which would otherwise count them valid ("The 2
        valid agents ... did not agree" beside "only 0 of 3 agents gave a valid answer")."""
        last: dict[str, ClaimAt] = {}
        for row in self.claims:
            if row.agent not in last or row.round >= last[row.agent].round:
                last[row.agent] = row
        return {agent: row.reason for agent, row in last.items() if not row.valid}

    def outcome_fields(self) -> OutcomeFields:
        """`Outcome(**judgement.outcome_fields(), ...)`."""
        return {
            "finding": self.finding,
            "claims": self.claims,
            "changes": self.changes,
            "verdicts": self.verdicts,
        }

    def sentences(self, name: Name = alias_label) -> list[str]:
        """What the finding adds to a trust statement: changes of mind, persuasion, and model
        verdicts the finding does not bear out."""
        out: list[str] = []
        moved = _describe_changes(self.changes, name)
        if moved:
            out.append(moved)
        f = self.finding
        if f.consensus and f.independent is not None:
            out.append(
                f"{f.independent} of the {f.started} agents held this answer in their first, "
                "independent answer."
            )
        for v in self.verdicts:
            if not v.valid:
                out.append(f"{v.by}'s verdict was invalid: {v.problem}.")
            elif not v.upheld and v.claims_agreement:
                out.append(f"{v.by} {v.says}, but moot's check does not bear it out.")
            elif not v.upheld:
                out.append(f"{v.by} {v.says}, but moot's check finds the final answers agree.")
        return out


def _describe_changes(changes: Sequence[ChangeOfMind], name: Name) -> str:
    """ "Agent B and Agent C moved from '418' to '408' in round 1 after Agent A's critique":
    agents that made the same move at the same time are named together."""
    moves: dict[tuple[int, str, str, tuple[str, ...]], list[str]] = {}
    for c in changes:
        moves.setdefault((c.round, c.before, c.after, c.critics), []).append(c.agent)
    parts = []
    for (rnd, before, after, critics), agents in moves.items():
        by = f" after {names(critics, name)}'s critique" if critics else ""
        was, now = parted(before, after, 40)
        parts.append(
            f"{names(agents, name)} moved from '{_quote(was, 40)}' to '{_quote(now, 40)}' "
            f"in round {rnd}{by}"
        )
    return ("Changes of mind: " + "; ".join(parts) + ".") if parts else ""


def judge_answers(
    history: Sequence[Mapping[str, str | None]],
    *,
    started: Sequence[str],
    verdicts: Sequence[ModelVerdict] = (),
    critics: Mapping[tuple[str, int], Sequence[str]] | None = None,
    reasons: Mapping[str, str] | None = None,
    name: Name = alias_label,
    task: str | None = None,
) -> Judgement:
    """moot's finding over the agents' answers.

    `history[r]` maps an agent to its answer after round r (round 0: its first, independent
    answer); None, or a missing agent, means it had no valid answer then. The last round holds
    the final answers; an agent missing from it keeps its latest earlier answer only if it
    was not dropped (pass it again to keep it). `started`: every agent that started, failed ones
    included. `verdicts`: model verdicts to weigh (a judge that claims agreement may confirm pairs
    the wording cannot, never pairs that contradict). `critics[(agent, r)]`: whose critique the
    agent read before round r's answer. `reasons[agent]`: why an agent had no valid answer.
    `task`: the question; an answer whose claim only repeats it is no answer."""
    if not started:
        raise ValueError("no agents started: pass every agent that started, failed ones included")
    if not history:
        history = [{}]
    parsed: list[dict[str, Claim]] = []
    echoes: dict[tuple[str, int], str] = {}  # (agent, round) -> why its claim is no answer
    for r, rnd in enumerate(history):
        read = {a: extract_claim(t, task) for a, t in rnd.items() if t is not None and t.strip()}
        for agent, claim in list(read.items()):
            if claim.repeats_task:
                echoes[(agent, r)] = (
                    f"its answer only repeats the question ('{_quote(claim.text)}')"
                )
                del read[agent]
        parsed.append(read)
    final = parsed[-1]
    order = [a for a in started if a in final]
    groups = group_claims(final, order=order)
    top = groups[0] if groups else None
    confirmed_by: str | None = None
    supporters = [v for v in verdicts if v.valid and v.claims_agreement]
    if supporters and (top is None or not majority(len(top.agents), len(started))):
        widened = group_claims(final, confirmed=True, order=order)
        if widened and majority(len(widened[0].agents), len(started)):
            groups, top, confirmed_by = widened, widened[0], supporters[-1].by

    claims = _claim_rows(parsed, history, started, reasons or {}, echoes)
    changes = _changes(parsed, critics or {})
    valid = len(final)
    total = len(started)
    shown_groups = tuple((g.claim, g.agents) for g in groups)
    differ = "; ".join(f"{_quote(g.claim, 60)} ({_letters(g.agents, name)})" for g in groups)

    if top is not None and majority(len(top.agents), total):
        independent = (
            _independent(parsed[0], final, top.agents, started, confirmed=confirmed_by is not None)
            if len(parsed) > 1
            else None
        )
        held = f"'{_quote(top.claim)}'"
        agreed_by = names(top.agents, name)
        if len(parsed) > 1 and independent is not None and not majority(independent, total):
            movers = [c for c in changes if c.agent in top.agents]
            reason = (
                f"converged by persuasion: {len(top.agents)} of {total} agents end on {held} "
                f"({agreed_by}), but only {independent} held it in their first answer"
            )
            if movers:
                reason += "; " + _describe_changes(movers, name).removeprefix(
                    "Changes of mind: "
                ).rstrip(".")
            label = "persuasion"
        else:
            how = (
                f"confirmed by {confirmed_by}, and nothing in them contradicts"
                if confirmed_by
                else "by moot's check"
            )
            reason = (
                f"{len(top.agents)} of {total} agents' final answers agree on {held} "
                f"({agreed_by}), {how}"
            )
            label = "consensus"
        finding = Finding(
            label=label,  # type: ignore[arg-type]
            reason=reason,
            claim=top.claim,
            agreed=top.agents,
            groups=shown_groups,
            started=total,
            valid=valid,
            independent=independent,
            confirmed_by=confirmed_by,
        )
    else:
        if len(groups) >= 2 and len(groups[0].agents) == len(groups[1].agents) > 1:
            tied = [g for g in groups if len(g.agents) == len(groups[0].agents)]
            label = "tie"
            reason = "a tie: " + " against ".join(
                f"'{_quote(g.claim, 60)}' ({_letters(g.agents, name)})" for g in tied
            )
        elif valid <= 1:
            label = "no_consensus"
            reason = f"only {valid} of {total} agents gave a valid answer" + (
                f" ({differ})" if differ else ""
            )
        else:
            label = "no_consensus"
            reason = f"the final answers differ: {differ}"
        if supporters:
            reason = f"{supporters[-1].by} {supporters[-1].says}; {reason}"
        finding = Finding(
            label=label,  # type: ignore[arg-type]
            reason=reason,
            groups=shown_groups,
            started=total,
            valid=valid,
        )
    weighed = tuple(
        v.model_copy(update={"upheld": v.claims_agreement == finding.consensus}) if v.valid else v
        for v in verdicts
    )
    return Judgement(finding, claims, changes, weighed)


def _independent(
    first: Mapping[str, Claim],
    final: Mapping[str, Claim],
    agreed: Sequence[str],
    started: Sequence[str],
    *,
    confirmed: bool,
) -> int:
    """How many agents' first answers already agreed with the agreed final claim (by the same
    standard as the final answers: with a confirming verdict, nothing may contradict)."""
    reference = [final[a] for a in agreed]
    ok = {Relation.AGREE, Relation.UNSURE} if confirmed else {Relation.AGREE}
    return sum(
        1
        for a in started
        if a in first and all(compare(first[a], r).relation in ok for r in reference)
    )


def _claim_rows(
    parsed: Sequence[Mapping[str, Claim]],
    history: Sequence[Mapping[str, str | None]],
    started: Sequence[str],
    reasons: Mapping[str, str],
    echoes: Mapping[tuple[str, int], str],
) -> tuple[ClaimAt, ...]:
    rows: list[ClaimAt] = []
    for r, rnd in enumerate(parsed):
        for agent in started:
            if agent in rnd:
                rows.append(ClaimAt(agent=agent, round=r, claim=rnd[agent].text))
            elif agent in history[r]:
                rows.append(
                    ClaimAt(
                        agent=agent,
                        round=r,
                        claim="",
                        valid=False,
                        reason=echoes.get((agent, r)) or reasons.get(agent, "no valid answer"),
                    )
                )
    return tuple(rows)


def _changes(
    parsed: Sequence[Mapping[str, Claim]], critics: Mapping[tuple[str, int], Sequence[str]]
) -> tuple[ChangeOfMind, ...]:
    changes: list[ChangeOfMind] = []
    for r in range(1, len(parsed)):
        before, after = parsed[r - 1], parsed[r]
        for agent in after:
            if agent not in before:
                continue
            if compare(before[agent], after[agent]).relation is not Relation.CONTRADICT:
                continue
            toward = tuple(
                other
                for other in before
                if other != agent
                and compare(before[other], after[agent]).relation is Relation.AGREE
            )
            changes.append(
                ChangeOfMind(
                    agent=agent,
                    round=r,
                    before=before[agent].text,
                    after=after[agent].text,
                    toward=toward,
                    critics=tuple(critics.get((agent, r), toward)),
                )
            )
    return tuple(changes)
