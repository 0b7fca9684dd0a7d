"""What an ask event records of its request, so that a resume sees a prompt the code now makes
otherwise (`same_request`): `request_digest`, and for sessions journaled before it,
`request_hash`."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from typing import Any

from moot.engine.lines import canonical_json
from moot.types import Message, Request, dump

__all__ = ["REQUEST_DIGEST", "request_digest", "request_hash", "same_request"]


@functools.lru_cache(maxsize=4096)
def _message_json(message: Message) -> bytes:
    return canonical_json(dump(message)).encode("utf-8")


def request_hash(request: Request) -> str:
    """What an ask event recorded of its request before `request_digest`: SHA-256
    over the request's parameters and messages (timeout and meta left out), the canonical JSON
    of the parameters, then one canonical JSON line per message.

    Conversations grow every round and resume hashes every recorded request, so messages are
    encoded once each (cached: they are frozen and shared between asks), not once per request."""
    digest = _parameters(request)
    for message in request.messages:
        digest.update(b"\n")
        digest.update(_message_json(message))
    return digest.hexdigest()


def _parameters(request: Request) -> hashlib._Hash:
    """SHA-256 begun over the request's parameters (timeout and meta left out)."""
    params = {name: getattr(request, name) for name in request.__struct_fields__}
    for name in ("timeout", "meta", "messages"):
        del params[name]
    return hashlib.sha256(_parameters_json(params).encode("utf-8"))


_INFINITY = float("inf")


def _parameters_json(params: dict[str, Any]) -> str:
    """`canonical_json(params)`, written here where every value is null, a whole number or a
    finite float, as they are but for a JSON schema: the standard encoder is made again for
    each call, which cost a resume more than the hashing (it hashes every recorded request).
    The names are a record's field names, which JSON writes as they are."""
    parts = []
    for name in sorted(params):
        value = params[name]
        if value is None:
            parts.append(f'"{name}":null')
        elif type(value) is int:
            parts.append(f'"{name}":{int.__repr__(value)}')
        elif type(value) is float and -_INFINITY < value < _INFINITY:
            parts.append(f'"{name}":{float.__repr__(value)}')
        else:
            return canonical_json(params)
    return "{" + ",".join(parts) + "}"


REQUEST_DIGEST = "request_digest"  # an ask event's record of its request (request_digest)


# Each message's digest, by the message's identity (the entry keeps the message, so its id is
# not reused while kept): a lookup costs no hashing of its text. The oldest go first.
_DIGESTS: dict[int, tuple[Message, bytes]] = {}
_DIGESTS_KEPT = 8192


def _message_digest(message: Message) -> bytes:
    kept = _DIGESTS.get(id(message))
    if kept is not None and kept[0] is message:
        return kept[1]
    # a message is its role and its text (a new field must join here); no role has a newline
    hashed = hashlib.sha256(message.role.encode("ascii") + b"\n")
    hashed.update(message.content.encode("utf-8", "surrogatepass"))  # (the text copied once)
    digest = hashed.digest()
    if len(_DIGESTS) >= _DIGESTS_KEPT:
        _DIGESTS.pop(next(iter(_DIGESTS)), None)
    _DIGESTS[id(message)] = (message, digest)
    return digest


def request_digest(request: Request) -> str:
    """What an ask event records of its request, so a resume sees a changed prompt: SHA-256
    over the canonical JSON of the parameters (timeout and meta left out), then the SHA-256 of
    each message (its role, a newline, its text). A message is hashed once however many
    requests carry it (kept by its identity: messages are frozen and shared), so a resume,
    which hashes every journaled request, costs the conversations' messages once, not once
    per ask that resends them."""
    digest = _parameters(request)
    parts = []
    for message in request.messages:  # _message_digest, its lookup done here
        kept = _DIGESTS.get(id(message))
        parts.append(
            kept[1] if kept is not None and kept[0] is message else _message_digest(message)
        )
    digest.update(b"".join(parts))
    return digest.hexdigest()


def same_request(data: Mapping[str, Any], request: Request, digest: str) -> bool:
    """Whether the ask event holding `data` was for `request` (`digest`: its request_digest),
    by the digest it records, or by `request_hash` for a session journaled before digests."""
    if REQUEST_DIGEST in data:
        return bool(data[REQUEST_DIGEST] == digest)
    return bool(data.get("request_hash") == request_hash(request))
