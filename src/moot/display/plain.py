"""One plain line per event, for logs and non-terminals (the live view prints the same lines
above its table for the events worth keeping in the scrollback)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TextIO

from moot import lazy
from moot.display.face import Face
from moot.text import clean_text, outcome_lines, plural, status_words, step_place
from moot.types import Event, RoundSummary, load
from moot.types import alias_label as label

if TYPE_CHECKING:
    from moot.engine.result import Result
    from moot.text import rounds
else:
    (rounds,) = lazy.modules("moot.text", "rounds")  # when a round ends

__all__ = ["PlainLog", "format_event", "result_lines"]


def _who(data: dict[str, Any]) -> str:
    return label(str(data.get("agent") or "")) if data.get("agent") else "-"


def _at(step: str, who: str | None = None) -> str:
    """Where an event happened, in words, for a line's start: 'Agent A, the first answers
    (solve)', 'round 1 (check)' (a JSON log keeps the step id)."""
    return ", ".join(part for part in (who, step_place(step) if step else "") if part)


def _tokens(completion: dict[str, Any]) -> int:
    usage = completion.get("usage") or {}
    return int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))


def _opened(data: dict[str, Any], reveal: bool) -> str:
    """A session's first line: its id and protocol, its agents (their models only with
    `reveal`) and, on a resume, how many journaled steps it starts after."""
    meta = data.get("meta") or {}
    aliases: dict[str, str] = meta.get("aliases") or {}
    agents = ", ".join(
        f"{label(a)} = {spec}" if reveal else label(a) for a, spec in aliases.items()
    )
    past = sum(1 for e in data.get("past") or () if e.kind in ("ask", "shell"))
    resumed = f"; resuming after {plural(past, 'journaled step')}" if past else ""
    return (
        f"session {data.get('session_id')} ({meta.get('protocol')}): "
        f"{plural(len(aliases), 'agent')} ({agents}){resumed}"
    )


def format_event(event: Event, *, reveal: bool = False) -> str | None:
    """The line for an event, or None for events not worth a line. Model names appear only
    with `reveal`."""
    line = _format(event, reveal)
    return None if line is None else clean_text(line)


def _format(event: Event, reveal: bool) -> str | None:
    data = event.data
    who = _who(data)
    step = event.step or ""
    at = _at(step, who if data.get("agent") else None)  # "Agent A, round 1 (evaluate)"
    where = _at(step)  # the place alone, where the line names its agent itself
    kind = event.kind
    if kind == "opened":
        return _opened(data, reveal)
    if kind == "ask_started":
        return f"{at}: thinking (~{data.get('est_prompt_tokens', 0)} tokens in)"
    if kind == "ask":
        completion = data.get("completion") or {}
        if completion.get("status") != "ok":
            failure = completion.get("failure") or {}
            kind_words = status_words(str(failure.get("kind")))  # "rate limit", not rate_limit
            return f"{at}: failed: {kind_words}: {failure.get('message')}"
        if data.get("cache"):  # answered by the response cache: no call, no cost
            return f"{at}: answered from the cache"
        return (
            f"{at}: done in {float(completion.get('latency') or 0):.1f}s "
            f"({_tokens(completion)} tokens)"
        )
    if kind == "attempt":
        failure = data.get("failure") or {}
        return (
            f"{at}: attempt {data.get('attempt')} failed "
            f"({status_words(str(failure.get('kind')))}); "
            f"retrying in {float(data.get('retry_in') or 0):.1f}s"
        )
    if kind == "shell_started":
        return f"{at}: running `{data.get('command')}`"
    if kind == "shell":
        result = data.get("result") or {}
        status = "timed out" if result.get("timed_out") else f"exit code {result.get('exit_code')}"
        return f"{at}: `{data.get('command')}` {status}"
    if kind == "round_result":
        result = load(data, RoundSummary)
        return f"{result.title.lower()}: {rounds.round_result(result)}"
    if kind == "context_fresh":
        return (
            f"{at}: context estimate {data.get('estimated_tokens')} tokens passed "
            f"the budget of {data.get('budget')}: fresh conversations from here"
        )
    if kind == "human":  # a person's note (moot say), joining this step's prompt
        return f"{where}: your note to {who}: {data.get('text', '')}"
    if kind == "warning":
        return f"warning: {at + ': ' if at else ''}{data.get('message', '')}"
    if kind == "limits_changed":
        limits = ", ".join(f"{k} {v}" for k, v in (data.get("limits") or {}).items())
        return f"limits changed: {limits}"
    if kind in ("stopped", "failed"):
        return str(data.get("message", kind))
    if kind == "finished":
        return f"finished: {status_words(str(data.get('status', '')))}"
    return None


def result_lines(result: Result) -> list[str]:
    """The lines that end a run's log: moot's finding, who changed their mind, and the model
    verdicts that moot's check does not bear out (none for an outcome without a finding)."""
    return [
        clean_text(line) for line in outcome_lines(result.finding, result.changes, result.verdicts)
    ]


class PlainLog(Face):
    def __init__(self, stream: TextIO | None = None, *, reveal: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.reveal = reveal

    def handle(self, event: Event) -> None:
        line = format_event(event, reveal=self.reveal)
        if line:
            print(line, file=self.stream, flush=True)

    def show_outcome(self, result: Result) -> None:
        for line in result_lines(result) if self.finding else []:
            print(line, file=self.stream, flush=True)

    @staticmethod
    def format(event: Event) -> str | None:
        return format_event(event)
