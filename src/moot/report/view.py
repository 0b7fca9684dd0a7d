"""One view of a session for every face that reads it afterwards (`moot show`, report.md,
report.html), built from `result.json` and the journal.

It relies only on what every protocol shares: step ids `r<N>/<phase>/<alias>...` (see
`engine.state.parse_step`; `j<N>/...` marks a court's judge rounds), `ask` events carrying the
agent, prompt and completion, `shell` events, and `result.details["rounds"]`: one dict per round
with `"round"` and either `"convergence_score"`/`"decision"` (arena) or `"tally"` (court; with
`"phase": "judges"` for a judge round). A session without a result yet (running, or stopped by a
crash) gives a view of what the journal holds so far.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from moot.engine.journal import Journal, key_from_env
from moot.engine.state import parse_step
from moot.engine.store import SessionFolder
from moot.errors import JournalError
from moot.result import AgentUsage, Result, check_result
from moot.types import Event

__all__ = [
    "AgentView",
    "Phase",
    "Round",
    "RoundResult",
    "SessionView",
    "Turn",
    "build_view",
    "clean_text",
    "label",
    "load_view",
    "place",
    "stage_title",
    "summarize",
]

STATUS_TEXT = {
    "consensus": "Consensus reached",
    "no_consensus": "No consensus",
    "failed": "Failed",
    "paused": "Paused by a limit (resumable)",
    "interrupted": "Interrupted (resumable)",
    "incomplete": "Incomplete (running, or stopped unexpectedly)",
}

# A tally's vote counts, in the order a reader expects. A tally without them (a judge panel's
# votes per position id) counts every number but its totals and threshold.
VOTE_KEYS = ("yes", "no", "abstain", "failed")
_NEEDED_KEYS = ("supermajorityThreshold", "threshold_votes", "required")
_NOT_VOTES = frozenset(
    {"total", "eligible", "voting_total", "votingtotal", "threshold", "round"}
    | {k.lower() for k in _NEEDED_KEYS}
)


def label(alias: str | None) -> str:
    """'agent_b' -> 'Agent B', 'judge_a' -> 'Judge A'; anything else is returned as given."""
    if not alias:
        return "-"
    role, _, letter = alias.rpartition("_")
    if role.isalpha() and letter.isalpha() and len(letter) <= 2:
        return f"{role.capitalize()} {letter.upper()}"
    return alias


_STAGE_HEAD = re.compile(r"([a-z]+)(\d+)")
_STAGE_NAMES = {"r": "round", "j": "judges"}  # step prefixes: r2/revise/..., j1/score/...


def place(step: str | None) -> tuple[str, int | None, str | None]:
    """Where a step sits: ('r2/revise/agent_a') -> ('round', 2, 'revise'),
    ('j1/score/judge_a') -> ('judges', 1, 'score'), ('setup/x') -> ('setup', None, 'x')."""
    round_no, phase = parse_step(step)
    if round_no is not None:
        return "round", round_no, phase
    head = (step or "").split("/", 1)[0]
    match = _STAGE_HEAD.fullmatch(head)
    if match:
        return _STAGE_NAMES.get(match.group(1), match.group(1)), int(match.group(2)), phase
    return head or "other", None, phase


def stage_title(stage: str, number: int | None) -> str:
    """'Round 2', 'Judge round 1'."""
    if stage == "round":
        return f"Round {number}"
    name = "Judge round" if stage == "judges" else stage.replace("_", " ").capitalize()
    return name if number is None else f"{name} {number}"


def clean_text(text: str) -> str:
    """Model text without control characters (an ESC sequence could drive the reader's
    terminal); newlines and tabs stay."""
    if text.isprintable():
        return text
    return _CONTROL.sub("", text)


# Category Cc (C0, DEL, C1) except tab and newline, and lone surrogates (Cs): one regex pass
# instead of a per-character category lookup (reports of long sessions clean megabytes).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


_VERDICT = re.compile(r"<verdict\s*>(.*?)</verdict\s*>", re.IGNORECASE | re.DOTALL)
_SECTION = re.compile(r"<solution\s*>(.*?)(?:</solution\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?>")
_EMPHASIS = re.compile(r"\*\*|__|`")


def summarize(text: str, limit: int = 280) -> str:
    """A short, one-paragraph account of a model's answer: the fields of its last verdict
    block, the scalar fields of a JSON answer, or else the opening of its solution."""
    text = clean_text(text).strip()
    if not text:
        return "(empty)"
    verdicts = _VERDICT.findall(text)
    if verdicts:
        fields = [line.strip(" -*") for line in verdicts[-1].strip().splitlines() if line.strip()]
        return _cut("; ".join(fields), limit)
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            scalars = [
                f"{key}: {value}"
                for key, value in data.items()
                if isinstance(value, str | int | float | bool) and str(value).strip()
            ]
            if scalars:
                return _cut("; ".join(scalars), limit)
    section = _SECTION.search(text)
    body = section.group(1) if section else text
    lines = []
    for raw in body.splitlines():
        line = raw.strip()
        heading = line.startswith("#")
        line = line.lstrip("#>*-` ").strip()
        if line:
            lines.append(line + ":" if heading and not line.endswith(":") else line)
    return _cut(" ".join(lines), limit)


def _cut(text: str, limit: int) -> str:
    text = _EMPHASIS.sub("", _TAG.sub(" ", text))
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


@dataclass(frozen=True)
class Turn:
    """One journaled step: an agent's answer or a verify command's result."""

    step: str
    round: int | None
    phase: str | None
    alias: str | None
    kind: Literal["answer", "command"]
    text: str
    ok: bool
    stage: str = "round"
    reasked: bool = False
    failure: str | None = None
    tokens: int = 0
    cost: float | None = None
    latency: float = 0.0
    attempts: int = 1
    command: str | None = None
    exit_code: int | None = None

    @property
    def who(self) -> str:
        if self.kind == "command":
            return f"`{self.command}`"
        return label(self.alias) + (" (re-asked)" if self.reasked else "")

    @property
    def summary(self) -> str:
        if self.kind == "command":
            status = "timed out" if self.exit_code is None else f"exit code {self.exit_code}"
            first = next((ln for ln in self.text.splitlines() if ln.strip()), "(no output)")
            return f"{status}: {_cut(first, 160)}"
        if not self.ok:
            return f"failed: {self.failure}"
        return summarize(self.text)


@dataclass
class Phase:
    name: str
    turns: list[Turn] = field(default_factory=list)


@dataclass(frozen=True)
class RoundResult:
    """How a round ended: a judge's score and decision, or a vote tally. `stage` tells a
    court's judge rounds (records with "phase": "judges") from its agent rounds."""

    round: int
    stage: str = "round"
    required: float | None = None
    judge: str | None = None
    decision: str | None = None
    score: float | None = None
    tally: dict[str, float] | None = None
    problem: str | None = None

    @property
    def votes(self) -> dict[str, float]:
        """The tally's vote counts (yes, no, abstain first), totals left out."""
        if not self.tally:
            return {}
        ordered = [k for k in VOTE_KEYS[:3] if k in self.tally]
        if ordered:
            ordered += [k for k in VOTE_KEYS[3:] if k in self.tally]
        else:
            ordered = [k for k in self.tally if k.lower() not in _NOT_VOTES]
        return {k: self.tally[k] for k in ordered}

    @property
    def needed(self) -> float | None:
        """The votes consensus needed, when the record says."""
        for key in _NEEDED_KEYS:
            if self.tally and self.tally.get(key):
                return self.tally[key]
        return self.required or None

    @property
    def title(self) -> str:
        return stage_title(self.stage, self.round)

    def describe(self, scale: int = 10) -> str:
        parts = []
        if self.judge:
            parts.append(f"judge {label(self.judge)}")
        if self.decision:
            parts.append(str(self.decision))
        if self.score is not None:
            parts.append(f"convergence score {_num(self.score)}/{scale}")
        if self.tally:
            parts.append("votes " + ", ".join(f"{k} {_num(v)}" for k, v in self.votes.items()))
            if self.needed:
                parts.append(f"{_num(self.needed)} needed")
        if self.problem:
            parts.append(f"({self.problem})")
        return ", ".join(parts) if parts else "no result recorded"

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> RoundResult | None:
        number = record.get("round")
        if not isinstance(number, int):
            return None
        score = record.get("convergence_score", record.get("score"))
        tally = record.get("tally")
        required = record.get("required")
        return cls(
            round=number,
            stage="judges" if record.get("phase") == "judges" else "round",
            required=float(required) if isinstance(required, int | float) else None,
            judge=_str_or_none(record.get("judge")),
            decision=_str_or_none(record.get("decision")),
            score=float(score) if isinstance(score, int | float) else None,
            tally=_numbers(tally) if isinstance(tally, Mapping) else None,
            problem=_str_or_none(record.get("problem")),
        )


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def _str_or_none(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _numbers(tally: Mapping[str, Any]) -> dict[str, float]:
    return {
        str(k): float(v)
        for k, v in tally.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }


@dataclass
class Round:
    """Everything journaled under one round number (or one named stage with no number)."""

    number: int | None
    title: str
    stage: str = "round"
    phases: list[Phase] = field(default_factory=list)
    result: RoundResult | None = None

    def phase(self, name: str) -> Phase:
        for phase in self.phases:
            if phase.name == name:
                return phase
        self.phases.append(Phase(name))
        return self.phases[-1]


@dataclass(frozen=True)
class AgentView:
    alias: str
    model: str
    calls: int
    failures: int
    tokens: int
    tokens_estimated: bool
    cost: float | None

    @property
    def label(self) -> str:
        return label(self.alias)


@dataclass
class SessionView:
    session_id: str
    protocol: str
    task: str
    status: str
    consensus: bool
    how: str
    final_answer: str
    rounds_done: int
    aliases: dict[str, str]
    agents: list[AgentView]
    rounds: list[Round]
    disagreements: list[str]
    positions: dict[str, str]
    verdict: dict[str, Any] | None
    failed_agents: dict[str, str]
    warnings: list[str]
    tokens: int
    cost: float | None
    stop_message: str | None
    max_rounds: int | None = None
    consensus_score: int | None = None
    journal_head: str | None = None  # the journal head the result was computed from

    @property
    def status_text(self) -> str:
        return STATUS_TEXT.get(self.status, self.status.replace("_", " ").capitalize())

    @property
    def results(self) -> list[RoundResult]:
        return [r.result for r in self.rounds if r.result is not None]

    @property
    def chart_results(self) -> list[RoundResult]:
        """The results the chart draws: the rounds' (a court's judge rounds vote on position
        ids, a different scale), else whatever there is."""
        results = self.results
        return [r for r in results if r.stage == "round"] or results

    @property
    def chart_kind(self) -> Literal["score", "tally"] | None:
        results = self.chart_results
        if any(r.score is not None for r in results):
            return "score"
        if any(r.votes for r in results):
            return "tally"
        return None


def _turn(event: Event) -> Turn | None:
    stage, round_no, phase = place(event.step)
    step = event.step or ""
    parts = step.split("/")
    data = event.data
    if event.kind == "shell":
        result = data.get("result") or {}
        output = (str(result.get("stdout", "")) + str(result.get("stderr", ""))).strip()
        timed_out = bool(result.get("timed_out"))
        return Turn(
            step=step,
            round=round_no,
            phase=phase,
            alias=None,
            kind="command",
            stage=stage,
            text=clean_text(output) or "(no output)",
            ok=result.get("exit_code") == 0 and not timed_out,
            command=clean_text(str(data.get("command", ""))),
            exit_code=None if timed_out else result.get("exit_code"),
        )
    if event.kind != "ask":
        return None
    completion = data.get("completion") or {}
    usage = completion.get("usage") or {}
    failure = completion.get("failure") or {}
    ok = completion.get("status", "ok") == "ok"
    alias = data.get("agent") or (parts[2] if len(parts) > 2 else None)
    return Turn(
        step=step,
        round=round_no,
        phase=phase,
        alias=str(alias) if alias else None,
        kind="answer",
        stage=stage,
        text=clean_text(str(completion.get("text") or "")),
        ok=ok,
        reasked=step.endswith("/reask"),
        failure=None if ok else clean_text(f"{failure.get('kind')}: {failure.get('message')}"),
        tokens=int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)),
        cost=completion.get("cost"),
        latency=float(completion.get("latency") or 0.0),
        attempts=int(completion.get("attempts") or 1),
    )


