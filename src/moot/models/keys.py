"""API keys: read from the environment only, remembered, and masked out of every message.

`redact` masks known keys, any run of 8 or more of a known key's characters, and anything
shaped like a key; providers call it (through `failure`) on each error, so a key echoed back by
an API never reaches the journal or a report. `mask_known` masks known keys and their parts
only: the engine runs it over everything it journals, model text included (a reply quoting a
key), where key shapes are left alone (a code example's "Bearer YOUR_TOKEN" is not a secret).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from moot import lazy
from moot.errors import ConfigError
from moot.types import ModelSettings

__all__ = [
    "MASK",
    "PART",
    "call_settings_masked",
    "known_secrets",
    "mask_known",
    "read_key",
    "redact",
    "remember_config_secrets",
    "remember_secret",
    "restore_call_settings",
]

_SECRETS: set[str] = set()
# Shapes of keys we may never have seen (a key echoed back for another account, a URL's key=).
_KEY_PATTERNS = [
    lazy.pattern(r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-]{12,}"),
    lazy.pattern(r"\bsk-ant-[A-Za-z0-9_\-]{8,}"),
    lazy.pattern(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    lazy.pattern(r"(?i)(bearer\s+)[A-Za-z0-9._\-~+/=]{12,}"),
    lazy.pattern(r"(?i)([?&](?:key|api_key|apikey|token)=)[^&\s\"']+"),
    lazy.pattern(r"(?i)(x-api-key\W+)[A-Za-z0-9._\-]{12,}"),
]
MASK = "[redacted]"
PART = 8  # a run of this many characters of a key is masked (a key cut short still leaks)


def remember_secret(value: str | None) -> None:
    """Every later `redact` masks this value (short values are too common to mask safely)."""
    if value and len(value) >= PART:
        _SECRETS.add(value)


# A config header or URL query parameter named like this holds a secret (a token, a key).
_SECRET_NAME = lazy.pattern(r"(?i)authorization|key|token|secret|password|cookie|signature|sig\b")
_SCHEME = lazy.pattern(r"(?i)^(?:bearer|basic|token)\s+(.+)$")


def remember_config_secrets(headers: Mapping[str, str], base_url: str | None = None) -> None:
    """The secrets an agent's config carries are masked like keys read from the environment:
    the value of a header named like authorization, x-api-key, api-key, *token*, *secret*,
    *key* (the token after its "Bearer "), and a `base_url` query parameter named so."""
    pairs = list(headers.items())
    if base_url:
        pairs += parse_qsl(urlsplit(base_url).query, keep_blank_values=False)
    for name, value in pairs:
        if not _SECRET_NAME.search(name):
            continue
        # "Bearer TOKEN": the token alone, or the text's space before a token would go too;
        # a `${NAME}` reference is no secret (its value is remembered once read)
        remember_secret(_secret_of(value))


# `${NAME}` in a config's header or base_url: read from the environment when a provider is
# made (config.AgentConfig.settings), a reference and no secret in itself
_REFERENCE = lazy.pattern(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")


def _secret_of(value: str) -> str:
    """The secret part of a header value or a URL's parameter ("Bearer TOKEN": the token);
    "" when it is only environment references."""
    scheme = _SCHEME.match(value.strip())
    secret = scheme.group(1).strip() if scheme else value.strip()
    return "" if not _REFERENCE.sub("", secret).strip() else secret


def _masked_header(name: str, value: str) -> str:
    """A header's value with its secret masked ("Bearer [redacted]"), when it is named so;
    kept when it holds only environment references (`${NAME}`)."""
    if not isinstance(value, str) or not _SECRET_NAME.search(name) or MASK in value:
        return value
    if not _secret_of(value):
        return value
    scheme = _SCHEME.match(value.strip())
    return f"{value.strip()[: scheme.start(1)]}{MASK}" if scheme else MASK


def _masked_url(url: str) -> str:
    """A base_url with the values of its query parameters named like a secret masked."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if not any(_SECRET_NAME.search(name) and _secret_of(value) for name, value in pairs):
        return url
    masked = [
        (name, MASK if _SECRET_NAME.search(name) and _secret_of(value) else value)
        for name, value in pairs
    ]
    return urlunsplit(parts._replace(query=urlencode(masked, safe="[]${}")))


