"""The court (seed 002): agents vote on position ids until a supermajority agrees; if they do
not, a judge panel scores the positions and selects one; else the court is deadlocked.

Round 1 proposes: every agent abstains and states a position. Each later round votes on the
candidate, the position with the broadest support in the round before: yes (naming its id), no
(with an alternative) or abstain. Each prompt carries the earlier rounds its context topology
allows, cut to fit (`court_context`); the panel is in `court_panel`; what is kept of each round
and the output document are in `court_record`. Phases follow the seed's state machine (2.1).

The label is moot's finding (deliberation/finding.py) on the agents' positions after every
round, each the position its last vote supports (yes: the candidate's text; no: its own
alternative; abstain: none):

    positions = [{agent: supported position} for every round]
    finding   = judge_answers(positions, started=agents)   # consensus | persuasion | ...
    adopters  = agreeing agents that never held a valid position of their own (no proposal nor
                alternative that was an answer): they voted for one, nobody persuaded them
    agreement = more than half of the agents that started agree without the adopters, else
                no consensus (one agent's position and votes for it are not a court's finding)
    settled   = finding agrees on the candidate, held by a supermajority of the agents that
                took a side (consensus_threshold of yes + no, adopters left out of both)
    panel     = the judges' pick is evidence (ModelVerdict): "chosen by the judges", a labelled
                decision over agents that did not agree, never their consensus (exit 2)

Positions whose texts agree by moot's check are one position: they pool their support for the
candidate and the panel sees them once; the seed's position ids (hashes of the normalised text)
stay in the record.
"""

from __future__ import annotations

from functools import partial

from msgspec.structs import replace

from moot.deliberation.anonymize import quote
from moot.deliberation.claims import Relation, compare, extract_claim
from moot.deliberation.consensus import (
    Response,
    detect_agent_consensus,
    position_id,
    rank_positions,
    required_votes,
    select_candidate,
)
from moot.deliberation.finding import Judgement, judge_answers, majority, names
from moot.deliberation.trust import (
    Evidence,
    JudgePanel,
    Participant,
    Votes,
    assess,
    own_judges_note,
    plain_reason,
    qualified,
)
from moot.engine.session import Session
from moot.engine.structured import Parsed, ask_parsed
from moot.errors import ProtocolAborted
from moot.protocols.court import prompts
from moot.protocols.court.context import history, system_prompt
from moot.protocols.court.document import (
    AgentRound,
    Court,
    Ruling,
    build_output,
    label,
    user,
)
from moot.protocols.court.options import CourtOptions
from moot.protocols.court.panel import judge_positions, judge_round, record_judges
from moot.protocols.court.position import position_problem
from moot.protocols.court.replies import AgentReply, agent_parser, agent_schema
from moot.protocols.court.rounds import describe_round
from moot.protocols.court.verdicts import invalid_sentence, judge_verdicts, undecided
from moot.protocols.shown import anonymous, nonce
from moot.text import one_line, plural
from moot.types import Finding, ModelVerdict, Outcome, Step, estimate_tokens

__all__ = ["run"]


# -- the agents' debate ---------------------------------------------------------------------
def _agent_prompt(s: Session, c: Court, me: str, r: int, step: str) -> tuple[str, list[int]]:
    def render(past: str) -> str:
        if c.candidate is None:
            return prompts.PROPOSE.format(round=r, rounds=c.opts.max_agent_rounds, history=past)
        return prompts.VOTE.format(
            round=r,
            rounds=c.opts.max_agent_rounds,
            candidate=c.candidate,
            candidate_text=quote(
                f"candidate position {c.candidate}",
                anonymous(s, c.texts[c.candidate], f"{step}/candidate"),
                nonce=nonce(s, f"{step}/candidate"),
                limit=4200,
            ),
            history=past,
        )

    # ModelContextLimit - SystemPrompt - ResponseReservation, within maxContextTokens (3.4)
    reserve = s.agent(me).config.max_tokens or c.opts.max_tokens_per_response
    window = min(c.opts.max_context_tokens, s.context_window(me) - reserve)
    fixed = estimate_tokens(c.systems[me].content) + estimate_tokens(render(""))
    past, dropped = history(s, c, me, step, window - fixed)
    return render(past), dropped


