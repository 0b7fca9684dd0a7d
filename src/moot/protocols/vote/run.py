"""The vote protocol: every agent answers the task K times, independently, in a fresh context;
the final answer is extracted from each reply, answers are grouped (exact after normalisation
for numbers, options and short answers; free text by the convergence module's text similarity)
and the largest group wins.

    for agent in agents, for k in 1..K:  reply = ask(agent, task)      # K x agents calls, no re-ask
    answers = extract(reply) for every substantive reply                # junk is invalid
    outcome = tally(valid answers)  # a tie goes to the group answered first (alias order), reported

Each call has its own step id, so the Session derives its own seed (seeded sampling where the
provider honours seeds) and the recorded answers come back on resume. A reply counts only if it
is a substantive answer to the task (issue 9, "Consensus is earned"): a failed call, or a reply
that is empty, markup only, an echo of the prompt or its template, or a refusal, is recorded
with its reason and left out of the majority, which counts over the valid answers; a majority is
a consensus only with a quorum, more than half of all answers valid. No agent ever sees another
agent's text (each prompt is the task alone), so no identity scrubbing is needed here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from moot.config import RunConfig
from moot.deliberation.anonymize import alias_for
from moot.deliberation.answers import extract_answer, tally
from moot.deliberation.convergence import structural_similarity
from moot.deliberation.markup import strip_markup
from moot.deliberation.substance import NotSubstantive, check_substance
from moot.deliberation.trust import plain_reason, tiny_note
from moot.engine.session import Session
from moot.protocols.record import Projected, Projection
from moot.protocols.vote.options import VoteOptions
from moot.types import Completion, Message, Outcome, RoundSummary, Step, alias_label

__all__ = ["PROMPT", "QUORUM", "describe_round", "project", "run", "trust_statement"]

PROMPT = """{task}

