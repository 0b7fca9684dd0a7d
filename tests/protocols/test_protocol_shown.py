"""The protocols' shared quote fence: one nonce for every protocol, the same on every resume."""

from __future__ import annotations

from moot.engine.session import Session
from moot.protocols.shown import nonce


def _session(seed: int) -> Session:
    session = Session.__new__(Session)
    session.seed = seed
    return session


def test_the_nonce_is_pinned_by_seed_and_step() -> None:
    """Recorded sessions replay only if their prompts come out byte for byte: these values are
    the ones the arena, court, refine and tournament each derived before they shared `nonce`."""
    s = _session(11)
    assert nonce(s, "r1/evaluate/agent_a/agent_b") == "2582d474553b"
    assert nonce(s, "r0/solve/agent_a/own") == "0414d2406755"
    assert nonce(_session(12), "r1/evaluate/agent_a/agent_b") == "b7b4cc2adb9e"