def _response(c: Court, alias: str, rnd: int, answer: Parsed[AgentReply]) -> Response:
    reply, candidate = answer.value, c.candidate
    if reply is None:  # seed 8.2: an error response abstains and holds no position
        problem = answer.problem or "no valid answer"
        return Response(alias, rnd, "abstain", None, "", 0.0, ok=False, error=problem)
    if candidate is None:  # a proposal: abstain by rule, the position is the proposal
        text = reply.new_position_text or ""
        return Response(
            alias, rnd, "abstain", position_id(text), text, reply.confidence, reply.reasoning
        )
    if reply.vote == "yes":
        text = c.texts[candidate]
        return Response(alias, rnd, "yes", candidate, text, reply.confidence, reply.reasoning)
    text = reply.new_position_text or ""
    pid = position_id(text) if text else None
    return Response(alias, rnd, reply.vote, pid, text, reply.confidence, reply.reasoning)


async def _agent_round(s: Session, c: Court, r: int) -> AgentRound:
    candidate = c.candidate
    kind = "propose" if candidate is None else "vote"
    steps = [Step.at(r, kind, a) for a in c.agents]
    asks = []
    truncated: dict[str, list[int]] = {}
    for alias, step in zip(c.agents, steps, strict=True):
        prompt, dropped = _agent_prompt(s, c, alias, r, step)
        if dropped:
            truncated[alias] = dropped
        asked = [c.systems[alias].content, prompt]
        asks.append(
            ask_parsed(
                s,
                alias,
                [c.systems[alias], user(prompt)],
                agent_parser(
                    candidate,
                    repair=not c.strict,
                    no_answer=partial(position_problem, s, asked=asked, task=c.question),
                ),
                step=step,
                reminder=prompts.AGENT_FORMAT,
                reask=not c.strict,
                json_schema=agent_schema(candidate),
            )
        )
    with s.deadline(c.opts.round_timeout):
        answers = await s.gather(*asks)
    responses = [_response(c, a, r, answer) for a, answer in zip(c.agents, answers, strict=True)]
    for resp in responses:
        if resp.position_id is not None and resp.vote != "yes":
            c.texts.setdefault(resp.position_id, resp.position_text)
    return AgentRound(r, candidate, responses, list(answers), steps, truncated=truncated)


def _record_agents(s: Session, c: Court, rnd: AgentRound) -> None:
    """Keep the round in the outcome's details and the readable archive (one file an agent,
    as the arena keeps), and tell the faces its tally."""
    kind = "proposal" if rnd.candidate is None else "vote"
    for resp in rnd.responses:
        lines = [f"vote: {resp.vote}" if rnd.candidate else "proposal"]
        if resp.ok:
            if resp.position_id:
                lines.append(f"position {resp.position_id}:\n\n{resp.position_text}")
            lines.append(f"confidence: {resp.confidence:g}")
            if resp.reasoning:
                lines.append(f"reasoning: {resp.reasoning}")
        else:
            lines.append(f"error: {resp.error}")
        letter = resp.agent.rsplit("_", 1)[-1]
        s.archive(f"round{rnd.number}/{letter}_{kind}", "\n\n".join(lines) + "\n")
    counts = {"yes": 0, "no": 0, "abstain": 0, "failed": 0}
    for resp in rnd.responses:
        counts["failed" if not resp.ok else resp.vote] += 1
    entry: dict[str, object] = {
        "phase": "agents",
        "round": rnd.number,
        "candidate": rnd.candidate,
        # the seed's VoteTally once there is a candidate (failed = total - eligible)
        "tally": rnd.consensus.tally.as_dict() if rnd.consensus else counts,
        "method": rnd.method if rnd.consensus else None,
        "next_candidate": c.candidate,
        "failed": [r.agent for r in rnd.responses if not r.ok],
    }
    if rnd.candidate is None:
        entry["proposals"] = {pid: n for pid, _, n in rank_positions(rnd.responses, proposals=True)}
    if rnd.truncated:
        entry["context_truncated"] = rnd.truncated
    c.details.append(entry)
    phase = "propose" if rnd.candidate is None else "vote"
    s.round_done(Step.at(rnd.number, phase), describe_round(entry, c.opts))


