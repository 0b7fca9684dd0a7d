"""moot's finding on a deliberation: does more than half of the agents agree, on what, and how
they got there. A model's verdict is evidence weighed here, never the decision.

    claims    = the claim of every agent after every round (claims.extract_claim)
    groups    = agents whose final claims agree pairwise (claims.group_claims)
    consensus = the largest group holds more than half of the agents that started
                (a judge that says they agree may join pairs the wording cannot confirm,
                 never pairs that contradict)
    tie       = two largest groups of the same size: no final answer, no "leads"
    changes   = an agent whose claim contradicts its claim a round before, or that moot can
                neither confirm nor contradict and that takes up another's claim or keeps no
                word of the old one beyond the task's (`replaced`), toward whom
    persuasion= consensus that the first, independent answers did not already hold
                (no consensus when none of them held it nor gave its parts, numbers and
                 option: that agreement is the deliberation's own, and moot cannot tell it from
                 agents echoing a critique or each other)

A verdict that claimed agreement where moot finds none is kept as evidence and named in the
reason ("the judge called it consensus; the final answers still differ: 408 (A), 418 (B)").
Pure and deterministic: same answers in, same finding out.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import TypedDict

from msgspec import Struct
from msgspec.structs import replace

from moot.deliberation.claims import Claim, Relation, compare, extract_claim, group_claims
from moot.deliberation.question import asks_for_a_name, is_yes_no_question
from moot.text import parted
from moot.types import ChangeOfMind, ClaimAt, Finding, ModelVerdict, alias_label

__all__ = ["Judgement", "OutcomeFields", "claim_problem", "judge_answers", "majority", "names"]

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


class Judgement(Struct, frozen=True):
    """The finding and what it rests on, ready for an `Outcome`."""

    finding: Finding
    claims: tuple[ClaimAt, ...]
    changes: tuple[ChangeOfMind, ...]
    verdicts: tuple[ModelVerdict, ...]
    # the agents whose first, independent answer held the agreed claim (`Finding.independent`
    # counts them), so the trust statement can name them and say who left it
    held: tuple[str, ...] = ()

    @property
    def consensus(self) -> bool:
        return self.finding.consensus

    def numbered(self, first: int) -> Judgement:
        """The judgement with its rounds counted from `first`: the finding counts from 0 (the
        first, independent answers), a protocol whose one round is its step `r1/...` and its
        reports' "Round 1" shows its claims as round 1."""
        return replace(
            self,
            claims=tuple(replace(c, round=c.round + first) for c in self.claims),
            changes=tuple(replace(c, round=c.round + first) for c in self.changes),
        )

    def no_answer(self) -> dict[str, str]:
        """The agents whose final answer the finding holds to be no answer, and why: they are
        invalid in the trust statement too, which would otherwise count them valid ("The 2
        valid agents ... did not agree" beside "no agent gave a valid answer")."""
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
            out.append(self._held(name))
        for v in self.verdicts:
            if not v.valid:
                out.append(f"{v.by}'s verdict was invalid: {v.problem}.")
            elif not v.upheld and v.claims_agreement:
                out.append(f"{v.by} {v.says}, but moot's check does not bear it out.")
            elif not v.upheld:
                out.append(f"{v.by} {v.says}, but moot's check finds the final answers agree.")
        return out

    def _held(self, name: Name) -> str:
        """Who held the agreed answer in their first answer, and who of them left it or came to
        it later: a count alone read as if the agreeing agents had held it ("2 of the 3 agents
        held this answer" where the two that held it were A and C, and B and C agree)."""
        f = self.finding
        said = (
            f"{f.independent} of the {f.started} agents held this answer in their first, "
            "independent answer"
        )
        if not self.held:
            return said + "."
        said += f": {names(self.held, name)}."
        left = [a for a in self.held if a not in f.agreed]
        came = [a for a in f.agreed if a not in self.held]
        moves = ([f"{names(left, name)} later left it"] if left else []) + (
            [f"{names(came, name)} came to it"] if came else []
        )
        if moves:
            said += " " + "; ".join(moves) + "."
        return said


