"""The plan as typed data (seed 004, "architect drafts a phased plan"): tasks with ids, titles,
the files they touch, acceptance criteria and the tasks they depend on. The architect writes it
as JSON; the tournament refines it as text; the user may edit the file before execution. Every
reading goes through `parse_plan`, which checks what pydantic cannot: unique ids, known
dependencies, no cycle."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot.deliberation.parsing import extract_json
from moot.errors import FormatError

__all__ = ["MAX_TASKS", "PLAN_SCHEMA", "PlanDoc", "TaskSpec", "parse_plan", "render_markdown"]

MAX_TASKS = 50  # a plan of more tasks is a plan to split, not one to run
_ID = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$"


class TaskSpec(BaseModel):
    """One task: what the developer is asked, what it touches, when it is done."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=_ID, description="short and unique: T1, T2, ...")
    title: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=20_000)
    phase: int = Field(default=1, ge=1, le=20)
    files: list[str] = Field(default_factory=list, description="paths it creates or edits")
    acceptance: list[str] = Field(default_factory=list, description="checks that say it is done")
    depends_on: list[str] = Field(default_factory=list, description="ids of earlier tasks")


class PlanDoc(BaseModel):
    """A phased plan; `tasks` in the order the architect gave them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str = Field(min_length=1, max_length=200)
    summary: str = Field(default="", max_length=20_000)
    tasks: list[TaskSpec] = Field(min_length=1, max_length=MAX_TASKS)

    def order(self) -> list[TaskSpec]:
        """The tasks in the order they run: every task after the tasks it depends on, else
        by phase, then as written (Kahn's algorithm, stable)."""
        position = {t.id: i for i, t in enumerate(self.tasks)}
        waiting = {t.id: set(t.depends_on) for t in self.tasks}
        done: list[TaskSpec] = []
        while waiting:
            ready = [t for t in self.tasks if t.id in waiting and not waiting[t.id]]
            ready.sort(key=lambda t: (t.phase, position[t.id]))
            first = ready[0]  # parse_plan refused cycles
            done.append(first)
            del waiting[first.id]
            for needs in waiting.values():
                needs.discard(first.id)
        return done

    def task(self, task_id: str) -> TaskSpec | None:
        return next((t for t in self.tasks if t.id == task_id), None)

    def needed_by(self, task_id: str) -> set[str]:
        """`task_id` and every task it depends on, directly or not."""
        found, todo = set(), [task_id]
        while todo:
            current = todo.pop()
            if current in found:
                continue
            found.add(current)
            spec = self.task(current)
            todo.extend(spec.depends_on if spec else [])
        return found

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def _text(most: int) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": most}


def _texts(items: int, chars: int) -> dict[str, Any]:
    return {"type": "array", "items": _text(chars), "maxItems": items}


_WRITTEN_ID = {"type": "string", "pattern": "^T[1-9][0-9]?$"}
_WRITTEN_TASK: dict[str, Any] = {
    "id": _WRITTEN_ID,
    "title": _text(80),
    "description": _text(300),
    "phase": {"type": "integer", "minimum": 1, "maximum": 9},
    "files": _texts(4, 60),
    "acceptance": _texts(3, 120),
    "depends_on": {"type": "array", "items": _WRITTEN_ID, "maxItems": 4},
}


def _strict(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


# The plan as a model whose decoder enforces a schema (the embedded model: llama.cpp's grammar)
# is asked to write it: bounded so that the longest plan it allows (5 tasks; about 6,000
# characters) closes within the architect's default token budget (options.plan_max_tokens),
# where a 135M model left to itself rambled past its cap and was cut mid-object. A plan read
# from a file or another model is checked against PlanDoc's wider bounds only.
PLAN_SCHEMA: dict[str, Any] = _strict(
    {
        "title": _text(80),
        "summary": _text(300),
        "tasks": {"type": "array", "items": _strict(_WRITTEN_TASK), "minItems": 1, "maxItems": 5},
    }
)


def _problems(doc: PlanDoc) -> list[str]:
    problems = []
    ids = [t.id for t in doc.tasks]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        problems.append(f"task ids must be unique: {', '.join(repeated)} repeat")
    known = set(ids)
    for t in doc.tasks:
        unknown = [d for d in t.depends_on if d not in known]
        if unknown:
            problems.append(f"task {t.id} depends on unknown tasks: {', '.join(unknown)}")
        if t.id in t.depends_on:
            problems.append(f"task {t.id} depends on itself")
    if not problems:
        cycle = _cycle(doc)
        if cycle:
            problems.append("the dependencies go round in a circle: " + " -> ".join(cycle))
    return problems


def _cycle(doc: PlanDoc) -> list[str]:
    """One dependency cycle as ids (first id repeated at the end), or []."""
    needs = {t.id: t.depends_on for t in doc.tasks}
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in needs.get(node, []):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return []

    for t in doc.tasks:
        if t.id not in state:
            found = visit(t.id)
            if found:
                return found
    return []


def parse_plan(text: str) -> PlanDoc:
    """The plan in `text` (a JSON object, fenced or not, as a model or a person wrote it),
    checked; a `FormatError` names every problem in words a re-ask can quote."""
    data: Any = extract_json(text)
    try:
        doc = PlanDoc.model_validate(data)
    except ValidationError as exc:
        listed = "; ".join(
            f"{'.'.join(str(p) for p in item['loc']) or 'the plan'}: {item['msg']}"
            for item in exc.errors()[:10]
        )
        raise FormatError(f"the plan does not fit its schema ({listed})") from None
    problems = _problems(doc)
    if problems:
        raise FormatError("; ".join(problems))
    return doc


_BLANKS = re.compile(r"\n{3,}")


def render_markdown(doc: PlanDoc) -> str:
    """The plan as a person reads it (plan.md; the JSON file is the one to edit)."""
    lines = [f"# {doc.title}", "", doc.summary, ""]
    for t in doc.order():
        after = f" (after {', '.join(t.depends_on)})" if t.depends_on else ""
        lines += [f"## {t.id}: {t.title}{after}", "", f"Phase {t.phase}.", "", t.description, ""]
        if t.files:
            lines += ["Files: " + ", ".join(f"`{f}`" for f in t.files), ""]
        if t.acceptance:
            lines += ["Done when:", *[f"- {a}" for a in t.acceptance], ""]
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip() + "\n"
