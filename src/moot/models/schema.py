"""Check a reply against the JSON schema a request asked for, on our side.

A backend that says it enforces a schema is not believed: a provider checks every reply with
`schema_problem`, and one that fails switches the model's `json_schema` capability off (the
structured-output ladder then parses, re-asks and validates strictly as for any model). This
covers the keywords structured-output schemas use; unknown keywords are accepted.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["schema_problem"]

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_problem(text: str, schema: dict[str, Any]) -> str | None:
    """None if `text` is JSON that fits `schema`, else what is wrong (one line)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"the reply is not JSON ({exc.msg} at character {exc.pos})"
    return _check(value, schema, "$", schema)


def _check(value: Any, schema: Any, where: str, root: dict[str, Any]) -> str | None:
    if not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        target = _resolve(str(schema["$ref"]), root)
        return None if target is None else _check(value, target, where, root)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            if all(_check(value, s, where, root) for s in schema[key]):
                return f"{where} fits none of the allowed shapes"
    for sub in schema.get("allOf", []):
        problem = _check(value, sub, where, root)
        if problem:
            return problem
    problem = _check_type(value, schema, where)
    if problem:
        return problem
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} is {value!r}, not one of {schema['enum']!r}"
    if "const" in schema and value != schema["const"]:
        return f"{where} must be {schema['const']!r}"
    if isinstance(value, dict):
        return _check_object(value, schema, where, root)
    if isinstance(value, list):
        return _check_array(value, schema, where, root)
    return _check_scalar(value, schema, where)


def _check_type(value: Any, schema: dict[str, Any], where: str) -> str | None:
    expected = schema.get("type")
    if expected is None:
        return None
    names = expected if isinstance(expected, list) else [expected]
    for name in names:
        allowed = _TYPES.get(str(name))
        if allowed is None:
            return None
        if isinstance(value, bool) and name in ("integer", "number"):
            continue  # JSON true is not a number, though Python says so
        if isinstance(value, allowed):
            return None
        if name == "integer" and isinstance(value, float) and value.is_integer():
            return None
    return f"{where} should be {' or '.join(map(str, names))}, not {type(value).__name__}"


def _check_object(
    value: dict[str, Any], schema: dict[str, Any], where: str, root: dict[str, Any]
) -> str | None:
    for name in schema.get("required", []):
        if name not in value:
            return f"{where} lacks the required key {name!r}"
    properties = schema.get("properties", {})
    for name, item in value.items():
        if name in properties:
            problem = _check(item, properties[name], f"{where}.{name}", root)
            if problem:
                return problem
        elif schema.get("additionalProperties") is False:
            return f"{where} has the key {name!r}, which the schema does not allow"
        elif isinstance(schema.get("additionalProperties"), dict):
            problem = _check(item, schema["additionalProperties"], f"{where}.{name}", root)
            if problem:
                return problem
    return None


def _check_array(
    value: list[Any], schema: dict[str, Any], where: str, root: dict[str, Any]
) -> str | None:
    if "minItems" in schema and len(value) < schema["minItems"]:
        return f"{where} has {len(value)} items, fewer than {schema['minItems']}"
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        return f"{where} has {len(value)} items, more than {schema['maxItems']}"
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value):
            problem = _check(item, items, f"{where}[{index}]", root)
            if problem:
                return problem
    return None


def _check_scalar(value: Any, schema: dict[str, Any], where: str) -> str | None:
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            return f"{where} is shorter than {schema['minLength']} characters"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{where} is longer than {schema['maxLength']} characters"
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where} is {value}, below the minimum {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where} is {value}, above the maximum {schema['maximum']}"
    return None


def _resolve(ref: str, root: dict[str, Any]) -> Any:
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node