def _rounds(events: list[Event], records: list[RoundResult]) -> list[Round]:
    rounds: dict[tuple[str, int | None], Round] = {}
    order: list[str] = []  # stages in the order the journal first shows them
    for event in events:
        turn = _turn(event)
        if turn is None:
            continue
        key = (turn.stage, turn.round)
        if key not in rounds:
            rounds[key] = Round(turn.round, stage_title(turn.stage, turn.round), turn.stage)
        if turn.stage not in order:
            order.append(turn.stage)
        rounds[key].phase(turn.phase or turn.stage).turns.append(turn)
    for record in records:
        key = (record.stage, record.round)
        if key not in rounds:
            rounds[key] = Round(record.round, record.title, record.stage)
        if record.stage not in order:
            order.append(record.stage)
        rounds[key].result = record
    return sorted(
        rounds.values(),
        key=lambda r: (order.index(r.stage), r.number if r.number is not None else -1),
    )


def _agents_from_events(aliases: Mapping[str, str], events: list[Event]) -> list[AgentView]:
    totals: dict[str, dict[str, Any]] = {
        a: {"calls": 0, "failures": 0, "tokens": 0, "estimated": False, "cost": 0.0}
        for a in aliases
    }
    for event in events:
        turn = _turn(event) if event.kind == "ask" else None
        if turn is None or turn.alias not in totals:
            continue
        usage = (event.data.get("completion") or {}).get("usage") or {}
        row = totals[turn.alias]
        row["calls"] += 1
        row["failures"] += 0 if turn.ok else 1
        row["tokens"] += turn.tokens
        row["estimated"] = row["estimated"] or bool(usage.get("estimated"))
        row["cost"] = None if row["cost"] is None or turn.cost is None else row["cost"] + turn.cost
    return [
        AgentView(a, aliases[a], t["calls"], t["failures"], t["tokens"], t["estimated"], t["cost"])
        for a, t in totals.items()
    ]


