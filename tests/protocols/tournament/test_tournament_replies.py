"""The reply schemas bound what a tiny model can loop on. A walkthrough on the embedded model
(smollm2, "Is 7 a prime number?") got a position whose `reasons` repeated one entry until the
320-token cap cut the JSON off, and the re-ask did the same: the schema put no limit on that
array. The embedded runtime's grammar enforces `maxItems` and `maxLength`
(models/local_worker.py), so bounded schemas make the model close the object in time."""

from __future__ import annotations

import json
from typing import Any

from moot.models.schema import schema_problem
from moot.protocols.tournament.replies import (
    CHALLENGE_SCHEMA,
    DEFENSE_SCHEMA,
    POSITION_SCHEMA,
    verdict_schema,
)

TOKEN_CAP = 320  # the embedded model's cap on a JSON reply (models/local.py)


def _worst(schema: dict[str, Any]) -> Any:
    """The longest value `schema` lets through: every array full, every string at its bound
    (of words, as a model writes them)."""
    kind = schema.get("type")
    if kind == "object":
        return {key: _worst(sub) for key, sub in schema["properties"].items()}
    if kind == "array":
        assert "maxItems" in schema, f"an unbounded array: {schema}"
        return [_worst(schema["items"])] * schema["maxItems"]
    if kind == "string":
        if "enum" in schema:
            return schema["enum"][0]
        assert "maxLength" in schema, f"an unbounded string: {schema}"
        return ("seven has no divisor " * 100)[: schema["maxLength"]]
    if kind == "number":
        return 0.75
    if kind == "boolean":
        return False
    raise AssertionError(f"unexpected schema {schema}")


def test_every_reply_schema_bounds_what_a_tiny_model_can_loop_on() -> None:
    """The walkthrough's reply repeated one reason until the cap: with `maxItems` and
    `maxLength` (which the embedded runtime's grammar enforces) the longest reply each schema
    allows fits the embedded model's 320 tokens, at 3.5 characters a token."""
    schemas = {
        "position": POSITION_SCHEMA,
        "challenge": CHALLENGE_SCHEMA,
        "defense": DEFENSE_SCHEMA,
        "verdict": verdict_schema(True),
        "verdict without convergence": verdict_schema(False),
    }
    for name, schema in schemas.items():
        worst = json.dumps(_worst(schema), separators=(",", ":"))
        assert schema_problem(worst, schema) is None, name
        assert len(worst) <= TOKEN_CAP * 3.5, f"{name}: {len(worst)} characters"
