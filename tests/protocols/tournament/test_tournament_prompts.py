"""The reply formats a tournament prompt shows. A walkthrough on the embedded model ("Is water
wet? Answer yes or no.") showed a challenge example whose values read like answers
(`"counter_claims": ["up to 2"]`), and the tiny model copied them: its position became "up to
2", then "up to 10"; the other side's "up to 35 words of text in JSON object". The bounds are
said in the sentence before the example now, and every value of the example is a placeholder in
angle brackets that cannot pass for an answer."""

from __future__ import annotations

import json
import re
from typing import Any

from moot.protocols.tournament.replies import (
    CHALLENGE_SCHEMA,
    DEFENSE_SCHEMA,
    POSITION_SCHEMA,
    verdict_schema,
)
from tests.scripts import start
from tests.tournament_scripts import Tourney, steady

TASK = "Which store should the service use for its sessions?"
_BARE = re.compile(r":\s*(<[^<>\"]*>)")  # a placeholder standing for a number or a boolean


def _example(prompt: str) -> dict[str, Any]:
    """The JSON example a prompt ends with, its bare placeholders quoted."""
    last = prompt.strip().splitlines()[-1]
    assert last.startswith("{"), prompt
    data = json.loads(_BARE.sub(r': "\1"', last))
    assert isinstance(data, dict)
    return data


def _values(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [v for item in value for v in _values(item)]
    return [value]


def _prompts() -> dict[str, str]:
    t = Tourney({"one": steady("Use Postgres."), "two": steady("Use Redis.")})
    run = start(TASK, t.config(("one", "two"), max_rounds=2))
    assert run.exit_code == 2, run.result.how  # no convergence: the verdict asks for analysis
    return {kind: t.prompts(kind)[0] for kind in ("positions", "challenge", "defense", "verdict")}


def test_every_example_value_is_a_placeholder_and_the_bounds_are_in_the_instructions() -> None:
    prompts = _prompts()
    schemas = {
        "positions": POSITION_SCHEMA,
        "challenge": CHALLENGE_SCHEMA,
        "defense": DEFENSE_SCHEMA,
        "verdict": verdict_schema(False),
    }
    for kind, prompt in prompts.items():
        example = _example(prompt)
        assert set(example) == set(schemas[kind]["properties"]), kind
        for key, value in example.items():
            for v in _values(value):
                assert isinstance(v, str) and re.fullmatch(r"<[^<>]+>", v), (kind, key, v)
                assert not re.search(r"\d|up to|at most|two|three", v), (kind, key, v)
    challenge = prompts["challenge"]
    said = challenge[: challenge.rindex("{")]
    for bound in (
        '"weaknesses" holds 2 or 3 entries',
        '"counter_claims" at most 2',
        '"alternatives" and "strong_points" at most 1 each',
        '"position" is at most 300 characters',
    ):
        assert bound in said, said
    position = prompts["positions"]
    assert '"reasons" holds at most 3 reasons' in position[: position.rindex("{")]
    # the seed's challenge stays as it was
    assert "BRUTALLY HONEST" in challenge and "Identify 2 or 3 weaknesses" in challenge
