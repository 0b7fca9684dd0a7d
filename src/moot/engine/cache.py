"""The response cache: a model request seen before is answered from a store, without a call.

The key is a SHA-256 over the provider, the model, the messages, the sampling parameters
(temperature, max_tokens, seed, json_schema) and `PROMPT_VERSION`. A request sampled at a
temperature above 0 without a seed is not served from the cache unless asked (`allow_sampled`):
its answer was one draw among many. Only successful completions are stored.

Stores, chosen by `open_cache(spec)`:

    sqlite            cache.sqlite in moot's home ($MOOT_HOME, else the user data folder)
    sqlite:PATH       a SQLite file of your choice
    redis://...       a Redis server shared by several machines (the 'redis' extra)

Both are safe for several moot processes at once. All store methods are coroutines: SQLite work
runs in a worker thread (a write can wait up to the busy timeout for another process), Redis
uses its asyncio client.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from msgspec import Struct
from msgspec.structs import replace

from moot.config import RunConfig
from moot.engine.journal import canonical_json
from moot.engine.store import blocked, sessions_root
from moot.errors import CacheError, ConfigError
from moot.types import Completion, Request, Usage, dump, load

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = [
    "DEFAULT_TTL",
    "PROMPT_VERSION",
    "CacheError",
    "CacheHit",
    "CacheStats",
    "CacheStore",
    "RedisCache",
    "ResponseCache",
    "SqliteCache",
    "cache_key",
    "clear_store",
    "default_cache_path",
    "open_cache",
    "run_seed",
    "servable",
    "store_problem",
    "store_stats",
]

T = TypeVar("T")

# Bump when what a cached answer means changes without the request changing (a parser that
# reads replies differently, a provider that rewrites prompts): every old entry then misses.
PROMPT_VERSION = "moot-cache-1"
DEFAULT_TTL = 7 * 24 * 3600.0  # seconds (seed 001: seven days)


def cache_key(provider: str, model: str, request: Request, *, version: str = PROMPT_VERSION) -> str:
    """SHA-256 (hex) of everything that shapes the answer; timeout and meta are left out."""
    body = {
        "version": version,
        "provider": provider,
        "model": model,
        "messages": [dump(message) for message in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
        "json_schema": request.json_schema,
    }
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def servable(
    request: Request,
    *,
    allow_sampled: bool = False,
    seed_honoured: bool = True,
    temperature_honoured: bool = True,
) -> bool:
    """Whether a stored answer may stand for this request. Sampled without a seed (a temperature
    above 0, or none: providers default to sampling) it may not, unless allowed. A seed or a
    temperature the backend ignores (its `Capabilities`) counts as not given."""
    temperature = request.temperature if temperature_honoured else None
    seed = request.seed if seed_honoured else None
    return temperature == 0 or seed is not None or allow_sampled


def run_seed(task: str, config: RunConfig) -> int:
    """The session seed of a `--cache` run given no `--seed`: derived from the task and what
    shapes the answers (protocol, agents, protocol options, code task, synthesis), so the same
    command asks the same requests again and the cache answers them. A random seed would give
    every request a new key (the seed is in it, and aliases and orders follow from it).
    Derived rather than recorded and looked up: a shared store on another machine gets the
    same seed, and no earlier session needs to be found. Limits, engine settings, prices and
    the store are left out: a run with more rounds or another budget reuses the same answers."""
    left_out = ("seed", "cache", "limits", "engine", "prices")
    shaping = {k: v for k, v in config.dump().items() if k not in left_out}
    digest = hashlib.sha256(canonical_json({"task": task, "config": shaping}).encode("utf-8"))
    return int.from_bytes(digest.digest()[:4], "big") >> 1  # 31 bits, as a random seed


class CacheStats(Struct, frozen=True):
    """What `moot cache stats` shows. Counts are for the whole store, every process."""

    store: str  # "sqlite:/home/me/.moot/cache.sqlite", "redis://host:6379/0"
    entries: int  # live entries
    expired: int  # expired but not yet removed (SQLite; Redis removes them itself)
    hits: int
    misses: int
    size_bytes: int | None  # stored JSON, where the store can tell cheaply


class CacheStore(Protocol):
    """Completions as JSON objects under a key, each with a time to live."""

    @property
    def location(self) -> str: ...

    async def get(self, key: str) -> dict[str, Any] | None: ...

    async def put(self, key: str, completion: dict[str, Any], ttl: float = DEFAULT_TTL) -> None: ...

    async def stats(self) -> CacheStats: ...

    async def clear(self) -> int: ...

    async def close(self) -> None: ...


def _check_ttl(ttl: float) -> None:
    if not ttl > 0:
        raise ValueError(f"a cache entry's time to live must be positive, not {ttl}")


def _decode(raw: str | bytes | None) -> dict[str, Any] | None:
    # A shared store may hold anything: what is not a JSON object is a miss, not a crash.
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# -- SQLite ---------------------------------------------------------------------------------
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    completion TEXT NOT NULL,
    created REAL NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_expires ON entries (expires);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO counters VALUES ('hits', 0), ('misses', 0);
"""