def call_settings_masked(config: Any) -> Any:
    """`config` (JSON data: a run's config) with the secrets of every agent's call settings
    masked: the values of headers named like a secret (after "Bearer "), the values of
    base_url query parameters named so. A session's files keep no secret; a resume takes them
    again from the user's config (`restore_call_settings`)."""
    if isinstance(config, list):
        return [call_settings_masked(item) for item in config]
    if not isinstance(config, dict):
        return config
    result: dict[str, Any] = {}
    for key, value in config.items():
        if key == "headers" and isinstance(value, dict):
            result[key] = {name: _masked_header(name, v) for name, v in value.items()}
        elif key == "base_url" and isinstance(value, str):
            result[key] = _masked_url(value)
        else:
            result[key] = call_settings_masked(value)
    return result


Place = tuple[str | int, ...]  # where in a config: keys and list indices


def _where(path: Place) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def restore_call_settings(recorded: Any, given: Any) -> tuple[Any, list[str]]:
    """`recorded` (a config as `call_settings_masked` left it) with each masked call setting
    taken again from `given` (the user's config, as read from its file) at the same place, when
    masking it gives the recorded value; and the places (`agents[0].headers.Authorization`)
    still masked: nothing given there, or a value that is not the one recorded."""
    missing: list[str] = []

    def pick(old: Any, new: Any, mask: Callable[[str], str], path: Place) -> Any:
        if not isinstance(old, str) or MASK not in old:
            return old
        if isinstance(new, str) and MASK not in new and mask(new) == old:
            return new
        missing.append(_where(path))
        return old

    def walk(old: Any, new: Any, path: Place) -> Any:
        if isinstance(old, list):
            items = new if isinstance(new, list) else []
            return [
                walk(v, items[i] if i < len(items) else None, (*path, i)) for i, v in enumerate(old)
            ]
        if not isinstance(old, dict):
            return old
        out = {}
        for key, value in old.items():
            there = new.get(key) if isinstance(new, dict) else None
            if key == "headers" and isinstance(value, dict):
                given_headers = there if isinstance(there, dict) else {}
                out[key] = {
                    name: pick(
                        v,
                        given_headers.get(name),
                        functools.partial(_masked_header, name),
                        (*path, key, name),
                    )
                    for name, v in value.items()
                }
            elif key == "base_url":
                out[key] = pick(value, there, _masked_url, (*path, key))
            else:
                out[key] = walk(value, there, (*path, key))
        return out

    return walk(recorded, given, ()), missing


def known_secrets() -> bool:
    """Whether any key has been read (with none, masking has nothing to do)."""
    return bool(_SECRETS)


# A piece that is a plain word or number is not masked on its own: a placeholder key such as
# "sk-no-key-required" must not turn every "required" in every answer into a mask. Random keys
# mix cases and digits, so their pieces still cover any run of them.
_PLAIN = lazy.pattern(r"[A-Za-z][a-z]+|[A-Z]+|[0-9]+")


@functools.lru_cache(maxsize=64)
def _parts(secret: str) -> frozenset[str]:
    pieces = (secret[i : i + PART] for i in range(len(secret) - PART + 1))
    return frozenset([secret, *(p for p in pieces if not _PLAIN.fullmatch(p))])


def _mask_parts(text: str, secrets: Iterable[str]) -> str:
    """Mask every run of `PART` or more characters of a secret, and the secret whole: each
    stretch of text covered by the secret's `PART`-character pieces (found with str.find, fast
    on megabytes) becomes one mask."""
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        for part in _parts(secret):
            start = text.find(part)
            while start != -1:
                spans.append((start, start + len(part)))
                start = text.find(part, start + 1)
    if not spans:
        return text
    spans.sort()
    pieces, end = [], 0
    merged: list[list[int]] = []
    for start, stop in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], stop)
        else:
            merged.append([start, stop])
    for start, stop in merged:
        pieces += [text[end:start], MASK]
        end = stop
    pieces.append(text[end:])
    return "".join(pieces)


def mask_known(text: str, extra: Iterable[str] = ()) -> str:
    """`text` with every known key (and `extra` ones), and every run of 8 or more of their
    characters, replaced by a mask. Key shapes are left alone (see `redact`)."""
    secrets = {*_SECRETS, *(e for e in extra if e and len(e) >= PART)}
    if not secrets or len(text) < PART:
        return text
    return _mask_parts(text, secrets)


def redact(text: str, extra: Iterable[str] = ()) -> str:
    """`text` with every known key, every run of 8 or more of its characters, and anything
    shaped like a key, replaced by a mask."""
    text = mask_known(text, extra)
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
