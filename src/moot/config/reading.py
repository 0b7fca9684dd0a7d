"""Reading a config table into its msgspec Structs, with every problem at once.

The run config, the user config and each protocol's section are `Strict` Structs: typed
fields, bounds in `msgspec.Meta` (ge, gt, le, lt, min_length, max_length) and unknown keys
refused. `read(cls, data)` is the one way in: a table that fits is converted in one call
(numbers and booleans given as strings are taken, as a flag's or an environment's are); one
that does not raises `Problems`, which holds every wrong key of the table, however deep, each
with its path. `problem_lines` words them for the user: a misspelt key with the closest known
one, a number out of bounds with the bounds (`text.bound_problem`).

Building these classes costs microseconds each; the same models under pydantic cost some
12 ms of every run's start, before its first request.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterator, Mapping
from types import UnionType
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

import msgspec

from moot.text import bound_problem, closest

__all__ = [
    "FieldProblem",
    "Problem",
    "Problems",
    "Strict",
    "annotation_of",
    "bounds_of",
    "default_of",
    "dump",
    "field_names",
    "problem_lines",
    "read",
]

T = TypeVar("T")


class Strict(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of every config table: fields by keyword, unknown keys refused."""


class FieldProblem(ValueError):
    """What a Struct's `__post_init__` raises about one of its fields (a name, or a path into
    it: `("aliases", "fast", 0)`): the problem is then reported at that path, as a type or
    bound problem is."""

    def __init__(self, field: str | tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = (field,) if isinstance(field, str) else field


class Problem(msgspec.Struct, frozen=True):
    """One thing wrong in a table: where (keys and list indexes), what kind ("unknown",
    "missing", "invalid", or a missed bound: "greater_than_equal", "less_than", ...), the
    value given, a message, and for a missed bound the field's bounds and whether it takes
    whole numbers only. (A Struct, not a NamedTuple: making one of those costs a start-up
    some 0.3 ms.)"""

    loc: tuple[str | int, ...]
    kind: str
    value: Any
    message: str
    bounds: Mapping[str, float] = msgspec.field(default_factory=dict)
    whole: bool = False


class Problems(ValueError):
    """A table that does not fit its Struct: every problem found in it."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{_path(p.loc)}: {p.message}" for p in problems))
        self.problems = problems


def read(cls: type[T], data: Any) -> T:
    """`data` (a table) as a `cls`; `Problems` listing everything wrong with it otherwise."""
    data = _prepared(cls, data)
    try:
        return msgspec.convert(data, cls, strict=False)
    except msgspec.ValidationError as error:
        found = list(_problems(cls, data, ()))
        if not found:  # the fields fit; a check across them (a __post_init__) said no
            found = [Problem((), "invalid", data, _message(str(error)))]
        raise Problems(found) from None


def dump(value: Any) -> Any:
    """A Struct (or anything holding Structs) as JSON-ready builtins, every field included."""
    return msgspec.to_builtins(value)


def field_names(cls: type[Any]) -> tuple[str, ...]:
    """The keys a Struct's table takes (read off the class, without resolving its types)."""
    return tuple(cls.__struct_encode_fields__)


def default_of(cls: type[Any], name: str) -> Any:
    """The default of field `name` of `cls`, made afresh where it is a factory's."""
    for info in msgspec.structs.fields(cls):
        if info.name == name:
            if info.default_factory is not msgspec.NODEFAULT:
                return info.default_factory()
            return info.default
    raise KeyError(name)


def annotation_of(cls: type[Any], name: str) -> Any:
    """The declared type of field `name` of `cls`."""
    for info in msgspec.structs.fields(cls):
        if info.name == name:
            return info.type
    raise KeyError(name)


def bounds_of(annotation: Any) -> dict[str, float]:
    """The numeric bounds (ge, gt, le, lt) set on a field's type by `msgspec.Meta`."""
    found: dict[str, float] = {}
    for meta in _metas(annotation):
        for key in ("ge", "gt", "le", "lt"):
            value = getattr(meta, key, None)
            if value is not None:
                found[key] = value
    return found


def problem_lines(
    error: Problems, prefix: str = "", model: type[Any] | None = None, owner: str | None = None
) -> list[str]:
    """Each problem as `dotted.path: message`; a misspelt key gets the closest known one
    ("did you mean ...") among `model`'s keys at any depth, a number out of bounds its bounds
    and who sets them (`owner`: 'the court protocol')."""
    known = sorted(_all_names(model)) if model is not None else []
    lines = []
    for problem in error.problems:
        path = ".".join(str(part) for part in (prefix, *problem.loc) if part != "")
        message = problem.message
        if problem.kind == "unknown":
            close = closest(str(problem.loc[-1]), known) if problem.loc else None
            message = "unknown key" + (f"; did you mean {close!r}?" if close else "")
        elif problem.bounds:
            bounded = bound_problem(
                problem.kind, problem.value, dict(problem.bounds), problem.whole, owner
            )
            message = bounded or message
        lines.append(f"{path or '(top level)'}: {message}")
    return lines


# --- before reading: a table's shorthands ----------------------------------------------


def _prepared(cls: type[Any], data: Any) -> Any:
    """`data` with its table's `prepare` applied: a classmethod some Structs define for a
    shorthand (`chairman = "SPEC"` for `{model = "SPEC"}`, a preset's values). A Struct that
    holds one with shorthands calls that one's `prepare` in its own: walking every field's type
    for them would cost each run's start some milliseconds of typing introspection. Anything
    that is not a table is left to the reading to refuse."""
    if not isinstance(data, Mapping):
        return data
    prepare = getattr(cls, "prepare", None)
    return prepare(dict(data)) if prepare is not None else data


# --- finding every problem ---------------------------------------------------------------


def _problems(cls: type[Any], data: Any, loc: tuple[str | int, ...]) -> Iterator[Problem]:
    if not isinstance(data, Mapping):
        yield Problem(loc, "invalid", data, f"must be a table of keys, not {_kind(data)}")
        return
    fields = {f.encode_name: f for f in msgspec.structs.fields(cls)}
    for key in data:
        if key not in fields:
            yield Problem((*loc, key), "unknown", data[key], "unknown key")
    wrong: set[str] = set()
    for name, info in fields.items():
        if name not in data:
            if info.required:
                wrong.add(name)
                yield Problem((*loc, name), "missing", None, "is required")
            continue
        for problem in _field_problems(info.type, data[name], (*loc, name)):
            wrong.add(name)
            yield problem
    # The table's own check across its fields (its __post_init__), run on the fields that fit
    # (a wrong one at its default), so that its problem is reported with the others at once;
    # a problem it finds with a field reported wrong above is that one, said already.
    fitting = {
        f.name: _convert(data[k], f.type) for k, f in fields.items() if k in data and k not in wrong
    }
    try:
        cls(**fitting)
    except FieldProblem as problem:
        if problem.path[0] not in wrong:
            yield Problem((*loc, *problem.path), "invalid", data.get(problem.path[0]), str(problem))
    except TypeError:  # a required field is wrong or missing: said above
        pass
    except ValueError as error:
        if not wrong:
            yield Problem(loc, "invalid", data, str(error))


def _convert(value: Any, annotation: Any) -> Any:
    return msgspec.convert(value, annotation, strict=False)


def _field_problems(annotation: Any, value: Any, loc: tuple[str | int, ...]) -> Iterator[Problem]:
    try:
        msgspec.convert(value, annotation, strict=False)
        return
    except msgspec.ValidationError as error:
        message = str(error)
    inner = _struct_in(annotation)
    if inner is not None and isinstance(value, Mapping):
        found = list(_problems(inner, value, loc))
        yield from found or [Problem(loc, "invalid", value, _message(message))]
        return
    whole = "length" in message.split(" - ")[0]  # the list's own size, not an item's problem
    item = _container_item(annotation, list)
    if item is not None and isinstance(value, list) and not whole:
        found = [p for i, v in enumerate(value) for p in _field_problems(item, v, (*loc, i))]
        if found:
            yield from found
            return
    item = _container_item(annotation, dict)
    if item is not None and isinstance(value, Mapping) and not whole:
        found = [p for k, v in value.items() for p in _field_problems(item, v, (*loc, str(k)))]
        if found:
            yield from found
            return
    yield _worded(annotation, value, loc, message)


# Each bound, the kind of problem missing it is (as `text.bound_problem` names it), and the test
# of a value missing it.
_MISSES: tuple[tuple[str, str, Callable[[float, float], bool]], ...] = (
    ("ge", "greater_than_equal", operator.lt),
    ("gt", "greater_than", operator.le),
    ("le", "less_than_equal", operator.gt),
    ("lt", "less_than", operator.ge),
)


def _worded(annotation: Any, value: Any, loc: tuple[str | int, ...], message: str) -> Problem:
    """msgspec's message for one field's value, in the words moot's other errors use."""
    bounds = bounds_of(annotation)
    if bounds and isinstance(value, int | float) and not isinstance(value, bool):
        for key, kind, missed in _MISSES:
            if key in bounds and missed(value, bounds[key]):
                whole = int in _types(annotation) and float not in _types(annotation)
                said = bound_problem(kind, value, bounds, whole) or _message(message)
                return Problem(loc, kind, value, said, bounds, whole)
    values = _literals(annotation)
    if values and message.startswith("Invalid enum value"):
        taken = ", ".join(repr(v) for v in values[:-1]) + f" or {values[-1]!r}"
        return Problem(loc, "invalid", value, f"{value!r} is not one of {taken}")
    return Problem(loc, "invalid", value, _message(message))


def _literals(annotation: Any) -> list[Any]:
    """The values of the Literal types in an annotation (`Literal["a", "b"] | None`: a, b)."""
    if get_origin(annotation) is Literal:
        return list(get_args(annotation))
    return [
        v
        for arg in get_args(annotation)
        if not isinstance(arg, msgspec.Meta)
        for v in _literals(arg)
    ]


_TYPE_WORDS = {
    "int": "a whole number",
    "float": "a number",
    "str": "text",
    "bool": "true or false",
    "array": "a list",
    "object": "a table",
    "null": "nothing",
}


def _message(message: str) -> str:
    """msgspec's 'Expected `int`, got `str` - at `$.x`' as 'must be a whole number, not text'.
    A message of moot's own (a check's ValueError) is kept as it is."""
    text = message.split(" - at `$")[0]
    found = re.fullmatch(r"Expected `([^`]+)`, got `([^`]+)`", text)
    if found:
        # an optional setting is left out to leave it unset (TOML has no null): not worth saying
        types = [t for t in found.group(1).split(" | ") if t != "null"] or ["null"]
        want = " or ".join(_TYPE_WORDS.get(t, t) for t in types)
        return f"must be {want}, not {_TYPE_WORDS.get(found.group(2), found.group(2))}"
    found = re.fullmatch(r"Expected `([^`]+)` of length ([<>]=) (\d+)", text)
    if found:
        kind, op, count = found.groups()
        many = "character" if kind == "str" else "item"
        many += "" if count == "1" else "s"
        return f"must have {'at least' if op == '>=' else 'at most'} {count} {many}"
    found = re.fullmatch(r"Invalid enum value (.+)", text)
    if found:
        return f"{found.group(1)} is not one of the values taken"
    return text


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    for kind, word in ((int, "a number"), (float, "a number"), (str, "text"), (list, "a list")):
        if isinstance(value, kind):
            return word
    return "nothing" if value is None else type(value).__name__


def _path(loc: tuple[str | int, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def _types(annotation: Any) -> tuple[Any, ...]:
    """An annotation and every type inside it: `list[AgentConfig] | None` holds AgentConfig."""
    if isinstance(annotation, msgspec.Meta):
        return ()
    return (annotation, *(t for arg in get_args(annotation) for t in _types(arg)))


def _inner(annotation: Any) -> tuple[Any, ...]:
    """What an `Annotated[...]` or a union (`X | None`) wraps; () for anything else."""
    if get_origin(annotation) in (Annotated, Union) or isinstance(annotation, UnionType):
        return get_args(annotation)
    return ()


def _metas(annotation: Any) -> Iterator[msgspec.Meta]:
    for arg in _inner(annotation):
        if isinstance(arg, msgspec.Meta):
            yield arg
        else:
            yield from _metas(arg)


def _first(annotation: Any, find: Callable[[Any], Any | None]) -> Any | None:
    """`find` of the first type an `Annotated` or a union wraps for which it finds anything."""
    return next((f for f in map(find, _inner(annotation)) if f is not None), None)


def _struct_in(annotation: Any) -> type[Any] | None:
    """The Struct a field holds directly (`Limits`, `AgentConfig | None`), if any."""
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return annotation
    return _first(annotation, _struct_in)


def _container_item(annotation: Any, kind: type) -> Any | None:
    """The item type of a list field or the value type of a dict field (`kind`), optional or
    bounded (`list[AgentConfig]`, `dict[str, str] | None`), if any."""
    if get_origin(annotation) is kind:
        return get_args(annotation)[-1]
    return _first(annotation, lambda arg: _container_item(arg, kind))


def _all_names(cls: type[Any] | None, depth: int = 0) -> set[str]:
    if cls is None:
        return set()
    names = set(field_names(cls))
    if depth < 3:
        for info in msgspec.structs.fields(cls):
            for inner in _types(info.type):
                if isinstance(inner, type) and issubclass(inner, msgspec.Struct):
                    names |= _all_names(inner, depth + 1)
    return names
