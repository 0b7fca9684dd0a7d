"""The court (seed 002): agents vote on position ids until a supermajority agrees; if they do
not, a judge panel scores the positions and selects one; else the court is deadlocked.

Round 1 proposes: every agent abstains and states a position. Each later round votes on the
candidate, the position with the broadest support in the round before: yes (naming its id), no
(with an alternative) or abstain. Each prompt carries the earlier rounds its context topology
allows, cut to fit (`court_context`); the panel is in `court_panel`; what is kept of each round
and the output document are in `court_record`. Phases follow the seed's state machine (2.1).
"""

from __future__ import annotations

from moot.deliberation.anonymize import quote
from moot.deliberation.consensus import (
    Response,
    detect_agent_consensus,
    position_id,
    rank_positions,
    select_candidate,
)
from moot.deliberation.trust import Evidence, JudgePanel, Participant, Votes, assess
from moot.engine.session import Session
from moot.engine.structured import Parsed, ask_parsed
from moot.errors import ProtocolAborted
from moot.protocols.court import prompts
from moot.protocols.court.context import history
from moot.protocols.court.document import (
    AgentRound,
    Court,
    Verdict,
    build_output,
    label,
    nonce,
    user,
)
from moot.protocols.court.options import CourtOptions
from moot.protocols.court.panel import judge_positions, judge_round, record_judges
from moot.protocols.court.replies import AgentReply, agent_parser, agent_schema
from moot.protocols.shown import anonymous
from moot.text import plural
from moot.types import Message, Outcome, RoundSummary, Step, estimate_tokens

__all__ = ["run"]


