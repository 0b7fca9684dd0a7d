"""The refine protocol's prompts (seed 004, "Tournaments"): every role gets one fresh message
and nothing of the other roles' conversations. The judge's prompt never carries the critique."""

from __future__ import annotations

from typing import Any

from moot.deliberation.borda import ranking_schema

__all__ = [
    "AUTHOR",
    "AUTHOR_B",
    "CRITIC",
    "JUDGE",
    "JUDGE_SCHEMA",
    "SYNTHESIZER",
    "judge_schema",
]

AUTHOR = """You are the author. Write the best complete response to the task below.

TASK:
{task}

Reply with the text itself: no preamble, no commentary about it."""

CRITIC = """You are the critic. Below are a task and a response to it (version A).
List everything that is wrong with version A: errors, gaps, risks, unclear or unjustified parts.
List problems only: do not propose fixes and do not rewrite anything.

TASK:
{task}

VERSION A:
{a}"""

AUTHOR_B = """You are the revising author. Below are a task, a response to it (version A) and a
critique of version A. Write version B: a complete, improved response that fixes what the
critique rightly points out and keeps what is good in version A.

TASK:
{task}

VERSION A:
{a}

CRITIQUE:
{critique}

Reply with version B itself, complete: no preamble, no commentary about it."""

SYNTHESIZER = """You are the synthesizer. Below are a task and two responses to it, X and Y.
Write one complete response that merges the strongest parts of both.

TASK:
{task}

RESPONSE X:
{x}

RESPONSE Y:
{y}

Reply with the merged response itself, complete: no preamble, no commentary about it."""

JUDGE = """You are a judge. Below are a task and three responses to it, labelled {labels}.
Rank all three from best to worst for how well they accomplish the task: correctness,
completeness, clarity. Length is no merit in itself.

TASK:
{task}

{candidates}

Reply with JSON only: {{"ranking": [best, second, worst], "reason": "one sentence"}}, the
ranking naming each of {labels} exactly once."""


def judge_schema(labels: list[str]) -> dict[str, Any]:
    """The JSON schema of a judge's reply over these labels."""
    return {
        "type": "object",
        "properties": {
            "ranking": ranking_schema(labels),
            "reason": {"type": "string"},
        },
        "required": ["ranking"],
        "additionalProperties": False,
    }


JUDGE_SCHEMA = judge_schema(["X", "Y", "Z"])
