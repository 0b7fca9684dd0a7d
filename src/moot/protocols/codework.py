"""A code task's turn, for any protocol: an agent changes its worktree, moot verifies it.

CLI coding agents edit their worktree in place (the engine runs them there); other models get
the repository context and answer with a unified diff, which moot applies in their worktree.
A diff that does not apply goes back once with git's error; a second failure is a failed
attempt. Every effect is a Session step, so resume and replay see the same turn.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from msgspec import Struct

from moot.deliberation.anonymize import quote
from moot.engine.session import Session
from moot.protocols.shown import nonce
from moot.types import Completion, Message

if TYPE_CHECKING:  # a question's run never loads the git plumbing
    from moot.code.changes import CodeChange, VerifyRun

__all__ = [
    "DIFF_FORMAT",
    "Work",
    "ask",
    "best_verified",
    "evidence",
    "extract_diff",
    "fails",
    "first_messages",
    "prefer_passing",
    "realize",
    "revise_format",
    "rows",
    "solution_text",
    "verify_note",
    "work",
]

DIFF_FORMAT = (
    "Answer with the whole change as ONE unified diff, as `git diff` prints it, inside a "
    "```diff fenced block: paths relative to the repository root with a/ and b/ prefixes, "
    "enough context lines for each hunk to apply, new files from /dev/null. Only the block "
    "is applied; say anything else outside it."
)
_IN_PLACE = (
    "You are in your own copy of the repository (the current folder). Make the change by "
    "editing the files there; do not commit and do not touch files outside it. When you are "
    "done, reply with a short summary of what you changed and why."
)
_TASK = "A code change is asked of you in a git repository.\n\nThe task:\n{task}\n\n{how}"
_REPO = "The repository as you start from it:\n{context}\n\n"
_REAPPLY = (
    "Your diff could not be applied: {error}\n\nThe files are as they were before your diff. "
    "Send the whole corrected diff again. " + DIFF_FORMAT
)
_REVISE_IN_PLACE = (
    "Make your revised change by editing the files in your folder (your earlier change is "
    "there); then reply with a short summary of what you changed and which disagreements you "
    "still hold."
)
_REVISE_DIFF = (
    "Your earlier change is applied to your files. Answer with a diff AGAINST THAT STATE "
    "(only the further edits; an empty diff if you keep your change as it is). "
)
_FENCE = re.compile(r"```[ \t]*(?:diff|patch|udiff)[^\n]*\n(.*?)(?:\n```|\Z)", re.DOTALL)
_BARE = re.compile(r"^(?:diff --git |--- (?:a/|/dev/null))", re.MULTILINE)


def _user(text: str) -> Message:
    return Message(role="user", content=text)


def extract_diff(text: str) -> str | None:
    """The unified diff of a model's answer: the first ```diff block, or the answer from its
    first `diff --git` / `--- a/` line on; None when it holds neither."""
    fenced = _FENCE.search(text)
    if fenced is not None and fenced.group(1).strip():
        return fenced.group(1) + "\n"
    bare = _BARE.search(text)
    if bare is not None:
        return text[bare.start() :].rstrip("`\n ") + "\n"
    return None


async def first_messages(
    s: Session, alias: str, task: str, system: Message | None = None
) -> list[Message]:
    """The opening prompt of an agent's code turn: CLI agents work in place, others get the
    repository context (journaled once per session) and answer with a diff."""
    head = [system] if system is not None else []
    if s.edits_in_place(alias):
        return [*head, _user(_TASK.format(task=task, how=_IN_PLACE))]
    context = await s.code_context()
    how = _REPO.format(context=context) + DIFF_FORMAT
    return [*head, _user(_TASK.format(task=task, how=how))]


def revise_format(s: Session, alias: str) -> str:
    """How to answer a request for a revised change (the protocol's own words come first)."""
    if s.edits_in_place(alias):
        return _REVISE_IN_PLACE
    return _REVISE_DIFF + DIFF_FORMAT


class Work(Struct, frozen=True):
    """How an agent's turn ended: its change so far, the verify results, the conversation."""

    alias: str
    ok: bool
    change: CodeChange | None
    checks: tuple[VerifyRun, ...]
    messages: tuple[Message, ...]
    problem: str = ""  # why the turn failed
    summary: str = ""  # the agent's own words
    tree: str = ""  # the worktree it worked in, when not its own (refine's candidates)
    # the turn failed because a model call failed (resume asks it again), not because its
    # answer made no change (no diff, a diff that did not apply, nothing changed): no answer
    call_failed: bool = False

    @property
    def where(self) -> str:
        """The worktree's name: the agent's alias, or the protocol's candidate."""
        return self.tree or self.alias

    @property
    def patch(self) -> str:
        """The change's diff against the baseline ("" for none yet)."""
        return self.change.patch if self.change is not None else ""

    @property
    def passing(self) -> int:
        """How many of the verify commands passed."""
        return sum(1 for c in self.checks if c.passed)

    @property
    def passed(self) -> bool | None:
        """All verify commands passed (None: none were run)."""
        return all(c.passed for c in self.checks) if self.checks else None

    @property
    def status(self) -> str:
        return "completed" if self.ok else "failed"


async def realize(
    s: Session,
    alias: str,
    messages: Sequence[Message],
    reply: Completion,
    *,
    step: str,
    optional: bool = False,
    tree: str | None = None,
) -> Work:
    """Turn an agent's answer into its worktree's change: apply its diff (API models; one
    re-ask with git's error) or take what it edited (CLI agents); then verify. `optional`:
    an answer without a diff keeps the worktree as it is (a revision that changes nothing).
    `tree`: the worktree the agent works in, when it is not its own (`Session.add_worktree`)."""
    convo = [*messages, Message(role="assistant", content=reply.text)]
    where = tree or ""
    if not reply.ok:
        problem = reply.failure.message if reply.failure else "the call failed"
        return Work(
            alias, False, None, (), tuple(convo), problem=problem, tree=where, call_failed=True
        )
    summary = reply.text.strip()
    if not s.edits_in_place(alias) and not (optional and extract_diff(reply.text) is None):
        error = await _apply(s, alias, reply.text, step=step + "/apply", tree=tree)
        if error:
            retry = [*convo, _user(_REAPPLY.format(error=error))]
            again = await ask(s, alias, retry, step=step + "/reapply", tree=tree)
            convo = [*retry, Message(role="assistant", content=again.text)]
            if not again.ok:
                problem = again.failure.message if again.failure else "the call failed"
                return Work(
                    alias, False, None, (), tuple(convo), problem, tree=where, call_failed=True
                )
            error = await _apply(s, alias, again.text, step=step + "/apply2", tree=tree)
            if error:
                change = await s.change(alias, step=step + "/change", tree=tree)
                return Work(
                    alias,
                    False,
                    change,
                    (),
                    tuple(convo),
                    problem=f"its diff did not apply twice: {error.splitlines()[0]}",
                    tree=where,
                )
            summary = again.text.strip()
    change = await s.change(alias, step=step + "/change", tree=tree)
    checks = tuple(await s.verify(alias, step=step + "/verify", tree=tree))
    if change.empty:
        return Work(
            alias, False, change, checks, tuple(convo), "it changed nothing", summary, where
        )
    return Work(alias, True, change, checks, tuple(convo), summary=summary, tree=where)


async def _apply(s: Session, alias: str, text: str, *, step: str, tree: str | None) -> str:
    """'' when the answer's diff applied, else what went wrong (to quote back once)."""
    diff = extract_diff(text)
    if diff is None:
        return "the answer holds no unified diff (a ```diff block)"
    result = await s.apply_diff(alias, diff, step=step, tree=tree)
    return "" if result.applied else result.error


async def ask(
    s: Session, alias: str, messages: Sequence[Message], *, step: str, tree: str | None = None
) -> Completion:
    """`Session.ask`, in worktree `tree` when given (a CLI agent edits there)."""
    if tree is None:
        return await s.ask(alias, messages, step=step)
    return await s.ask_in(tree, alias, messages, step=step)


async def work(
    s: Session,
    alias: str,
    task: str,
    *,
    step: str,
    system: Message | None = None,
    tree: str | None = None,
) -> Work:
    """One agent's whole turn on the task, from its first prompt (in `tree` when given)."""
    messages = await first_messages(s, alias, task, system)
    reply = await ask(s, alias, messages, step=step, tree=tree)
    return await realize(s, alias, messages, reply, step=step, tree=tree)


def checks_text(checks: Sequence[VerifyRun]) -> str:
    if not checks:
        return "(no verify commands were run)"
    return "\n\n".join(
        f"$ {c.command}\n[{c.status}{', output cut to its tail' if c.cut else ''}]\n"
        f"{c.tail.strip() or '(no output)'}"
        for c in checks
    )


def evidence(s: Session, label: str, item: Work, *, nonce_step: str, limit: int) -> str:
    """An agent's solution as others see it: its diff and its verify results, each quoted as
    untrusted text (the agent wrote the diff; the diff shaped the command output)."""
    fence = nonce(s, nonce_step)
    diff = item.patch
    stats = item.change.stats if item.change is not None else "no change"
    status = "" if item.ok else f" (failed: {item.problem})"
    return (
        f"{label}'s change{status}: {stats}\n"
        + quote(f"{label} diff", diff or "(no change)", nonce=fence, limit=limit)
        + f"\nVerification of {label}'s change:\n"
        + quote(f"{label} verification", checks_text(item.checks), nonce=fence + "v", limit=limit)
    )


def solution_text(item: Work) -> str:
    """An agent's code solution as the others and the judges see it (the caller quotes it as
    untrusted text): the diff against the baseline, then each verify command's result."""
    stats = item.change.stats if item.change is not None else "no change"
    diff = item.patch
    return (
        f"## CHANGES ({stats})\n```diff\n{diff.rstrip() or '(no change)'}\n```\n\n"
        f"## VERIFICATION\n{checks_text(item.checks)}"
    )


def fails(item: Work | None) -> bool:
    """The change was verified and a verify command failed: moot's own evidence against it."""
    return item is not None and item.passed is False


def prefer_passing(
    works: Mapping[str, Work], picked: str | None, order: Sequence[str]
) -> str | None:
    """moot's own evidence before a model's pick: when the change `picked` fails its verify
    commands, the first usable change in `order` that passes them all; else `picked`."""
    if not fails(works.get(picked) if picked is not None else None):
        return picked
    passing = (a for a in order if works.get(a) is not None and works[a].ok and works[a].passed)
    return next(passing, picked)


def best_verified(works: Mapping[str, Work], order: Sequence[str]) -> list[str]:
    """moot's own evidence first: the names in `order` whose changes fare as well on the verify
    commands as the best of them do (none failing, then the most commands passed), in `order`;
    every name when none was verified. A model's choice (a vote, a ranking) is then taken among
    these alone, so a change that fails the verify commands never wins over one that passes."""

    def fared(name: str) -> tuple[bool, int]:
        return (not fails(works[name]), works[name].passing)

    if not order:
        return []
    best = max(fared(name) for name in order)
    return [name for name in order if fared(name) == best]


def verify_note(works: Sequence[Work], label: Callable[[str], str]) -> str:
    """How each change fared on the verify commands, as one sentence ("" when none ran)."""
    fared = [
        f"{label(w.where)}'s {w.passing} of {len(w.checks)} passed"
        for w in works
        if w.change is not None and not w.change.empty and w.checks
    ]
    return f"Verify commands on each change: {'; '.join(fared)}." if fared else ""


def rows(works: Sequence[Work]) -> dict[str, dict[str, object]]:
    """Each agent's status, diff stats and verify results, for `Outcome.details["code"]`."""
    return {
        w.where: {
            "agent": w.alias or None,  # none: the user's change (refine's --input)
            "status": w.status,
            "problem": w.problem,
            "files": w.change.files if w.change else 0,
            "insertions": w.change.insertions if w.change else 0,
            "deletions": w.change.deletions if w.change else 0,
            "checks": [c.model_dump(mode="json") for c in w.checks],
            "patch": w.patch,
        }
        for w in works
    }
