"""What the court keeps of each round, its phases (seed 2.1), and the output document in the
shape of the seed's `DebateOutputSchema` (section 5), which goes under `result.details["court"]`.

Everything here comes from journaled data: answers, their usage and latency, and the journal's
own timestamps (`Session.recorded_at`), so a replay rebuilds the document byte for byte.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from msgspec import Struct, field

from moot.deliberation.consensus import AgentConsensus, Evaluation, JudgeConsensus, Response
from moot.engine.session import Session
from moot.engine.structured import Parsed
from moot.errors import ProtocolAborted
from moot.protocols.court.options import CourtOptions
from moot.types import Completion, Message

__all__ = [
    "OUTPUT_VERSION",
    "TRANSITIONS",
    "AgentRound",
    "Court",
    "JudgeRound",
    "Phases",
    "Ruling",
    "build_output",
    "label",
    "user",
]

OUTPUT_VERSION = "2.3.0"  # the seed's DebateOutputSchema version this document follows

# The only phase changes the seed allows (2.1); anything else is a bug and aborts the run.
# Departure: the seed's judge_evaluation -> consensus_reached is judge_evaluation ->
# chosen_by_judges, since a panel's pick is no consensus of the agents; consensus_reached is
# the agents' consensus only, and a court whose status is not consensus never reaches it.
TRANSITIONS = frozenset(
    {
        ("init", "agent_debate"),
        ("agent_debate", "consensus_reached"),
        ("agent_debate", "judge_evaluation"),
        ("agent_debate", "deadlock"),
        ("judge_evaluation", "chosen_by_judges"),
        ("judge_evaluation", "deadlock"),
    }
)


class Phases(Struct):
    path: list[str] = field(default_factory=lambda: ["init"])

    @property
    def current(self) -> str:
        return self.path[-1]

    def go(self, target: str) -> None:
        if (self.current, target) not in TRANSITIONS:
            raise ProtocolAborted(
                f"invalid court state transition {self.current} -> {target}: a bug in the "
                "court protocol; the session stops here"
            )
        self.path.append(target)


class AgentRound(Struct):
    number: int
    candidate: str | None  # the position voted on; None in a proposal round
    responses: list[Response]
    answers: list[Parsed[Any]]
    steps: list[str]
    consensus: AgentConsensus | None = None  # the seed's tally of the votes
    reached: bool = False  # moot's finding: the positions agree, by a supermajority
    method: str = "none"  # unanimous | supermajority | none, over the agreeing positions
    truncated: dict[str, list[int]] = field(default_factory=dict)  # alias -> rounds left out


class JudgeRound(Struct):
    number: int
    positions: list[str]
    evaluations: list[Evaluation]
    answers: list[Parsed[Any]]
    steps: list[str]
    result: JudgeConsensus


class Court(Struct):
    """What the court knows between rounds; rebuilt identically on every resume."""

    task: str
    opts: CourtOptions
    agents: list[str]
    judges: list[str]
    systems: dict[str, Message] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)  # position id -> its first text
    rounds: list[AgentRound] = field(default_factory=list)
    judge_rounds: list[JudgeRound] = field(default_factory=list)
    phases: Phases = field(default_factory=Phases)
    candidate: str | None = None  # the position the next round votes on
    details: list[dict[str, object]] = field(default_factory=list)  # Outcome.details["rounds"]

    @property
    def strict(self) -> bool:
        """Deterministic mode: no JSON repair and no re-ask."""
        return self.opts.deterministic_mode

    @property
    def question(self) -> str:
        """The task as the participants are given it (the topic, and the question if there is
        one): what a position must answer and a judge's reasoning is about
        (deliberation/substance.py)."""
        query = self.opts.initial_query
        return f"{self.task}\nQuestion: {query}" if query else self.task


def label(alias: str) -> str:
    """'agent_b' -> 'Agent B', 'judge_a' -> 'Judge A'."""
    role, _, letter = alias.rpartition("_")
    return f"{role.capitalize()} {letter.upper()}"


def user(text: str) -> Message:
    return Message(role="user", content=text)


class Ruling(Struct, frozen=True):
    """The court's ruling: the position it settled on, how sure, and who settled it."""

    position_id: str
    position_text: str
    confidence: float
    source: str  # the seed's: agent_consensus | judge_consensus (the judges chose) | deadlock


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _when(s: Session, answers: list[Parsed[Any]], steps: list[str]) -> str | None:
    """When the last answer of a round was journaled (a re-ask's, if there was one)."""
    times = [
        s.recorded_at(f"{step}/reask" if answer.reasked else step)
        for answer, step in zip(answers, steps, strict=True)
    ]
    known = [t for t in times if t is not None]
    return _iso(max(known)) if known else None


