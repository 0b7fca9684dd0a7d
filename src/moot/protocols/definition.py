"""What a protocol tells the rest of moot about itself: one `ProtocolDefinition` per protocol
folder (`protocols/<name>/__init__.py` exports `PROTOCOL`).

The CLI, the config loader, the session set-up, the live view and the reports ask the definition;
none of them tests for a protocol's name. A definition holds the protocol's name, its options model
(the config section of the same name, with defaults), its participants, what the engine calls
(`Conduct`: its run function, how to describe one of its round entries
(`Outcome.details["rounds"]`) as a `RoundSummary`, its worst case), and which of its options the
shared CLI flags set (`flags`); what only one protocol needs lives in its own folder, behind the
definition's hooks (such as what the faces add for it: `Presentation`).

A declaration reads in groups: who the protocol is (name, summary, options), what the
engine calls (`conduct=Conduct(run, describe_round, project)`), who takes part
(`participants=Participants(roles, min_agents=2)`), and what the faces add
(`presentation=Presentation(phase_titles=..., status_lines=..., report_sections=...,
turn_reading=...)`); these
and the rest (flags, hooks) only where a protocol differs from the default.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar, get_args, get_origin

from msgspec import Struct, field

from moot.config import AgentConfig, RunConfig, Section, read
from moot.config.reading import annotation_of
from moot.engine.session import Session
from moot.types import Event, Outcome, RoundSummary

if TYPE_CHECKING:  # (a protocol's script is read only by `moot bench`: not at a run's start-up)
    from moot.protocols.scripting import Script

__all__ = [
    "ASSUMED_MAX_TOKENS",
    "Conduct",
    "Flag",
    "Participants",
    "Presentation",
    "Projected",
    "Projection",
    "ProtocolDefinition",
    "ReportSection",
    "Role",
    "RoundsNeeded",
    "agents_only",
    "completion_cap",
    "no_rounds",
]

OptionsT = TypeVar("OptionsT", bound=Section)


class Role(Struct, frozen=True):
    """A group of participants: their alias prefix (`agent` -> agent_a...), the salt of their
    seeded alias shuffle, their configs in the order given, and whether they judge others'
    work (a verdict, a ranking, a pick): a judge needs a fresh context, so no inline agent
    (the user's coding agent, models/inline.py) may be one."""

    prefix: str
    salt: str
    members: Sequence[AgentConfig]
    judges: bool = False


class Projected(Struct, frozen=True):
    """What one participant may be asked before the run ends: the fewest and the most calls
    (the most when every cap is reached: every round, every re-ask), and the prompt tokens
    of its largest prompt (an estimate: task, instructions and the texts it is shown, each
    at most its completion cap)."""

    member: AgentConfig
    role: str
    fewest: int
    most: int
    prompt_tokens: int
    # Whether the protocol cuts what it shows this participant to fit its model's context
    # window (the arena's budget), so that no call asks more than the window holds; False: a
    # prompt the window cannot hold with its answer is sent as it is, and the model refuses
    # it (the call fails); None: the protocol does not say.
    cut_to_window: bool | None = None


Projection = list[Projected]


class RoundsNeeded(Struct, frozen=True):
    """The fewest rounds (the option `--rounds` sets) in which a run can reach what the
    protocol ends on (`goal`, a verb: "converge"), and why, as a clause (refine: "the
    incumbent must win convergence_k = 2 passes in a row"). A run capped below them still
    runs, but cannot reach it: `moot run` says so before it starts."""

    rounds: int
    goal: str
    why: str


# A section a protocol adds to the reports: (title, Markdown). Its text may quote models: the
# protocol fences or quotes it in Markdown, and report.html renders it as untrusted Markdown.
ReportSection = tuple[str, str]

# The completion cap a projection assumes for an agent that sets no `max_tokens`.
ASSUMED_MAX_TOKENS = 4096


def completion_cap(member: AgentConfig) -> int:
    """The most tokens one answer of `member` may take, for projections."""
    return member.max_tokens or ASSUMED_MAX_TOKENS


def agents_only(config: RunConfig, options: Any) -> list[Role]:
    """The default participants: the configured agents."""
    return [Role("agent", "aliases", config.agents)]


def no_rounds(entry: Mapping[str, Any], options: Any) -> RoundSummary | None:
    return None


class Flag(StrEnum):
    """The CLI flags of `moot run` that set an option of the protocol that runs. A definition's
    `flags` maps each flag it takes to that option's name in its own section; any other flag
    is refused with "the <name> protocol does not take ..."."""

    ROUNDS = "rounds"  # --rounds N: the most rounds, shown as "round 2 of N"
    VERIFY = "verify"  # --verify CMD: extends a list of commands
    SAMPLES = "samples"  # --samples K: answers asked of every agent
    INPUT = "input"  # --input FILE: the file's text (a text to start from)
    PICK = "pick"  # --pick MODE: who picks a code task's winner
    PRESET = "preset"  # --preset NAME: a Literal of names; a preset implies its protocol
    SHUFFLE = "shuffle"  # --no-shuffle sets it false: keep the participants' given order
    LAYERS = "layers"  # --layers L: layers of answers before the final answer (moa)


def _literal_values(annotation: Any) -> tuple[str, ...]:
    """The values of the Literal types in an annotation (`Literal["a", "b"] | None`: a, b)."""
    if get_origin(annotation) is Literal:
        return tuple(str(value) for value in get_args(annotation))
    return tuple(value for arg in get_args(annotation) for value in _literal_values(arg))


class Conduct(Struct, Generic[OptionsT], frozen=True):
    """What the engine calls of a protocol: `run` it in a session on a task, read one of its
    round entries (`Outcome.details["rounds"]`) as faces show it (`describe_round`; None: not a
    round entry), and its worst case before anything runs (`project`: `moot run --dry-run`,
    the `--max-cost` check; None: no projection)."""

    run: Callable[[Session, str, OptionsT], Awaitable[Outcome]]
    describe_round: Callable[[Mapping[str, Any], OptionsT], RoundSummary | None] = no_rounds
    project: Callable[[RunConfig, OptionsT], Projection] | None = None


class Participants(Struct, Generic[OptionsT], frozen=True):
    """Who takes part in a protocol: its `roles` for a config (default: the agents alone), and
    how many agents it needs (`max_agents` None: no bound). Called, it gives the roles."""

    roles: Callable[[RunConfig, OptionsT], list[Role]] = agents_only
    min_agents: int = 1
    max_agents: int | None = None

    def __call__(self, config: RunConfig, options: OptionsT) -> list[Role]:
        return self.roles(config, options)


class Presentation(Struct, frozen=True):
    """What the faces add for a protocol.

    `phase_titles`: how report.html titles its phases ("evaluate" -> "Critiques"); a phase not
    named here is titled from its name. `status_lines`: what `moot status` prints under the
    live board, from the session's journal events (so a paused or running session shows it
    too; the first event is `begin`). `report_sections`: sections report.md, `moot show` and
    report.html add after the code changes, from the outcome's details ({} while there is no
    result: running, paused, crashed) and the journal events. `turn_reading`: a reply read in
    the report's words, shown as its summary (a step id, the reply's text and the outcome's
    details -> one line, or None for the generic summary): a verdict naming a side by its
    letter, read as the agent that side was."""

    phase_titles: Mapping[str, str] = field(default_factory=dict)
    status_lines: Callable[[list[Event]], list[str]] | None = None
    report_sections: Callable[[Mapping[str, Any], list[Event]], list[ReportSection]] | None = None
    turn_reading: Callable[[str, str, Mapping[str, Any]], str | None] | None = None


class ProtocolDefinition(Struct, Generic[OptionsT], frozen=True):
    """Everything moot needs to know about a protocol.

    What every protocol needs: `name`, `summary`, `options`, what the engine calls of it
    (`conduct`); who takes part and how many agents it needs (`participants`), the CLI flags it
    takes (`flags`), whether it runs code tasks.

    Hooks, for a protocol that needs them: defaults for the shared sections (`defaults`), a
    change to the shared config (`adjust`), a task when none is given (`default_task`), where
    its sessions go (`sessions_root`), checks of the raw config (`check`), scripted replies
    (`script`), what a recorded reply stands for (`stands_for`), what the faces add for it
    (`presentation`), and the rounds a run needs to reach its end (`rounds_needed`).

    An installed package offers a protocol by naming its definition in its `moot.plugins`
    entry points (moot/plugins/): `plugin_kind` says what it is."""

    plugin_kind: ClassVar[str] = "protocol"
    name: str
    summary: str  # one line for `moot run --help` and `moot validate`
    options: type[OptionsT]
    conduct: Conduct[OptionsT]
    participants: Participants[OptionsT] = field(default_factory=Participants)
    # Each CLI flag it takes -> the option of its section that the flag sets.
    flags: Mapping[Flag, str] = field(default_factory=dict)
    # Whether it runs code tasks (`--repo`, `[code]`): its agents' turns go through
    # protocols/codework.py when `Session.code_task`. Others refuse a code task.
    code_tasks: bool = False

    # Hooks.
    # Defaults for the shared sections (`limits`, `engine`) that a config leaves unset.
    defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Adjust the shared config to the options (e.g. no retries in a deterministic mode).
    adjust: Callable[[RunConfig, OptionsT], RunConfig] | None = None
    # The task when none is given (for example a topic in the protocol's options).
    default_task: Callable[[OptionsT], str | None] | None = None
    # Where sessions go when the options say (plays MOOT_HOME), else None.
    sessions_root: Callable[[OptionsT], Path | None] | None = None
    # Problems of the raw config data (a dict as read from the file) that its Struct cannot see,
    # such as files named outside the working folder; each as `dotted.path: message`.
    check: Callable[[Mapping[str, Any], Path], list[str]] | None = None
    # How its asks are answered for a scripted persona (protocols/scripting.py; `moot bench
    # --suite adversarial` runs the protocols that have one): a Script, or where one is
    # ("package.module:NAME"), imported by `scripted()`: a run needs none, and importing the
    # scripts cost every start 0.6 ms.
    script: Script | str | None = None
    # The answer text a recorded agent reply stands for (reply, its prompt, position id -> text
    # of the answers read so far): "" when it holds none, None to read it as any reply (its
    # `<solution>` or answer field). `moot bench` reads journals with it where result.json has
    # no claims.
    stands_for: Callable[[str, str, Mapping[str, str]], str | None] | None = None
    presentation: Presentation = field(default_factory=Presentation)
    # What its judges, critics or losing sides said the picked answer should change, for a
    # chairman's synthesis (protocols/synthesis.py), from the outcome's details and the journal
    # events; None: the outcome's disagreements and the answers not picked.
    feedback: Callable[[Mapping[str, Any], list[Event]], list[str]] | None = None
    # The rounds a run needs to reach its end (refine: convergence_k passes); None: one round
    # can. `moot run` warns before a run whose rounds cap is below them, and its one-round
    # demonstration of the embedded model gets one round more than these instead.
    rounds_needed: Callable[[OptionsT], RoundsNeeded] | None = None
    # Its own last stage is a chairman's synthesis (read and checked by protocols/synthesis.py),
    # on unless `[synthesis] enabled = false`: no synthesis is asked after it.
    synthesizes: bool = False

    def scripted(self) -> Script | None:
        """Its `script`, imported from the place the record names."""
        if isinstance(self.script, str):
            module, _, name = self.script.partition(":")
            found: Script = getattr(importlib.import_module(module), name)
            return found
        return self.script

    @property
    def presets(self) -> tuple[str, ...]:
        """The names `--preset` takes: the Literal values of the option it sets."""
        option = self.flags.get(Flag.PRESET)
        if option is None:
            return ()
        return _literal_values(annotation_of(self.options, option))

    def options_from(self, config: Mapping[str, Any] | None) -> OptionsT:
        """The options recorded in a session's config (its begin event); defaults for a
        section that is missing or no longer valid, so old sessions still display."""
        raw = (config or {}).get(self.name)
        try:
            return read(self.options, raw if isinstance(raw, dict) else {})
        except ValueError:
            return self.options()

    def max_rounds(self, options: Any) -> int | None:
        option = self.flags.get(Flag.ROUNDS)
        value = getattr(options, option, None) if option else None
        return value if isinstance(value, int) else None

    def short_of_rounds(self, options: Any) -> RoundsNeeded | None:
        """What a run with `options` needs when its rounds cap is below it; None when the cap
        leaves it reachable (or the protocol has no rounds)."""
        cap = self.max_rounds(options)
        needed = self.rounds_needed(options) if self.rounds_needed is not None else None
        if cap is None or needed is None or cap >= needed.rounds:
            return None
        return needed
