"""The shared data of moot.types: how ids are shown, how records are written and read back."""

from __future__ import annotations

import pytest

from moot.engine.result import Result, build_result
from moot.text.rounds import round_result
from moot.types import (
    ChangeOfMind,
    ClaimAt,
    Completion,
    Event,
    EventKind,
    FailureKind,
    Message,
    ModelFailure,
    RoundSummary,
    Step,
    alias_label,
    dump,
    load,
)


def test_an_alias_label_reads_agents_judges_and_one_of_several_answers() -> None:
    assert alias_label("agent_b") == "Agent B" and alias_label("judge_a") == "Judge A"
    assert alias_label("agent_b/2") == "Agent B (answer 2)"
    # a step id or any other text is shown as given
    for other in ("r1/evaluate/agent_b", "agent_b/x", "me/2", "arbiter_a/1/2"):
        assert alias_label(other) == other
    assert alias_label(None) == "-" and alias_label("") == "-"


def test_a_tally_of_answers_reads_each_answer_apart_from_its_count() -> None:
    """A walkthrough vote's line read "no majority: 7 has 2 of 6, votes 7 2, 9 1, 5 1, 2 1, 4
    needed (1 of 6 answers invalid)": answers and counts ran together."""
    tally = RoundSummary(
        round=1,
        decision="no majority",
        votes={"7": 2, "9": 1, "5": 1, "2": 1},
        needed=4,
        out_of=6,
        problem="1 of 6 answers invalid",
    )
    assert round_result(tally) == (
        "no majority: '7' 2 of 6, '9' 1, '5' 1, '2' 1; 4 of 6 needed; 1 of 6 answers invalid"
    )
    # a long answer is cut, its own commas and numbers inside its quotes
    long = "However, when dealing with 3 and 4 the sum is 7, as counting on from 3 shows"
    shown = round_result(RoundSummary(round=1, votes={long: 3}, needed=2, out_of=3))
    assert shown == (
        "'However, when dealing with 3 and 4 the sum is 7, as count...' 3 of 3; 2 of 3 needed"
    )


def test_a_tally_of_votes_without_a_total_reads_as_before() -> None:
    court = RoundSummary(round=2, votes={"yes": 2, "no": 0, "abstain": 0, "failed": 1}, needed=2)
    assert round_result(court) == "votes yes 2, no 0, abstain 0, failed 1, 2 needed"


def test_a_record_leaves_out_only_its_named_fields_while_they_are_empty() -> None:
    """Journals from before `truncated_from`, `hit_max_tokens` and `kept` existed read and write
    back byte for byte: those fields are left out while empty, and only those."""
    whole = dump(Completion(text="x"))
    assert "truncated_from" not in whole and "hit_max_tokens" not in whole
    assert whole["cost"] is None and whole["failure"] is None  # other empty fields stay
    cut = dump(Completion(text="x", truncated_from=5, hit_max_tokens=True))
    assert cut["truncated_from"] == 5 and cut["hit_max_tokens"] is True
    own = dump(ClaimAt(agent="agent_a", round=1, claim="Paris"))
    assert "kept" not in own and own["reason"] == "" and own["valid"] is True
    kept = dump(ClaimAt(agent="agent_a", round=1, claim="Paris", kept="its call failed"))
    assert kept["kept"] == "its call failed"
    # nested records, tuples and enums become JSON's own types
    failed = dump(
        Completion(status="error", failure=ModelFailure(kind=FailureKind.TIMEOUT, message="m"))
    )
    assert failed["failure"] == {"kind": "timeout", "message": "m", "retry_after": None}
    assert dump(ChangeOfMind(agent="a", round=1, before="x", after="y", toward=("b",)))[
        "toward"
    ] == ["b"]


def test_a_record_read_back_is_checked() -> None:
    """What a journal or a cache holds is read back checked: an unknown field, a wrong type or
    a missing field is a ValueError, not a record that fails later."""
    assert load({"role": "user", "content": "hi"}, Message) == Message(role="user", content="hi")
    for bad in (
        {"role": "user", "content": "hi", "extra": 1},
        {"role": "user", "content": 3},
        {"role": "user"},
        {"role": "moderator", "content": "hi"},
    ):
        with pytest.raises(ValueError):
            load(bad, Message)
    # a whole number where a float belongs is the float, as JSON has no other way to write it
    assert load({"latency": 2}, Completion).latency == 2.0
    assert isinstance(load({"latency": 2}, Completion).latency, float)


def test_an_event_read_from_its_record_has_its_kind_as_an_event_kind() -> None:
    event = Event.from_record({"kind": "ask", "step": "r0/solve/agent_a", "seq": 1})
    assert event.kind is EventKind.ASK and event.kind.durable and event.data == {}
    with pytest.raises(ValueError):
        Event.from_record({"kind": "no such kind"})