# -- moot's finding ---------------------------------------------------------------------------
def supported(c: Court, resp: Response) -> str | None:
    """The position a response supports: the candidate's text for yes, its own for no (and for
    a proposal), none for an abstention or an error."""
    if not resp.ok or resp.position_id is None:
        return None
    if resp.vote == "yes":
        return c.texts.get(resp.position_id, resp.position_text)
    if resp.vote == "abstain" and c.rounds and resp.round > c.rounds[0].number:
        return None
    return resp.position_text


def _failed(resp: Response) -> bool:
    """Whether a reply failed as a call (or could not be read at all). A position that is no
    answer is not a failure: the agent answered, and moot's finding judges it invalid."""
    return not resp.ok and "not an answer" not in (resp.error or "no valid answer")


def _why_none(resp: Response) -> str:
    if not resp.ok:
        return plain_reason(resp.error or "no valid answer")
    return "abstained"


def _agree(a: str, b: str) -> bool:
    return compare(extract_claim(a), extract_claim(b)).relation is Relation.AGREE


def _as_court(j: Judgement, numbers: list[int], reasons: dict[tuple[str, int], str]) -> Judgement:
    """The finding in the court's terms: its rounds numbered as the court's (the finding's round
    0 is the court's round 1), and why each agent had no position in each round."""
    court = replace(
        j,
        claims=tuple(
            replace(
                x,
                round=numbers[x.round],
                reason=reasons.get((x.agent, x.round), x.reason) if not x.valid else "",
            )
            for x in j.claims
        ),
        changes=tuple(replace(x, round=numbers[x.round]) for x in j.changes),
    )
    f = court.finding
    if f.label != "persuasion":
        return court
    # the reason names rounds too: say it again in the court's numbering
    movers = replace(court, changes=tuple(x for x in court.changes if x.agent in f.agreed))
    moved = [x for x in movers.sentences(label) if x.startswith("Changes of mind: ")]
    reason = (
        f"converged by persuasion: {len(f.agreed)} of {f.started} agents end on '{f.claim}' "
        f"({names(f.agreed, label)}), but only {f.independent} held it in their first proposal"
    )
    if moved:
        reason += "; " + moved[0].removeprefix("Changes of mind: ").rstrip(".")
    return replace(court, finding=replace(f, reason=reason))


def judge_court(c: Court, verdicts: list[ModelVerdict] | None = None) -> Judgement:
    """moot's finding on the agents' positions after every round so far. A change of mind in a
    vote round names the agents whose position the agent had just been shown as the candidate."""
    history: list[dict[str, str | None]] = []
    critics: dict[tuple[str, int], list[str]] = {}
    reasons: dict[tuple[str, int], str] = {}
    for index, rnd in enumerate(c.rounds):
        history.append({r.agent: supported(c, r) for r in rnd.responses})
        for r in rnd.responses:
            if history[-1][r.agent] is None:
                reasons[(r.agent, index)] = _why_none(r)
        if index and rnd.candidate is not None:
            shown = c.texts.get(rnd.candidate, "")
            holders = [a for a, text in history[-2].items() if text and _agree(text, shown)]
            for r in rnd.responses:
                critics[(r.agent, index)] = [h for h in holders if h != r.agent]
    last = len(history) - 1
    j = judge_answers(
        history,
        started=c.agents,
        verdicts=verdicts or [],
        critics=critics,
        reasons={agent: why for (agent, r), why in reasons.items() if r == last},
        name=label,
        task=c.question,
    )
    return _weigh_adopters(c, _as_court(j, [rnd.number for rnd in c.rounds] or [0], reasons))


def _owners(c: Court, j: Judgement) -> set[str]:
    """The agents that held a valid position of their own in some round: a proposal, or a no
    vote's alternative, that was an answer."""
    valid = {(x.agent, x.round) for x in j.claims if x.valid}
    return {
        r.agent
        for rnd in c.rounds
        for r in rnd.responses
        if r.vote != "yes" and supported(c, r) is not None and (r.agent, rnd.number) in valid
    }


def adopters(c: Court, j: Judgement) -> tuple[str, ...]:
    """The agreeing agents that never held a valid position of their own: each voted for a
    position it had none against, so it was not persuaded, and its vote is no evidence of its
    own."""
    own = _owners(c, j)
    return tuple(a for a in j.finding.agreed if a not in own)