def default_cache_path() -> Path:
    """`cache.sqlite` in moot's home (`$MOOT_HOME`, else the platform's user data folder)."""
    return sessions_root().parent / "cache.sqlite"


def _while_locked(statement: Callable[[], object], seconds: float) -> None:
    """Run `statement`, again while SQLite says the database is locked, for up to `seconds`.
    Two processes switching a new file to WAL at once can be told "database is locked" at
    once, without SQLite's busy timeout being waited (it would be a deadlock): the other has
    done the switch a moment later, and the statement then goes through."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            statement()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


class SqliteCache:
    """A SQLite file shared by every moot process on the machine.

    WAL lets readers go on while one process writes; the busy timeout makes a writer wait for
    another instead of failing; writes take the lock up front (BEGIN IMMEDIATE) so a waiting
    transaction never has to be retried. synchronous=NORMAL: a power cut may lose the last
    entries, which only costs a call again. One connection per store, used from worker threads
    one at a time."""

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        problem = blocked(path.parent, "open the response cache in")
        if problem is not None:  # not "[Errno 17] File exists" about a folder it wanted to make
            raise CacheError(problem)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise CacheError(f"cannot open the response cache {path}: {exc}") from exc
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            _while_locked(lambda: self._db.execute("PRAGMA journal_mode = WAL"), busy_timeout)
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} COMMIT;")
        except sqlite3.Error as exc:
            self._db.close()
            raise CacheError(f"cannot open the response cache {path}: {exc}") from exc

    @property
    def location(self) -> str:
        return f"sqlite:{self.path}"

    def _run(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        with self._lock:
            try:
                return work(self._db)
            except sqlite3.Error as exc:
                raise CacheError(f"the response cache {self.path} failed: {exc}") from exc

    async def get(self, key: str) -> dict[str, Any] | None:
        def work(db: sqlite3.Connection) -> dict[str, Any] | None:
            row = db.execute(
                "SELECT completion FROM entries WHERE key = ? AND expires > ?",
                (key, self._clock()),
            ).fetchone()
            value = _decode(row[0]) if row else None
            counter = "hits" if value is not None else "misses"
            db.execute("UPDATE counters SET value = value + 1 WHERE name = ?", (counter,))
            return value

        result: dict[str, Any] | None = await asyncio.to_thread(self._run, work)
        return result

    async def put(self, key: str, completion: dict[str, Any], ttl: float = DEFAULT_TTL) -> None:
        _check_ttl(ttl)
        text = canonical_json(completion)

        def work(db: sqlite3.Connection) -> None:
            now = self._clock()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?)",
                    (key, text, now, now + ttl),
                )
                # Expired entries go as new ones come, so the file does not grow for ever.
                db.execute("DELETE FROM entries WHERE expires <= ?", (now,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

        await asyncio.to_thread(self._run, work)

    async def stats(self) -> CacheStats:
        def work(db: sqlite3.Connection) -> CacheStats:
            now = self._clock()
            live, size = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(LENGTH(completion)), 0) FROM entries"
                " WHERE expires > ?",
                (now,),
            ).fetchone()
            (expired,) = db.execute(
                "SELECT COUNT(*) FROM entries WHERE expires <= ?", (now,)
            ).fetchone()
            counters = dict(db.execute("SELECT name, value FROM counters").fetchall())
            return CacheStats(
                store=self.location,
                entries=int(live),
                expired=int(expired),
                hits=int(counters.get("hits", 0)),
                misses=int(counters.get("misses", 0)),
                size_bytes=int(size),
            )

        result: CacheStats = await asyncio.to_thread(self._run, work)
        return result

    async def clear(self) -> int:
        """Remove every entry and reset the counters; returns how many entries went."""

        def work(db: sqlite3.Connection) -> int:
            db.execute("BEGIN IMMEDIATE")
            removed = db.execute("DELETE FROM entries").rowcount
            db.execute("UPDATE counters SET value = 0")
            db.execute("COMMIT")
            return int(removed)

        removed: int = await asyncio.to_thread(self._run, work)
        return removed

    async def close(self) -> None:
        with self._lock:
            self._db.close()


# -- Redis ----------------------------------------------------------------------------------
class RedisCache:
    """Entries under `moot:cache:<key>` with Redis's own expiry; hits and misses in the hash
    `moot:cache-stats`. `clear` deletes only moot's keys: the server may be shared."""

    PREFIX = "moot:cache:"
    STATS = "moot:cache-stats"

    def __init__(self, url: str) -> None:
        if importlib.util.find_spec("redis") is None:
            from moot.text.install import extra_install_hint

            raise ConfigError(
                f"a Redis cache needs the redis package: {extra_install_hint('redis')}"
            )
        from redis.asyncio import Redis

        try:
            self._client: Redis = Redis.from_url(url, socket_connect_timeout=5)
        except ValueError as exc:
            raise ConfigError(f"--cache {url!r} is not a usable Redis URL: {exc}") from exc
        self.url = url

    @property
    def location(self) -> str:
        return self.url

    async def _do(self, work: Callable[[Redis], Any]) -> Any:
        from redis.exceptions import RedisError

        try:
            return await work(self._client)
        except RedisError as exc:
            raise CacheError(f"the Redis cache at {self.url} failed: {exc}") from exc

    async def get(self, key: str) -> dict[str, Any] | None:
        async def work(client: Redis) -> dict[str, Any] | None:
            value = _decode(await client.get(self.PREFIX + key))
            await client.hincrby(self.STATS, "hits" if value is not None else "misses", 1)
            return value

        result: dict[str, Any] | None = await self._do(work)
        return result

    async def put(self, key: str, completion: dict[str, Any], ttl: float = DEFAULT_TTL) -> None:
        _check_ttl(ttl)
        text = canonical_json(completion)

        async def work(client: Redis) -> None:
            await client.set(self.PREFIX + key, text, px=max(1, round(ttl * 1000)))

        await self._do(work)

    async def _keys(self, client: Redis) -> list[bytes]:
        return [key async for key in client.scan_iter(match=self.PREFIX + "*", count=500)]

    async def stats(self) -> CacheStats:
        async def work(client: Redis) -> CacheStats:
            keys = await self._keys(client)
            counters = await client.hgetall(self.STATS)
            return CacheStats(
                store=self.location,
                entries=len(keys),
                expired=0,
                hits=int(counters.get(b"hits", 0)),
                misses=int(counters.get(b"misses", 0)),
                size_bytes=None,
            )

        result: CacheStats = await self._do(work)
        return result

    async def clear(self) -> int:
        """Remove moot's entries and counters; returns how many entries went."""

        async def work(client: Redis) -> int:
            keys = await self._keys(client)
            for start in range(0, len(keys), 500):
                await client.delete(*keys[start : start + 500])
            await client.delete(self.STATS)
            return len(keys)

        removed: int = await self._do(work)
        return removed

    async def close(self) -> None:
        await self._client.aclose()


