"""The progress of a run (one message per phase entered, in order, from its events), the
masking of what the tools return, and `moot mcp` without the SDK."""

from __future__ import annotations

import anyio
import pytest

from moot.mcp.runs import Phases, masked, phase_text
from moot.types import Event, EventKind, Step


def _asked(step: str, kind: EventKind = EventKind.ASK_STARTED) -> Event:
    return Event(kind=kind, step=step)


def test_one_message_per_phase_in_order() -> None:
    phases = Phases()
    for event in (
        Event(kind=EventKind.OPENED),
        _asked("r0/solve/agent_a"),
        _asked("r0/solve/agent_b"),
        _asked("r0/solve/agent_a/reask"),
        _asked("r0/solve/agent_a", EventKind.ASK),  # the answer, not a new phase
        _asked("r1/evaluate/agent_a"),
        _asked("j2/score/judge_a"),
        _asked("setup/x", EventKind.SHELL_STARTED),
        _asked("r1/evaluate/agent_b"),  # a phase entered again after another one
    ):
        phases(event)
    phases.sending.close()
    sent: list[tuple[float, str]] = []

    async def report(progress: float, message: str) -> None:
        sent.append((progress, message))

    anyio.run(phases.pump, report)
    assert sent == [
        (1, "round 0: solve"),
        (2, "round 1: evaluate"),
        (3, "judges 2: score"),
        (4, "setup: x"),
        (5, "round 1: evaluate"),
    ]


def test_phase_text_reads_as_words() -> None:
    assert phase_text(Step.parse("r3/verify/agent_c")) == "round 3: verify"
    assert phase_text(Step.parse("setup")) == "setup"


def test_masked_hides_anything_shaped_like_a_key() -> None:
    key = "sk-ant-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    shown = masked({"task": f"use {key} please", "n": 1})
    assert key not in str(shown) and shown["n"] == 1 and "use " in shown["task"]


def test_without_the_sdk_moot_mcp_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    from moot.cli import main

    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else found(name, *a)
    )
    monkeypatch.setattr("moot.text.install.editable_checkout", lambda: None)  # a package install
    with pytest.raises(SystemExit) as exited:
        main(["mcp"])
    assert exited.value.code == 1
    assert "pip install 'moot[mcp]'" in capsys.readouterr().err