def _agents_from_result(agents: Mapping[str, AgentUsage]) -> list[AgentView]:
    return [
        AgentView(
            alias,
            usage.model,
            usage.calls,
            usage.failures,
            usage.prompt_tokens + usage.completion_tokens,
            usage.tokens_estimated,
            usage.cost,
        )
        for alias, usage in agents.items()
    ]


def _last_stop(events: list[Event]) -> tuple[str, str] | None:
    for event in reversed(events):
        if event.kind == "stopped":
            status = "paused" if event.data.get("reason") == "limit" else "interrupted"
            return status, str(event.data.get("message", ""))
        if event.kind == "run_started":
            return None
    return None


def _option(meta: Mapping[str, Any], protocol: str, *names: str) -> int | None:
    options = (meta.get("config") or {}).get(protocol) or {}
    for name in names:
        value = options.get(name)
        if isinstance(value, int):
            return value
    return None


def build_view(result: Result | None, events: list[Event]) -> SessionView:
    """The session as faces show it. `events` is the journal (its first event is `begin`);
    without a result, the verdict fields say what the journal allows."""
    meta: dict[str, Any] = events[0].data if events and events[0].kind == "begin" else {}
    protocol = result.protocol if result else str(meta.get("protocol", "?"))
    records = result.details.get("rounds") if result else None
    round_results = [
        r
        for r in (RoundResult.from_record(x) for x in records or [] if isinstance(x, Mapping))
        if r is not None
    ]
    warnings = [
        clean_text(f"{e.step + ': ' if e.step else ''}{e.data.get('message', '')}")
        for e in events
        if e.kind == "warning"
    ]
    rounds = _rounds(events, round_results)
    max_rounds = _option(meta, protocol, "max_rounds", "max_agent_rounds")
    consensus_score = _option(meta, protocol, "consensus_score")
    if result is not None:
        verdict = result.details.get("verdict")
        failed = result.details.get("failed_agents")
        return SessionView(
            session_id=result.session_id,
            protocol=result.protocol,
            task=clean_text(result.task),
            status=result.status,
            consensus=result.consensus,
            how=clean_text(result.how),
            final_answer=clean_text(result.final_answer),
            rounds_done=result.rounds,
            aliases=dict(result.aliases),
            agents=_agents_from_result(result.agents),
            disagreements=[clean_text(d) for d in result.disagreements],
            positions={a: clean_text(t) for a, t in result.positions.items()},
            verdict=dict(verdict) if isinstance(verdict, Mapping) else None,
            failed_agents=dict(failed) if isinstance(failed, Mapping) else {},
            tokens=result.tokens,
            cost=result.cost,
            stop_message=result.stop_message,
            rounds=rounds,
            warnings=warnings,
            max_rounds=max_rounds,
            consensus_score=consensus_score,
            journal_head=result.journal.describe() if result.journal else None,
        )
    aliases = {str(k): str(v) for k, v in (meta.get("aliases") or {}).items()}
    agents = _agents_from_events(aliases, events)
    stop = _last_stop(events)
    status, how = stop if stop else ("incomplete", "no result yet")
    costs = [a.cost for a in agents]
    numbered = [r.number for r in rounds if r.number is not None and r.stage == "round"]
    return SessionView(
        session_id=str(meta.get("session_id", "?")),
        protocol=protocol,
        task=clean_text(str(meta.get("task", ""))),
        status=status,
        consensus=False,
        how=clean_text(how),
        final_answer="",
        rounds_done=max(numbered, default=0),
        aliases=aliases,
        agents=agents,
        disagreements=[],
        positions={},
        verdict=None,
        failed_agents={},
        tokens=sum(a.tokens for a in agents),
        cost=None if any(c is None for c in costs) else round(sum(c or 0.0 for c in costs), 6),
        stop_message=how if stop else None,
        rounds=rounds,
        warnings=warnings,
        max_rounds=max_rounds,
        consensus_score=consensus_score,
    )


def load_view(folder: SessionFolder) -> SessionView:
    """The view of a session folder, read-only: its journal (verified; a torn last line left
    out) and its result.json unless a newer run has started since it was written."""
    journal, _ = Journal.open(folder.events, key_from_env(), repair=False)
    events = journal.events
    if not events:
        raise JournalError(f"session {folder.id} has no events yet")
    ends = [e.kind for e in events if e.kind in ("run_started", "stopped", "finished", "failed")]
    result: Result | None = None
    if folder.result_json.exists() and (not ends or ends[-1] != "run_started"):
        try:
            result = Result.model_validate_json(folder.result_json.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise JournalError(f"{folder.result_json} cannot be read: {exc}") from exc
        check_result(folder, result, journal)  # an edited or stale result is refused
    return build_view(result, events)
