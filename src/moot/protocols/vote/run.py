"""The vote protocol: every agent answers the task K times, independently, in a fresh context;
the final answer is extracted from each reply, and moot's finding groups the answers by its one
agreement relation (deliberation/claims.py): "safe" and "not safe", or "30 seconds" and "300
seconds", are two groups however alike their words; "Paris" worded three ways is one.

    for agent in agents, for k in 1..K:  reply = ask(agent, task)      # K x agents calls, no re-ask
    answers = extract(reply) for every substantive reply                # junk is invalid
    finding = judge_answers([answers], started=every sample asked)     # one voter per sample
    status  = valid only if the finding counts it in a group            # else invalid, its reason
    consensus = the largest group holds more than half of all samples asked
                (and at least consensus_threshold of them); a tie names no answer

Every sample is a voter of its own, so `started` counts all K x agents samples asked: a failed
call or an invalid answer counts against the majority (2 of 4 is no majority, nor is 2 valid
answers of 5). Each call has its own step id, so the Session derives its own seed and the
recorded answers come back on resume; the finding is derived from the recorded text, so a resume
or a replay re-derives it without a call. A reply counts only if it is a substantive answer to
the task (deliberation/substance.py): a failed call, or a reply that is empty, markup only, an
echo of the prompt or its template, or a refusal, is recorded with its reason. No agent ever
sees another agent's text (each prompt is the task alone), so no identity scrubbing is needed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec.structs import replace

from moot.config import RunConfig
from moot.deliberation.answers import extract_answer
from moot.deliberation.finding import Judgement, judge_answers
from moot.deliberation.markup import strip_markup
from moot.deliberation.substance import NotSubstantive, check_substance
from moot.deliberation.trust import plain_reason, tiny_note
from moot.engine.session import Session
from moot.protocols.definition import Projected, Projection
from moot.protocols.vote.options import VoteOptions
from moot.types import (
    Completion,
    Finding,
    Message,
    Outcome,
    RoundSummary,
    Step,
    alias_for,
    alias_label,
)

__all__ = ["PROMPT", "describe_round", "needed_for", "project", "run", "trust_statement"]

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
    samples = [
        _sample(alias, step, completion, prompt[0].content, task)
        for (alias, step), completion in zip(asks, replies, strict=True)
    ]
    judgement = judge_samples(samples, opts.samples, opts.consensus_threshold, task=task)
    samples = _as_found(samples, judgement, opts.samples)
    record = _record(judgement, samples, opts)
    s.round_done(Step.at(1, "tally"), describe_round(record, opts))
    specs = {str(a): str(spec) for a, spec in s.meta.get("aliases", {}).items()}
    return _outcome(record, samples, agents, specs, judgement)


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


# -- moot's finding over the samples ------------------------------------------------------------
def voter(sample: Mapping[str, Any], per_agent: int) -> str:
    """A sample's voter id: the agent's alias, or `agent_a/2` for its second of K samples."""
    alias = str(sample["agent"])
    return alias if per_agent == 1 else f"{alias}/{str(sample['step']).rsplit('/', 1)[1]}"


def needed_for(asked: int, threshold: float) -> int:
    """Answers the largest group needs: more than half of all asked, and at least
    `threshold` of them (a threshold can raise the bar, never lower it)."""
    return max(asked // 2 + 1, math.ceil(round(threshold * asked, 9)))


def judge_samples(
    samples: Sequence[Mapping[str, Any]],
    per_agent: int,
    threshold: float = 0.5,
    *,
    task: str | None = None,
) -> Judgement:
    """moot's finding over the samples, one voter each (every sample asked started). A
    majority that falls short of `threshold` is no consensus, and its reason says so."""
    started = [voter(x, per_agent) for x in samples]
    answers = {
        voter(x, per_agent): (x["answer"] if x["status"] == "valid" else None) for x in samples
    }
    reasons = {
        voter(x, per_agent): plain_reason(str(x["problem"]))
        for x in samples
        if x["status"] != "valid"
    }
    judgement = judge_answers(
        [answers], started=started, reasons=reasons, name=alias_label, task=task
    )
    judgement = judgement.numbered(1)  # the vote's one round is its round 1 (`r1/...`)
    f = judgement.finding
    needed = needed_for(len(samples), threshold)
    counts = _counts(f)
    if f.consensus:
        reason = (
            f"{len(f.agreed)} of the {len(samples)} answers asked agree on '{f.claim}' by "
            f"moot's check; a majority needs {needed}"
        )
        if len(f.agreed) < needed:
            reason = (
                f"no majority: the largest group, '{f.claim}', has {len(f.agreed)} of the "
                f"{len(samples)} answers asked; consensus_threshold {threshold:g} needs {needed}"
            )
            f = replace(f, label="no_consensus", claim=None, agreed=(), reason=reason)
        else:
            f = replace(f, reason=reason)
    elif f.label == "tie":
        tied = [claim for claim, n in counts.items() if n == max(counts.values())]
        f = replace(
            f,
            reason="a tie: "
            + " against ".join(f"'{c}' ({counts[c]})" for c in tied)
            + f" of the {len(samples)} answers asked; a tie is no majority and names no answer",
        )
    elif len(counts) > 1 and len(set(counts.values())) == 1:  # every group of one
        f = replace(
            f,
            reason=f"no majority: the {sum(counts.values())} valid answers of the "
            f"{len(samples)} asked all differ",
        )
    elif counts:
        top, n = next(iter(counts.items()))
        f = replace(
            f,
            reason=f"no majority: the largest group, '{top}', has {n} of the "
            f"{len(samples)} answers asked; a majority needs {needed}",
        )
    else:
        f = replace(f, reason=f"none of the {len(samples)} answers asked was a valid answer")
    return Judgement(f, judgement.claims, judgement.changes, judgement.verdicts)


def _as_found(
    samples: Sequence[Mapping[str, Any]], judgement: Judgement, per_agent: int
) -> list[dict[str, Any]]:
    """The samples as moot's finding holds them: a sample is valid only if the finding counts
    its answer in a group. One the finding reads as no answer (a bare number to a yes/no
    question, an answer that only repeats the question) is invalid with the finding's reason,
    so the round's counts, the trust statement and the reports agree with the finding (they
    once said 3 valid beside "none of the 3 answers asked was a valid answer")."""
    counted = {member for _, members in judgement.finding.groups for member in members}
    why = judgement.no_answer()
    out: list[dict[str, Any]] = []
    for x in samples:
        voter_id = voter(x, per_agent)
        if x["status"] != "valid" or voter_id in counted:
            out.append(dict(x))
            continue
        out.append(
            {
                **x,
                "status": "invalid",
                "answer": None,
                "source": None,
                "reason": "no_answer",
                "problem": why.get(voter_id, "no answer could be read from it"),
            }
        )
    return out


def _counts(finding: Finding) -> dict[str, int]:
    """Each group's answer (in the words of its most common member) and its size, largest
    first; two groups worded alike are told apart by a number."""
    counts: dict[str, int] = {}
    for claim, members in finding.groups:
        shown, n = claim, 2
        while shown in counts:
            shown, n = f"{claim} ({n})", n + 1
        counts[shown] = len(members)
    return counts


def _record(
    judgement: Judgement, samples: list[dict[str, Any]], opts: VoteOptions
) -> dict[str, Any]:
    """The round as `details["rounds"][0]` keeps it."""
    f = judgement.finding
    counts = _counts(f)
    asked = len(samples)
    top = max(counts.values()) if counts else 0
    tied = [c for c, n in counts.items() if n == top] if f.label == "tie" else []
    # the largest group, where one is larger than every other
    shared = sum(1 for n in counts.values() if n == top) > 1
    largest = next(iter(counts)) if counts and not shared else None
    return {
        "round": 1,
        "samples_per_agent": opts.samples,
        "label": f.label,
        "winner": f.claim if f.consensus else None,
        "largest": largest,
        "share": top / asked if asked else 0.0,
        "total": asked,
        "answered": sum(counts.values()),
        "distribution": counts,
        "tie": bool(tied),
        "tied": tied,
        "consensus": f.consensus,
        "consensus_threshold": opts.consensus_threshold,
        "needed": needed_for(asked, opts.consensus_threshold),
        "asked": asked,
        "valid": sum(1 for x in samples if x["status"] == "valid"),
        "invalid": sum(1 for x in samples if x["status"] == "invalid"),
        "failed": sum(1 for x in samples if x["status"] == "failed"),
    }


# -- what the outcome says ----------------------------------------------------------------------
def _name(sample: Mapping[str, Any], per_agent: int) -> str:
    return alias_label(voter(sample, per_agent))


def _dropped(samples: list[dict[str, Any]], status: str, per_agent: int) -> list[str]:
    return [
        f"{_name(x, per_agent)}: {plain_reason(x['problem'])}"
        for x in samples
        if x["status"] == status
    ]


# How many invalid or failed answers a trust statement names one by one.
NAMED = 8


def trust_statement(
    record: Mapping[str, Any],
    samples: list[dict[str, Any]],
    specs: Mapping[str, str],
    judgement: Judgement | None = None,
) -> str:
    """How far to trust a vote, in plain words: how many of the answers asked agreed by moot's
    check and that they were independent samples with no judge, or that they did not (a tie
    names no answer), which answers failed or were invalid and why, and that a tiny model's
    answer is a demonstration. `specs`: alias -> model spec."""
    per = int(record["samples_per_agent"])
    asked, counts = record["asked"], record["distribution"]
    tiny = tiny_note(spec for alias, spec in specs.items() if alias.startswith("agent_"))
    sentences: list[str] = [tiny] if tiny else []
    agents = len({x["agent"] for x in samples})
    asked_how = f"{agents} agent{'s' if agents != 1 else ''} answering independently" + (
        f", {per} times each" if per > 1 else ""
    )
    needed = record["needed"]
    if record["consensus"]:
        winner = record["winner"]
        sentences.append(
            f"{counts.get(winner, 0)} of the {asked} answers asked agree on {winner!r} by moot's "
            f"check ({record['share']:.0%}; a majority needs {needed}), from {asked_how}: no "
            "agent saw another's answer and no judge took part."
        )
    elif not counts:
        sentences.append(f"None of the {asked} answers, from {asked_how}, was valid.")
    elif record["tie"]:
        tied = " and ".join(repr(t) for t in record["tied"])
        each = counts[record["tied"][0]]
        sentences.append(
            f"No majority: a tie, {tied} have {each} of the {asked} answers each; a tie names "
            "no answer."
        )
    elif record["largest"] is None:
        sentences.append(
            f"No majority: the {record['valid']} valid answers of the {asked} asked all differ."
        )
    elif record["valid"] == 1:
        sentences.append(
            f"Only 1 of the {asked} answers was valid ({record['largest']!r}): it had nothing "
            "to agree with."
        )
    else:
        largest = record["largest"]
        sentences.append(
            f"No majority: the largest group of answers, {largest!r}, has {counts[largest]} of "
            f"the {asked} answers asked ({record['share']:.0%}); a majority needs {needed}."
        )
    if judgement is not None:
        sentences += judgement.sentences(alias_label)
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
    judgement: Judgement,
) -> Outcome:
    f = judgement.finding
    asked = record["asked"]
    how = f.reason
    for status in ("invalid", "failed"):
        names = sorted({alias_label(x["agent"]) for x in samples if x["status"] == status})
        if names:
            how += f"; {record[status]} of {asked} answers {status} ({', '.join(names)})"
    positions = {
        alias: "; ".join(x["answer"] for x in mine)
        for alias in agents
        if (mine := [x for x in samples if x["agent"] == alias and x["status"] == "valid"])
    }
    winner = record["winner"]
    return Outcome(
        protocol="vote",
        status="consensus" if f.consensus else "no_consensus",
        consensus=f.consensus,
        how=how,
        trust=trust_statement(record, samples, specs, judgement),
        final_answer=winner if f.consensus and winner else "",
        rounds=1,
        disagreements=_disagreements(record),
        positions=positions,
        details={"rounds": [record], "samples": samples},
        **judgement.outcome_fields(),
    )


def _disagreements(record: Mapping[str, Any]) -> tuple[str, ...]:
    """With a majority, each other answer against it ("'41': 1 of 4"). Without one, no answer
    is the one the others disagree with: the disagreement is that the answers differ, largest
    first (the largest once read as a disagreement of its own, "'7': 2 of 6"); one answer alone,
    short of a majority, disagrees with nothing."""
    counts, asked = record["distribution"], record["asked"]
    if record["consensus"]:
        return tuple(
            f"{answer!r}: {count} of {asked}"
            for answer, count in counts.items()
            if answer != record["winner"]
        )
    if len(counts) < 2:
        return ()
    shown = [f"{answer!r} {count}" for answer, count in counts.items()]
    shown[0] += f" of {asked}"
    return ("no answer has a majority; the answers differ: " + ", ".join(shown),)


def describe_round(entry: Mapping[str, Any], options: VoteOptions) -> RoundSummary | None:
    if "distribution" not in entry:
        return None
    asked = entry.get("asked") or entry.get("total") or 0
    if not entry.get("distribution"):
        decision = "no valid answer" if asked else "no answer"
    elif entry.get("consensus"):
        decision = f"majority for {entry['winner']!r} ({entry['share']:.0%})"
    elif entry.get("tie"):
        decision = "no majority, a tie"
    elif "largest" not in entry:  # an entry of an older version
        winner = entry.get("winner")
        decision = "no majority" + (
            f" for {winner!r} ({entry.get('share', 0):.0%})" if winner is not None else ""
        )
    elif entry["largest"] is None:
        decision = "no majority, the answers all differ"
    else:
        decision = "no majority"
    problems = []
    for status in ("invalid", "failed"):
        if entry.get(status):
            problems.append(f"{entry[status]} of {asked} answers {status}")
    return RoundSummary(
        round=int(entry["round"]),
        decision=decision,
        votes={str(k): float(v) for k, v in entry["distribution"].items()},
        needed=float(entry["needed"]),
        problem="; ".join(problems) or None,
        out_of=int(asked) or None,
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
            cut_to_window=False,  # the task as given: nothing of others to cut
        )
        for i, agent in enumerate(config.agents)
    ]
