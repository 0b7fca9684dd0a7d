"""Data every layer shares: messages, requests, completions, usage and events."""

from __future__ import annotations

from enum import Enum, StrEnum
from typing import Any, ClassVar, Literal, Protocol, TypeVar

import msgspec
from msgspec import Struct, field

from moot.errors import ConfigError

__all__ = [
    "CUT_MARK",
    "ChangeOfMind",
    "ClaimAt",
    "Completion",
    "Event",
    "EventKind",
    "FailureKind",
    "Finding",
    "FindingLabel",
    "Message",
    "ModelFailure",
    "ModelSettings",
    "ModelVerdict",
    "Outcome",
    "Request",
    "RoundSummary",
    "RunVerdict",
    "Spec",
    "Step",
    "Synthesis",
    "Usage",
    "alias_for",
    "alias_label",
    "dump",
    "estimate_tokens",
    "load",
    "load_json",
    "parse_spec",
]


class _Frozen(Struct, frozen=True, forbid_unknown_fields=True):
    """A record every layer shares: built by moot's own code (not checked when built; typed
    for the checker), read back from JSON by `load` (checked: unknown fields refused), written
    as JSON by `dump`. msgspec, not pydantic: a run's start-up creates these classes, and a
    pydantic model costs some twenty times as much to create (benchmarks/process.py)."""

    # Fields left out of `dump` while they hold these values, so that JSON written before
    # the field existed reads and writes back byte for byte.
    __leave_out__: ClassVar[dict[str, object]] = {}


class Message(_Frozen, frozen=True):
    role: Literal["system", "user", "assistant"]
    content: str


class Request(_Frozen, frozen=True):
    """One model call. `meta` carries the step id and alias for logs and scripted models;
    real providers never send it."""

    messages: tuple[Message, ...]
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    json_schema: dict[str, Any] | None = None
    timeout: float | None = None
    meta: dict[str, str] = {}

    @property
    def prompt(self) -> str:
        """The last user message: what this call adds to the conversation."""
        for message in reversed(self.messages):
            if message.role == "user":
                return message.content
        return ""


class Usage(_Frozen, frozen=True):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    estimated: bool = False

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            estimated=self.estimated or other.estimated,
        )


class FailureKind(StrEnum):
    AUTH = "auth"
    RATE_LIMIT = "rate_limit"
    CONTEXT_LENGTH = "context_length"
    CONTENT_FILTER = "content_filter"
    TIMEOUT = "timeout"
    SERVER = "server"
    CONNECTION = "connection"
    BAD_RESPONSE = "bad_response"
    BAD_REQUEST = "bad_request"
    UNKNOWN = "unknown"

    @property
    def transient(self) -> bool:
        return self in _TRANSIENT


_TRANSIENT = frozenset(
    {FailureKind.RATE_LIMIT, FailureKind.TIMEOUT, FailureKind.SERVER, FailureKind.CONNECTION}
)


class ModelFailure(_Frozen, frozen=True):
    kind: FailureKind
    message: str
    retry_after: float | None = None

    def __post_init__(self) -> None:
        # A provider of a plugin may name the kind ("rate_limit"); the engine reads .transient
        if not isinstance(self.kind, FailureKind):
            msgspec.structs.force_setattr(self, "kind", FailureKind(self.kind))

    @property
    def transient(self) -> bool:
        return self.kind.transient


# Ends a reply the engine cut to `engine.max_reply_bytes`, so readers and other agents see it was
# cut (and parsers do not repair it: moot.deliberation.parsing). No digits: a protocol that reads
# the last number of an answer (vote) must not read the sizes; those are in the completion's
# `truncated_from` and in the run's warning.
CUT_MARK = "\n\n[... the rest of this reply was cut by moot: it passed engine.max_reply_bytes ...]"