def open_cache(spec: str | None) -> CacheStore:
    """The store `spec` names: None or "sqlite" for the default file, "sqlite:PATH", or a
    "redis://" / "rediss://" URL. Anything else is a ConfigError saying what is accepted."""
    text = (spec or "sqlite").strip()
    if text == "sqlite" or text.startswith("sqlite:"):
        path = _sqlite_file(text)
        if path is None:
            raise ConfigError(
                "--cache sqlite: names no file; write sqlite:PATH, or sqlite for the default "
                f"({default_cache_path()})"
            )
        if text != "sqlite" and path.is_dir():
            raise ConfigError(f"--cache {text}: {path} is a folder; name a file in it")
        return SqliteCache(path)
    if text.startswith(("redis://", "rediss://")):
        return RedisCache(text)
    raise ConfigError(
        f"--cache {spec!r} is not a cache store; use sqlite (the default, "
        f"{default_cache_path()}), sqlite:PATH, or redis://HOST:PORT/DB"
    )


def store_problem(spec: str | None) -> str | None:
    """Why the store `spec` names cannot be opened, as opening it would say, where a file
    stands where its folder must be; None otherwise (or for a server, or a spec that names
    none: opening it says so). Creates nothing (`moot run --dry-run`)."""
    path = _sqlite_file((spec or "sqlite").strip())
    return blocked(path.parent, "open the response cache in") if path is not None else None


