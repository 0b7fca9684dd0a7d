"""`moot init --agent claude|cursor|codex`: moot's section in the file each coding agent reads,
written idempotently and without touching the user's own text."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.cli.init import BEGIN, END, FILES
from tests.cli.test_cli import moot

USER_TOP = "# My project\n\nAlways run `make test` before committing.\n"
USER_BOTTOM = "\n## Style\n\nTabs, never spaces.\n"


@pytest.mark.parametrize("agent", sorted(FILES))
def test_init_writes_then_updates_only_its_section(
    capsys: pytest.CaptureFixture[str], isolated: Path, agent: str
) -> None:
    project = isolated.parent / "project"
    code, out, err = moot(capsys, "init", "--agent", agent, "--dir", str(project))
    assert code == 0, out + err
    path = project / FILES[agent]
    first = path.read_text()
    assert first.count(BEGIN) == 1 and first.count(END) == 1
    assert "delegations/<step>.md" in first and "moot resume <session id>" in first
    assert "response_path" in first and str(isolated / "sessions") in first
    if agent == "cursor":
        assert first.startswith("---\n") and "alwaysApply: true" in first.split("---")[1]

    # again: nothing changes
    assert moot(capsys, "init", "--agent", agent, "--dir", str(project))[0] == 0
    assert path.read_text() == first

    # the user writes around the section and edits inside it: only the inside is replaced
    start, end = first.index(BEGIN), first.index(END) + len(END)
    head = first[:start] if agent == "cursor" else ""
    edited = head + USER_TOP + "\n" + first[start:end].replace("moot makes", "EDITED") + USER_BOTTOM
    path.write_text(edited)
    code, out, _ = moot(capsys, "init", "--agent", agent, "--dir", str(project))
    assert code == 0 and "updated" in out
    final = path.read_text()
    assert USER_TOP in final and USER_BOTTOM in final and "EDITED" not in final
    assert final.count(BEGIN) == 1 and final[final.index(BEGIN) :].startswith(first[start:end])


def test_init_appends_to_an_existing_file(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    project = isolated.parent / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text(USER_TOP)
    (project / "CLAUDE.md").write_text(USER_TOP)
    code, _, _ = moot(
        capsys, "init", "--agent", "codex", "--agent", "claude", "--dir", str(project)
    )
    assert code == 0
    for name in ("AGENTS.md", "CLAUDE.md"):
        text = (project / name).read_text()
        assert text.startswith(USER_TOP) and text.count(BEGIN) == 1


def test_a_cursor_rule_of_the_user_gets_always_apply(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    rule = isolated.parent / "project" / ".cursor" / "rules" / "moot.mdc"
    rule.parent.mkdir(parents=True)
    rule.write_text("---\ndescription: mine\n---\nMy rule.\n")
    assert moot(capsys, "init", "--agent", "cursor", "--dir", str(rule.parents[2]))[0] == 0
    text = rule.read_text()
    assert text.startswith("---\ndescription: mine\nalwaysApply: true\n---\nMy rule.\n")
    assert text.count(BEGIN) == 1


def test_init_needs_an_agent(capsys: pytest.CaptureFixture[str], isolated: Path) -> None:
    code, _, err = moot(capsys, "init", "--agent", "vim")
    assert code != 0 and "vim" in err
