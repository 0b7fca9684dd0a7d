"""The vote protocol: every agent answers the task K times, independently, in a fresh context;
the final answer is extracted from each reply, answers are grouped (exact after normalisation
for numbers, options and short answers; free text by the convergence module's text similarity)
and the largest group wins.

    for agent in agents, for k in 1..K:  reply = ask(agent, task)      # K x agents calls, no re-ask
    answers = extract(reply) for every reply
    outcome = tally(answers)    # a tie goes to the group answered first (alias order), reported

Each call has its own step id, so the Session derives its own seed (seeded sampling where the
provider honours seeds) and the recorded answers come back on resume. A failed call or a reply
with no answer counts in the total, not for any group.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from moot.config import RunConfig
from moot.deliberation.anonymize import alias_for
from moot.deliberation.answers import extract_answer, tally
from moot.deliberation.convergence import structural_similarity
from moot.engine.session import Session
from moot.protocols.record import Projected, Projection
from moot.protocols.vote.options import VoteOptions
from moot.types import Message, Outcome, RoundSummary, Step, alias_label

__all__ = ["PROMPT", "describe_round", "project", "run"]

PROMPT = """{task}

Think it through, then give your final answer on the last line as "Answer: <your answer>"."""


async def run(s: Session, task: str, opts: VoteOptions) -> Outcome:
    agents = sorted(a for a in s.aliases if a.startswith("agent_"))
    asks = [
        (alias, Step.at(1, "answer", alias, str(k)))
        for alias in agents
        for k in range(1, opts.samples + 1)
    ]
    prompt = [Message(role="user", content=PROMPT.format(task=task))]
    replies = await s.gather(*(s.ask(alias, prompt, step=step) for alias, step in asks))
    answers: list[str | None] = []
    samples: list[dict[str, Any]] = []
    for (alias, step), completion in zip(asks, replies, strict=True):
        extracted = extract_answer(completion.text) if completion.ok else None
        answers.append(extracted.text if extracted else None)
        samples.append(
            {
                "agent": alias,
                "step": step,
                "answer": extracted.text if extracted else None,
                "source": extracted.source if extracted else None,
                "problem": None
                if completion.ok
                else (completion.failure.message if completion.failure else "call failed"),
            }
        )
    vote = tally(
        answers,
        similarity=structural_similarity,
        similarity_threshold=opts.similarity_threshold,
        consensus_threshold=opts.consensus_threshold,
    )
    record: dict[str, Any] = {
        "round": 1,
        "samples_per_agent": opts.samples,
        **vote.as_dict(),
        "needed": math.ceil(opts.consensus_threshold * vote.total),
    }
    s.round_done(Step.at(1, "tally"), describe_round(record, opts))
    return _outcome(record, samples, agents)


def _outcome(record: dict[str, Any], samples: list[dict[str, Any]], agents: list[str]) -> Outcome:
    winner, share, total = record["winner"], record["share"], record["total"]
    if winner is None:
        how = f"no answer could be read from any of the {total} replies"
    else:
        how = (
            f"{winner!r} has {record['distribution'][winner]} of {total} answers "
            f"({share:.0%}); a majority needs {record['consensus_threshold']:.0%}"
        )
    if record["tie"]:
        tied = ", ".join(repr(t) for t in record["tied"])
        how += f"; tie between {tied} (a tie is no majority), broken by {record['tiebreak']}"
    positions = {
        alias: "; ".join(str(x["answer"]) for x in samples if x["agent"] == alias)
        for alias in agents
    }
    return Outcome(
        protocol="vote",
        status="consensus" if record["consensus"] else "no_consensus",
        consensus=bool(record["consensus"]),
        how=how,
        final_answer=winner or "",
        rounds=1,
        disagreements=tuple(
            f"{answer!r}: {count} of {total}"
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
        decision = "no answer"
    elif record.get("consensus"):
        decision = f"majority: {winner} ({record['share']:.0%})"
    else:
        decision = f"no majority: {winner} leads ({record['share']:.0%})"
    problem = None
    if record.get("tie"):
        problem = f"tie between {', '.join(record['tied'])}, broken by {record['tiebreak']}"
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
