"""The plan phase (seed 004, steps 1-5):

    exploration = explorer(feature, the repository)      # a CLI agent reads a worktree of it;
                                                          # an API model a listing + chosen files
    guidance    = domain_expert(feature, exploration)
    plan        = architect(feature, exploration, guidance, lessons)   # typed JSON, checked
    for gate in 1..gate_revisions+1:
        plan = plan tournament(plan)                     # a refine session: 3 judges, k=2, 15
        verdict = critic(plan)                           # APPROVED / NEEDS_REVISION / REJECTED
        APPROVED: stop; REJECTED: stop with the reasons
        NEEDS_REVISION: plan = architect's revision(plan, reasons); again (bounded)

The approved plan is written as `plan.json` (to read and edit; `moot execute` validates it and
journals an edit as the user's change) and `plan.md`. The label is moot's: "chosen" only when
the plan is valid by moot's checks and the critic approved it; a critic's APPROVED over a plan
that moot cannot read never counts."""

from __future__ import annotations

import json
import re

from moot.config import AgentConfig
from moot.deliberation.anonymize import quote
from moot.engine.session import Session
from moot.engine.structured import REASK, ask_parsed
from moot.errors import FormatError, ProtocolAborted
from moot.pipeline import lessons, prompts
from moot.pipeline.document import PLAN_SCHEMA, PlanDoc, parse_plan, render_markdown
from moot.pipeline.options import PipelineOptions
from moot.pipeline.tournaments import play
from moot.protocols.shown import anonymous, nonce
from moot.text import plural
from moot.types import Finding, Message, Outcome, Step

__all__ = [
    "GATE_VERDICT",
    "gate_verdict",
    "plan_phase",
    "plan_tokens",
    "repo_of",
    "role",
    "warn_self_review",
]

GATE_VERDICT = re.compile(r"^\W*VERDICT\W*(APPROVED|NEEDS[_ ]REVISION|REJECTED)\W*$", re.M | re.I)


def role(s: Session, name: str) -> str:
    """The alias of the participant playing `name` (`developer_a`)."""
    alias = f"{name}_a"
    if alias not in s.aliases:
        raise RuntimeError(f"no participant plays {name}")
    return alias


def warn_self_review(s: Session, author: str, judge: str) -> None:
    """Say once when a role that evaluates is played by the model whose output it evaluates
    (one model given): a fresh context, but not the independent eye seed 004 asks for."""
    spec = s.specs.get(role(s, author))
    if spec is not None and spec == s.specs.get(role(s, judge)):
        s.warn(
            f"the {judge.replace('_', ' ')} is the {author.replace('_', ' ')}'s model ({spec}): "
            "it evaluates its own model's output; give two models (--models A --models B) or "
            f"set [pipeline.roles] {judge}"
        )


def gate_verdict(text: str) -> str | None:
    """The critic's verdict: its LAST verdict line (a quoted plan cannot forge an earlier one
    into counting), normalised; None when there is none."""
    found = GATE_VERDICT.findall(text)
    if not found:
        return None
    return str(found[-1]).upper().replace(" ", "_")


# The critic's verdict as a model whose decoder enforces a schema is asked for it: the embedded
# model, asked for a VERDICT line after its reasons, rambled until its 160-token cap cut the
# reply before any verdict. Its longest reply fits the 320 tokens its JSON answers may take.
GATE_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "problems": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 160},
            "maxItems": 3,
        },
        "verdict": {"type": "string", "enum": ["APPROVED", "NEEDS_REVISION", "REJECTED"]},
    },
    "required": ["problems", "verdict"],
    "additionalProperties": False,
}


