"""`moot init --agent claude|cursor|codex`: tell a coding agent how to answer moot's inline
delegations (models/inline.py), in the file it reads at every start: CLAUDE.md for Claude Code,
`.cursor/rules/moot.mdc` (always applied) for Cursor, AGENTS.md for Codex.

moot owns only the section between its markers: running init again replaces that section and
keeps every other line of the file, the user's own.
"""

from __future__ import annotations

from pathlib import Path

import click

from moot.cli.common import say

__all__ = ["BEGIN", "END", "FILES", "init", "managed_section", "with_section"]

BEGIN = "<!-- moot:begin (managed by `moot init`; edits inside are replaced) -->"
END = "<!-- moot:end -->"
# Where each coding agent reads its standing instructions, under the project folder.
FILES: dict[str, str] = {
    "claude": "CLAUDE.md",
    "cursor": ".cursor/rules/moot.mdc",
    "codex": "AGENTS.md",
}
_CURSOR_FRONTMATTER = (
    "---\ndescription: How to answer moot's inline delegations, then resume the run\n"
    "alwaysApply: true\n---\n"
)


def managed_section(sessions: Path) -> str:
    """The instructions, between the markers."""
    return f"""{BEGIN}
## moot: delegations you answer

moot makes several models deliberate. An `inline:` agent in a run (`moot run "..." -m
inline:claude -m openai:gpt-5.4-mini`) is you: moot writes what it asks you as a delegation
file and stops the run with exit code 3, saying "waiting for your coding agent" and naming
each file. The files are `<session folder>/delegations/<step>.md`, with a `.json` twin that
holds the same request for a program; session folders are under `{sessions}`.

For each delegation of the session that has no response file yet:
1. Read it (the `.md`, or the `messages` of the `.json`) and do what its messages ask, as
   one of the run's agents; you may use your tools to check your answer.
2. If it names a worktree, make the code change there, and only there.
3. Write the answer as JSON to the `response_path` it names, following its `response_schema`
   (for a plain answer: `{{"text": "your whole answer"}}`). Nothing else goes in that file.

Then run the command it names, `moot resume <session id>`. If the run stops again with new
delegations, answer those the same way. A response that is not valid JSON for its schema, empty
or larger than 1 MB is recorded as that ask's failure. moot never delegates judging.
{END}
"""


def with_section(text: str, section: str, *, cursor: bool = False) -> str:
    """`text` with moot's section replaced (or appended), the rest kept as it was; a Cursor rule
    also gets the frontmatter that applies it always."""
    start, end = text.find(BEGIN), text.find(END)
    if start != -1 and end > start:
        after = text[end + len(END) :]
        text = text[:start] + section.rstrip("\n") + after
        if not text.endswith("\n"):
            text += "\n"
    else:
        gap = "" if not text.strip() else ("\n" if text.endswith("\n") else "\n\n")
        text = (text if text.strip() else "") + gap + section
    if cursor:
        text = _always_applied(text)
    return text


def _always_applied(text: str) -> str:
    if not text.startswith("---\n"):
        return _CURSOR_FRONTMATTER + text
    close = text.find("\n---", 3)
    head = text[: close if close != -1 else 0]
    if close == -1 or "alwaysApply:" in head:
        return text
    return text[:close] + "\nalwaysApply: true" + text[close:]


@click.command(name="init")
@click.option(
    "--agent",
    "agents",
    type=click.Choice(sorted(FILES)),
    multiple=True,
    required=True,
    help="The coding agent to instruct (repeatable): claude, cursor or codex.",
)
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="The project folder.",
)
def init(agents: tuple[str, ...], folder: Path) -> None:
    """Tell your coding agent how to answer moot's inline delegations (`-m inline:`) and resume
    the run: writes moot's section of CLAUDE.md, .cursor/rules/moot.mdc or AGENTS.md. Run it
    again to update that section; the rest of the file is kept."""
    from moot.engine.store import sessions_root

    section = managed_section(sessions_root())
    for agent in dict.fromkeys(agents):
        path = folder / FILES[agent]
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        new = with_section(old, section, cursor=agent == "cursor")
        if new == old:
            say(f"{path}: up to date")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(new, encoding="utf-8")
        say(f"{path}: {'updated' if old else 'written'} (moot's section)")
