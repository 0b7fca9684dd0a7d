"""What an ask event records of its request (`request_digest`), and how a resume compares it
(`same_request`): each message is hashed once however many requests resend it (issue 23: a
resume hashes every journaled request, and conversations are most of its bytes), and a
session journaled with the older `request_hash` still resumes and replays."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moot.engine import requests
from moot.engine.requests import REQUEST_DIGEST, request_digest, request_hash, same_request
from moot.types import Message, Request


def _request(messages: list[Message], **params: object) -> Request:
    return Request(messages=messages, temperature=0.5, seed=7, meta={"step": "x"}, **params)


def _conversation(turns: int) -> list[Message]:
    messages = [Message(role="system", content="You are agent A.")]
    for turn in range(turns):
        messages.append(Message(role="user", content=f"prompt {turn} " * 50))
        messages.append(Message(role="assistant", content=f"reply {turn} \u00e9 " * 50))
    return messages


def test_the_digest_is_sha256_over_the_parameters_then_each_messages_own_digest() -> None:
    """The recorded format, which journals hold from now on: it must not change."""
    request = _request(_conversation(2), max_tokens=9)
    left_out = {"timeout", "meta", "messages"}
    fields = [name for name in Request.__struct_fields__ if name not in left_out]
    params = requests.canonical_json({name: getattr(request, name) for name in fields})
    expected = hashlib.sha256(params.encode())
    for m in request.messages:
        expected.update(hashlib.sha256(f"{m.role}\n{m.content}".encode()).digest())
    assert request_digest(request) == expected.hexdigest()


@given(
    st.dictionaries(
        st.sampled_from(["temperature", "max_tokens", "seed", "json_schema", "top_p", "n"]),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(min_value=-(2**70), max_value=2**70),
            st.floats(allow_nan=True, allow_infinity=True),
            st.text(max_size=5),
            st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        ),
    )
)
def test_the_parameters_are_written_as_canonical_json_writes_them(
    params: dict[str, object],
) -> None:
    """_parameters writes null, whole numbers and finite floats itself (issue 23: the encoder
    made for each request cost a resume more than its hashing); the text is canonical_json's."""
    assert requests._parameters_json(params) == requests.canonical_json(params)


def test_a_message_is_only_its_role_and_text() -> None:
    """A field added to Message must join the message digest (requests._message_digest)."""
    assert set(Message.__struct_fields__) == {"role", "content"}


def test_anything_that_changes_the_request_changes_the_digest() -> None:
    base = _request(_conversation(2))
    changed = [
        _request(_conversation(2), max_tokens=9),
        _request(_conversation(2)[:-1]),
        _request([*_conversation(2)[:-1], Message(role="assistant", content="another")]),
        _request(
            [*_conversation(2)[:-1], Message(role="user", content=_conversation(2)[-1].content)]
        ),
    ]
    assert len({request_digest(r) for r in [base, *changed]}) == 1 + len(changed)
    timeout = Request(messages=base.messages, temperature=0.5, seed=7, timeout=3.0)
    assert request_digest(timeout) == request_digest(base)  # timeout and meta are left out


def test_each_message_is_hashed_once_and_equal_messages_digest_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    conversation = _conversation(4)
    for end in range(1, len(conversation) + 1):  # a conversation growing ask by ask
        request_digest(_request(conversation[:end]))
    hashed: list[bytes] = []
    real = hashlib.sha256

    def counting(data: bytes = b"") -> object:
        hashed.append(data)
        return real(data)

    monkeypatch.setattr(requests.hashlib, "sha256", counting)
    again = request_digest(_request(conversation))
    assert len(hashed) == 1  # the parameters only: every message's digest was kept
    copies = [Message(role=m.role, content=m.content) for m in conversation]
    assert request_digest(_request(copies)) == again


def test_digests_stay_right_when_the_oldest_are_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(requests, "_DIGESTS", {})
    monkeypatch.setattr(requests, "_DIGESTS_KEPT", 2)
    conversation = _conversation(3)
    first = [request_digest(_request(conversation[:end])) for end in range(1, 8)]
    monkeypatch.setattr(requests, "_DIGESTS", {})
    assert [request_digest(_request(conversation[:end])) for end in range(1, 8)] == first
    assert len(requests._DIGESTS) == 2


def test_a_recorded_request_is_compared_by_its_digest_or_by_an_older_sessions_hash() -> None:
    request = _request(_conversation(1))
    other = _request(_conversation(2))
    digest = request_digest(request)
    assert same_request({REQUEST_DIGEST: digest}, request, digest)
    assert not same_request({REQUEST_DIGEST: request_digest(other)}, request, digest)
    old = {"request_hash": request_hash(request)}  # what a session journaled before digests
    assert same_request(old, request, digest)
    assert not same_request({"request_hash": request_hash(other)}, request, digest)
