"""The Session: the only way protocol code touches the world.

A protocol asks models, draws randomness and runs shell commands through a Session, naming each
effect with a stable step id. A finished effect is journaled (fsync'd) before its result is
returned. Resuming is catch-up: the protocol runs again from the top and every journaled step
returns its recorded result (`_catch_up`, the journal's effects by step id) without calling
anything, so the run reaches the point where it stopped and goes on; in replay mode a missing
step is an error instead of a call.

The Session keeps the journal of steps; where a live answer comes from (the response cache or
a model call, engine/calls.py) and a code task's effects in its worktrees
(engine/code_effects.py) are parts it composes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from msgspec.structs import asdict

from moot import lazy
from moot.config import EngineConfig, Limits
from moot.engine.agent import Agent
from moot.engine.calls import ModelCalls, Sleep, deadline
from moot.engine.code_effects import CodeEffects, CodeTask
from moot.engine.copies import FolderCopies
from moot.engine.inbox import Inbox, with_notes
from moot.engine.journal import Journal
from moot.engine.limits import Budget, worst_case
from moot.engine.replies import masked, settle
from moot.engine.requests import request_digest, same_request
from moot.engine.standing import Standing
from moot.engine.store import SessionFolder
from moot.errors import Interrupted, LimitReached, ReplayIncomplete
from moot.models.keys import known_secrets
from moot.types import (
    Completion,
    Event,
    EventKind,
    Message,
    Request,
    RoundSummary,
    dump,
    estimate_tokens,
    load,
    parse_spec,
)

# Imported where a session uses them (a cache, a repository, a human's choice): a question
# starts without them.
if TYPE_CHECKING:
    from moot.code.workspace import CodeWorkspace
    from moot.engine import choice as choosing
    from moot.engine.cache import ResponseCache
    from moot.engine.choice import Chooser
    from moot.engine.shell import ShellResult
else:
    (choosing,) = lazy.modules("moot.engine", "choice")  # `choice` is a method here

# Agent and Sleep live in engine/agent.py and calls.py (the lifecycle and the library face
# import them from here); a Chooser and the default one, `read_choice`, in engine/choice.py.
__all__ = [
    "STOP_FILE",
    "Agent",
    "Mode",
    "Session",
    "Sleep",
    "Subscriber",
]

T = TypeVar("T")
Mode = Literal["live", "replay"]
Subscriber = Callable[[Event], None]
STOP_FILE = "stop"  # `moot stop` writes it in the session folder; asks not yet begun stop
CHECKED = "checked/"  # the steps of the notes that hold a rule's verdict (`Session.checked`)
# random.Random's allocation, and the seeding in C (`_random.Random.seed`) that its `seed` ends in
_NEW_RANDOM, _SEED_RANDOM = random.Random.__new__, vars(random.Random.__mro__[1])["seed"]


def _clean(text: str) -> str:
    # Lone surrogates from a provider would make the journal line unencodable.
    return text.encode("utf-8", "replace").decode("utf-8")


class Session(CodeTask, FolderCopies):
    def __init__(
        self,
        *,
        folder: SessionFolder,
        journal: Journal,
        task: str,
        seed: int,
        agents: Sequence[Agent],
        engine: EngineConfig,
        limits: Limits,
        mode: Mode = "live",
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.time,
        retry_failed: bool = False,
        cache: ResponseCache | None = None,
        code: CodeWorkspace | None = None,
        chooser: Chooser | None = None,
    ) -> None:
        """`retry_failed`: recorded failed calls are asked again (resuming a session that
        failed, or paused for an outage, once the cause is fixed), and so is a recorded ask
        whose prompt differs from today's: it was asked without what is now asked again.
        `code`: the workspace of a code task (None: a question). `chooser`: how a human choice
        is read (default: a line of standard input)."""
        self.code = code
        self._retrying = retry_failed and mode == "live"
        self._chooser = chooser
        self.folder = folder
        self.journal = journal
        self._told = len(journal.events)  # the faces hear of later events, in journal order
        self.task = task
        self.seed = seed
        self.agents = list(agents)
        self.mode = mode
        self.engine = engine
        self.limits = limits
        self._clock = clock
        self._subscribers: list[Subscriber] = []
        # catch-up: every effect the journal holds, by step id, answered from here on resume
        self._catch_up: dict[str, Event] = {}
        self._warned: set[str] = {
            e.step for e in journal.events if e.kind == "warning" and e.step is not None
        }
        self._used: set[str] = set()
        self._noted = {
            e.step: e.data for e in journal.events if e.kind == EventKind.NOTE and e.step
        }
        self.standing = Standing.for_aliases({a.alias: a.spec for a in self.agents})
        self._completions: dict[str, Completion] = {}  # validated once, reused by ask
        self._notes = {e.data.get("message") for e in journal.events if e.kind == "warning"}
        self._inbox = Inbox(folder.path, journal.events)  # a person's notes (engine/inbox.py)
        read: dict[int, Completion] = {}  # by event: the standing takes them as they are
        for event in journal.events:
            if event.kind == EventKind.ASK and event.step:
                completion = load(event.data["completion"], Completion)
                if event.seq is not None:
                    read[event.seq] = completion
                if retry_failed and not completion.ok:
                    self._catch_up.pop(event.step, None)
                    continue
                self._completions[event.step] = completion
            if event.kind in (EventKind.ASK, EventKind.SHELL, EventKind.CODE) and event.step:
                self._catch_up[event.step] = event
        self.standing.absorb(journal.events, read)
        self.budget = Budget(limits, journal.events, clock)
        self._calls = ModelCalls(  # engine/calls.py: the response cache and live calls
            cache=cache,
            engine=engine,
            limits=limits,
            sleep=sleep,
            signal=self.signal,
            record=self.record,
            warn=self.warn,
            events=journal.events,
            cwd=self._call_cwd,
            folder=str(folder.path),
        )
        self._effects = CodeEffects(
            code, once=self._once, signal=self.signal, sandbox=folder.path / "sandbox"
        )
        self.calls_made = 0  # model calls this process made (not replayed)
        self._copying = {}  # archives being written off the event loop (engine/copies.py)
        self._waiting = {}  # archives to write when the loop is idle (engine/copies.py)

    # -- faces ------------------------------------------------------------------------------
    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def signal(self, kind: EventKind | str, step: str | None = None, **data: Any) -> None:
        """Tell the faces something without journaling it."""
        self._notify(Event(kind=EventKind(kind), step=step, data=data, ts=self._clock()))

    def note(self, step: str, **data: Any) -> None:
        """Journal something the protocol derived (say, the phrases it scrubbed from a text
        shown to another agent), once per step id: a resume or replay that derives it again
        adds nothing."""
        if self.mode == "replay" or step in self._noted:
            return
        self._noted[step] = self.record(EventKind.NOTE, step, **data).data

    def checked(
        self, rule: str, texts: Sequence[str], check: Callable[[], str | None]
    ) -> str | None:
        """A rule's verdict on texts of this session (why a reply is no answer, or None), run
        once per session: journaled as a note keyed by the rule and a digest of the texts, and
        read back on resume and replay instead of run again. So a resume costs no checks, and
        it acts on the verdict the run acted on even where a newer moot judges otherwise. The
        note is written with the next line, with no fsync of its own (`Journal.defer`: a
        crash that loses it costs one check on resume)."""
        digest = hashlib.blake2b(rule.encode(), digest_size=16)
        for text in texts:
            data = text.encode("utf-8", "surrogatepass")
            digest.update(len(data).to_bytes(8, "big"))
            digest.update(data)
        step = f"{CHECKED}{rule}/{digest.hexdigest()}"
        noted = self._noted.get(step)
        if noted is None:
            problem = check()
            if self.mode == "replay":
                return problem
            event = self.journal.defer(self._event(EventKind.NOTE, step, {"problem": problem}))
            noted = self._noted[step] = event.data
        problem = noted.get("problem")
        return problem if isinstance(problem, str) else None

    def noted(self, step: str) -> dict[str, Any] | None:
        """What the journal noted at `step` (`note`), as journaled; None if nothing."""
        return self._noted.get(step)

    def round_done(self, step: str, summary: RoundSummary | None) -> None:
        """Tell the faces how a round ended (its score or tally), as a typed summary."""
        if summary is not None:
            self.signal(EventKind.ROUND_RESULT, step, **dump(summary))

    def record(self, kind: EventKind | str, step: str | None = None, **data: Any) -> Event:
        """Journal a durable event (fsync'd) and tell the faces. Known keys are masked in
        every string of it first (a warning or a stop quoting an error, a shell's output)."""
        event = self.journal.append(self._event(kind, step, data))
        self._tell_durable()
        return event

    async def _commit(self, kind: EventKind | str, step: str | None = None, **data: Any) -> Event:
        """`record` for an effect's result: effects that finish together share one fsync
        (Journal.commit); each returns, and the faces hear of it, once it is durable."""
        event = await self.journal.commit(self._event(kind, step, data))
        self._tell_durable()
        return event

    def _tell_durable(self) -> None:
        """Tell the faces of every event on disk they have not heard of, in journal order: an
        fsync covers the lines written before it, so an answer whose commit is still waiting
        is heard before a later line an `append` made durable (faces see the journal's order)."""
        events, durable = self.journal.events, self.journal.durable
        while self._told < durable:
            event = events[self._told]
            self._told += 1
            if event.kind != EventKind.NOTE or not (event.step or "").startswith(CHECKED):
                self._notify(event)  # a verdict (`checked`) is the journal's memo, not news

    def _event(self, kind: EventKind | str, step: str | None, data: dict[str, Any]) -> Event:
        if known_secrets():
            data = masked(data)
        return Event(kind=EventKind(kind), step=step, data=data, ts=self._clock())

    def warn(self, message: str) -> None:
        """Journal a warning once per session (a message journaled by an earlier run counts).
        Replay writes nothing: the journal is read-only there."""
        if message not in self._notes and self.mode == "live":
            self._notes.add(message)  # no step: a step's warning means its prompt changed
            self.record("warning", message=message)

    def _notify(self, event: Event) -> None:
        self.standing.apply(event)
        for subscriber in self._subscribers:
            subscriber(event)

    @property
    def cache(self) -> ResponseCache | None:
        """The response cache (--cache); None: every ask calls its model."""
        return self._calls.cache

    @cache.setter
    def cache(self, cache: ResponseCache | None) -> None:
        self._calls.cache = cache

    # -- agents -----------------------------------------------------------------------------
    def agent(self, alias: str) -> Agent:
        for agent in self.agents:
            if agent.alias == alias:
                return agent
        raise KeyError(alias)

    @property
    def aliases(self) -> list[str]:
        return [a.alias for a in self.agents]

    @property
    def specs(self) -> dict[str, str]:
        """Alias -> model spec, for what a protocol says of its agents (a trust statement names
        a tiny model); never for a prompt."""
        return {a.alias: a.spec for a in self.agents}

    @property
    def meta(self) -> dict[str, Any]:
        """The session's begin record: task, resolved config, seed, aliases, versions."""
        events = self.journal.events
        return events[0].data if events and events[0].kind == EventKind.BEGIN else {}

    @property
    def started_at(self) -> float | None:
        """When the session began (the begin event's journaled time)."""
        events = self.journal.events
        return events[0].ts if events and events[0].kind == EventKind.BEGIN else None

    def enforces_schema(self, alias: str) -> bool:
        """Whether `alias`'s model constrains its output to a JSON schema (constrained
        decoding), as recorded when the session began, so resume and replay agree."""
        recorded = self.meta.get("schema_enforced")
        if isinstance(recorded, dict):
            return bool(recorded.get(alias, False))
        return False  # sessions from before the record: as they ran

    def context_window(self, alias: str) -> int:
        model = self.agent(alias).model
        if model is not None:
            return model.capabilities.context_window
        return int(self.meta.get("context_windows", {}).get(alias, 128_000))

    def spent(self) -> tuple[int, float]:
        """Tokens and known USD of the asks this run of the protocol has reached so far,
        recorded answers included. Unlike `tally` (which on resume starts with everything
        journaled), this is the same at the same point of a live run, a resume and a replay,
        so a protocol may decide on it (a tournament's budget shares)."""
        tokens, cost = 0, 0.0
        for step in sorted(self._used):  # a fixed order: float sums must not vary
            event = self._catch_up.get(step)
            if event is None or event.kind != EventKind.ASK:
                continue
            completion = self._completions.get(step) or load(event.data["completion"], Completion)
            tokens += completion.usage.total
            cost += completion.cost or 0.0
        return tokens, cost

    @property
    def steps_reached(self) -> frozenset[str]:
        """The step ids this run of the protocol has reached, recorded ones included."""
        return frozenset(self._used)

    def asked(self, prefix: str) -> int:
        """Model calls this run of the protocol has reached under step `prefix`, recorded
        answers included: like `spent`, the same at the same point of a live run, a resume and
        a replay (a guardrail on calls per task decides on it)."""
        count = 0
        for step in self._used:
            event = self._catch_up.get(step)
            if step.startswith(prefix) and event is not None and event.kind == EventKind.ASK:
                count += 1
        return count

    # -- randomness -------------------------------------------------------------------------
    def rng(self, step: str) -> random.Random:
        """A generator derived from the session seed and the step: the same on every resume.
        It is `random.Random(n)` for the step's number n, made without the Python layers of its
        `__init__` and `seed` (a resume makes one per recorded ask and quote, two thousand in
        the benchmark): seeded in C with n, `gauss_next` unset, as those layers leave it."""
        digest = hashlib.sha256(f"{self.seed}/{step}".encode()).digest()
        generator = _NEW_RANDOM(random.Random)
        _SEED_RANDOM(generator, int.from_bytes(digest[:8], "big"))
        generator.__dict__["gauss_next"] = None
        return generator

    def shuffle(self, items: Iterable[T], *, step: str) -> list[T]:
        result = list(items)
        self.rng(step).shuffle(result)
        return result

    def choice(self, items: Sequence[T], *, step: str) -> T:
        return self.rng(step).choice(list(items))

    # -- time -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def deadline(self, seconds: float | None) -> Iterator[None]:
        """Model calls started inside this block must end within `seconds` of entering it
        (a round's time limit). A call still running then fails as a timeout, one not started
        yet fails at once, neither is retried, and both are journaled like any failure, so a
        resume or replay sees the same. Time counts from entering the block in this run."""
        with deadline(seconds):
            yield

    def recorded_at(self, step: str) -> float | None:
        """When the journal recorded `step` (its event's timestamp): journaled data, the same
        on every resume and replay."""
        event = self._catch_up.get(step)
        return event.ts if event is not None else None

    def _call_cwd(self, alias: str, step: str) -> tuple[str | None, bool]:
        """Where a CLI coding agent's call runs and whether read-only (engine/code_effects.py);
        other models: no folder."""
        if self.code is not None and self.edits_in_place(alias):
            return self._effects.call_tree(alias, step)
        return None, False

    # -- effects ----------------------------------------------------------------------------
    def _claim(self, step: str) -> None:
        if step in self._used:
            raise RuntimeError(f"step id {step!r} used twice in one run: step ids must be unique")
        self._used.add(step)

    async def gather(self, *awaitables: Awaitable[T]) -> list[T]:
        """Run effects concurrently. Every one finishes (and is journaled) before a stop
        (a limit reached by any of them) is raised, so no paid answer is thrown away."""
        results = await asyncio.gather(*awaitables, return_exceptions=True)
        stop = next((r for r in results if isinstance(r, LimitReached)), None)
        failure = next((r for r in results if isinstance(r, BaseException)), None)
        if stop is not None:
            raise stop
        if failure is not None:
            raise failure
        return [r for r in results if not isinstance(r, BaseException)]

    async def ask(
        self,
        alias: str,
        messages: Sequence[Message],
        *,
        step: str,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """One model call, or its recorded result. A person's notes to the agent
        (`moot say`) join the prompt of its next live ask, journaled on that step first."""
        self._claim(step)
        agent = self.agent(alias)
        config = agent.config
        if self.mode == "live" and step not in self._catch_up:
            for note in self._inbox.new_for(alias):
                self._inbox.hold(self.record(EventKind.HUMAN, step, **asdict(note)))
        request = Request(
            messages=with_notes(messages, self._inbox.held(step)),
            temperature=config.temperature,
            max_tokens=max_tokens or config.max_tokens,
            seed=self.rng(step).randrange(2**31),
            json_schema=json_schema,
            timeout=config.timeout or self.limits.call_timeout,
            meta={"step": step, "agent": alias},
        )
        digest = request_digest(request)
        recorded = self._catch_up.get(step)
        changed = recorded is not None and not same_request(recorded.data, request, digest)
        if self._retrying and changed:
            recorded = None  # answered without a failed step's answer, now asked again
            self._completions.pop(step, None)
        if recorded is not None:
            if changed and step not in self._warned:
                self._warned.add(step)
                # A resume journals it; a replay only tells the faces (it writes nothing: an
                # old session replayed by newer code must still match its result.json).
                tell = self.record if self.mode == "live" else self.signal
                tell(
                    "warning",
                    step,
                    message="the prompt differs from the recorded one (code changed since it "
                    "was asked); the recorded answer is kept",
                )
            return self._completions[step]
        if self.mode == "replay":
            raise ReplayIncomplete(step, "a re-ask" if step.endswith("/reask") else "an ask")
        if (self.folder.path / STOP_FILE).exists():
            raise Interrupted(f"stopped by moot stop before {step}")
        estimate = sum(estimate_tokens(m.content) for m in request.messages)
        hit = await self._calls.lookup(agent, request)
        cached: dict[str, Any] = {}  # a hit is an ordinary ask event that says where it came from
        # A call holds its worst case against the limits until it is journaled (engine/limits.py)
        held: contextlib.AbstractAsyncContextManager[None] = contextlib.nullcontext()
        if hit is None:
            worst = worst_case(agent.model, estimate, request.max_tokens)
            held = self.budget.reserved(self.standing.agents.values, worst)
        async with held:
            if hit is not None:
                completion = self._received(hit.completion, alias, step)
                cached["cache"] = self._calls.hit_note(hit)
            else:
                self.signal("ask_started", step, agent=alias, est_prompt_tokens=estimate)
                called = await self._calls.call(agent, request, step)
                completion = self._received(called, alias, step)
                self.calls_made += 1
            self._catch_up[step] = await self._commit(
                "ask",
                step,
                agent=alias,
                prompt=_clean(request.prompt),
                request_digest=digest,
                est_prompt_tokens=estimate,
                completion=dump(completion),
                **cached,
            )
        if hit is None:
            await self._calls.save(agent, request, completion)
        return completion

    def _received(self, completion: Completion, alias: str, step: str) -> Completion:
        """Every answer, from any provider or the cache, passes here once before it is
        journaled and returned: cut to `engine.max_reply_bytes` (with a warning), known keys
        masked (engine/replies.py)."""
        settled = settle(completion, self.engine.max_reply_bytes)
        if settled.truncated_from is not None and completion.truncated_from is None:
            self.warn(
                f"{self.agent(alias).label}'s reply to {step} was {settled.truncated_from:,} "
                f"bytes: cut to its first {self.engine.max_reply_bytes:,} (engine.max_reply_bytes)"
            )
        return settled

    async def shell(
        self, command: str, *, step: str, cwd: str | None = None, timeout: float | None = None
    ) -> ShellResult:
        """Run a shell command once; its exit code and output are journaled."""
        # Imported here: the process supervisor it runs under is only for runs with commands.
        from moot.engine.shell import ShellResult, run_shell

        self._claim(step)
        recorded = self._catch_up.get(step)
        if recorded is not None:
            return ShellResult.model_validate(recorded.data["result"])
        if self.mode == "replay":
            raise ReplayIncomplete(step, "a shell command")
        self.signal("shell_started", step, command=command)
        result = await run_shell(command, cwd=cwd, timeout=timeout or self.engine.shell_timeout)
        result_json = result.model_dump(mode="json")
        event = await self._commit("shell", step, command=command, result=result_json)
        # what the journal holds (keys masked): a resume sees the same output
        return ShellResult.model_validate(event.data["result"])

    # -- code tasks: the effects in CodeTask (engine/code_effects.py over code/workspace.py) --
    @property
    def code_task(self) -> bool:
        return self.code is not None

    def edits_in_place(self, alias: str) -> bool:
        """A CLI coding agent (or an inline one, the user's) edits its worktree itself; other
        models answer with a diff."""
        return parse_spec(self.agent(alias).spec).provider in ("cli", "inline")

    async def effect(self, step: str, what: str, compute: Callable[[], Awaitable[Any]]) -> Any:
        """Run an effect of the composition above the protocols once (the feature pipeline's
        tournament sessions, its lessons file) and journal its JSON result; on resume and
        replay return the journaled result and run nothing. `compute` must be safe to run again
        after a crash before its result was journaled."""
        return await self._once(step, what, None, compute)

    @property
    def run_began(self) -> float | None:
        """When this run of the session began (its last `run_started` event): what tells a
        step journaled by an earlier run from one of this run."""
        for event in reversed(self.journal.events):
            if event.kind == EventKind.RUN_STARTED:
                return event.ts
        return None

    async def _once(
        self,
        step: str,
        what: str,
        alias: str | None,
        compute: Callable[[], Awaitable[Any]],
        tree: str | None = None,
    ) -> Any:
        """Run an effect once and journal its JSON result as a `code` event; on resume and
        replay return the journaled result and touch nothing."""
        self._claim(step)
        recorded = self._catch_up.get(step)
        if recorded is not None:
            return recorded.data["result"]
        if self.mode == "replay":
            raise ReplayIncomplete(step, f"a code effect ({what})")
        result = await compute()
        where = {"tree": tree} if tree is not None and tree != alias else {}
        self._catch_up[step] = await self._commit(
            "code", step, what=what, agent=alias, result=result, **where
        )
        return self._catch_up[step].data["result"]  # as journaled (keys masked), as on resume

    async def ask_in(
        self,
        tree: str,
        alias: str,
        messages: Sequence[Message],
        *,
        step: str,
        read_only: bool = False,
    ) -> Completion:
        """`ask`, with a CLI coding agent working in worktree `tree` (one the protocol added)
        instead of its own, with its read-only arguments when `read_only`. Other models are
        asked as usual: their diff goes to `tree` by `apply_diff(..., tree=tree)`."""
        self._effects.work_in(tree, step, read_only=read_only)
        return await self.ask(alias, messages, step=step)

    async def choose(self, prompt: str, options: Sequence[str], *, step: str) -> str | None:
        """A human's choice among `options`, journaled (None: no choice made, left for later).
        Read through the session's chooser: by default a line of standard input."""
        self._claim(step)
        recorded = self._catch_up.get(step)
        if recorded is not None:
            value = recorded.data["result"]
            return str(value) if value is not None else None
        if self.mode == "replay":
            raise ReplayIncomplete(step, "a choice")
        picked = await choosing.chosen(self._chooser, prompt, options)
        self._catch_up[step] = await self._commit("code", step, what="choice", result=picked)
        return picked