class Completion(_Frozen, frozen=True):
    """What a model call produced. `status == "error"` carries a `failure` instead of text."""

    status: Literal["ok", "error"] = "ok"
    text: str = ""
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None  # USD; None means unknown
    latency: float = 0.0
    model: str = ""
    failure: ModelFailure | None = None
    attempts: int = 1
    # The reply's full size in UTF-8 bytes when the engine cut it to `engine.max_reply_bytes`;
    # None (left out of the JSON, so journals from before the cap read and replay unchanged):
    # the reply is whole.
    truncated_from: int | None = None
    # The model stopped because it reached the request's max_tokens, not at an end of its own:
    # the reply may lack its end. False is left out of the JSON, as a whole reply's
    # truncated_from is, so journals from before it read and replay unchanged.
    hit_max_tokens: bool = False

    __leave_out__: ClassVar[dict[str, object]] = {"truncated_from": None, "hit_max_tokens": False}

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @classmethod
    def error(cls, kind: FailureKind, message: str, **extra: Any) -> Completion:
        retry_after = extra.pop("retry_after", None)
        failure = ModelFailure(kind=kind, message=message, retry_after=retry_after)
        return cls(status="error", failure=failure, **extra)


class EventKind(StrEnum):
    """What an event says. Durable kinds are journal lines; signals only feed the faces."""

    # durable: written to events.jsonl and fsync'd
    BEGIN = "begin"  # task, resolved config, seed, alias map: everything replay needs
    RUN_STARTED = "run_started"
    ASK = "ask"  # a model call and its completion
    ATTEMPT = "attempt"  # a failed try of a call that will be retried
    SHELL = "shell"
    CODE = "code"  # a code task's effect: a worktree's change, a diff applied, a verify, a choice
    CHECKPOINT = "checkpoint"  # a provider's note that must survive a crash
    WARNING = "warning"
    NOTE = "note"  # something a protocol derived and wants on the record (a scrubbed phrase)
    HUMAN = "human"  # a person's note to one agent (`moot say`), journaled on the ask it joins
    LIMITS_CHANGED = "limits_changed"
    STOPPED = "stopped"  # paused by a limit, or interrupted
    FAILED = "failed"
    FINISHED = "finished"
    # signals: not journaled
    OPENED = "opened"
    ASK_STARTED = "ask_started"  # asked: waiting for a free slot (queued)
    CALL_STARTED = "call_started"  # the call (or a retry) is on its way to the model
    SHELL_STARTED = "shell_started"
    CONTEXT_FRESH = "context_fresh"
    ROUND_RESULT = "round_result"

    @property
    def durable(self) -> bool:
        return self not in _SIGNALS


_SIGNALS = frozenset(
    {
        EventKind.OPENED,
        EventKind.ASK_STARTED,
        EventKind.CALL_STARTED,
        EventKind.SHELL_STARTED,
        EventKind.CONTEXT_FRESH,
        EventKind.ROUND_RESULT,
    }
)
ENDED_KINDS = frozenset({EventKind.STOPPED, EventKind.FAILED, EventKind.FINISHED})
_KIND_OF = {kind.value: kind for kind in EventKind}  # (Event.from_record)


class Event(Struct, forbid_unknown_fields=True):
    """Something that happened in a session. Durable events are journal lines; others only
    feed the faces (live view, logs)."""

    kind: EventKind
    step: str | None = None
    data: dict[str, Any] = {}
    seq: int | None = None
    ts: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, EventKind):  # named ("ask"): faces read kind.durable
            self.kind = EventKind(self.kind)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Event:
        """The event a journal line's record holds (its hash and HMAC already taken off):
        KeyError without a kind, ValueError for a field the model refuses."""
        kind, step, data = record["kind"], record.get("step"), record.get("data") or {}
        seq, ts = record.get("seq"), record.get("ts")
        # A line as the journal writes it holds each field in its type already: the event is
        # made without msgspec's conversion, which costs a resume (every line) twice as much.
        named = _KIND_OF.get(kind) if type(kind) is str else None
        if (
            named is not None
            and (step is None or type(step) is str)
            and type(data) is dict
            and (seq is None or type(seq) is int)
            and (ts is None or type(ts) is float)
        ):
            return cls(kind=named, step=step, data=data, seq=seq, ts=ts)
        fields = {"kind": kind, "step": step, "data": data, "seq": seq, "ts": ts}
        try:
            return msgspec.convert(fields, cls, strict=False)
        except msgspec.ValidationError as exc:
            raise ValueError(str(exc)) from None


