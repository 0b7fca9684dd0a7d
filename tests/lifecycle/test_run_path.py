"""A run goes down the floors (issue 28): from `moot run` to every journal line, the stack of moot
frames descends through the floors of tests/layers.py (cli > api > lifecycle > the protocol >
the engine) and never comes back up; the engine does not call back into the lifecycle, nor
the library face into anything above it."""

from __future__ import annotations

import sys
from itertools import pairwise
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from moot.cli import main
from moot.engine.journal import Journal
from moot.types import Event
from tests.layers import Tree
from tests.scripts import Debate

SRC = Path(__file__).resolve().parents[2] / "src" / "moot"


def moot_frames(frame: FrameType | None) -> list[str]:
    """The modules of moot's frames on the stack, outermost first."""
    names: list[str] = []
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if name == "moot" or name.startswith("moot."):
            names.append(name)
        frame = frame.f_back
    return names[::-1]


def climbs(stack: list[str], tree: Tree) -> list[tuple[str, str]]:
    """Each step from a frame to a deeper one on a higher floor: (from, to)."""
    floors = []
    for module in stack:
        unit = tree.unit(module)
        assert unit is not None, f"{module} has no floor"
        floors.append((module, tree.floor(unit)))
    return [(a, b) for (a, fa), (b, fb) in pairwise(floors) if fb > fa]


def test_every_journal_line_of_a_run_is_written_down_the_floors(
    monkeypatch: pytest.MonkeyPatch, isolated: object
) -> None:
    stacks: list[list[str]] = []
    put = Journal._put  # every line, by `append` or by `commit` (group commit)

    def watched(self: Journal, event: Event) -> Any:
        stacks.append(moot_frames(sys._getframe(1)))
        return put(self, event)

    monkeypatch.setattr(Journal, "_put", watched)
    args = Debate().run_args()
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 0
    tree = Tree.load(SRC)
    assert len(stacks) > 10  # begin, the asks, the end: every line is seen
    protocol_lines = [s for s in stacks if any(m.startswith("moot.protocols.") for m in s)]
    assert protocol_lines, "no journal line was written under the protocol"
    for stack in stacks:
        assert stack[0] == "moot.cli" and stack[-1].startswith("moot.engine."), stack
        assert climbs(stack, tree) == [], stack


def test_the_check_sees_a_climb() -> None:
    """The engine calling back up into the lifecycle (as `run_session` once did with the
    protocol's run function) is a climb; the same stack without it is not."""
    tree = Tree.load(SRC)
    down = ["moot.cli.run", "moot.api", "moot.lifecycle.run", "moot.protocols.arena.run"]
    down += ["moot.engine.session", "moot.engine.journal"]
    assert climbs(down, tree) == []
    up = ["moot.cli.run", "moot.api", "moot.engine.lifecycle", "moot.lifecycle.run"]
    up += ["moot.engine.journal"]
    assert climbs(up, tree) == [("moot.engine.lifecycle", "moot.lifecycle.run")]