RECORDS: list[dict[str, object]] = [
    {"kind": "ask", "step": "r0/solve/agent_a", "data": {"a": [1]}, "seq": 4, "ts": 1.5},
    {"kind": "begin", "step": None, "data": {}, "seq": 0, "ts": None},
    {"kind": "note", "data": None},
    {"kind": "ask", "ts": 1795875948},  # a whole number of seconds: the float
    {"kind": "ask", "seq": 3.0},
    {"kind": "ask", "seq": True},
    {"kind": "ask", "seq": "3"},
    {"kind": "ask", "data": [1, 2]},
    {"kind": "ask", "data": []},
    {"kind": "ask", "step": 7},
    {"kind": "ask", "ts": "soon"},
    {"kind": "no such kind"},
    {"kind": ["ask"]},
    {"kind": None},
]


@pytest.mark.parametrize("record", RECORDS, ids=repr)
def test_an_event_made_from_its_record_is_the_one_msgspec_converts(
    record: dict[str, object],
) -> None:
    """A journal line's own fields make the event directly (issue 23: a resume reads every
    line); anything else is converted, or refused, as msgspec does it."""
    import msgspec

    fields = {
        "kind": record["kind"],
        "step": record.get("step"),
        "data": record.get("data") or {},
        "seq": record.get("seq"),
        "ts": record.get("ts"),
    }
    try:
        expected = msgspec.convert(fields, Event, strict=False)
    except msgspec.ValidationError:
        with pytest.raises(ValueError):
            Event.from_record(record)
        return
    made = Event.from_record(record)
    assert made == expected and type(made.kind) is EventKind
    assert [type(getattr(made, f)) for f in Event.__struct_fields__] == [
        type(getattr(expected, f)) for f in Event.__struct_fields__
    ]


def test_a_result_writes_a_whole_cost_as_a_float_as_result_json_always_had_it() -> None:
    """A result with no agents sums its cost to the int 0; result.json has always said 0.0
    (pydantic wrote a float field's value as a float), and replay compares it byte for byte."""
    built = build_result(
        session_id="s",
        protocol="arena",
        task="t",
        aliases={},
        agents={},
        outcome=None,
        status="failed",
        stop_message="stopped",
    )
    assert isinstance(built.cost, float) and '"cost": 0.0,' in built.to_json()
    assert Result.read(built.to_json()) == built


def test_a_kind_given_as_its_name_is_the_enum_member() -> None:
    """A plugin provider or a scripted reply function may build a failure or an event with the
    kind's name; the engine reads `failure.transient` on every failed call (it crashed on a
    str once records left pydantic, which had converted it)."""
    assert Completion.error("rate_limit", "slow down").failure.transient  # type: ignore[arg-type, union-attr]
    assert Event(kind="ask").kind is EventKind.ASK  # type: ignore[arg-type]
    assert Event(kind="ask").kind.durable  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ModelFailure(kind="no such kind", message="m")  # type: ignore[arg-type]


def test_a_record_read_back_takes_what_pydantic_took() -> None:
    """Records read back from files another tool or an older moot wrote: a whole float for an
    int, a number written as a string, 0/1 for a bool, as pydantic's lax mode took them."""
    assert Event.from_record({"kind": "ask", "seq": 3.0}).seq == 3
    read = load({"attempts": 2.0, "cost": "0.5", "hit_max_tokens": 1}, Completion)
    assert (read.attempts, read.cost, read.hit_max_tokens) == (2, 0.5, True)
    with pytest.raises(ValueError):
        load({"attempts": 2.5}, Completion)  # not a whole number: refused, as pydantic did


@pytest.mark.parametrize(
    ("step", "stage", "number", "prefix"),
    [
        ("r2/revise/agent_a", "round", 2, "r"),
        ("r0/solve/agent_a/reask", "round", 0, "r"),
        ("j1/score/judge_c", "judges", 1, "j"),
        ("m12/judge/judge_a", "m", 12, "m"),  # a protocol's own letter
        ("r07/x", "round", 7, "r"),
        ("setup/x", "setup", None, ""),  # a free name: no number
        ("R1/x", "R1", None, ""),  # not lowercase
        ("r1a/x", "r1a", None, ""),  # the number is not the end of the head
        ("12/x", "12", None, ""),  # no letter
        ("é1/x", "é1", None, ""),  # a letter outside a to z
        ("", "other", None, ""),
    ],
)
def test_a_step_id_reads_its_stage_letter_and_number_from_its_head(
    step: str, stage: str, number: int | None, prefix: str
) -> None:
    parsed = Step.parse(step)
    assert (parsed.stage, parsed.number, parsed.prefix) == (stage, number, prefix)