# Step prefixes and the stage each names: r2/revise/agent_a is round 2; j1/score/judge_a is a
# court's first judge round. A protocol may use its own letters (m1/... for a match).
STAGE_NAMES = {"r": "round", "j": "judges", "p": "plan", "t": "task"}
_DIGITS = "0123456789"


class Step(Struct, frozen=True):
    """A step id, built and parsed here only: `<stage letter><number>/<phase>/<alias>[/more]`
    (`r1/evaluate/agent_b`, `r0/solve/agent_a/reask`, `j2/score/judge_c`), or a free name
    without a number (`setup/x`)."""

    stage: str  # "round", "judges", or the head of an unnumbered step
    number: int | None
    phase: str | None = None
    alias: str | None = None
    rest: tuple[str, ...] = ()
    prefix: str = "r"

    @classmethod
    def at(cls, number: int, phase: str, *parts: str, prefix: str = "r") -> str:
        """The id of a step in round (or stage) `number`: Step.at(1, "evaluate", "agent_b")."""
        return "/".join((f"{prefix}{number}", phase, *parts))

    @classmethod
    def parse(cls, step: str | None) -> Step:
        parts = (step or "").split("/")
        head = parts[0]
        phase = parts[1] if len(parts) > 1 else None
        alias = parts[2] if len(parts) > 2 else None
        rest = tuple(parts[3:])
        letter = head.rstrip(_DIGITS)  # a head is lowercase letters, then a number
        if letter != head and letter.isascii() and letter.isalpha() and letter.islower():
            number = int(head[len(letter) :])
            return cls(STAGE_NAMES.get(letter, letter), number, phase, alias, rest, letter)
        return cls(head or "other", None, phase, alias, rest, "")

    @property
    def round(self) -> int | None:
        """The round number of a round step (`r<N>/...`), else None."""
        return self.number if self.prefix == "r" else None

    @property
    def reask(self) -> bool:
        return self.rest[-1:] == ("reask",)

    @property
    def title(self) -> str:
        """'Round 2', 'Judge round 1', 'Setup'."""
        return stage_title(self.stage, self.number)


def stage_title(stage: str, number: int | None) -> str:
    if stage == "round":
        return f"Round {number}"
    name = "Judge round" if stage == "judges" else stage.replace("_", " ").capitalize()
    return name if number is None else f"{name} {number}"


class RoundSummary(_Frozen, frozen=True):
    """How a round ended, in terms every face can render without knowing the protocol: a
    judge's decision and score (on `scale`, consensus at `threshold`), and/or a vote tally
    (`votes` in reading order, `needed` the votes consensus required). Protocols send it with
    `Session.round_done`; their record turns the round records of `Outcome.details` back into
    one for the reports."""

    round: int
    stage: str = "round"
    judge: str | None = None
    decision: str | None = None
    score: float | None = None
    scale: int = 10
    threshold: float | None = None
    votes: dict[str, float] = {}
    needed: float | None = None
    problem: str | None = None
    # How the score was measured, when a protocol has several ways ("semantic layer").
    method: str | None = None
    # The number the votes are counts out of (every answer asked), for a tally of answers: each
    # answer is then quoted apart from its count ("'7' 2 of 6, '9' 1; 4 of 6 needed").
    out_of: int | None = None

    @property
    def title(self) -> str:
        return stage_title(self.stage, self.round)


def alias_for(index: int, role: str = "agent") -> str:
    """agent_a, agent_b, ... agent_z, agent_aa, ... (judge_a, ... with role "judge")"""
    letters = "abcdefghijklmnopqrstuvwxyz"
    name = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        name = letters[rem] + name
    return f"{role}_{name}"


