"""A session's request hashes (`RequestHashes`) are `request_hash`'s, digest for digest, while a
request that extends an earlier one hashes only what it adds (issue 23: a resume hashes every
journaled request, and conversations are most of its bytes)."""

from __future__ import annotations

import hashlib

import pytest

from moot.engine import journal
from moot.engine.journal import RequestHashes, request_hash
from moot.types import Message, Request


def _request(messages: list[Message], **params: object) -> Request:
    return Request(messages=messages, temperature=0.5, seed=7, meta={"step": "x"}, **params)


def _conversation(turns: int) -> list[Message]:
    messages = [Message(role="system", content="You are agent A.")]
    for turn in range(turns):
        messages.append(Message(role="user", content=f"prompt {turn} " * 50))
        messages.append(Message(role="assistant", content=f"reply {turn} " * 50))
    return messages


def test_a_growing_conversation_hashes_as_request_hash_does() -> None:
    hashes = RequestHashes()
    conversation = _conversation(6)
    for end in range(1, len(conversation) + 1):  # +1 and +2 messages at a time, and a fork
        for request in (_request(conversation[:end]), _request(conversation[:end], max_tokens=9)):
            assert hashes(request) == request_hash(request)
    forked = [*conversation[:5], Message(role="user", content="another prompt")]
    assert hashes(_request(forked)) == request_hash(_request(forked))


def test_equal_messages_that_are_other_objects_hash_the_same() -> None:
    hashes = RequestHashes()
    hashes(_request(_conversation(3)))
    again = _request([Message(role=m.role, content=m.content) for m in _conversation(3)])
    assert hashes(again) == request_hash(again)


def test_a_request_that_extends_a_kept_one_hashes_only_what_it_adds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hashes = RequestHashes()
    conversation = _conversation(4)
    hashes(_request(conversation[:-2]))
    encoded: list[Message] = []
    monkeypatch.setattr(journal, "_message_json", lambda m: encoded.append(m) or b"x")
    hashes(_request(conversation))
    assert encoded == conversation[-2:]


def test_the_oldest_states_go_first_and_hashes_stay_right(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(RequestHashes, "KEPT", 2)
    hashes = RequestHashes()
    conversation = _conversation(5)
    for end in range(1, len(conversation) + 1):
        assert hashes(_request(conversation[:end])) == request_hash(_request(conversation[:end]))
    assert len(hashes._after) == 2


def test_request_hash_is_sha256_over_the_parameters_then_each_message() -> None:
    """The recorded format, which journals already hold: it must not change."""
    request = _request(_conversation(1))
    params = journal.canonical_json(request.model_dump(exclude={"timeout", "meta", "messages"}))
    expected = hashlib.sha256(params.encode())
    for message in request.messages:
        expected.update(b"\n" + journal.canonical_json(message.model_dump()).encode())
    assert request_hash(request) == RequestHashes()(request) == expected.hexdigest()
