"""Inline delegation (seed 004's inline mode): the user's own coding agent answers an ask.

An `inline:` agent (`inline:claude`: the name is only its label) calls no model. When it is
asked, it writes a delegation under the session folder, `delegations/<step>.json` and a
readable `.md` twin: the prompt messages, the worktree of a code task, the response path and
the JSON schema the response must follow. The ask then stops the run (`Delegated`, a
`Waiting`: paused, exit 3) once the other asks of its phase have finished and been journaled.
The user's coding agent reads the delegation, writes the response file and runs
`moot resume ID`; the protocol runs again from the top, and this time the ask finds the
response: a valid one is its reply (journaled like any, cost 0), a malformed one its failure
with a message naming the file, a missing one pauses again.

An inline agent keeps its context between delegations, so it never judges: `Capabilities.inline`
marks it and the roles that judge refuse it (lifecycle/plan.py: make_models).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from moot.errors import Waiting
from moot.files import atomic_write
from moot.models.base import Capabilities, call_context
from moot.models.schema import schema_problem
from moot.types import (
    Completion,
    FailureKind,
    ModelSettings,
    Request,
    Spec,
    Usage,
    dump,
    estimate_tokens,
)

__all__ = [
    "DELEGATIONS",
    "MAX_RESPONSE_BYTES",
    "TEXT_SCHEMA",
    "Delegated",
    "InlineModel",
    "delegation_name",
    "pending",
]

DELEGATIONS = "delegations"  # the folder under the session folder
MAX_RESPONSE_BYTES = 1_000_000  # a response larger than this is refused, not read
# The response of an ask that wants free text.
TEXT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "the whole answer"}},
    "required": ["text"],
}


def delegation_name(step: str) -> str:
    """The file stem of a step's delegation: `r0/solve/agent_a` -> `r0--solve--agent_a`."""
    return re.sub(r"[^\w.-]+", "_", step.replace("/", "--")).strip("._") or "ask"


def response_path(folder: Path, step: str) -> Path:
    return folder / DELEGATIONS / f"{delegation_name(step)}.response.json"


def pending(session_folder: Path) -> list[Path]:
    """The delegations of a session still waiting for their response file, by name."""
    where = session_folder / DELEGATIONS
    if not where.is_dir():
        return []
    found = []
    for request in sorted(where.glob("*.json")):
        if request.name.endswith(".response.json"):
            continue
        if not (where / f"{request.stem}.response.json").exists():
            found.append(request)
    return found


class Delegated(Waiting):
    """An inline agent's ask waits for its response file. The message is read once the run
    has stopped, so it names every delegation its phase left waiting, not just the first."""

    def __init__(self, session_folder: Path, step: str) -> None:
        super().__init__(step)
        self.session_folder = session_folder
        self.step = step

    def __str__(self) -> str:
        waiting = pending(self.session_folder) or [
            self.session_folder / DELEGATIONS / f"{delegation_name(self.step)}.json"
        ]
        count = f"{len(waiting)} delegation{'s' if len(waiting) != 1 else ''}"
        names = ", ".join(str(p.with_suffix(".md")) for p in waiting)
        return (
            f"waiting for your coding agent: {count} to answer ({names}); for each, write the "
            "response file it names, in the JSON schema it gives, then continue with: "
            f"moot resume {self.session_folder.name}"
        )


class InlineModel:
    """An agent answered by the user's coding agent through delegation files."""

    capabilities = Capabilities(json_schema=True, seed=False, temperature=False, inline=True)

    def __init__(self, spec: Spec, settings: ModelSettings | None = None) -> None:
        self.spec = str(spec)
        self.label = spec.name or "inline"

    @classmethod
    def from_spec(cls, spec: Spec, settings: ModelSettings) -> InlineModel:
        return cls(spec, settings)

    def connection_key(self) -> str:
        return f"inline:{self.label}"

    async def aclose(self) -> None:
        return None

    async def complete(self, request: Request) -> Completion:
        context = call_context()
        if context is None or context.folder is None:
            return Completion.error(
                FailureKind.BAD_REQUEST,
                "an inline agent answers only inside a session (moot run), through delegation "
                "files in its folder",
                model=self.spec,
            )
        folder = Path(context.folder)
        answer = response_path(folder, context.step)
        if not answer.exists():
            self._delegate(folder, request, context.step, context.agent, context.cwd)
            raise Delegated(folder, context.step)
        return self._read(answer, request)

    def _delegate(
        self, folder: Path, request: Request, step: str, agent: str, cwd: str | None
    ) -> None:
        """Write the delegation (JSON for the coding agent, Markdown for a person)."""
        name = delegation_name(step)
        where = folder / DELEGATIONS
        where.mkdir(parents=True, exist_ok=True)
        schema = request.json_schema or TEXT_SCHEMA
        data = {
            "version": 1,
            "session": folder.name,
            "step": step,
            "agent": agent,
            "label": self.label,
            "messages": [dump(m) for m in request.messages],
            "worktree": cwd,
            "response_path": str(response_path(folder, step)),
            "response_schema": schema,
            "resume": f"moot resume {folder.name}",
        }
        atomic_write(where / f"{name}.json", json.dumps(data, indent=2, ensure_ascii=False))
        atomic_write(where / f"{name}.md", _markdown(data))

    def _read(self, answer: Path, request: Request) -> Completion:
        """The response file as this ask's reply, or its failure naming the file."""
        again = f"moot resume {answer.parents[1].name} --retry-failed"

        def bad(why: str) -> Completion:
            return Completion.error(
                FailureKind.BAD_RESPONSE,
                f"the inline response {answer} {why} (once it is fixed, `{again}` reads it again)",
                model=self.spec,
            )

        size = answer.stat().st_size
        if size > MAX_RESPONSE_BYTES:
            return bad(f"is {size:,} bytes, more than the {MAX_RESPONSE_BYTES:,} allowed")
        try:
            raw = answer.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return bad(f"cannot be read: {exc}")
        if not raw.strip():
            return bad("is empty")
        schema = request.json_schema or TEXT_SCHEMA
        problem = schema_problem(raw, schema)
        if problem is not None:
            return bad(f"does not fit its schema: {problem}")
        value = json.loads(raw)
        if request.json_schema is None:
            text = str(value["text"])
            if not text.strip():
                return bad('has an empty "text"')
        else:
            text = json.dumps(value, ensure_ascii=False)
        prompt = sum(estimate_tokens(m.content) for m in request.messages)
        usage = Usage(prompt_tokens=prompt, completion_tokens=estimate_tokens(text), estimated=True)
        return Completion(text=text, usage=usage, cost=0.0, model=self.spec)


def _markdown(data: dict[str, Any]) -> str:
    """The delegation as a person (or an agent) reads it."""
    lines = [
        f"# moot delegation: {data['step']}",
        "",
        f"Session `{data['session']}` asks you, as {data['agent']}, for one answer.",
        "",
    ]
    if data["worktree"]:
        lines += [f"Work in this git worktree (edit files there): `{data['worktree']}`", ""]
    lines += [
        f"Write your answer as JSON to `{data['response_path']}`, following this schema:",
        "",
        "```json",
        json.dumps(data["response_schema"], indent=2),
        "```",
        "",
        f"Then run `{data['resume']}`.",
        "",
        "## Messages",
        "",
    ]
    for message in data["messages"]:
        lines += [f"### {message['role']}", "", message["content"], ""]
    return "\n".join(lines)