def alias_label(alias: str | None) -> str:
    """'agent_b' -> 'Agent B', 'test_engineer_a' -> 'Test engineer A', and one of an agent's
    several answers, 'agent_b/2', -> 'Agent B (answer 2)'; anything else is returned as given."""
    if not alias:
        return "-"
    head, _, sample = alias.partition("/")
    if sample.isdigit() and "/" not in head:
        shown = alias_label(head)
        return alias if shown == head else f"{shown} (answer {sample})"
    role, _, letter = alias.rpartition("_")
    if role.replace("_", "").isalpha() and letter.isalpha() and len(letter) <= 2:
        return f"{role.replace('_', ' ').capitalize()} {letter.upper()}"  # 'Test engineer A'
    return alias


class ClaimAt(_Frozen, frozen=True):
    """One agent's claim after one round (round 0: its first, independent answer), or why it
    had none (`valid` false: it failed or its answer was no answer). `kept`: why the round's
    own answer was not taken, so that the claim is the agent's earlier one (its revision was
    no answer, or its call failed); empty, and left out of the JSON, when the claim is the
    round's own."""

    agent: str
    round: int
    claim: str
    valid: bool = True
    reason: str = ""
    kept: str = ""

    __leave_out__: ClassVar[dict[str, object]] = {"kept": ""}


class ChangeOfMind(_Frozen, frozen=True):
    """An agent whose claim after `round` contradicts its claim before it, or replaces it
    (deliberation/finding.py: `replaced`). `toward` are the agents whose earlier claim it took
    up; `critics` those whose critique it had just read."""

    agent: str
    round: int
    before: str
    after: str
    toward: tuple[str, ...] = ()
    critics: tuple[str, ...] = ()


class ModelVerdict(_Frozen, frozen=True):
    """A model's verdict, score or pick, weighed as evidence (never the decision itself).
    `claims_agreement`: the model says the answers agree; `upheld`: moot's finding bears it
    out; `problem`: why the verdict itself was invalid (its fields contradict each other)."""

    by: str
    role: str
    says: str
    round: int | None = None
    claims_agreement: bool = False
    valid: bool = True
    problem: str = ""
    upheld: bool = True


class Synthesis(_Frozen, frozen=True):
    """A chairman's final answer, written after the outcome from the picked answer and what
    the judges, critics or losing sides said should change. moot checks it against the agreed
    claim: `accepted` it is the final answer, else the picked answer stands; `reason` says
    why. `of_disagreeing`: the agents' answers do not agree, so it is a synthesis of
    disagreeing answers, not a consensus (the label stays moot's finding over the answers)."""

    chairman: str  # the alias of the participant that wrote it
    step: str
    picked: str  # the answer the protocol picked, which stands if this one is rejected
    text: str  # the chairman's whole reply ("" when it gave none)
    answer: str | None = None  # the final answer read from it
    accepted: bool = False
    reason: str = ""
    of_disagreeing: bool = False
    feedback: tuple[str, ...] = ()  # what the chairman was asked to weigh


FindingLabel = Literal["consensus", "persuasion", "no_consensus", "tie", "converged", "chosen"]


class Finding(_Frozen, frozen=True):
    """moot's own finding on the agents' final answers: the label and its reason, the claim
    that more than half of the agents that started agree on (if any), the groups of agents
    whose final claims agree (claim, agents), and how many held the agreed claim in their
    first, independent answer. `confirmed_by` names the evidence that confirmed agreement the
    wording alone could not (a judge), where nothing contradicted it."""

    label: FindingLabel
    reason: str
    claim: str | None = None
    agreed: tuple[str, ...] = ()
    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    started: int = 0
    valid: int = 0
    independent: int | None = None
    confirmed_by: str | None = None

    @property
    def consensus(self) -> bool:
        return self.label in ("consensus", "persuasion")

    @property
    def unheld(self) -> int:
        """How many agents end on one claim that no first answer held (no consensus for it)."""
        if self.label != "no_consensus" or self.independent != 0 or not self.groups:
            return 0
        return len(self.groups[0][1])


