"""Failure classification: one table for every provider, from what any HTTP API or CLI tells
us (a status code, a Retry-After header, an error text), so that all retry the same things:

    status / signal                          kind              retried by the engine
    401, 403, "invalid api key"              auth              no
    429 (quota exhausted: auth)              rate_limit        yes, after Retry-After
    400/413 "context length", "too long"     context_length    no
    "content filter", "safety", refusal      content_filter    no
    408, client-side timeout                 timeout           yes
    5xx, 529 overloaded                      server            yes
    refused or dropped connection            connection        yes
    unparseable or unexpected body           bad_response      no
    other 4xx                                bad_request       no

`failure` turns a classified failure into an error completion, its message redacted
(moot/models/keys.py) and kept short.
"""

from __future__ import annotations

import email.utils
import functools
import re
import time
from collections.abc import Mapping

from moot.models.keys import redact
from moot.types import Completion, FailureKind

__all__ = [
    "classify_exception",
    "classify_message",
    "classify_status",
    "failure",
    "retry_after_seconds",
]


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return None if parsed is None else max(0.0, parsed.timestamp() - time.time())


def _status(codes: str, phrases: str) -> str:
    """A status code in an error's words only where it reads as one: after "status", "error",
    "HTTP" or "code" ("API Error: 529", "last status: 429", '"code": 401'), or before its
    reason phrase or a JSON body ("503 Service Unavailable", "429 {"). A number elsewhere is
    no status: "line 512" of a traceback, a folder "pytest-504" in a path."""
    return (
        r"\b(?:status|error|http|code)[\"']?[\s:=]*(?:code[\"']?[\s:=]*)?(?:"
        + codes
        + r")\b|\b(?:"
        + codes
        + r")\s*(?:"
        + phrases
        + r"|\{)"
    )


# What an error's words say, tried in this order: the first that matches names the kind.
# Compiled on the first failure (`_words`): a run that fails no call never needs them, and
# compiling them cost its start-up some milliseconds before the first request (issue 23).
_WORD_SOURCES: tuple[tuple[str, FailureKind], ...] = (
    (
        r"context[ _-]?(length|window)|maximum context|prompt is too long|too many tokens|"
        r"input is too long|exceeds? the (maximum|max) (number of )?tokens|token limit|"
        r"request too large|reduce the length",
        FailureKind.CONTEXT_LENGTH,
    ),
    # quota gone: waiting will not bring it back
    (r"insufficient_quota|credit balance|billing", FailureKind.AUTH),
    (
        _status("429", "too many")
        + r"|rate[ _-]?limit|too many requests|quota|resource.?exhausted",
        FailureKind.RATE_LIMIT,
    ),
    (
        _status("401|403", "unauthori[sz]ed|forbidden")
        + r"|unauthori[sz]ed|invalid[ _-]?(api[ _-]?)?key|authentication|"
        r"api[ _-]?key not valid|api_key_invalid|"
        r"not logged in|please (run /)?log ?in|permission denied|forbidden|insufficient_quota|"
        r"credit balance|billing",
        FailureKind.AUTH,
    ),
    (
        r"content[ _-]?(filter|policy|management)|safety|blocked|refus",
        FailureKind.CONTENT_FILTER,
    ),
    (r"timed? ?out|deadline exceeded", FailureKind.TIMEOUT),
    (
        _status(r"5\d\d", "internal|service|bad gateway|gateway|server|overloaded")
        + r"|overloaded|internal (server )?error|service unavailable|bad gateway",
        FailureKind.SERVER,
    ),
)


@functools.cache
def _words() -> tuple[tuple[re.Pattern[str], FailureKind], ...]:
    return tuple((re.compile(words, re.I), kind) for words, kind in _WORD_SOURCES)


def classify_message(text: str) -> FailureKind | None:
    """A failure kind from an error's words alone (CLI tools, bodies without a status)."""
    return next((kind for words, kind in _words() if words.search(text)), None)


def classify_status(status: int, body: str = "") -> FailureKind:
    """A failure kind from an HTTP status, refined by the body where statuses are shared."""
    if status == 429:
        return FailureKind.AUTH if "insufficient_quota" in body else FailureKind.RATE_LIMIT
    if status in (401, 403):
        return FailureKind.AUTH
    if status == 408:
        return FailureKind.TIMEOUT
    if status == 413:
        return FailureKind.CONTEXT_LENGTH
    if status >= 500:
        return FailureKind.SERVER
    if 400 <= status < 500:
        refined = classify_message(body)
        if refined in (FailureKind.CONTEXT_LENGTH, FailureKind.CONTENT_FILTER, FailureKind.AUTH):
            return refined
        return FailureKind.BAD_REQUEST
    return FailureKind.BAD_RESPONSE


def classify_exception(exc: BaseException) -> tuple[FailureKind, str, float | None]:
    """Kind, message and wait for an exception raised by an SDK or httpx2, by its shape (a
    status code, a response with headers) rather than by each SDK's class tree."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        code = getattr(exc, "code", None)
        status = code if isinstance(code, int) and 100 <= code < 600 else None
    headers = getattr(getattr(exc, "response", None), "headers", None)
    message = str(getattr(exc, "message", None) or exc) or name
    if status is not None:
        kind = classify_status(status, f"{getattr(exc, 'body', '')} {message}")
        wait = retry_after_seconds(headers) if kind.transient else None
        return kind, f"HTTP {status}: {message}", wait
    if isinstance(exc, TimeoutError) or "Timeout" in name:
        return FailureKind.TIMEOUT, f"timed out ({name})", None
    if isinstance(exc, ConnectionError) or any(
        word in name for word in ("Connect", "Network", "RemoteProtocol")
    ):
        return FailureKind.CONNECTION, f"{name}: {message}", None
    if isinstance(exc, ValueError | KeyError | TypeError | AttributeError | IndexError) or (
        "Validation" in name or "Decode" in name
    ):
        return FailureKind.BAD_RESPONSE, f"unexpected response ({name}: {message})", None
    return FailureKind.UNKNOWN, f"{name}: {message}", None


def failure(
    kind: FailureKind,
    message: str,
    *,
    model: str,
    retry_after: float | None = None,
    latency: float = 0.0,
) -> Completion:
    """An error completion whose message has been through `redact` and is kept short."""
    text = redact(message.strip())
    if len(text) > 2000:
        text = text[:2000] + " [...]"
    return Completion.error(kind, text, model=model, retry_after=retry_after, latency=latency)
