"""One prompt text from a conversation, for backends that take a single prompt (CLI agents,
Cursor Cloud Agents, raw model commands with a chat template)."""

from __future__ import annotations

from collections.abc import Sequence

from moot.errors import ConfigError
from moot.types import Message

__all__ = ["TEMPLATES", "render_transcript"]

TEMPLATES = ("plain", "chatml", "llama3", "gemma")


def render_transcript(messages: Sequence[Message], template: str = "plain") -> str:
    if template == "plain":
        return _plain(messages)
    if template == "chatml":
        turns = [f"<|im_start|>{m.role}\n{m.content}<|im_end|>\n" for m in messages]
        return "".join(turns) + "<|im_start|>assistant\n"
    if template == "llama3":
        turns = [
            f"<|start_header_id|>{m.role}<|end_header_id|>\n\n{m.content}<|eot_id|>"
            for m in messages
        ]
        return (
            "<|begin_of_text|>"
            + "".join(turns)
            + ("<|start_header_id|>assistant<|end_header_id|>\n\n")
        )
    if template == "gemma":  # no system role: it opens the first user turn
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        parts, pending = [], system
        for m in messages:
            if m.role == "system":
                continue
            text = f"{pending}\n\n{m.content}" if pending and m.role == "user" else m.content
            pending = "" if m.role == "user" else pending
            role = "model" if m.role == "assistant" else "user"
            parts.append(f"<start_of_turn>{role}\n{text}<end_of_turn>\n")
        return "".join(parts) + "<start_of_turn>model\n"
    raise ConfigError(f"unknown chat template {template!r}; use one of {', '.join(TEMPLATES)}")


def _plain(messages: Sequence[Message]) -> str:
    system = [m.content for m in messages if m.role == "system"]
    turns = [m for m in messages if m.role != "system"]
    head = "\n\n".join(system)
    if len(turns) == 1 and turns[0].role == "user":
        return f"{head}\n\n{turns[0].content}" if head else turns[0].content
    names = {"user": "User", "assistant": "You (earlier)"}
    body = "\n\n".join(f"### {names[m.role]}\n{m.content}" for m in turns)
    intro = "The conversation so far follows; answer the last User message.\n\n"
    return (f"{head}\n\n" if head else "") + intro + body
