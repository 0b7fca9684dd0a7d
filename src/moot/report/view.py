"""One view of a session for every face that reads it afterwards (`moot show`, report.md,
report.html), built from `result.json` and the journal.

It relies only on what every protocol shares: step ids (`types.Step`), `ask` events carrying
the agent, prompt and completion, `shell` events, the typed outcome (moot's finding, each
agent's claims, changes of mind, model verdicts), and the protocol's round entries, which its
definition turns into typed `RoundSummary`s (`Conduct.describe_round`), plus the
sections a protocol adds itself (`Presentation.report_sections`). A session without
a result yet (running, or stopped by a crash) gives a view of what the journal holds so far.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from msgspec import Struct, field
from msgspec.structs import replace

from moot import protocols
from moot.engine.evidence import check_evidence
from moot.engine.journal import Journal, key_from_env
from moot.engine.lifecycle import last_stop
from moot.engine.result import AgentUsage, Result
from moot.engine.seal import check_result
from moot.engine.standing import Standing
from moot.engine.state import seen_state
from moot.engine.store import SessionFolder
from moot.errors import ConfigError, JournalError
from moot.protocols.definition import Presentation, ProtocolDefinition, ReportSection
from moot.report.code import CodeRow, fence, read_applied
from moot.text import clean_text, cut, place_words, round_title, step_place, summarize
from moot.types import (
    ChangeOfMind,
    ClaimAt,
    Event,
    EventKind,
    Finding,
    ModelVerdict,
    RoundSummary,
    Step,
    Synthesis,
)
from moot.types import alias_label as label

__all__ = [
    "AgentView",
    "Phase",
    "Round",
    "SessionView",
    "Turn",
    "build_view",
    "clean_text",
    "label",
    "load_view",
    "summarize",
]

# A choice (pick): the status says whether a change was chosen. Its exit code stays that of
# consensus / no consensus: 0 for "a winner to apply", 2 for "none chosen".
PICK_STATUS_TEXT = {"consensus": "Change chosen", "no_consensus": "No change chosen"}

STATUS_TEXT = {
    "consensus": "Consensus reached",
    "no_consensus": "No consensus",
    "failed": "Failed",
    "paused": "Paused by a limit (resumable)",
    "interrupted": "Interrupted (resumable)",
    "incomplete": "Incomplete (running, or stopped unexpectedly)",
    "running": "Still running",
}
# A pause that no limit made (the journal's `stopped` reason): a run waiting for the person (a
# blocked task of the feature pipeline, a plan to read), or a provider's outage.
PAUSE_TEXT = {
    "waiting": "Paused, waiting for you (resumable)",
    "outage": "Paused by a provider outage (resumable)",
}


class Turn(Struct, frozen=True):
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
    truncated_from: int | None = None  # the reply's full size in bytes when the engine cut it
    hit_max_tokens: bool = False  # the model stopped at the request's max_tokens
    reading: str | None = None  # the protocol's reading of the reply (`turn_reading`)

    @property
    def cut(self) -> str | None:
        """'truncated: the reply was 10,485,760 bytes' for a reply cut to the cap (the text
        ends with the engine's mark), a note for one the model stopped at its max_tokens; None
        for a whole one."""
        if self.truncated_from is not None:
            return f"truncated: the reply was {self.truncated_from:,} bytes"
        if self.hit_max_tokens:
            return "the model stopped at its token limit (max_tokens): the end may be missing"
        return None

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
            return f"{status}: {cut(first, 160)}"
        if not self.ok:
            return f"failed: {self.failure}"
        return self.reading or summarize(self.text)


class Phase(Struct):
    name: str
    turns: list[Turn] = field(default_factory=list)


class Round(Struct):
    """Everything journaled under one round number (or one named stage with no number)."""

    number: int | None
    title: str
    stage: str = "round"
    phases: list[Phase] = field(default_factory=list)
    result: RoundSummary | None = None

    def phase(self, name: str) -> Phase:
        for phase in self.phases:
            if phase.name == name:
                return phase
        self.phases.append(Phase(name))
        return self.phases[-1]


class AgentView(Struct, frozen=True):
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


class SessionView(Struct):
    session_id: str
    protocol: str
    task: str
    status: str
    consensus: bool
    how: str
    final_answer: str
    trust: str
    rounds_done: int
    aliases: dict[str, str]
    agents: list[AgentView]
    rounds: list[Round]
    disagreements: list[str]
    positions: dict[str, str]
    warnings: list[str]
    tokens: int
    cost: float | None
    stop_message: str | None
    max_rounds: int | None = None
    journal_head: str | None = None  # the journal head the result was computed from
    code: list[CodeRow] = field(default_factory=list)  # a code task's changes
    # who chose the outcome ("human", "judge", "none") when it is a choice among changes
    # (`Result.picked_by`), not agents agreeing: the report then speaks of a chosen change
    picked_by: str | None = None
    # the protocol's titles of its phases (its definition's `phase_titles`)
    phase_titles: Mapping[str, str] = field(default_factory=dict)
    # moot's finding and what it weighed (None and empty: a result from before the finding,
    # one without claims to compare, or no result yet)
    finding: Finding | None = None
    claims: list[ClaimAt] = field(default_factory=list)
    changes: list[ChangeOfMind] = field(default_factory=list)
    verdicts: list[ModelVerdict] = field(default_factory=list)
    # the protocol's own sections (its definition's `report_sections`): (title, Markdown)
    sections: list[ReportSection] = field(default_factory=list)
    # a person's notes to agents during the run (`moot say`), each with the prompt it joined
    human_notes: list[str] = field(default_factory=list)
    # why a paused run stopped: the journal's last `stopped` event's reason (limit, waiting,
    # outage), None when unknown
    stop_reason: str | None = None

    @property
    def status_text(self) -> str:
        if self.picked_by is not None and self.status in PICK_STATUS_TEXT:
            return PICK_STATUS_TEXT[self.status]  # a choice, not agents agreeing
        if self.status == "paused" and self.stop_reason in PAUSE_TEXT:
            return PAUSE_TEXT[str(self.stop_reason)]
        return STATUS_TEXT.get(self.status, self.status.replace("_", " ").capitalize())

    @property
    def decision(self) -> tuple[str, str]:
        """The report's one-line decision: the chosen change when the outcome is a choice
        (nobody deliberated, so "consensus" would mislead), else whether a consensus was
        reached."""
        if self.picked_by is not None:
            chosen = next((r.title for r in self.code if r.chosen), None)
            return "Chosen change", chosen or "none"
        if self.status in ("running", "incomplete"):  # no outcome: no label yet
            return "Consensus", "not decided yet"
        return "Consensus", "Yes" if self.consensus else "No"

    @property
    def without_answer(self) -> list[ClaimAt]:
        """The agents whose last claim was no valid answer (failed, or not an answer), each
        with its round and reason."""
        last: dict[str, ClaimAt] = {}
        for claim in self.claims:
            if claim.agent not in last or claim.round >= last[claim.agent].round:
                last[claim.agent] = claim
        return [c for c in last.values() if not c.valid]

    @property
    def results(self) -> list[RoundSummary]:
        return [r.result for r in self.rounds if r.result is not None]

    @property
    def chart_results(self) -> list[RoundSummary]:
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
    where = Step.parse(event.step)
    stage, round_no, phase = where.stage, where.number, where.phase
    step = event.step or ""
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
    alias = data.get("agent") or where.alias
    return Turn(
        step=step,
        round=round_no,
        phase=phase,
        alias=str(alias) if alias else None,
        kind="answer",
        stage=stage,
        text=clean_text(str(completion.get("text") or "")),
        ok=ok,
        reasked=where.reask,
        failure=None if ok else clean_text(f"{failure.get('kind')}: {failure.get('message')}"),
        tokens=int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)),
        cost=completion.get("cost"),
        latency=float(completion.get("latency") or 0.0),
        attempts=int(completion.get("attempts") or 1),
        truncated_from=completion.get("truncated_from"),
        hit_max_tokens=bool(completion.get("hit_max_tokens")),
    )


def _rounds(events: list[Event], summaries: list[RoundSummary]) -> list[Round]:
    rounds: dict[tuple[str, int | None], Round] = {}
    order: list[str] = []  # stages in the order the journal first shows them
    for event in events:
        turn = _turn(event)
        if turn is None:
            continue
        key = (turn.stage, turn.round)
        if key not in rounds:
            step = Step.parse(turn.step)
            rounds[key] = Round(turn.round, round_title(step.stage, step.number), turn.stage)
        if turn.stage not in order:
            order.append(turn.stage)
        rounds[key].phase(turn.phase or turn.stage).turns.append(turn)
    for summary in summaries:
        key = (summary.stage, summary.round)
        if key not in rounds:
            rounds[key] = Round(
                summary.round, round_title(summary.stage, summary.round), summary.stage
            )
        if summary.stage not in order:
            order.append(summary.stage)
        rounds[key].result = summary
    return sorted(
        rounds.values(),
        key=lambda r: (order.index(r.stage), r.number if r.number is not None else -1),
    )


def _agents_from_events(aliases: Mapping[str, str], events: list[Event]) -> list[AgentView]:
    tally = Standing.for_aliases(aliases)
    tally.absorb(e for e in events if e.kind == EventKind.ASK)
    return [
        AgentView(
            row.alias,
            row.model,
            row.calls,
            row.failures,
            row.tokens,
            row.usage.estimated,
            row.cost if row.cost_known else None,
        )
        for row in tally.agents.values()
        if row.alias in aliases
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


def _definition(name: str) -> ProtocolDefinition[Any] | None:
    try:
        return protocols.get(name)
    except ConfigError:  # a protocol this moot no longer has (or a test's)
        return None


def build_view(
    result: Result | None,
    events: list[Event],
    folder: SessionFolder | None = None,
    live_results: Sequence[RoundSummary] = (),
) -> SessionView:
    """The session as faces show it. `events` is the journal (its first event is `begin`);
    without a result, the outcome fields say what the journal allows, and `live_results` are
    the round summaries a watching face heard of while the run goes on (they are signals, not
    journal lines). `folder`: where to find which change `moot apply` applied, if any."""
    meta: dict[str, Any] = events[0].data if events and events[0].kind == "begin" else {}
    protocol = result.protocol if result else str(meta.get("protocol", "?"))
    definition = _definition(protocol)
    options = definition.options_from(meta.get("config")) if definition is not None else None
    round_results = [
        r
        for r in (
            definition.conduct.describe_round(x, options)
            for x in (result.round_records if result is not None else [])
            if definition is not None
        )
        if r is not None
    ]
    if result is None:
        round_results = list(live_results)
    warnings = [
        clean_text(f"{e.step + ': ' if e.step else ''}{e.data.get('message', '')}")
        for e in events
        if e.kind == "warning"
    ]
    human_notes = [
        clean_text(
            f"To {label(str(e.data.get('agent', '?')))}, in its prompt at {step_place(e.step)}: "
        )
        + clean_text(str(e.data.get("text", "")))
        for e in events
        if e.kind == EventKind.HUMAN
    ]
    rounds = _rounds(events, round_results)
    max_rounds = definition.max_rounds(options) if definition is not None else None
    shown = definition.presentation if definition is not None else Presentation()
    titles = dict(shown.phase_titles)
    if shown.turn_reading is not None:
        details = result.details if result is not None else {}
        read = shown.turn_reading
        for phase in (phase for r in rounds for phase in r.phases):
            phase.turns = [
                replace(t, reading=read(t.step, t.text, details))
                if t.ok and t.kind == "answer"
                else t
                for t in phase.turns
            ]
    sections = (
        shown.report_sections(result.details if result is not None else {}, events)
        if shown.report_sections is not None
        else []
    )
    if result is not None and result.synthesis is not None:
        sections = [*sections, synthesis_section(result.synthesis)]
    stopped = [e for e in events if e.kind == EventKind.STOPPED]
    stop_reason = str(stopped[-1].data.get("reason") or "") or None if stopped else None
    if result is not None:
        return SessionView(
            session_id=result.session_id,
            protocol=result.protocol,
            task=clean_text(result.task),
            status=result.status,
            consensus=result.consensus,
            how=clean_text(result.how),
            final_answer=clean_text(result.final_answer),
            trust=clean_text(result.trust),
            rounds_done=result.rounds,
            aliases=dict(result.aliases),
            agents=_agents_from_result(result.agents),
            disagreements=[clean_text(d) for d in result.disagreements],
            positions={a: clean_text(t) for a, t in result.positions.items()},
            tokens=result.tokens,
            cost=result.cost,
            stop_message=result.stop_message,
            rounds=rounds,
            warnings=warnings,
            human_notes=human_notes,
            max_rounds=max_rounds,
            phase_titles=titles,
            journal_head=result.journal.describe() if result.journal else None,
            code=result.code_changes(read_applied(folder.path) if folder else None),
            picked_by=result.picked_by,
            finding=_clean_finding(result.finding),
            claims=list(result.claims),
            changes=list(result.changes),
            verdicts=list(result.verdicts),
            sections=sections,
            stop_reason=stop_reason,
        )
    aliases = {str(k): str(v) for k, v in (meta.get("aliases") or {}).items()}
    agents = _agents_from_events(aliases, events)
    stop = last_stop(events)
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
        trust="",
        rounds_done=max(numbered, default=0),
        aliases=aliases,
        agents=agents,
        disagreements=[],
        positions={},
        tokens=sum(a.tokens for a in agents),
        cost=None if any(c is None for c in costs) else round(sum(c or 0.0 for c in costs), 6),
        stop_message=how if stop else None,
        rounds=rounds,
        warnings=warnings,
        human_notes=human_notes,
        max_rounds=max_rounds,
        phase_titles=titles,
        sections=sections,
        stop_reason=stop_reason if stop else None,
    )


def _clean_finding(finding: Finding | None) -> Finding | None:
    """The finding with its reason and claim free of control characters (they quote answers)."""
    if finding is None:
        return None
    return replace(
        finding,
        reason=clean_text(finding.reason),
        claim=None if finding.claim is None else clean_text(finding.claim),
    )


def synthesis_section(synthesis: Synthesis) -> ReportSection:
    """The chairman's synthesis beside the picked answer, accepted or rejected and why."""
    chairman = synthesis.chairman
    who = "the chairman" if chairman.startswith("chairman_") else f"{label(chairman)}'s model"
    reason = clean_text(synthesis.reason)
    if synthesis.accepted:
        kind = "a synthesis of disagreeing answers" if synthesis.of_disagreeing else "accepted"
        head = f"**Written by {who}; {kind}:** {reason}. It is the final answer."
    elif synthesis.picked.strip():
        head = f"**Written by {who}; rejected:** {reason}. The picked answer stands."
    else:  # nothing was picked: no answer stands in its place
        head = f"**Written by {who}; rejected:** {reason}. There is no final answer."
    body = [head, "", "**The synthesis:**", "", fence(clean_text(synthesis.text) or "(none)")]
    if synthesis.picked.strip():
        body += ["", "**The picked answer:**", "", fence(clean_text(synthesis.picked))]
    if synthesis.feedback:
        body += ["", "**What it was asked to weigh:**", ""]
        body += [f"- {clean_text(cut(x, 300))}" for x in synthesis.feedback]
    return "Synthesis", "\n".join(body)


def load_view(folder: SessionFolder) -> SessionView:
    """The view of a session folder, read-only: its journal (verified; a torn last line left
    out) and its result.json unless a newer run has started since it was written."""
    journal, _ = Journal.open(folder.events, key_from_env(), repair=False)
    events = journal.events
    if not events:
        raise JournalError(f"session {folder.id} has no events yet")
    check_evidence(folder, journal)  # result.json or a report proving a longer journal
    ends = [e.kind for e in events if e.kind in ("run_started", "stopped", "finished", "failed")]
    result: Result | None = None
    if folder.result_json.exists() and (not ends or ends[-1] != "run_started"):
        try:
            result = Result.read(folder.result_json.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise JournalError(f"{folder.result_json} cannot be read: {exc}") from exc
        check_result(folder, result, journal)  # an edited or stale result is refused
    view = build_view(result, events, folder)
    if result is None and view.status == "incomplete":
        seen = seen_state(folder)  # its process alive: still running, and where
        if seen is not None and seen.status == "running":
            tally = seen.standing()
            if tally.phase:
                at = "at" if tally.stage == "round" and tally.round == 0 else "in"
                where = f"{at} {place_words(tally.stage, tally.round, tally.phase)}"
            else:
                where = "starting"
            view = replace(view, status="running", how=f"now {where}")
    return view
