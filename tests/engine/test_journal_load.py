"""Loading a journal checks each line's hash over the bytes moot wrote, without encoding its
record again (issue 23: a resume loads every line); a line in another layout is checked by
encoding its record, as before, and an edit is refused either way."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moot.engine import journal as journal_module
from moot.engine import lines
from moot.engine.journal import Journal, canonical_json
from moot.errors import JournalError
from moot.types import Event

TEXT = 'An answer with "quotes", a "hash":"0" of its own, ünïcode and \\ slashes.'


def written(path: Path, key: bytes | None = None) -> list[bytes]:
    journal, _ = Journal.open(path, key)
    journal.append(Event(kind="begin", data={"task": "t", "aliases": {}}, ts=time.time()))
    for i in range(3):
        data = {"text": TEXT, "n": i, "nested": {"b": [1, 2.5, None], "a": True}}
        journal.append(Event(kind="ask", step=f'r{i}/"hash":"x"/agent_a', data=data, ts=1.5))
    journal.close()
    return path.read_bytes().splitlines(keepends=True)


@pytest.mark.parametrize("key", [None, b"a key"])
def test_lines_as_written_load_without_encoding_their_records_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: bytes | None
) -> None:
    path = tmp_path / "events.jsonl"
    written(path, key)
    encoded = 0
    digest = journal_module._digest

    def counted(body: dict[str, object]) -> str:
        nonlocal encoded
        encoded += 1
        return digest(body)

    monkeypatch.setattr(journal_module, "_digest", counted)
    journal, cut = Journal.open(path, key, repair=False)
    assert cut is None and len(journal.events) == 4 and encoded == 0
    assert journal.events[2].data["text"] == TEXT
    assert journal.events[2].step == 'r1/"hash":"x"/agent_a'


def relaid(line: bytes) -> bytes:
    """The same record in another layout: spaces after the separators, keys unsorted."""
    record = json.loads(line)
    order = ["kind", "hash", "seq", "data", "prev", "step", "ts"]
    return (json.dumps({k: record[k] for k in order}, ensure_ascii=False) + "\n").encode()


def test_a_line_in_another_layout_is_checked_by_its_record(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    lines = written(path)
    lines[2] = relaid(lines[2])
    path.write_bytes(b"".join(lines))
    journal, _ = Journal.open(path, repair=False)
    assert journal.events[2].data["text"] == TEXT


def test_an_edited_line_is_refused_in_either_layout(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    lines = written(path)
    edited = lines[2].replace(b"slashes", b"slashed")
    for line in (edited, relaid(edited)):
        path.write_bytes(b"".join([*lines[:2], line, *lines[3:]]))
        with pytest.raises(JournalError, match="line 3 does not match its hash"):
            Journal.open(path, repair=False)


def test_a_hash_moved_into_the_data_is_refused(tmp_path: Path) -> None:
    """The bytes that hash right, with the stored hash cut from another place: the record read
    from the line is not the one hashed."""
    path = tmp_path / "events.jsonl"
    lines = written(path)
    record = json.loads(lines[2])
    stored = record.pop("hash")
    body = canonical_json(record)
    moved = body.replace('"n":1', f'"hash":"{stored}","n":1', 1)
    path.write_bytes(b"".join([*lines[:2], (moved + "\n").encode(), *lines[3:]]))
    with pytest.raises(JournalError, match="line 3"):
        Journal.open(path, repair=False)


SHORT_VALUES: list[object] = [
    "answer",
    'r1/"hash":"x"/agent_a',
    "back\\slash, tab\t, bell\x07, new\nline",
    "ünïcode, 汉字, emoji \U0001f600",
    "\ud800",  # a lone surrogate: json writes it escaped
    "",
    0,
    -7,
    2**70,
    1795788397.7683623,
    0.1,
    1e16,
    -0.0,
    5e-324,
    float("nan"),
    float("inf"),
    None,
    True,
    [1, "two"],
    {"b": 1, "a": 2},
]


@pytest.mark.parametrize("mac", [None, "f" * 64])
@pytest.mark.parametrize("value", [v for v in SHORT_VALUES if v != "\ud800"], ids=repr)
def test_a_line_as_the_journal_writes_it_is_checked_over_its_own_bytes(
    value: object, mac: str | None
) -> None:
    """Whatever its short fields hold, a line as `_put` writes it is checked by hashing its
    bytes with the hash and HMAC cut out; the same line edited, or with those bytes moved
    elsewhere in the record, is not as written (the record check decides then)."""
    import hashlib

    data = {"text": TEXT, "hash": "0" * 64, "nested": {"hash": "1" * 64, "kind": "x"}}
    body = {"data": data, "kind": "ask", "prev": "0" * 64, "seq": 3, "step": value, "ts": value}
    digest = hashlib.sha256(canonical_json(body).encode()).hexdigest()
    signed = {"hash": digest} if mac is None else {"hash": digest, "hmac": mac}
    line = canonical_json({**body, **signed}).encode()

    def check(raw: bytes) -> bool:
        record = lines.read_line(raw)
        return lines.as_written(raw, record, record.pop("hash", None), record.pop("hmac", None))

    assert check(line)
    assert not check(line.replace(b"slashes", b"slashed"))
    cut = canonical_json(signed)[1:-1].encode()  # "hash":"...","hmac":"..."
    moved = line.replace(b"," + cut, b"").replace(b'"seq":3', b'"seq":3,' + cut)
    assert json.loads(moved) == json.loads(line) and not check(moved)


LINES = [
    b'{"a":1,"a":2}',
    b'{"a":"\\ud800 and \\udfff"}',  # lone surrogates: pydantic's parser refuses them
    b'{"a":NaN,"b":-Infinity,"c":1e400}',
    b'{"a":123456789012345678901234567890,"b":-0,"c":1.5E+2,"d":0.1}',
    b'{"t":"\\u00e9\\n\\"q\\"","u":"\xc3\xbc"}',
    b"[1,2]",
    b'{"a":"\xed\xa0\x80"}',  # a surrogate in UTF-8: json decodes with surrogatepass
    b'\xef\xbb\xbf{"a":1}',  # a byte order mark
    b'{"a":1.7976931348623157e309,"b":5e-324,"c":-0.0}',
]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.booleans())
def test_any_json_value_reads_as_the_standard_library_reads_it(value: object, ascii: bool) -> None:
    """Whichever parser reads it, a line's value is `json.loads`'s, floats' spelling, lone
    surrogates, NaN and integers beyond 64 bits included."""
    line = json.dumps(value, ensure_ascii=ascii).encode("utf-8", "surrogatepass")
    assert repr(lines.read_line(line)) == repr(json.loads(line))


@pytest.mark.parametrize("line", LINES, ids=repr)
def test_a_line_reads_as_the_standard_library_reads_it(line: bytes) -> None:
    assert repr(lines.read_line(line)) == repr(json.loads(line))


@pytest.mark.parametrize("line", [b'{"a":1} x', b'{"a":1,}', b'{"a":"\xff"}', b'{"a":"\x01"}'])
def test_a_line_that_is_no_json_fails_with_the_standard_library_message(line: bytes) -> None:
    with pytest.raises(ValueError) as ours:
        lines.read_line(line)
    with pytest.raises(ValueError) as theirs:
        json.loads(line)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    "raw", [b"", b"\n", b"\n\n", b"a", b"a\n", b"a\nb", b'{"a":1}\n{"b":2}\n{"c"', b"\r\n\x0b\n"]
)
def test_the_journal_is_cut_into_its_lines_as_split_cuts_it(raw: bytes) -> None:
    assert journal_module._split_lines(raw) == raw.split(b"\n")
    long = raw * 1000 + b"x" * 5000
    assert journal_module._split_lines(long) == long.split(b"\n")
