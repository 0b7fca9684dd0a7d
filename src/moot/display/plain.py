"""One plain line per event, for logs and terminals alike (the live view builds on the same
events)."""

from __future__ import annotations

import sys
from typing import TextIO

from moot.types import Event

__all__ = ["PlainLog"]


def _label(alias: str) -> str:
    return "Agent " + alias.rsplit("_", 1)[-1].upper() if alias else "-"


class PlainLog:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr

    def __call__(self, event: Event) -> None:
        line = self.format(event)
        if line:
            print(line, file=self.stream, flush=True)

    @staticmethod
    def format(event: Event) -> str | None:
        data = event.data
        who = _label(str(data.get("agent", "")))
        if event.kind == "ask_started":
            return f"{event.step}  {who} thinking (~{data.get('est_prompt_tokens', 0)} tokens in)"
        if event.kind == "ask":
            completion = data["completion"]
            if completion.get("status") != "ok":
                failure = completion.get("failure") or {}
                return (
                    f"{event.step}  {who} failed: {failure.get('kind')}: {failure.get('message')}"
                )
            usage = completion.get("usage", {})
            tokens = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
            return (
                f"{event.step}  {who} done in {completion.get('latency', 0):.1f}s ({tokens} tokens)"
            )
        if event.kind == "attempt":
            failure = data.get("failure") or {}
            return (
                f"{event.step}  {who} attempt {data.get('attempt')} failed "
                f"({failure.get('kind')}); retrying in {data.get('retry_in', 0):.1f}s"
            )
        if event.kind == "shell":
            return f"{event.step}  `{data['command']}` exit code {data['result']['exit_code']}"
        if event.kind == "warning":
            return f"warning: {event.step or ''} {data.get('message', '')}".replace("  ", " ")
        if event.kind == "context_fresh":
            return (
                f"{event.step}  context estimate {data.get('estimated_tokens')} tokens passed "
                f"the budget of {data.get('budget')}: fresh conversations from here"
            )
        if event.kind in ("stopped", "failed"):
            return str(data.get("message", event.kind))
        return None
