"""What each protocol's `feedback` hook gives a chairman's synthesis, read from the journal:
only the last group of replies at a phase, failed calls and re-asks left out."""

from __future__ import annotations

from typing import Any

from moot import protocols
from moot.protocols.synthesis import latest_replies
from moot.types import Event, EventKind


def feedback(protocol: str, events: list[Event]) -> list[str]:
    hook = protocols.get(protocol).feedback
    assert hook is not None, protocol
    return hook({}, events)


def ask(step: str, text: str, status: str = "ok") -> Event:
    completion: dict[str, Any] = {"text": text, "status": status}
    return Event(kind=EventKind.ASK, step=step, data={"completion": completion})


def test_only_the_last_group_at_a_phase_counts_a_reask_replacing_its_reply() -> None:
    events = [
        ask("r1/evaluate/agent_a", "old critique"),
        ask("r2/evaluate/agent_a", "first try"),
        ask("r2/evaluate/agent_a/reask", "the re-ask"),
        ask("r2/evaluate/agent_b", "new critique"),
        ask("r2/evaluate/agent_c", "", status="error"),
        ask("r2/revise/agent_a", "a revision"),
    ]
    assert latest_replies(events, "evaluate") == ["Agent A: the re-ask", "Agent B: new critique"]
    assert latest_replies(events, "verify") == []


def test_a_tournaments_last_match_and_a_courts_judges_and_votes_are_its_feedback() -> None:
    events = [
        ask("r1/match_1_challenge/agent_a", "challenge in match 1"),
        ask("r3/match_2_challenge/agent_b", "Agent C's answer ignores retries"),
        ask("r3/match_2_challenge/agent_c", "Agent B's answer is too long"),
    ]
    said = feedback("tournament", events)
    assert said == [
        "Challenge by Agent B: Agent C's answer ignores retries",
        "Challenge by Agent C: Agent B's answer is too long",
    ]
    events = [
        ask("r2/vote/agent_a", '{"vote": "no", "reasoning": "P1 ignores cost"}'),
        ask("j1/score/judge_a", '{"scores": {"P1": 0.4}, "reason": "too costly"}'),
    ]
    said = feedback("court", events)
    assert said[0].startswith("Judge's score by Judge A:") and "too costly" in said[0]
    assert said[1].startswith("Vote by Agent A:") and "ignores cost" in said[1]


def test_refines_last_critique_and_judges_are_its_feedback() -> None:
    events = [
        ask("r1/critic/critic_a", "Problem: no expiry."),
        ask("r2/critic/critic_a", "Problem: no index."),
        ask("r2/judge/judge_a/1", '{"ranking": ["X", "Y", "Z"], "reason": "X is shortest"}'),
    ]
    said = feedback("refine", events)
    assert said == [
        "Critique by Critic A: Problem: no index.",
        'Ranking by Judge A: {"ranking": ["X", "Y", "Z"], "reason": "X is shortest"}',
    ]