def _judged(text: str) -> tuple[str | None, str]:
    """(verdict, reasons) of the critic's reply: GATE_SCHEMA's JSON, else a VERDICT line."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("verdict") in GATE_SCHEMA_VERDICTS:
        problems = data.get("problems")
        listed = [str(x) for x in problems] if isinstance(problems, list) else []
        return str(data["verdict"]), "\n".join(f"- {x}" for x in listed)
    return gate_verdict(text), GATE_VERDICT.sub("", text).strip()


GATE_SCHEMA_VERDICTS = ("APPROVED", "NEEDS_REVISION", "REJECTED")


def _quoted(s: Session, label: str, text: str, step: str, limit: int) -> str:
    return quote(
        label, anonymous(s, text, f"{step}/{label}"), nonce=nonce(s, f"{step}/{label}"), limit=limit
    )


async def _say(s: Session, alias: str, prompt: str, step: str) -> str:
    reply = await s.ask(alias, [Message(role="user", content=prompt)], step=step)
    if not reply.ok or not reply.text.strip():
        why = reply.failure.message if reply.failure else "an empty reply"
        raise ProtocolAborted(f"{alias} gave nothing at {step} ({why}); start again")
    return reply.text


async def _explore(s: Session, task: str, opts: PipelineOptions) -> str:
    alias = role(s, "explorer")
    step = Step.at(0, "explore", alias, prefix="p")
    if s.edits_in_place(alias):  # a CLI agent reads a worktree of the repo, read-only
        await s.add_worktree("explore", step=Step.at(0, "worktree", "explore", prefix="p"))
        context = "The repository is your current folder: read it; change nothing."
        reply = await s.ask_in(
            "explore",
            alias,
            [Message(role="user", content=prompts.EXPLORER.format(task=task, context=context))],
            step=step,
            read_only=True,
        )
        await s.prune_worktree("explore", step=Step.at(0, "prune", "explore", prefix="p"))
        if not reply.ok or not reply.text.strip():
            raise ProtocolAborted(
                f"the explorer gave nothing ({reply.failure.message if reply.failure else 'empty'})"
            )
        return reply.text
    context = "The repository:\n" + await s.code_context()
    return await _say(s, alias, prompts.EXPLORER.format(task=task, context=context), step)


def _lessons_text(found: list[str]) -> str:
    if not found:
        return ""
    return (
        "\nLessons learnt in this repository before:\n" + "\n".join(f"- {x}" for x in found) + "\n"
    )


def repo_of(s: Session) -> str:
    """The session's repository as its config records it (made absolute at start), or ""."""
    code = s.meta.get("config", {}).get("code") or {}
    return str(code.get("repo") or "")


async def repo_lessons(s: Session, step: str, opts: PipelineOptions) -> list[str]:
    """The repository's lessons as this session saw them (journaled)."""
    repo = repo_of(s)
    if not opts.lessons or not repo:
        return []

    async def compute() -> list[str]:
        return lessons.ranked(repo)

    return [str(x) for x in await s.effect(step, "lessons", compute)]


def plan_tokens(member: AgentConfig, opts: PipelineOptions) -> int:
    """The most tokens the architect's plan may take: `[pipeline] plan_max_tokens`, or the
    agent's own max_tokens when larger. A plan does not fit the short answers a model's
    default cap is chosen for (the embedded model's 160 tokens of free text, 320 of JSON)."""
    return max(opts.plan_max_tokens, member.max_tokens or 0)


def _cut(what: str, budget: int) -> str:
    return (
        f"the architect's plan ({what}) was cut at its token limit ({budget} tokens) before it "
        f"was complete: raise plan_max_tokens (now {budget}) in the [pipeline] section of a "
        "config file given with --config, or ask for a smaller feature, then plan again"
    )


async def _draft(s: Session, prompt: str, step: str, what: str, opts: PipelineOptions) -> PlanDoc:
    """The architect's plan as JSON, checked; asked under the schema where its model enforces
    one, re-asked once quoting the problem, but not when the reply was cut at the token limit
    (a re-ask at that limit is cut the same)."""
    alias = role(s, "architect")
    budget = plan_tokens(s.agent(alias).config, opts)
    schema = PLAN_SCHEMA if s.enforces_schema(alias) else None
    messages = [Message(role="user", content=prompt)]
    parsed = await ask_parsed(
        s,
        alias,
        messages,
        parse_plan,
        step=step,
        reask=False,
        json_schema=schema,
        max_tokens=budget,
    )
    if parsed.value is None and parsed.completion.ok and not parsed.completion.hit_max_tokens:
        again = Message(
            role="user",
            content=REASK.format(
                problem=parsed.problem, reminder="\n\nAnswer with the plan's JSON object only."
            ),
        )
        parsed = await ask_parsed(
            s,
            alias,
            [*parsed.messages, again],
            parse_plan,
            step=f"{step}/reask",
            reask=False,
            json_schema=schema,
            max_tokens=budget,
        )
    if parsed.value is None:
        if parsed.completion.hit_max_tokens:
            raise ProtocolAborted(_cut(what, budget))
        raise ProtocolAborted(f"the architect wrote no valid plan ({what}): {parsed.problem}")
    return parsed.value


def _shown_plan(s: Session, doc: PlanDoc, step: str, limit: int) -> str:
    return "THE PLAN:\n" + _quoted(s, "Plan", doc.to_json(), step, limit)


