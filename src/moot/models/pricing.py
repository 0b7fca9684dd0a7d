"""What a call cost: a bundled price table that users can override, and the unknown case.

Prices are USD per million tokens, looked up by "provider:model". Later sources win:
the bundled `prices.toml`, then the maintained genai-prices package when it is installed (the
`prices` extra; see `_maintained`), then `prices.toml` in moot's home (`$MOOT_HOME`, else the
user data folder), then the run config's `[prices]` table, then an agent's `options.price`
(`lookup_price`). A model with no price reports
`cost = None` ("unknown"), and the session says so once; cost limits then count that model's
tokens at `UNPRICED_USD_PER_MTOK` (see engine/limits.py), so a cost limit still bounds the run.

Usage convention: `prompt_tokens` counts every input token, cache hits and cache writes
included; `cache_read_tokens` and `cache_write_tokens` say how many of them were which.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from msgspec import Struct

from moot import lazy
from moot.errors import ConfigError
from moot.files import moot_home
from moot.models.base import ModelSettings, call_context, providers
from moot.types import Usage

__all__ = [
    "UNPRICED_USD_PER_MTOK",
    "UNPRICED_USD_PER_TOKEN",
    "Price",
    "Pricer",
    "find_price",
    "lookup_price",
    "price_table",
    "suggest_spec",
    "user_prices_path",
]

# What cost limits charge for a token whose price is unknown: a middling 2026 list price
# (input and output of mid-size models sit between $1 and $30 per million tokens).
UNPRICED_USD_PER_MTOK = 10.0
UNPRICED_USD_PER_TOKEN = UNPRICED_USD_PER_MTOK / 1_000_000

_log = logging.getLogger("moot")
_DATE_SUFFIX = lazy.pattern(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)$")


class Price(Struct, frozen=True):
    """USD per million tokens of one model."""

    input: float
    output: float
    cache_read: float | None = None  # None: billed as input
    cache_write: float | None = None

    @classmethod
    def parse(cls, data: Mapping[str, Any], where: str) -> Price:
        try:
            values = {k: float(v) for k, v in data.items()}
            unknown = set(values) - {"input", "output", "cache_read", "cache_write"}
            if unknown or "input" not in values or "output" not in values:
                raise ValueError(
                    f"needs input and output, allows cache_read and cache_write; got {sorted(data)}"
                )
            if any(v < 0 for v in values.values()):
                raise ValueError("prices cannot be negative")
            return cls(**values)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"bad price for {where}: {exc}") from None

    def cost(self, usage: Usage) -> float:
        cached = usage.cache_read_tokens + usage.cache_write_tokens
        fresh = max(0, usage.prompt_tokens - cached)
        total = (
            fresh * self.input
            + usage.cache_read_tokens * (self.input if self.cache_read is None else self.cache_read)
            + usage.cache_write_tokens
            * (self.input if self.cache_write is None else self.cache_write)
            + usage.completion_tokens * self.output
        )
        return round(total / 1_000_000, 9)


def user_prices_path() -> Path:
    return moot_home() / "prices.toml"


@functools.lru_cache(maxsize=1)
def _bundled() -> dict[str, Price]:
    import tomllib  # here, not at the top: a run without prices never parses TOML

    text = resources.files("moot.models").joinpath("prices.toml").read_text(encoding="utf-8")
    return _parse(tomllib.loads(text), "the bundled price table")


@functools.lru_cache(maxsize=8)
def _user_file(path: str, mtime: float) -> dict[str, Price]:
    import tomllib

    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read the price file {path}: {exc}") from None
    return _parse(data, path)


def _parse(data: Mapping[str, Any], source: str) -> dict[str, Price]:
    table: dict[str, Price] = {}
    for key, value in data.items():
        if not isinstance(value, Mapping):
            raise ConfigError(f"{source}: [{key!r}] must be a table of prices")
        table[key.lower()] = Price.parse(value, f"{key!r} in {source}")
    return table


def price_table(extra: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Price]:
    """Bundled prices, overridden by the user's file, overridden by `extra`."""
    return {**_bundled(), **_overrides(extra)}


def _overrides(extra: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Price]:
    """The user's own prices: their file, overridden by `extra` (a config's [prices])."""
    table: dict[str, Price] = {}
    path = user_prices_path()
    if path.is_file():
        table.update(_user_file(str(path), path.stat().st_mtime))
    if extra:
        table.update(_parse(extra, "the config's [prices]"))
    return table


def lookup_price(
    keys: Iterable[str], extra: Mapping[str, Mapping[str, Any]] | None = None
) -> Price | None:
    """The price of the first of `keys` known: the user's own prices first, then the
    maintained package's, then the bundled table's; None when none knows it."""
    keys = list(keys)
    return find_price(keys, _overrides(extra)) or _maintained(keys) or find_price(keys, _bundled())