class Outcome(_Frozen, frozen=True):
    """How a deliberation ended, in terms every protocol shares. `finding`, `claims`,
    `changes` and `verdicts` are moot's finding and what it weighed (deliberation/finding.py);
    outcomes of protocols that have no claims to compare (a code change picked) leave them
    empty."""

    protocol: str
    status: Literal["consensus", "no_consensus", "failed"]
    consensus: bool
    how: str
    final_answer: str
    rounds: int
    trust: str = ""  # how far to trust it, in plain words (deliberation/trust.py)
    disagreements: tuple[str, ...] = ()
    positions: dict[str, str] = {}
    details: dict[str, Any] = {}
    finding: Finding | None = None
    claims: tuple[ClaimAt, ...] = ()
    changes: tuple[ChangeOfMind, ...] = ()
    verdicts: tuple[ModelVerdict, ...] = ()
    synthesis: Synthesis | None = None  # a chairman's final answer, accepted or not


class _Ran(Protocol):
    @property
    def exit_code(self) -> int | None: ...
    @property
    def timed_out(self) -> bool: ...


class RunVerdict:
    """How a verify run ended, for a record with `exit_code` and `timed_out`: a code task's
    `moot.code.changes.VerifyRun`, and a result's check as read back from result.json."""

    @property
    def passed(self: _Ran) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def status(self: _Ran) -> str:
        if self.timed_out:
            return "timed out"
        return "passed" if self.exit_code == 0 else f"failed (exit code {self.exit_code})"


class ModelSettings(Struct, frozen=True):
    """Per-agent options from the config that a provider may use."""

    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    concurrency: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    prices: dict[str, dict[str, float]] = field(default_factory=dict)  # the run config's [prices]


class Spec(Struct, frozen=True):
    """A model spec, `provider:name` (`parse_spec` reads one)."""

    provider: str
    name: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}"


def parse_spec(text: str) -> Spec:
    """`provider:name`, where name may itself hold colons (`openai-compat:http://h/v1#m`)."""
    provider, sep, name = text.strip().partition(":")
    if sep and not name and provider.lower() == "inline":
        return Spec(provider="inline", name="")  # `inline:`, an inline agent with no label
    if not sep or not provider or not name:
        raise ConfigError(
            f"model spec {text!r} is not of the form PROVIDER:MODEL (for example local:smollm2); "
            "`moot models` lists the providers"
        )
    return Spec(provider=provider.lower(), name=name)


def estimate_tokens(text: str) -> int:
    """A cheap, deterministic token estimate (about four characters a token)."""
    return (len(text) + 3) // 4


R = TypeVar("R")


def load(data: object, kind: type[R]) -> R:
    """`data` (parsed JSON: a journal record's field, a cache entry) read as a `kind`, checked:
    a ValueError (msgspec's ValidationError) names what does not fit. What pydantic's lax mode
    took is taken (a whole float for an int, a number in a string, 0 or 1 for a bool): files an
    older moot or another tool wrote read as they did."""
    return msgspec.convert(data, kind, strict=False)


def load_json(text: str | bytes, kind: type[R]) -> R:
    """`text`, JSON, read as a `kind`, checked as `load` checks."""
    return msgspec.json.decode(text, type=kind, strict=False)


def dump(value: Any) -> Any:
    """`value` (a record, or lists, tuples and dicts of them) as JSON-ready data: dicts in field
    order, lists for tuples, an enum's value; each record's `__leave_out__` fields left out
    while they hold their value there."""
    if isinstance(value, Struct):
        leave = getattr(value, "__leave_out__", _NOTHING_LEFT_OUT)
        out = {}
        for name in value.__struct_fields__:
            item = getattr(value, name)
            if name in leave and item == leave[name] and type(item) is type(leave[name]):
                continue
            out[name] = dump(item)
        return out
    if isinstance(value, (list, tuple)):
        return [dump(item) for item in value]
    if isinstance(value, dict):
        return {key: dump(item) for key, item in value.items()}
    if isinstance(value, Enum):
        return value.value
    return value


_NOTHING_LEFT_OUT: dict[str, object] = {}