def _adopted(agents: tuple[str, ...]) -> str:
    whose = "its" if len(agents) == 1 else "their"
    return f"{names(agents, label)} adopted it with no valid position of {whose} own"


def _weigh_adopters(c: Court, j: Judgement) -> Judgement:
    """The finding with the adopters named; an agreement that is a majority of the agents
    that started only with them is no consensus."""
    f = j.finding
    adopted = adopters(c, j) if f.consensus else ()
    if not adopted:
        return j
    own = len(f.agreed) - len(adopted)
    if majority(own, f.started):
        return replace(j, finding=replace(f, reason=f"{f.reason}; {_adopted(adopted)}"))
    movers = replace(j, changes=tuple(x for x in j.changes if x.agent in f.agreed))
    moved = [
        x.removeprefix("Changes of mind: ").rstrip(".")
        for x in movers.sentences(label)
        if x.startswith("Changes of mind: ")
    ]
    reason = "; ".join(
        [
            f"{len(f.agreed)} of {f.started} agents end on '{f.claim}' ({names(f.agreed, label)}),"
            f" but only {own} of the {f.started} agents that started held it as a position of "
            "their own",
            *moved,
            _adopted(adopted),
        ]
    )
    update = {"label": "no_consensus", "reason": reason, "claim": None, "agreed": ()}
    return replace(j, finding=replace(f, **update))


def _settle(c: Court, rnd: AgentRound, j: Judgement) -> None:
    """Whether the round settles the court: moot finds a majority of all agents in agreement on
    the candidate, and the agreeing agents are a supermajority of those that took a side (the
    adopters, who voted for a position they had none against, left out of both)."""
    f, tally = j.finding, rnd.consensus
    if rnd.candidate is None or tally is None or not f.consensus or f.claim is None:
        return
    if not _agree(c.texts[rnd.candidate], f.claim):
        return
    adopted = len(adopters(c, j))  # each voted yes: left out of the sides and the agreement
    needed = required_votes(tally.tally.voting_total - adopted, c.opts.consensus_threshold)
    if needed and len(f.agreed) - adopted >= needed:
        rnd.reached = True
        rnd.method = "unanimous" if len(f.agreed) == len(c.agents) else "supermajority"


# -- the verdict ------------------------------------------------------------------------------
def _participants(c: Court, j: Judgement) -> list[Participant]:
    """Every agent that started, by its last answer: agreed (its position agrees with the
    outcome's), dissented, abstained, failed or invalid (its reply, or by moot's finding its
    position, is no answer, or it never held a position of its own and agrees with no outcome:
    a vote for another's is no side of its own)."""
    people = []
    no_answer = j.no_answer()
    own = _owners(c, j)
    for resp in c.rounds[-1].responses if c.rounds else []:
        name = label(resp.agent)
        if not resp.ok:
            error = resp.error or "no valid answer"
            people.append(Participant(name, "failed" if _failed(resp) else "invalid", error))
            continue
        held = supported(c, resp)
        if held is None:
            people.append(Participant(name, "abstained"))
        elif resp.agent in no_answer:
            people.append(Participant(name, "invalid", no_answer[resp.agent]))
        elif resp.agent in j.finding.agreed:
            people.append(Participant(name, "agreed"))
        elif resp.agent not in own:  # (a consensus names it as an adopter instead)
            why = "it held no valid position of its own, and only voted for another agent's"
            people.append(Participant(name, "invalid", why))
        else:
            people.append(Participant(name, "dissented"))
    return people


