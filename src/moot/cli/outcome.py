"""What a run shows on the terminal besides its live view: a choice it asks of you, and its
outcome (the answer, moot's finding, a code task's changes, usage and reports)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from moot.cli.common import say, say_json

if TYPE_CHECKING:
    from collections.abc import Callable

    from moot.api import RunResult
    from moot.display import Face
    from moot.engine.result import Result

__all__ = ["chooser", "shown"]


def chooser(face: Face) -> Any:
    """A human choice on the terminal (a code task's pick), with the live view paused."""

    async def choose(prompt: str, options: Any) -> str | None:
        from moot.engine.choice import read_choice  # a code task's pick: not a question's

        with face.paused():
            return await read_choice(prompt, options)

    return choose


def shown(face: Face, quiet: bool, as_json: bool = False) -> Callable[[RunResult], None]:
    """What the library calls the moment the outcome is known, before it writes the reports:
    the face's live view ends, and the outcome is printed (and flushed): as text, or with
    `as_json` as result.json holds it."""

    def show(run: RunResult) -> None:
        # the live view's last frame, or the log's last lines; moot's finding only where the
        # printed outcome does not say it (as JSON, or quiet: the answer alone)
        face.finding = as_json or quiet
        face.outcome(run.result)
        face.__exit__(None, None, None)  # the live view stops before the outcome prints
        if as_json:
            say_json(json.loads(run.result.to_json()))  # as result.json holds it
        else:
            _show(run, quiet)
        sys.stdout.flush()

    return show


def _say(text: str) -> None:
    """A paragraph of the outcome: on a terminal, broken between words at its width (the
    terminal itself would break it mid-word); piped, as it is."""
    if sys.stdout.isatty():
        import shutil

        from moot.display.wrap import fit_paragraphs

        text = fit_paragraphs(text, shutil.get_terminal_size().columns)
    say(text)


def _show(run: RunResult, quiet: bool) -> None:
    result = run.result
    if quiet:  # the answer alone; with no answer (a deadlock, a pause), the outcome line
        if result.final_answer:
            _say(result.final_answer)
        else:
            _say(f"{result.status_words}: {result.how}")
        return
    say("")
    _say(f"Session {run.session_id}: {result.status_words}: {result.how}")
    if result.trust:
        _say(f"How far to trust it: {result.trust}")
    _finding_lines(result)
    _code_lines(result)
    if result.final_answer:
        say("")
        _say(result.final_answer)
        say("")
    for item in result.disagreements:
        _say(f"  disagreement: {item}")
    cost = "unknown" if result.cost is None else f"${result.cost:.4f}"
    _say(f"Tokens {result.tokens:,}, cost {cost}. Report: {run.folder / 'report.md'}")
    _say(f"Web page: {run.folder / 'report.html'}")
    if run.message and run.message != result.how:  # (a note after the outcome's how)
        _say(run.message.removeprefix(result.how).strip())


def _finding_lines(result: Result) -> None:
    """moot's finding: its label and reason (unless the outcome line says it already), each
    agent's claim round by round, changes of mind (unless the trust statement names them)
    and the model verdicts that moot's check does not bear out."""
    from moot.text import change_line, claims_table, finding_line, round_words, verdict_line
    from moot.types import alias_label

    finding = result.finding
    if finding is None:
        return
    if finding.reason not in result.how:
        _say(f"moot's finding: {finding_line(finding)}")
    table = claims_table(result.claims)
    if table.rows and len(table.rounds) > 1:
        _say("Claims by round (" + ", ".join(round_words(r) for r in table.rounds) + "):")
        for agent, cells in table.rows:
            _say(f"  {alias_label(agent)}: " + " -> ".join(table.cell(c, 40) for c in cells))
    if "Changes of mind" not in result.trust:
        for change in result.changes:
            _say(f"  changed their mind: {change_line(change)}")
    for verdict in result.verdicts:
        if not verdict.valid or not verdict.upheld:
            _say(f"  model verdict: {verdict_line(verdict)}")


def _code_lines(result: Any) -> None:
    """A code task's agents: status, diff stats, verification and cost, one line each."""
    for row in result.code_changes():
        usage = result.agents.get(row.name)
        cost = "cost unknown" if usage is None or usage.cost is None else f"${usage.cost:.4f}"
        why = f" ({row.problem})" if row.problem else ""
        verified = f"verify {row.verified}" if row.checks else row.verified
        _say(f"  {row.name}: {row.status}{why}; {row.stats}; {verified}; {cost}")