Think it through, then give your final answer on the last line as "Answer: <your answer>"."""


# A consensus needs more than this share of all answers asked to be valid. Since every agent is
# asked equally often, it also means more than half of the agents gave a valid answer.
QUORUM = 0.5


async def run(s: Session, task: str, opts: VoteOptions) -> Outcome:
    agents = sorted(a for a in s.aliases if a.startswith("agent_"))
    asks = [
        (alias, Step.at(1, "answer", alias, str(k)))
        for alias in agents
        for k in range(1, opts.samples + 1)
    ]
    prompt = [Message(role="user", content=PROMPT.format(task=task))]
    replies = await s.gather(*(s.ask(alias, prompt, step=step) for alias, step in asks))
    samples = [
        _sample(alias, step, completion, prompt[0].content, task)
        for (alias, step), completion in zip(asks, replies, strict=True)
    ]
    valid = [x["answer"] for x in samples if x["status"] == "valid"]
    vote = tally(
        valid,
        similarity=structural_similarity,
        similarity_threshold=opts.similarity_threshold,
        consensus_threshold=opts.consensus_threshold,
    )
    quorum = len(valid) > QUORUM * len(samples)
    record: dict[str, Any] = {
        "round": 1,
        "samples_per_agent": opts.samples,
        **vote.as_dict(),
        "majority": vote.consensus,
        "consensus": vote.consensus and quorum,
        "needed": math.ceil(opts.consensus_threshold * vote.total),
        "asked": len(samples),
        "valid": len(valid),
        "invalid": sum(1 for x in samples if x["status"] == "invalid"),
        "failed": sum(1 for x in samples if x["status"] == "failed"),
        "quorum": quorum,
    }
    s.round_done(Step.at(1, "tally"), describe_round(record, opts))
    specs = {str(a): str(spec) for a, spec in s.meta.get("aliases", {}).items()}
    return _outcome(record, samples, agents, specs)


def _sample(
    alias: str, step: str, completion: Completion, prompt: str, task: str
) -> dict[str, Any]:
    """One answer as recorded: valid (with the extracted answer), failed (the call's problem) or
    invalid (why it is no answer to the task). Markup is stripped before anything is read, so
    a fence cannot become an answer ("</quoted id=5>" is not "5")."""
    row: dict[str, Any] = {
        "agent": alias,
        "step": step,
        "status": "valid",
        "answer": None,
        "source": None,
        "reason": None,
        "problem": None,
    }
    if not completion.ok:
        message = completion.failure.message if completion.failure else "call failed"
        return {**row, "status": "failed", "problem": message}
    text = strip_markup(completion.text)
    problem = check_substance(completion.text, [prompt], task=task)
    extracted = extract_answer(text) if problem is None else None
    if problem is None and extracted is not None:
        problem = check_substance(extracted.text, [prompt], task=task)
        if problem is not None:
            problem = NotSubstantive(problem.reason, f"its final answer is no answer: {problem}")
    if problem is not None or extracted is None:
        return {
            **row,
            "status": "invalid",
            "reason": problem.reason.value if problem else "no_answer",
            "problem": str(problem) if problem else "no answer could be read from it",
        }
    return {**row, "answer": extracted.text, "source": extracted.source}


def _name(sample: Mapping[str, Any], per_agent: int) -> str:
    name = alias_label(sample["agent"])
    return name if per_agent == 1 else f"{name}, answer {sample['step'].rsplit('/', 1)[1]}"


def _dropped(samples: list[dict[str, Any]], status: str, per_agent: int) -> list[str]:
    return [
        f"{_name(x, per_agent)}: {plain_reason(x['problem'])}"
        for x in samples
        if x["status"] == status
    ]


# How many invalid or failed answers a trust statement names one by one.
NAMED = 8


def trust_statement(
    record: Mapping[str, Any], samples: list[dict[str, Any]], specs: Mapping[str, str]
) -> str:
    """How far to trust a vote, in plain words: how many valid answers agreed and that they were
    independent samples with no judge, which answers failed or were invalid and why, and that a
    tiny model's answer is a demonstration. `specs`: alias -> model spec."""
    per = int(record["samples_per_agent"])
    asked, valid, winner = record["asked"], record["valid"], record["winner"]
    tiny = tiny_note(spec for alias, spec in specs.items() if alias.startswith("agent_"))
    sentences: list[str] = [tiny] if tiny else []
    count = record["distribution"].get(winner, 0) if winner is not None else 0
    agents = len({x["agent"] for x in samples})
    asked_how = f"{agents} agent{'s' if agents != 1 else ''} answering independently" + (
        f", {per} times each" if per > 1 else ""
    )
    if record["consensus"]:
        sentences.append(
            f"{count} of the {valid} valid answers agree on {winner!r} ({record['share']:.0%}; a "
            f"majority needs {record['consensus_threshold']:.0%}), from {asked_how}: no agent "
            "saw another's answer and no judge took part."
        )
    elif record.get("majority"):
        sentences.append(
            f"No consensus can be claimed: only {valid} of the {asked} answers "
            f"{'was' if valid == 1 else 'were'} valid, and a quorum needs more than half of "
            f"them; {count} of them {'says' if count == 1 else 'say'} {winner!r}."
        )
    elif winner is None:
        sentences.append(f"None of the {asked} answers, from {asked_how}, was valid.")
    elif valid == 1:
        sentences.append(
            f"Only 1 of the {asked} answers was valid ({winner!r}): it had nothing to agree with."
        )
    elif record["tie"]:
        tied = ", ".join(repr(t) for t in record["tied"])
        sentences.append(f"The {valid} valid answers did not agree: {tied} tie with {count} each.")
    else:
        sentences.append(
            f"The {valid} valid answers did not agree: {winner!r} leads with {count} "
            f"({record['share']:.0%}); a majority needs {record['consensus_threshold']:.0%}."
        )
    for status in ("invalid", "failed"):
        named = _dropped(samples, status, per)
        if named:
            more = len(named) - NAMED
            listed = "; ".join(named[:NAMED]) + (f"; and {more} more" if more > 0 else "")
            verb = (
                status if status == "failed" else ("was " if len(named) == 1 else "were ") + status
            )
            sentences.append(f"{len(named)} of {asked} answers {verb}: {listed}.")
    return " ".join(sentences)


def _outcome(
    record: dict[str, Any],
    samples: list[dict[str, Any]],
    agents: list[str],
    specs: Mapping[str, str],
) -> Outcome:
    winner, share, valid, asked = (
        record["winner"],
        record["share"],
        record["valid"],
        record["asked"],
    )
    if winner is None:
        how = f"no valid answer in any of the {asked} replies"
    else:
        how = (
            f"{winner!r} has {record['distribution'][winner]} of {valid} valid answers "
            f"({share:.0%}); a majority needs {record['consensus_threshold']:.0%}"
        )
    if record["tie"]:
        tied = ", ".join(repr(t) for t in record["tied"])
        how += f"; tie between {tied} (a tie is no majority), broken by {record['tiebreak']}"
    if record["majority"] and not record["quorum"]:
        how += f"; no quorum: {valid} of {asked} answers valid, more than half needed"
    for status in ("invalid", "failed"):
        names = sorted({alias_label(x["agent"]) for x in samples if x["status"] == status})
        if names:
            how += f"; {record[status]} of {asked} answers {status} ({', '.join(names)})"
    positions = {
        alias: "; ".join(x["answer"] for x in mine)
        for alias in agents
        if (mine := [x for x in samples if x["agent"] == alias and x["status"] == "valid"])
    }
    return Outcome(
        protocol="vote",
        status="consensus" if record["consensus"] else "no_consensus",
        consensus=bool(record["consensus"]),
        how=how,
        trust=trust_statement(record, samples, specs),
        final_answer=winner or "",
        rounds=1,
        disagreements=tuple(
            f"{answer!r}: {count} of {valid}"
            for answer, count in record["distribution"].items()
            if answer != winner
        ),
        positions=positions,
        details={"rounds": [record], "samples": samples},
    )


def describe_round(record: Mapping[str, Any], options: VoteOptions) -> RoundSummary | None:
    if "distribution" not in record:
        return None
    winner = record.get("winner")
    if winner is None:
        decision = "no valid answer" if record.get("asked") else "no answer"
    elif record.get("consensus"):
        decision = f"majority: {winner} ({record['share']:.0%})"
    elif record.get("majority") and not record.get("quorum", True):
        decision = f"no quorum: {record['valid']} of {record['asked']} answers valid"
    else:
        decision = f"no majority: {winner} leads ({record['share']:.0%})"
    problems = []
    if record.get("tie"):
        problems.append(f"tie between {', '.join(record['tied'])}, broken by {record['tiebreak']}")
    for status in ("invalid", "failed"):
        if record.get(status):
            problems.append(f"{record[status]} of {record['asked']} answers {status}")
    problem = "; ".join(problems) or None
    return RoundSummary(
        round=int(record["round"]),
        decision=decision,
        votes={str(k): float(v) for k, v in record["distribution"].items()},
        needed=float(record["needed"]),
        problem=problem,
    )


def project(config: RunConfig, options: VoteOptions) -> Projection:
    """Exactly K calls per agent: no re-asks, no rounds."""
    return [
        Projected(
            member=agent,
            role=alias_label(alias_for(i, "agent")),
            fewest=options.samples,
            most=options.samples,
            prompt_tokens=40,
        )
        for i, agent in enumerate(config.agents)
    ]
