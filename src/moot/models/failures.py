"""What every network provider shares: keys, redaction, failure classes, the test guard.

Failures are classified once, here, from what any HTTP API or CLI tells us (a status code, a
Retry-After header, an error text), so that every provider retries the same things:

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

Keys are read from the environment only, remembered, and masked out of every message that a
provider returns: `redact` is the one helper for that, and providers call it on each error.
"""

from __future__ import annotations

import asyncio
import email.utils
import ipaddress
import os
import re
import time
from collections.abc import Awaitable, Iterable, Mapping
from urllib.parse import urlparse

from moot.errors import ConfigError
from moot.models.base import ModelSettings
from moot.types import Completion, FailureKind

__all__ = [
    "classify_message",
    "classify_status",
    "failure",
    "guard_network",
    "guarded_call",
    "is_loopback_url",
    "read_key",
    "redact",
    "remember_secret",
    "retry_after_seconds",
    "sdk_failure",
]

_SECRETS: set[str] = set()
# Shapes of keys we may never have seen (a key echoed back for another account, a URL's key=).
_KEY_PATTERNS = [
    re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-]{12,}"),
    re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-~+/=]{12,}"),
    re.compile(r"(?i)([?&](?:key|api_key|apikey|token)=)[^&\s\"']+"),
    re.compile(r"(?i)(x-api-key\W+)[A-Za-z0-9._\-]{12,}"),
]
MASK = "[redacted]"


def remember_secret(value: str | None) -> None:
    """Every later `redact` masks this value (short values are too common to mask safely)."""
    if value and len(value) >= 8:
        _SECRETS.add(value)


def redact(text: str, extra: Iterable[str] = ()) -> str:
    """`text` with every known key, and anything shaped like a key, replaced by a mask."""
    for secret in sorted({*_SECRETS, *(e for e in extra if e and len(e) >= 8)}, key=len)[::-1]:
        text = text.replace(secret, MASK)
    for pattern in _KEY_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.re.groups else "") + MASK, text)
    return text


def read_key(
    settings: ModelSettings, defaults: tuple[str, ...], *, provider: str, required: bool = True
) -> str | None:
    """The API key from the variable the config names, else from the provider's defaults."""
    names = (settings.api_key_env,) if settings.api_key_env else defaults
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            remember_secret(value)
            return value
    if required and names:
        raise ConfigError(
            f"provider {provider!r} needs an API key: set {' or '.join(names)} in the environment"
            " (moot never reads keys from files or config)"
        )
    return None


def is_loopback_url(url: str) -> bool:
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def guard_network(url: str, *, provider: str, injected: bool = False) -> None:
    """Under tests (MOOT_TESTING=1) refuse a real remote API unless MOOT_ALLOW_NETWORK=1 or the
    wire is replaced (`injected`): no test may spend money or wait on the internet."""
    if injected or is_loopback_url(url):
        return
    if os.environ.get("MOOT_TESTING") == "1" and os.environ.get("MOOT_ALLOW_NETWORK") != "1":
        raise ConfigError(
            f"provider {provider!r} would reach {urlparse(url).hostname} under tests "
            "(MOOT_TESTING=1); set MOOT_ALLOW_NETWORK=1 to allow it"
        )


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


_CONTEXT = re.compile(
    r"context[ _-]?(length|window)|maximum context|prompt is too long|too many tokens|"
    r"input is too long|exceeds? the (maximum|max) (number of )?tokens|token limit|"
    r"request too large|reduce the length",
    re.I,
)
_FILTER = re.compile(r"content[ _-]?(filter|policy|management)|safety|blocked|refus", re.I)
_AUTH = re.compile(
    r"\b401\b|\b403\b|unauthori[sz]ed|invalid[ _-]?(api[ _-]?)?key|authentication|"
    r"api[ _-]?key not valid|api_key_invalid|"
    r"not logged in|please (run /)?log ?in|permission denied|forbidden|insufficient_quota|"
    r"credit balance|billing",
    re.I,
)
_RATE = re.compile(r"\b429\b|rate[ _-]?limit|too many requests|quota|resource.?exhausted", re.I)
_SERVER = re.compile(
    r"\b5\d\d\b|overloaded|internal (server )?error|service unavailable|bad gateway", re.I
)
_TIMEOUT = re.compile(r"timed? ?out|deadline exceeded", re.I)


def classify_message(text: str) -> FailureKind | None:
    """A failure kind from an error's words alone (CLI tools, bodies without a status)."""
    if _CONTEXT.search(text):
        return FailureKind.CONTEXT_LENGTH
    if re.search(r"insufficient_quota|credit balance|billing", text, re.I):
        return FailureKind.AUTH  # quota gone: waiting will not bring it back
    if _RATE.search(text):
        return FailureKind.RATE_LIMIT
    if _AUTH.search(text):
        return FailureKind.AUTH
    if _FILTER.search(text):
        return FailureKind.CONTENT_FILTER
    if _TIMEOUT.search(text):
        return FailureKind.TIMEOUT
    if _SERVER.search(text):
        return FailureKind.SERVER
    return None


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


def sdk_failure(exc: BaseException) -> tuple[FailureKind, str, float | None]:
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


async def guarded_call(
    work: Awaitable[Completion], *, label: str, model: str, timeout: float, started: float
) -> Completion:
    """Await a provider's call within `timeout`; a timeout or an SDK exception becomes a
    classified, redacted error completion (`label` names the provider in the message)."""
    try:
        return await asyncio.wait_for(work, timeout)
    except TimeoutError:
        return failure(
            FailureKind.TIMEOUT,
            f"no answer within {timeout:g}s",
            model=model,
            latency=time.perf_counter() - started,
        )
    except Exception as exc:
        kind, message, wait = sdk_failure(exc)
        return failure(
            kind,
            f"{label}: {message}",
            model=model,
            retry_after=wait,
            latency=time.perf_counter() - started,
        )