def _describe_changes(changes: Sequence[ChangeOfMind], name: Name) -> str:
    """ "Agent B and Agent C moved from '418' to '408' in round 1 after Agent A's critique":
    agents that made the same move at the same time are named together. Where no critique was
    read (a protocol without critiques), the answers moved toward are named instead."""
    moves: dict[tuple[int, str, str, tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for c in changes:
        moves.setdefault((c.round, c.before, c.after, c.critics, c.toward), []).append(c.agent)
    parts = []
    for (rnd, before, after, critics, toward), agents in moves.items():
        by = f" after {names(critics, name)}'s critique" if critics else ""
        if not critics and toward:
            by = f", toward {names(toward, name)}'s answer"
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
    kept: Mapping[tuple[str, int], str] | None = None,
) -> Judgement:
    """moot's finding over the agents' answers.

    `history[r]` maps an agent to its answer after round r (round 0: its first, independent
    answer); None, or a missing agent, means it had no valid answer then. The last round holds
    the final answers; an agent missing from it keeps its latest earlier answer only if it
    was not dropped (pass it again to keep it). `started`: every agent that started, failed ones
    included. `verdicts`: model verdicts to weigh (a judge that claims agreement may confirm pairs
    the wording cannot, never pairs that contradict). `critics[(agent, r)]`: whose critique the
    agent read before round r's answer (an agent missing from it read those it moved toward;
    without `critics`, the protocol has no critiques and none was read). `reasons[agent]`: why
    an agent had no valid answer. `task`: the question; an answer whose claim only repeats it
    is no answer. `kept[(agent, r)]`: why round r's own answer of the agent was not taken, its
    earlier answer standing in `history[r]` (the claims table says so)."""
    if not started:
        raise ValueError("no agents started: pass every agent that started, failed ones included")
    if not history:
        history = [{}]
    # a protocol asks again after every round, over every round so far: each round is read,
    # and each pair of rounds compared, once (the caches below are keyed by the answers)
    rounds = tuple(tuple(rnd.items()) for rnd in history)
    first, final = (dict(_read_round(rounds[r], task)[0]) for r in (0, -1))
    order = [a for a in started if a in final]
    groups = group_claims(final, order=order)
    top = groups[0] if groups else None
    confirmed_by: str | None = None
    supporters = [v for v in verdicts if v.valid and v.claims_agreement]
    if supporters and (top is None or not majority(len(top.agents), len(started))):
        # a judge vouches for no pair that holds its own answer: that is no evidence
        own = [a for a in started if name(a) == supporters[-1].by]
        widened = group_claims(final, confirmed=True, order=order, apart=own)
        if widened and majority(len(widened[0].agents), len(started)):
            groups, top, confirmed_by = widened, widened[0], supporters[-1].by

    claims = _claim_rows(rounds, tuple(started), reasons or {}, task, kept or {})
    changes = _changes(rounds, critics, task)
    valid = len(final)
    total = len(started)
    shown_groups = tuple((g.claim, g.agents) for g in groups)
    differ = "; ".join(f"{_quote(g.claim, 60)} ({_letters(g.agents, name)})" for g in groups)

    holders: tuple[str, ...] = ()
    if top is not None and majority(len(top.agents), total):
        independent: int | None = None
        if len(rounds) > 1:
            holders = _independent(
                first, final, top.agents, started, confirmed=confirmed_by is not None
            )
            independent = len(holders)
        held = f"'{_quote(top.claim)}'"
        agreed_by = names(top.agents, name)
        movers = _describe_changes([c for c in changes if c.agent in top.agents], name)
        moved = "; " + movers.removeprefix("Changes of mind: ").rstrip(".") if movers else ""
        if independent == 0 and not any(_grounded(final[a], first) for a in top.agents):
            # nobody held it, nor the parts it is made of, before reading the others: agreement
            # the deliberation alone made cannot be told from agents echoing a critique or each
            # other (or copying one's junk), so say less
            reason = (
                f"converged only by persuasion: {len(top.agents)} of {total} agents end on "
                f"{held} ({agreed_by}), but none of them held it in their first, independent "
                f"answer, so moot cannot tell their agreement from an echo{moved}"
            )
            if supporters:
                reason = f"{supporters[-1].by} {supporters[-1].says}; {reason}"
            label = "no_consensus"
        elif len(rounds) > 1 and independent is not None and not majority(independent, total):
            reason = (
                f"converged by persuasion: {len(top.agents)} of {total} agents end on {held} "
                f"({agreed_by}), but only {independent} held it in their first answer{moved}"
            )
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
        agreed = label != "no_consensus"
        holders = holders if agreed else ()
        finding = Finding(
            label=label,  # type: ignore[arg-type]
            reason=reason,
            claim=top.claim if agreed else None,
            agreed=top.agents if agreed else (),
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
        elif valid == 0:
            label = "no_consensus"
            reason = "no agent gave a valid answer" if total > 1 else "no valid answer was given"
        elif valid == 1:
            label = "no_consensus"
            reason = f"only 1 of {total} agents gave a valid answer" + (
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
        replace(v, upheld=v.claims_agreement == finding.consensus) if v.valid else v
        for v in verdicts
    )
    return Judgement(finding, claims, changes, weighed, holders)


def _independent(
    first: Mapping[str, Claim],
    final: Mapping[str, Claim],
    agreed: Sequence[str],
    started: Sequence[str],
    *,
    confirmed: bool,
) -> tuple[str, ...]:
    """The agents whose first answers already agreed with the agreed final claim (by the same
    standard as the final answers: with a confirming verdict, nothing may contradict)."""
    reference = [final[a] for a in agreed]
    ok = {Relation.AGREE, Relation.UNSURE} if confirmed else {Relation.AGREE}
    return tuple(
        a
        for a in started
        if a in first and all(compare(first[a], r).relation in ok for r in reference)
    )


def _grounded(claim: Claim, first: Mapping[str, Claim]) -> bool:
    """Whether a claim that no first answer held is made of what the first answers said: a
    synthesis ("Queue worker, nightly, idempotent." from three answers that gave one each) is
    grounded; a number, an option or words that no first answer gave ("512" after 408, 418 and
    400; talk none of them wrote) are not. Every number in its unit and the option must come
    from some first answer, and at least half of its own content words (beyond the task's).
    A first answer that contradicts the claim is none of its parts: "The capital of France is
    not Paris." is not made of "The capital of France is Paris."."""
    given: dict[str, set[Fraction]] = {}
    said: set[str] = set()
    for held in first.values():
        if compare(held, claim).relation is Relation.CONTRADICT:
            continue
        for unit, values in held.quantities:
            given.setdefault(unit, set()).update(values)
        said |= held.content
    if any(not values <= given.get(unit, set()) for unit, values in claim.quantities):
        return False
    if claim.choice is not None and all(h.choice != claim.choice for h in first.values()):
        return False
    words = claim.content if claim.new is None else claim.new
    if not words:
        return bool(claim.quantities or claim.choice)
    return 2 * len(words & said) >= len(words)


Answers = tuple[tuple[str, str | None], ...]  # one round of a history, as its items
# Rounds kept by the caches below: a session's rounds (the arena runs a few, the benchmark 46);
# past that a finding reads every round again, as it did before the caches. They hold the
# answers of at most that many rounds.
_ROUNDS_KEPT = 256


_SAYS_YES = frozenset("yes yeah yep true".split())
_SAYS_NO = frozenset("no nope false".split())


def claim_problem(claim: Claim, task: str | None = None) -> str | None:
    """Why a claim is no answer to `task`, or None: it only repeats the question ("2 + 3 ="),
    it says both yes and no and, beyond the task's words, nothing but numbering ("is the Earth
    flat? #1: no; #2: yes.", where three embedded agents ended: a consensus, exit 0), or it is
    a bare number to a yes/no question ("5" to "Is 7 a prime number?"; "6 GB" to "Is it over 5
    GB?" has a unit and answers) or to a question that asks for a name ("2" to "What is the
    capital of Italy?"). Without the task none is judged."""
    if claim.repeats_task:
        return f"its answer only repeats the question ('{_quote(claim.text)}')"
    # (numbers alone, in no unit: "2", or ",1234567890," read as a statement of no words)
    bare = claim.kind == "number" or bool(
        claim.quantities and not claim.content and not claim.choice
    )
    if task is not None and bare and all(unit == "" for unit, _ in claim.quantities):
        quoted = _quote(claim.text)
        if is_yes_no_question(task):
            return f"its answer is a bare number to a yes/no question ('{quoted}')"
        if asks_for_a_name(task):
            return f"its answer is a bare number to a question that asks for a name ('{quoted}')"
    said = set(claim.words)
    if (
        claim.new is not None
        and not _SAYS_YES.isdisjoint(said)
        and not _SAYS_NO.isdisjoint(said)
        and all(w.startswith("#") or w.isdigit() for w in claim.new)
    ):
        return f"its answer says both yes and no ('{_quote(claim.text)}')"
    return None


@functools.lru_cache(maxsize=_ROUNDS_KEPT)
def _read_round(
    answers: Answers, task: str | None
) -> tuple[tuple[tuple[str, Claim], ...], tuple[tuple[str, str], ...]]:
    """The claims of one round's answers, and why those that are no answer are none
    (`claim_problem`)."""
    read = [(a, extract_claim(t, task)) for a, t in answers if t is not None and t.strip()]
    problems = [(a, claim, claim_problem(claim, task)) for a, claim in read]
    echoed = tuple((a, problem) for a, _, problem in problems if problem is not None)
    return tuple((a, claim) for a, claim, problem in problems if problem is None), echoed


def _claim_rows(
    rounds: tuple[Answers, ...],
    started: tuple[str, ...],
    reasons: Mapping[str, str],
    task: str | None,
    kept: Mapping[tuple[str, int], str],
) -> tuple[ClaimAt, ...]:
    why = tuple(reasons.items())  # (a new reason reads every round once more)
    stood: dict[int, tuple[tuple[str, str], ...]] = {}
    for (agent, at), reason in kept.items():
        stood[at] = (*stood.get(at, ()), (agent, reason))
    return _rows(rounds, started, why, task, tuple(sorted(stood.items())))


@functools.lru_cache(maxsize=_ROUNDS_KEPT)
def _rows(
    rounds: tuple[Answers, ...],
    started: tuple[str, ...],
    reasons: tuple[tuple[str, str], ...],
    task: str | None,
    kept: tuple[tuple[int, tuple[tuple[str, str], ...]], ...],
) -> tuple[ClaimAt, ...]:
    """The claim rows of every round (`kept`: by round, why an answer was not taken): the
    rows of all rounds but the last as the finding a round before read them, then the last
    round's. A finding asked after every round so adds one round's rows, not every round's."""
    if not rounds:
        return ()
    last = len(rounds) - 1
    stood = dict(kept).get(last, ())
    if last >= _ROUNDS_KEPT:  # past what is kept, read each round (no recursion that deep)
        rows = [
            _round_rows(r, rounds[r], started, reasons, task, dict(kept).get(r, ()))
            for r in range(last)
        ]
        before = tuple(row for part in rows for row in part)
    else:
        earlier = tuple((r, why) for r, why in kept if r < last)
        before = _rows(rounds[:-1], started, reasons, task, earlier)
    return before + _round_rows(last, rounds[last], started, reasons, task, stood)


@functools.lru_cache(maxsize=_ROUNDS_KEPT)
def _round_rows(
    r: int,
    answers: Answers,
    started: tuple[str, ...],
    reasons: tuple[tuple[str, str], ...],
    task: str | None,
    kept: tuple[tuple[str, str], ...] = (),
) -> tuple[ClaimAt, ...]:
    read, echoed = _read_round(answers, task)
    claimed, echoes, given, why = dict(read), dict(echoed), dict(answers), dict(reasons)
    stood = dict(kept)
    rows: list[ClaimAt] = []
    for agent in started:
        if agent in claimed:
            text = claimed[agent].text
            rows.append(ClaimAt(agent=agent, round=r, claim=text, kept=stood.get(agent, "")))
        elif agent in given:
            rows.append(
                ClaimAt(
                    agent=agent,
                    round=r,
                    claim="",
                    valid=False,
                    reason=echoes.get(agent) or why.get(agent, "no valid answer"),
                )
            )
    return tuple(rows)


def _changes(
    rounds: tuple[Answers, ...],
    critics: Mapping[tuple[str, int], Sequence[str]] | None,
    task: str | None,
) -> tuple[ChangeOfMind, ...]:
    changes: list[ChangeOfMind] = []
    for r, moves in _moved(rounds, task):
        read = tuple(
            () if critics is None else tuple(critics.get((agent, r), toward))
            for agent, _, _, toward in moves
        )
        changes.extend(_changes_at(r, moves, read))
    return tuple(changes)


Moves = tuple[tuple[str, str, str, tuple[str, ...]], ...]  # `_moves`: who moved, from, to, toward


@functools.lru_cache(maxsize=_ROUNDS_KEPT)
def _moved(rounds: tuple[Answers, ...], task: str | None) -> tuple[tuple[int, Moves], ...]:
    """Each round's moves from the round before (`_moves`), for the rounds with any: those up
    to the round before the last as the finding a round before found them, then the last's."""
    last = len(rounds) - 1
    if last < 1:
        return ()
    if last >= _ROUNDS_KEPT:  # past what is kept, compare each pair (no recursion that deep)
        pairs = ((r, _moves(rounds[r - 1], rounds[r], task)) for r in range(1, last))
        before = tuple((r, moves) for r, moves in pairs if moves)
    else:
        before = _moved(rounds[:-1], task)
    moves = _moves(rounds[-2], rounds[-1], task)
    return (*before, (last, moves)) if moves else before


@functools.lru_cache(maxsize=_ROUNDS_KEPT)
def _changes_at(
    r: int,
    moves: Moves,
    read: tuple[tuple[str, ...], ...],
) -> tuple[ChangeOfMind, ...]:
    """Round r's changes of mind: `moves` (`_moves`), and whose critiques each mover read."""
    return tuple(
        ChangeOfMind(agent=agent, round=r, before=before, after=after, toward=toward, critics=by)
        for (agent, before, after, toward), by in zip(moves, read, strict=True)
    )


@functools.lru_cache(maxsize=_ROUNDS_KEPT)
def _moves(
    earlier: Answers, later: Answers, task: str | None
) -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
    """Who moved from their claim of the round before, from what to what, toward whom. A move is
    a claim that contradicts the agent's claim before, or one moot's check can neither confirm
    nor contradict (the finding sets such claims apart) that takes up another agent's claim or
    replaces the old one (`replaced`: "blue" to "different colors than in our backyard"). A
    rewording that agrees, or that keeps a word of its own point ("Use Postgres." to "Postgres,
    for durability."), is none: a change of mind is a claim about the agent, and moot makes it
    only on evidence. An empty claim (no words) stands for no position, and is no move."""
    before, after = dict(_read_round(earlier, task)[0]), dict(_read_round(later, task)[0])
    moves = []
    for agent in after:
        if agent not in before or not before[agent].words or not after[agent].words:
            continue
        relation = compare(before[agent], after[agent]).relation
        if relation is Relation.AGREE:
            continue
        toward = tuple(
            other
            for other in before
            if other != agent and compare(before[other], after[agent]).relation is Relation.AGREE
        )
        if relation is Relation.UNSURE and not toward:
            if not replaced(before[agent], after[agent]):
                continue
        moves.append((agent, before[agent].text, after[agent].text, toward))
    return tuple(moves)


def replaced(before: Claim, after: Claim) -> bool:
    """Whether `after` replaces `before` rather than rewording it, where moot's check can
    neither confirm nor contradict them: the two, the task's words aside (claims read with the
    task), share no content word ("blue" to "different colors"; not "Use Postgres." to
    "Postgres, because sessions need durable storage.")."""
    old = before.content if before.new is None else before.new
    new = after.content if after.new is None else after.new
    return bool(old) and bool(new) and old.isdisjoint(new)