async def plan_phase(s: Session, task: str, opts: PipelineOptions) -> Outcome:
    limit = opts.max_quote_chars
    warn_self_review(s, "architect", "critic")
    known = await repo_lessons(s, "p0/lessons", opts)
    exploration = await _explore(s, task, opts)
    step = Step.at(0, "expert", role(s, "domain_expert"), prefix="p")
    shown = _quoted(s, "Exploration", exploration, step, limit)
    guidance = await _say(
        s, role(s, "domain_expert"), prompts.EXPERT.format(task=task, exploration=shown), step
    )
    step = Step.at(0, "draft", role(s, "architect"), prefix="p")
    doc = await _draft(
        s,
        prompts.ARCHITECT.format(
            task=task,
            exploration=_quoted(s, "Exploration", exploration, step, limit),
            guidance=_quoted(s, "Guidance", guidance, step, limit),
            lessons=_lessons_text(known),
        ),
        step,
        "the draft",
        opts,
    )
    s.artifact("plan/initial.json", doc.to_json())
    history: list[dict[str, object]] = []
    verdict: str | None = None
    reasons = ""
    for gate in range(1, opts.gate_revisions + 2):
        entry: dict[str, object] = {"round": gate}
        if opts.plan_tournament.enabled:
            played = await play(
                s,
                Step.at(gate, "tournament", "refine", prefix="p"),
                f"plan{gate}",
                task=f"A phased implementation plan, as JSON, for this feature:\n{task}",
                input_text=doc.to_json(),
                settings=opts.plan_tournament,
                opts=opts,
            )
            entry["played"] = {
                "session": played.session,
                "status": played.status,
                "passes": played.passes,
                "reason": played.reason,
            }
            try:
                doc = parse_plan(played.final) if played.ended else doc
            except FormatError as exc:  # the refined text is no plan moot can run: keep ours
                entry["kept"] = (
                    f"the tournament's final text is not a valid plan ({exc}); the plan before"
                    " it stays (moot plan --no-plan-tournament skips the tournament)"
                )
                s.note(f"p{gate}/kept", reason=str(entry["kept"]))
        critic = role(s, "critic")
        step = Step.at(gate, "gate", critic, prefix="p")
        schema = GATE_SCHEMA if s.enforces_schema(critic) else None
        asked = prompts.GATE.format(task=task, plan=_shown_plan(s, doc, step, limit))
        if schema is not None:
            asked += "\n\nAnswer as JSON: the problems you found (if any), then your verdict."
        reply = await s.ask(
            critic, [Message(role="user", content=asked)], step=step, json_schema=schema
        )
        verdict, reasons = _judged(reply.text) if reply.ok else (None, "")
        entry.update(verdict=verdict or "none", reasons=reasons[:4000])
        if verdict is None and reply.ok and reply.hit_max_tokens:
            entry["cut"] = (
                "the critic's reply was cut at its token limit before its verdict line: give "
                "the critic's model a larger max_tokens ([pipeline.roles] critic, or the "
                "agent's max_tokens)"
            )
        history.append(entry)
        s.artifact(f"plan/gate_{gate:02d}.md", f"verdict: {verdict}\n\n{reasons}\n")
        if verdict in ("APPROVED", "REJECTED"):
            break
        if gate == opts.gate_revisions + 1:
            break
        step = Step.at(gate, "revise", role(s, "architect"), prefix="p")
        why = reasons or "the critic gave no verdict"
        doc = await _draft(
            s,
            prompts.REVISE_PLAN.format(
                task=task,
                plan=_shown_plan(s, doc, step, limit),
                reasons="THE CRITIC'S PROBLEMS:\n" + _quoted(s, "Critique", why, step, limit),
            ),
            step,
            f"revision {gate}",
            opts,
        )
    return _outcome(s, doc, verdict, reasons, history)


def _outcome(
    s: Session, doc: PlanDoc, verdict: str | None, reasons: str, history: list[dict[str, object]]
) -> Outcome:
    plan_json, plan_md = doc.to_json(), render_markdown(doc)
    details: dict[str, object] = {
        "pipeline": {"phase": "plan", "gates": history, "plan": doc.model_dump(mode="json")}
    }
    approved = verdict == "APPROVED"
    if approved:
        path = s.artifact("plan.json", plan_json)
        s.artifact("plan.md", plan_md)
        how = (
            f"the critic approved the plan ({len(doc.tasks)} tasks); read or edit "
            f"{s.folder.path / path}, then run: moot execute {s.folder.id}"
        )
        reason = "the plan is valid by moot's checks and the critic approved it"
    else:
        s.artifact(
            "plan.rejected.json" if verdict == "REJECTED" else "plan.unapproved.json", plan_json
        )
        said = "rejected the plan" if verdict == "REJECTED" else "did not approve the plan"
        why = str(history[-1].get("cut") or "") if history else ""
        why = why or reasons[:600] or "no reasons given"
        how = f"the critic {said} after {plural(len(history), 'gate round')}: {why}"
        reason = how
    finding = Finding(
        label="chosen" if approved else "no_consensus",
        reason=reason,
        started=1,
        valid=1 if approved else 0,
    )
    rounds = sum(1 for h in history if "played" in h)
    trust = (
        f"The plan went through {plural(len(history), 'gate round')} and "
        f"{plural(rounds, 'plan tournament')}; "
        "the critic's verdict is a model's opinion, and moot checked only the plan's form "
        "(ids, dependencies, no cycle), not that it is right."
    )
    return Outcome(
        protocol="pipeline",
        status="consensus" if approved else "no_consensus",
        consensus=approved,
        how=how,
        final_answer=plan_md,
        rounds=len(history),
        details=details,
        trust=trust,
        finding=finding,
    )