def _sqlite_file(text: str) -> Path | None:
    """The file a SQLite store's spec names ("sqlite": the default); None for a spec that
    names none ("sqlite:") or another store."""
    if text == "sqlite":
        return default_cache_path()
    raw = text.removeprefix("sqlite:").strip() if text.startswith("sqlite:") else ""
    return Path(raw).expanduser() if raw else None


def store_stats(spec: str | None) -> CacheStats:
    """Entries, hits and misses of the store `spec` names (as `open_cache`), read on an event
    loop of its own (`moot cache stats`)."""
    return asyncio.run(_with_store(spec, lambda store: store.stats()))


def clear_store(spec: str | None) -> tuple[str, int]:
    """Remove every entry of the store `spec` names, on an event loop of its own (`moot cache
    clear`): its location and how many entries went."""

    async def clear(store: CacheStore) -> tuple[str, int]:
        return store.location, await store.clear()

    return asyncio.run(_with_store(spec, clear))


async def _with_store(spec: str | None, work: Callable[[CacheStore], Awaitable[T]]) -> T:
    store = open_cache(spec)
    try:
        return await work(store)
    finally:
        await store.close()


# -- what Session.ask uses --------------------------------------------------------------------
class CacheHit(Struct, frozen=True):
    key: str
    completion: Completion  # as returned: no cost, no usage, no latency
    stored: Completion  # as stored, for the journal (what the original call cost)


class ResponseCache:
    """A store plus the policy: which requests may be served, which completions are kept."""

    def __init__(
        self,
        store: CacheStore,
        *,
        ttl: float = DEFAULT_TTL,
        allow_sampled: bool = False,
        version: str = PROMPT_VERSION,
    ) -> None:
        _check_ttl(ttl)
        self.store = store
        self.ttl = ttl
        self.allow_sampled = allow_sampled
        self.version = version

    def key(self, spec: str, request: Request) -> str:
        """The key of `request` to the model `spec` ("provider:model")."""
        provider, _, model = spec.partition(":")
        return cache_key(provider, model, request, version=self.version)

    async def lookup(
        self,
        spec: str,
        request: Request,
        *,
        seed_honoured: bool = True,
        temperature_honoured: bool = True,
    ) -> CacheHit | None:
        """The stored answer to this request, if the policy allows serving one and it holds.
        Pass what the model's `Capabilities` say about seed and temperature."""
        allowed = servable(
            request,
            allow_sampled=self.allow_sampled,
            seed_honoured=seed_honoured,
            temperature_honoured=temperature_honoured,
        )
        if not allowed:
            return None
        key = self.key(spec, request)
        data = await self.store.get(key)
        if data is None:
            return None
        try:
            stored = load(data, Completion)
        except ValueError:  # msgspec's ValidationError
            return None  # written by something else, or an older moot: a miss
        if not stored.ok:
            return None
        free = replace(stored, cost=0.0, usage=Usage(), latency=0.0)
        return CacheHit(key=key, completion=free, stored=stored)

    async def save(self, spec: str, request: Request, completion: Completion) -> bool:
        """Keep a successful completion; failures are never cached. True if stored."""
        if not completion.ok:
            return False
        await self.store.put(self.key(spec, request), dump(completion), self.ttl)
        return True