def _system(s: Session, c: Court, alias: str, *, judge: bool) -> Message:
    question = f"\nQuestion: {c.opts.initial_query}" if c.opts.initial_query else ""
    role = s.agent(alias).config.system_prompt
    template = prompts.JUDGE_SYSTEM if judge else prompts.AGENT_SYSTEM
    text = template.format(
        label=label(alias),
        n=len(c.judges if judge else c.agents),
        topic=c.task,
        question=question,
        role=f"\nYour role: {role}" if role else "",
        format=prompts.JUDGE_FORMAT if judge else prompts.AGENT_FORMAT,
    )
    return Message(role="system", content=text)


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
        asks.append(
            ask_parsed(
                s,
                alias,
                [c.systems[alias], user(prompt)],
                agent_parser(
                    candidate,
                    repair=not c.strict,
                    task=c.task,
                    asked=[c.systems[alias].content, prompt],
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
        "method": rnd.consensus.method if rnd.consensus else None,
        "next_candidate": c.candidate,
        "failed": [r.agent for r in rnd.responses if not r.ok],
    }
    if rnd.candidate is None:
        entry["proposals"] = {pid: n for pid, _, n in rank_positions(rnd.responses, proposals=True)}
    if rnd.truncated:
        entry["context_truncated"] = rnd.truncated
    c.details.append(entry)
    phase = "propose" if rnd.candidate is None else "vote"
    s.round_done(Step.at(rnd.number, phase), RoundSummary(round=rnd.number, votes=dict(counts)))


# -- the verdict ------------------------------------------------------------------------------
def _participants(c: Court, verdict: Verdict) -> list[Participant]:
    """Every agent that started, by how its last answer stands to the verdict."""
    people = []
    last_round = list(c.rounds[-1].responses) if c.rounds else []
    if verdict.source != "agent_consensus":
        # the judges weigh every position proposed in any round: an agent counts by its last
        # valid answer, and fails only if it never gave one
        for i, resp in enumerate(last_round):
            earlier = [
                r for rnd in c.rounds for r in rnd.responses if r.agent == resp.agent and r.ok
            ]
            if not resp.ok and earlier:
                last_round[i] = earlier[-1]
    for resp in last_round:
        name = label(resp.agent)
        if not resp.ok:
            error = resp.error or "no valid answer"
            called = resp.error is not None and "not an answer" not in error
            people.append(Participant(name, "failed" if called else "invalid", error))
        elif verdict.source == "agent_consensus":
            status = {"yes": "agreed", "no": "dissented"}.get(resp.vote, "abstained")
            people.append(Participant(name, status))  # type: ignore[arg-type]
        else:
            held = resp.position_id == verdict.position_id and verdict.source != "deadlock"
            people.append(Participant(name, "agreed" if held else "dissented"))
    return people


def _outcome(s: Session, c: Court, verdict: Verdict, how: str) -> Outcome:
    reached = verdict.source != "deadlock"
    evidence: Evidence | None = None
    if verdict.source == "judge_consensus" and c.judge_rounds:
        result = c.judge_rounds[-1].result
        votes = result.votes.get(verdict.position_id or "", 0)
        evidence = JudgePanel(votes, len(c.judges), result.confidence)
    elif reached:
        evidence = Votes()
    trust = assess(
        _participants(c, verdict),
        reached=reached,
        evidence=evidence,
        models=list(s.meta.get("aliases", {}).values()),
    )
    consensus = trust.consensus_allowed
    qualifiers = trust.label.split("; ")[1:]
    if reached and not consensus:
        how = f"{how}, but {trust.label}"
    elif qualifiers:
        how = f"{how}; {'; '.join(qualifiers)}"
    last: dict[str, str] = {}  # each agent's latest position
    for rnd in c.rounds:
        for r in rnd.responses:
            if r.ok and r.position_id:
                last[r.agent] = c.texts.get(r.position_id, r.position_text)
    disagreements: tuple[str, ...] = ()
    if not consensus:
        holders: dict[str, list[str]] = {}
        for alias, text in last.items():
            holders.setdefault(position_id(text), []).append(label(alias))
        disagreements = tuple(
            f"position {pid} ({', '.join(who)}): {c.texts.get(pid, '')[:300]}"
            for pid, who in sorted(holders.items())
        )
    return Outcome(
        protocol="court",
        status="consensus" if consensus else "no_consensus",
        consensus=consensus,
        how=how,
        trust=trust.statement,
        final_answer=verdict.position_text if consensus else "",
        rounds=len(c.rounds) + len(c.judge_rounds),
        disagreements=disagreements,
        positions=last,
        details={
            "rounds": c.details,
            "phase": c.phases.current,
            "court": build_output(s, c, verdict),
        },
    )


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 6) if values else 0.0


def _deadlock(s: Session, c: Court, panel: bool, positions: list[str]) -> Outcome:
    c.phases.go("deadlock")
    # for the record, the leading position: the judges' last leader, else the candidate
    leader = c.judge_rounds[-1].result.position_id if c.judge_rounds else None
    pid = leader or c.candidate or ""
    how = f"deadlock: no consensus after {plural(len(c.rounds), 'agent round')}"
    if c.judge_rounds:
        how += f" and {plural(len(c.judge_rounds), 'judge round')}"
    elif not panel:
        how += "; the judge panel is disabled"
    else:
        how += f"; only {len(positions)} position(s) for the judges"
    return _outcome(s, c, Verdict(pid, c.texts.get(pid, ""), 0.0, "deadlock"), how)


async def run(s: Session, task: str, opts: CourtOptions) -> Outcome:
    agents = [a for a in s.aliases if a.startswith("agent_")]
    judges = [a for a in s.aliases if a.startswith("judge_")]
    c = Court(task=task, opts=opts, agents=agents, judges=judges)
    c.systems = {a: _system(s, c, a, judge=a in judges) for a in agents + judges}
    panel = opts.judge_panel_enabled and len(judges) >= 3
    c.phases.go("agent_debate")

    for r in range(1, opts.max_agent_rounds + 1):
        rnd = await _agent_round(s, c, r)
        c.rounds.append(rnd)
        if rnd.candidate is not None:
            rnd.consensus = detect_agent_consensus(
                rnd.responses, rnd.candidate, opts.consensus_threshold
            )
        proposals = rnd.candidate is None
        c.candidate = select_candidate(rnd.responses, proposals=proposals) or c.candidate
        _record_agents(s, c, rnd)
        failed = [resp for resp in rnd.responses if not resp.ok]
        if len(failed) * 2 > len(rnd.responses):  # seed 8.1
            if panel and len(judge_positions(c)) >= 2:
                break  # the panel takes over
            why = "; ".join(f"{label(f.agent)}: {f.error}" for f in failed)
            raise ProtocolAborted(
                f"{len(failed)} of {len(rnd.responses)} agents failed in round {r} and no "
                f"judge panel can take over ({why})"
            )
        agreed = rnd.consensus
        if agreed is not None and agreed.reached and rnd.candidate is not None:
            c.phases.go("consensus_reached")
            yes = [x.confidence for x in rnd.responses if x.ok and x.vote == "yes"]
            # "unanimous" only when every agent that started voted yes
            method = "unanimous" if agreed.tally.yes == len(c.agents) else "supermajority"
            how = (
                f"the agents reached {method} consensus in round {r}: "
                f"{agreed.tally.yes} of {agreed.tally.voting_total} yes on position "
                f"{rnd.candidate}"
            )
            verdict = Verdict(rnd.candidate, c.texts[rnd.candidate], _mean(yes), "agent_consensus")
            return _outcome(s, c, verdict, how)

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
            c.phases.go("consensus_reached")
            pid = result.position_id
            how = (
                f"the judge panel selected position {pid} in judge round {j} "
                f"({result.votes[pid]} of {len(c.judges)} judges, average confidence "
                f"{result.confidence:.2f})"
            )
            verdict = Verdict(pid, c.texts[pid], round(result.confidence, 6), "judge_consensus")
            return _outcome(s, c, verdict, how)
    return _deadlock(s, c, panel, positions)