def _outcome(s: Session, c: Court, verdict: Ruling, how: str, j: Judgement, phase: str) -> Outcome:
    """The outcome, the court ending in `phase`; a consensus_reached that the trust
    assessment does not allow ends in deadlock instead, so that no record of a court without
    a consensus says consensus_reached."""
    f = j.finding
    evidence: Evidence | None = None
    if verdict.source == "judge_consensus" and c.judge_rounds:
        result = c.judge_rounds[-1].result
        votes = result.votes.get(verdict.position_id or "", 0)
        evidence = JudgePanel(votes, len(c.judges), result.confidence)
    elif f.consensus:
        evidence = Votes()
    aliases = {str(a): str(spec) for a, spec in s.meta.get("aliases", {}).items()}
    trust = assess(
        _participants(c, j),
        reached=f.consensus,
        evidence=evidence,
        models=list(aliases.values()),
        unheld=f.unheld,
    )
    consensus = trust.consensus_allowed and f.consensus
    c.phases.go("deadlock" if phase == "consensus_reached" and not consensus else phase)
    how = qualified(how, trust, f.consensus)
    # each invalid verdict's reason once, with whose it was (`invalid_sentence`)
    valid = replace(j, verdicts=tuple(v for v in j.verdicts if v.valid))
    sentences = [trust.statement, *valid.sentences(label)]
    if c.judge_rounds and invalid_sentence(c, j.verdicts):
        sentences.append(invalid_sentence(c, j.verdicts))
    if c.judge_rounds:
        own = own_judges_note(
            [aliases[a] for a in c.agents if a in aliases],
            [aliases[a] for a in c.judges if a in aliases],
        )
        if own:
            sentences.append(own)
    last: dict[str, str] = {}  # each agent's latest position
    for rnd in c.rounds:
        for r in rnd.responses:
            held = supported(c, r)
            if held is not None:
                last[r.agent] = held
    disagreements: tuple[str, ...] = ()
    if not consensus:
        final = {r.agent: supported(c, r) for r in c.rounds[-1].responses} if c.rounds else {}
        texts = [
            next((t for a in agents if (t := final.get(a))), claim) for claim, agents in f.groups
        ]
        disagreements = tuple(
            f"position {position_id(text)} ({', '.join(label(a) for a in agents)}): "
            + one_line(text, 300)  # one line: a position's tabs and newlines are no part of it
            for text, (_, agents) in zip(texts, f.groups, strict=True)
        )
    return Outcome(
        protocol="court",
        status="consensus" if consensus else "no_consensus",
        consensus=consensus,
        how=how,
        trust=" ".join(sentences),
        final_answer=verdict.position_text if consensus or f.label == "chosen" else "",
        rounds=len(c.rounds) + len(c.judge_rounds),
        disagreements=disagreements,
        positions=last,
        details={
            "rounds": c.details,
            "phase": c.phases.current,
            "court": build_output(s, c, verdict),
        },
        **j.outcome_fields(),
    )


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 6) if values else 0.0


def _short(c: Court, j: Judgement) -> Judgement:
    """A finding of agreement that the court's own bar (a supermajority of the agents that took a
    side on the candidate) did not reach is no consensus, and says so."""
    f = j.finding
    if not f.consensus:
        return j
    besides = ", not counting the agents that adopted it" if adopters(c, j) else ""
    reason = (
        f"{f.reason}; short of the court's supermajority (consensus_threshold "
        f"{c.opts.consensus_threshold:g} of the agents that took a side on the candidate"
        f"{besides})"
    )
    update = {"label": "no_consensus", "reason": reason, "claim": None, "agreed": ()}
    return replace(j, finding=replace(f, **update))


def _deadlock(s: Session, c: Court, panel: bool, positions: list[str]) -> Outcome:
    # for the record, the leading position: the judges' last leader, else the candidate
    leader = c.judge_rounds[-1].result.position_id if c.judge_rounds else None
    pid = leader or c.candidate or ""
    how = f"deadlock: no consensus after {plural(len(c.rounds), 'agent round')}"
    if c.judge_rounds:
        how += f" and {plural(len(c.judge_rounds), 'judge round')}; {undecided(c)}"
    elif not panel:
        how += "; the judge panel is disabled"
    elif positions:  # (with none, the finding's reason says no agent gave a valid answer)
        how += f"; only {plural(len(positions), 'position')} for the judges"
    j = _short(c, judge_court(c, judge_verdicts(c)))
    how += f"; {j.finding.reason}"
    return _outcome(s, c, Ruling(pid, c.texts.get(pid, ""), 0.0, "deadlock"), how, j, "deadlock")


def _chosen(c: Court, j: Judgement, pid: str, how: str) -> Judgement:
    """The panel's pick as the court's answer: "chosen by the judges", a decision that the agents
    did not agree on, never their consensus."""
    f = _short(c, j).finding
    text = c.texts[pid]
    final = {x.agent: x.claim for x in j.claims if x.valid and x.round == c.rounds[-1].number}
    agreed = tuple(a for a in c.agents if a in final and _agree(final[a], text))
    chosen = Finding(
        label="chosen",
        reason=f"{how}; the agents did not agree: {f.reason}",
        claim=extract_claim(text).text,
        agreed=agreed,
        groups=f.groups,
        started=f.started,
        valid=f.valid,
    )
    return replace(j, finding=chosen)