def _call(completion: Completion, ok: bool, error: str | None) -> dict[str, Any]:
    """How a reply's call went: the last fields of the seed's AgentResponse and JudgeEvaluation."""
    usage = completion.usage
    return {
        "tokenUsage": {
            "prompt": usage.prompt_tokens,
            "completion": usage.completion_tokens,
            "total": usage.total,
            "estimated": usage.estimated,
        },
        "latencyMs": round(completion.latency * 1000),
        "status": "ok" if ok else "error",
        "error": error,
    }


def _agent_response(r: Response, answer: Parsed[Any]) -> dict[str, Any]:
    return {
        "agentId": r.agent,
        "round": r.round,
        "positionId": r.position_id,
        "positionText": r.position_text,
        "reasoning": r.reasoning,
        "vote": r.vote,
        "confidence": r.confidence,
        **_call(answer.completion, r.ok, r.error),
    }


def round_result(s: Session, rnd: AgentRound, texts: dict[str, str]) -> dict[str, Any]:
    """The seed's RoundResult."""
    consensus = rnd.consensus
    reached = consensus is not None and rnd.reached
    chosen = rnd.candidate if reached else None
    return {
        "roundNumber": rnd.number,
        "candidatePositionId": rnd.candidate,
        "candidatePositionText": texts.get(rnd.candidate) if rnd.candidate else None,
        "responses": [
            _agent_response(r, a) for r, a in zip(rnd.responses, rnd.answers, strict=True)
        ],
        "consensusReached": reached,
        "consensusPositionId": chosen,
        "consensusPositionText": texts.get(chosen) if chosen else None,
        "consensusMethod": rnd.method,
        "voteTally": consensus.tally.as_dict() if consensus is not None else None,
        "contextTruncated": rnd.truncated,
        "timestamp": _when(s, rnd.answers, rnd.steps),
    }


def judge_round_result(s: Session, rnd: JudgeRound) -> dict[str, Any]:
    """The seed's JudgeRoundResult."""
    evaluations = [
        {
            "judgeId": e.judge,
            "round": e.round,
            "selectedPositionId": e.selected,
            "scoresByPositionId": dict(sorted(e.scores.items())),
            "reasoning": e.reasoning,
            "confidence": e.confidence,
            **_call(a.completion, e.ok, e.error),
        }
        for e, a in zip(rnd.evaluations, rnd.answers, strict=True)
    ]
    return {
        "roundNumber": rnd.number,
        "positionIds": rnd.positions,
        "evaluations": evaluations,
        "consensusReached": rnd.result.reached,
        "consensusPositionId": rnd.result.position_id if rnd.result.reached else None,
        "leadingPositionId": rnd.result.position_id,
        "votes": rnd.result.votes,
        "requiredVotes": rnd.result.required,
        "avgConfidence": rnd.result.confidence,
        "timestamp": _when(s, rnd.answers, rnd.steps),
    }


def build_output(s: Session, c: Court, verdict: Ruling) -> dict[str, Any]:
    """The seed's DebateOutputSchema document."""
    rounds, judge_rounds, texts, phases = c.rounds, c.judge_rounds, c.texts, c.phases
    totals = list(s.standing.agents.values())
    agent_rounds = [round_result(s, r, texts) for r in rounds]
    judged = [judge_round_result(s, r) for r in judge_rounds]
    stamps = [r["timestamp"] for r in agent_rounds + judged if r["timestamp"]]
    final_id = rounds[-1].candidate if rounds and rounds[-1].reached else None
    panel = judge_rounds[-1].result if judge_rounds else None
    return {
        "version": OUTPUT_VERSION,
        "session": {
            "id": s.folder.id,
            "topic": c.task,
            "initialQuery": c.opts.initial_query,
            "phase": phases.current,
            "phases": list(phases.path),
            "startedAt": _iso(s.started_at),
            "completedAt": max(stamps) if stamps else None,
            "totalTokens": sum(t.usage.total for t in totals),
            "totalCostUsd": round(sum(t.cost for t in totals), 6),
            "pricingKnown": all(t.cost_known for t in totals),
            "engineVersion": str(s.meta.get("moot_version", "")),
            "totalRetries": sum(t.retries for t in totals),
            "totalErrors": sum(t.failures for t in totals),
        },
        "agentDebate": {
            "rounds": agent_rounds,
            "finalPositionId": final_id,
            "finalPositionText": texts.get(final_id) if final_id else None,
        },
        "judgePanel": {
            "enabled": c.opts.judge_panel_enabled,
            "rounds": judged,
            "final": None
            if panel is None or not panel.reached or panel.position_id is None
            else {
                "consensusPositionId": panel.position_id,
                "consensusPositionText": texts.get(panel.position_id, ""),
                "consensusConfidence": panel.confidence,
                "dissents": list(panel.dissents),
            },
        },
        "finalVerdict": {
            "positionId": verdict.position_id,
            "positionText": verdict.position_text,
            "confidence": verdict.confidence,
            "source": verdict.source,
        },
    }