# The bundled table is the fallback, not the first source: genai-prices (pydantic's, MIT) ships
# ~2,300 models of ~47 providers as data and is released as vendors change prices, while
# prices.toml is updated only with moot. Compared on 2026-11-26 (genai-prices 0.2.3): the same
# standard-tier prices for every model both hold; it also has cache-read prices prices.toml
# lacks, and lacks gemini-3.1-pro and gemini-3-flash (only their -preview names), which the
# bundled table then prices. It stays optional (0.7 s to import its data; it pulls httpx2,
# which the openai extra has anyway). Its long-context tiers are not applied: moot's Price is
# flat, so the base tier is taken, as the bundled table lists it.
def _maintained(keys: Iterable[str]) -> Price | None:
    snapshot = _snapshot()
    if snapshot is None:
        return None
    from datetime import UTC, datetime

    known = {provider.id for provider in snapshot.providers}
    for key in keys:
        provider, _, model = key.lower().partition(":")
        if provider not in known or not model:
            continue  # not a vendor it prices (cli:, local:, a bare name): never a guess
        try:
            _, info = snapshot.find_provider_model(model, None, provider, None)
        except LookupError:
            continue
        price = info.get_prices(datetime.now(UTC))
        paid_in, paid_out = _rate(price, "input_mtok"), _rate(price, "output_mtok")
        if paid_in is None or paid_out is None:
            continue  # priced per image or per second, not per token
        return Price(
            paid_in, paid_out, _rate(price, "cache_read_mtok"), _rate(price, "cache_write_mtok")
        )
    return None


def _rate(price: Any, name: str) -> float | None:
    """One of genai-prices' per-million rates as a float; a tiered one's first tier."""
    value = getattr(price, name, None)
    value = getattr(value, "base", value)
    return None if value is None else float(value)


@functools.lru_cache(maxsize=1)
def _snapshot() -> Any:
    """genai-prices' bundled data (never its network updater), or None when not installed."""
    if importlib.util.find_spec("genai_prices") is None:
        return None
    from genai_prices import data_snapshot

    return data_snapshot.get_snapshot()


_VERSION_DOT = lazy.pattern(r"(?<=\d)\.(?=\d)")


def _variants(key: str) -> Iterable[str]:
    """`key`, without a date suffix, and with a version's dots as dashes (OpenRouter's
    anthropic/claude-sonnet-4.6 is Anthropic's claude-sonnet-4-6)."""
    key = key.lower()
    seen = []
    for variant in (key, _DATE_SUFFIX.sub("", key)):
        for form in (variant, _VERSION_DOT.sub("-", variant)):
            if form not in seen:
                seen.append(form)
                yield form


def find_price(keys: Iterable[str], table: Mapping[str, Price]) -> Price | None:
    for key in keys:
        for variant in _variants(key):
            if variant in table:
                return table[variant]
    return None


class Pricer:
    """Prices one model's calls; says once per session when it cannot."""

    def __init__(
        self, spec: str, keys: Iterable[str], settings: ModelSettings, *, free: bool = False
    ) -> None:
        self.spec = spec
        self.free = free
        own = settings.options.get("price")
        if isinstance(own, Mapping):
            self.price: Price | None = Price.parse(own, f"options.price of {spec}")
        elif free:
            self.price = None
        else:
            self.price = lookup_price(keys, settings.prices)

    def cost(self, usage: Usage) -> float | None:
        if self.price is not None:
            return self.price.cost(usage)
        if self.free:
            return 0.0
        message = (
            f"no price is known for {self.spec}: its cost is reported as unknown and cost limits "
            f"count its tokens at ${UNPRICED_USD_PER_MTOK:g} per million; add its price to "
            f"{user_prices_path()} or the config's [prices] table"
        )
        context = call_context()
        if context is not None:
            context.warn(message)
        else:
            _warn_once(message)
        return None


@functools.lru_cache(maxsize=256)
def _warn_once(message: str) -> None:
    _log.warning(message)


def suggest_spec(text: str) -> str | None:
    """The PROVIDER:MODEL spec a bare model name most likely means: a model of the price table
    or a provider's example by that name ("smollm2" -> "local:smollm2"), else the provider of
    the family it starts with ("gpt-4o" -> "openai:gpt-4o", "claude-..." -> "anthropic:..."),
    else the closest known model; None when nothing is close."""
    from moot.text import closest

    # an installed provider first: the spec suggested should run (local:, not llama:, smollm2)
    registry = {info.name: info for info in sorted(providers(), key=lambda i: not i.installed())}
    name = text.strip().lower()
    if not name or ":" in name:
        return None
    known = [*price_table(), *(w for info in registry.values() for w in info.example.split()[:1])]
    by_name: dict[str, str] = {}
    family: dict[str, str] = {}  # the leading letters of a model's name -> its provider
    for spec in known:
        provider, _, model = spec.partition(":")
        if model and provider in registry:
            by_name.setdefault(model.lower(), spec)
            family.setdefault(_leading_letters(model.lower()), provider)
    if name in by_name:
        return by_name[name]
    lead = _leading_letters(name)
    if lead and lead in family:
        return f"{family[lead]}:{text.strip()}"
    close = closest(name, by_name)
    return by_name[close] if close else None


def _leading_letters(name: str) -> str:
    """ "gpt" of "gpt-4o", "claude" of "claude-sonnet-4-6": a model family's name."""
    end = 0
    while end < len(name) and "a" <= name[end] <= "z":
        end += 1
    return name[:end]