async def run(s: Session, task: str, opts: CourtOptions) -> Outcome:
    agents = [a for a in s.aliases if a.startswith("agent_")]
    judges = [a for a in s.aliases if a.startswith("judge_")]
    c = Court(task=task, opts=opts, agents=agents, judges=judges)
    c.systems = {a: system_prompt(s, c, a, judge=a in judges) for a in agents + judges}
    panel = opts.judge_panel_enabled and len(judges) >= 3
    c.phases.go("agent_debate")

    for r in range(1, opts.max_agent_rounds + 1):
        rnd = await _agent_round(s, c, r)
        c.rounds.append(rnd)
        judgement = judge_court(c)
        if rnd.candidate is not None:
            rnd.consensus = detect_agent_consensus(
                rnd.responses, rnd.candidate, opts.consensus_threshold
            )
            _settle(c, rnd, judgement)
        proposals = rnd.candidate is None
        c.candidate = (
            select_candidate(rnd.responses, proposals=proposals, texts=c.texts) or c.candidate
        )
        _record_agents(s, c, rnd)
        failed = [resp for resp in rnd.responses if _failed(resp)]
        # seed 8.1; and a failed call where no agent holds a position is the cause to fix
        # (the run resumes once it is), as the arena's
        if len(failed) * 2 > len(rnd.responses) or (failed and c.candidate is None):
            if panel and len(judge_positions(c)) >= 2:
                break  # the panel takes over
            why = "; ".join(f"{label(x.agent)}: {x.error}" for x in rnd.responses if not x.ok)
            raise ProtocolAborted(
                f"{len(failed)} of {len(rnd.responses)} agents failed in round {r} and no "
                f"judge panel can take over ({why})"
            )
        if c.candidate is None:
            break  # every position was no answer: moot's finding, not a failed run
        if rnd.reached and rnd.candidate is not None and rnd.consensus is not None:
            f = judgement.finding
            yes = [x.confidence for x in rnd.responses if x.ok and x.vote == "yes"]
            votes = f"{rnd.consensus.tally.yes} of {rnd.consensus.tally.voting_total} yes"
            if f.label == "persuasion":
                how = (
                    f"the agents converged by persuasion in round {r}: {votes} on position "
                    f"{rnd.candidate}, but only {f.independent} of {len(c.agents)} agents held "
                    "it in their first proposal"
                )
            else:
                how = (
                    f"the agents reached {rnd.method} consensus in round {r}: {votes} on "
                    f"position {rnd.candidate}"
                )
            if len(f.agreed) > rnd.consensus.tally.yes:
                how += f"; {names(f.agreed, label)}'s positions agree with it by moot's check"
            if adopted := adopters(c, judgement):
                how += f"; {_adopted(adopted)}"
            verdict = Ruling(rnd.candidate, c.texts[rnd.candidate], _mean(yes), "agent_consensus")
            return _outcome(s, c, verdict, how, judgement, "consensus_reached")

    positions = judge_positions(c)
    if not panel or len(positions) < 2:
        return _deadlock(s, c, panel, positions)
    c.phases.go("judge_evaluation")
    for j in range(1, opts.max_judge_rounds + 1):
        judged = await judge_round(s, c, j, positions)
        c.judge_rounds.append(judged)
        record_judges(s, c, judged)
        result = judged.result
        if result.reached and result.position_id is not None:
            pid = result.position_id
            how = (
                f"chosen by the judges: the judge panel selected position {pid} in judge round "
                f"{j} ({result.votes[pid]} of {len(c.judges)} judges, average confidence "
                f"{result.confidence:.2f})"
            )
            verdict = Ruling(pid, c.texts[pid], round(result.confidence, 6), "judge_consensus")
            chosen = _chosen(c, judge_court(c, judge_verdicts(c)), pid, how)
            return _outcome(s, c, verdict, how, chosen, "chosen_by_judges")
    return _deadlock(s, c, panel, positions)
