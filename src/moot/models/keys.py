"""API keys: read from the environment only, remembered, and masked out of every message.

`redact` is the one helper for masking; providers call it (through `failure`) on each error, so a
key echoed back by an API never reaches the journal or a report.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from moot.errors import ConfigError
from moot.types import ModelSettings

__all__ = ["MASK", "read_key", "redact", "remember_secret"]

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
