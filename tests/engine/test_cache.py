"""The response cache: its key, its policy, the SQLite store shared by several processes, and a
real redis-server on loopback."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from moot.engine.cache import (
    DEFAULT_TTL,
    PROMPT_VERSION,
    CacheError,
    RedisCache,
    ResponseCache,
    SqliteCache,
    cache_key,
    default_cache_path,
    open_cache,
    servable,
)
from moot.errors import ConfigError
from moot.types import Completion, FailureKind, Message, Request, Usage
from tests.waiting import wait_until

REQUEST = Request(
    messages=(Message(role="system", content="Be brief."), Message(role="user", content="2+2?")),
    temperature=0.7,
    max_tokens=100,
    seed=42,
    json_schema={"type": "object"},
    timeout=30,
    meta={"step": "r1/agent_a", "agent": "agent_a"},
)
ANSWER = Completion(
    text="4",
    usage=Usage(prompt_tokens=12, completion_tokens=1),
    cost=0.0003,
    latency=1.5,
    model="gpt-x",
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


# -- the key and the policy -----------------------------------------------------------------
def test_the_key_is_stable_and_hex() -> None:
    key = cache_key("openai", "gpt-x", REQUEST)
    assert key == cache_key("openai", "gpt-x", replace(REQUEST))
    assert len(key) == 64 and int(key, 16) >= 0


@pytest.mark.parametrize(
    "change",
    [
        {"provider": "anthropic"},
        {"model": "gpt-y"},
        {"messages": (Message(role="user", content="2+3?"),)},
        {"temperature": 0.0},
        {"max_tokens": 101},
        {"seed": 43},
        {"json_schema": None},
        {"version": "moot-cache-2"},
    ],
)
def test_everything_that_shapes_the_answer_changes_the_key(change: dict[str, Any]) -> None:
    provider = change.pop("provider", "openai")
    model = change.pop("model", "gpt-x")
    version = change.pop("version", PROMPT_VERSION)
    changed = cache_key(provider, model, replace(REQUEST, **change), version=version)
    assert changed != cache_key("openai", "gpt-x", REQUEST)


def test_timeout_and_meta_do_not_change_the_key() -> None:
    other = replace(REQUEST, timeout=5, meta={"step": "r9/agent_c"})
    assert cache_key("openai", "gpt-x", other) == cache_key("openai", "gpt-x", REQUEST)


def test_sampled_requests_without_a_seed_are_not_served_unless_allowed() -> None:
    sampled = replace(REQUEST, seed=None)
    assert not servable(sampled)
    assert servable(sampled, allow_sampled=True)
    assert servable(REQUEST)  # a seed makes the draw repeatable
    assert servable(replace(sampled, temperature=0.0))
    assert not servable(replace(sampled, temperature=None))  # provider default


def test_a_seed_or_temperature_the_backend_ignores_counts_as_not_given() -> None:
    assert not servable(REQUEST, seed_honoured=False)  # 0.7 with a seed nobody uses
    assert servable(REQUEST, seed_honoured=False, allow_sampled=True)
    greedy = replace(REQUEST, temperature=0.0, seed=None)
    assert servable(greedy)
    assert not servable(greedy, temperature_honoured=False)  # the provider samples anyway


# -- SQLite ---------------------------------------------------------------------------------
def test_sqlite_round_trip_and_stats(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = SqliteCache(tmp_path / "c.sqlite")
        assert await store.get("k") is None
        await store.put("k", {"text": "4", "nested": {"a": [1, 2]}})
        assert await store.get("k") == {"text": "4", "nested": {"a": [1, 2]}}
        stats = await store.stats()
        assert (stats.entries, stats.hits, stats.misses, stats.expired) == (1, 1, 1, 0)
        assert stats.size_bytes == len('{"nested":{"a":[1,2]},"text":"4"}')
        assert stats.store == f"sqlite:{tmp_path / 'c.sqlite'}"
        assert await store.clear() == 1
        assert await store.get("k") is None
        stats = await store.stats()
        assert (stats.entries, stats.hits, stats.misses) == (0, 0, 1)
        await store.close()

    asyncio.run(scenario())


def test_sqlite_entries_expire_after_their_ttl(tmp_path: Path) -> None:
    clock = Clock()

    async def scenario() -> None:
        store = SqliteCache(tmp_path / "c.sqlite", clock=clock)
        await store.put("week", {"text": "a"})
        await store.put("hour", {"text": "b"}, ttl=3600)
        clock.now += 3601
        assert await store.get("hour") is None
        assert await store.get("week") == {"text": "a"}
        assert (await store.stats()).expired == 1
        clock.now += DEFAULT_TTL
        assert await store.get("week") is None
        await store.put("new", {"text": "c"})  # a write sweeps the expired entries out
        stats = await store.stats()
        assert (stats.entries, stats.expired) == (1, 0)
        with pytest.raises(ValueError, match="time to live must be positive"):
            await store.put("k", {}, ttl=0)
        await store.close()

    asyncio.run(scenario())


def test_sqlite_entries_outlive_the_process_that_wrote_them(tmp_path: Path) -> None:
    async def write() -> None:
        store = SqliteCache(tmp_path / "c.sqlite")
        await store.put("k", {"text": "kept"})
        await store.close()

    async def read() -> dict[str, Any] | None:
        store = SqliteCache(tmp_path / "c.sqlite")
        try:
            return await store.get("k")
        finally:
            await store.close()

    asyncio.run(write())
    assert asyncio.run(read()) == {"text": "kept"}
    mode = sqlite3.connect(tmp_path / "c.sqlite").execute("PRAGMA journal_mode").fetchone()
    assert mode == ("wal",)


WORKER = textwrap.dedent(
    """
    import asyncio, sys, time
    from pathlib import Path
    from moot.engine.cache import SqliteCache

    async def main() -> None:
        path = Path(sys.argv[1])
        me, workers, n = (int(arg) for arg in sys.argv[2:5])
        (path.parent / f"ready-{me}").touch()
        while not (path.parent / "go").exists():
            time.sleep(0.01)
        store = SqliteCache(path)
        wrong = 0
        other = (me + 1) % workers
        for i in range(n):
            await store.put(f"w{me}-{i}", {"text": f"{me}:{i}", "pad": "x" * 400})
            await store.put("shared", {"text": f"{me}:{i}"})
            seen = await store.get(f"w{other}-{i}")
            if seen is not None and seen["text"] != f"{other}:{i}":
                wrong += 1
            shared = await store.get("shared")
            if shared is None or shared["text"].count(":") != 1:
                wrong += 1
        await store.close()
        print(wrong)

    asyncio.run(main())
    """
)


SRC = str(Path(__file__).resolve().parents[2] / "src")  # this checkout's moot, in children


# Three times: a process that opens the new file while the others switch it to WAL or already
# write to it may be told "database is locked" at once (SQLite waits no busy timeout where that
# could deadlock); that failed about one run in three before the open retried it.
@pytest.mark.parametrize("run", range(3))
def test_sqlite_is_safe_for_several_processes_at_once(tmp_path: Path, run: int) -> None:
    workers, n = 4, 120
    path = tmp_path / "shared" / "cache.sqlite"
    path.parent.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(path), str(me), str(workers), str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": SRC},
        )
        for me in range(workers)
    ]
    # all started and waiting, so they open and write together
    wait_until(
        lambda: all((path.parent / f"ready-{me}").exists() for me in range(workers)),
        "every worker to start",
        alive=lambda: all(proc.poll() is None for proc in procs),
    )
    (path.parent / "go").touch()
    outputs = [proc.communicate(timeout=120) for proc in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert out.strip() == "0", (out, err)

    async def check() -> None:
        store = SqliteCache(path)
        for me in range(workers):
            for i in range(n):
                assert (await store.get(f"w{me}-{i}"))["text"] == f"{me}:{i}"  # type: ignore[index]
        stats = await store.stats()
        assert stats.entries == workers * n + 1
        # every get of every process was counted: none lost to a concurrent update
        assert stats.hits + stats.misses == workers * n * 2 + workers * n
        await store.close()

    asyncio.run(check())


# -- open_cache -----------------------------------------------------------------------------
def test_the_default_store_lives_under_moot_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    assert default_cache_path() == tmp_path / "home" / "cache.sqlite"
    for spec in (None, "sqlite", " sqlite "):
        store = open_cache(spec)
        assert isinstance(store, SqliteCache)
        assert store.location == f"sqlite:{tmp_path / 'home' / 'cache.sqlite'}"
        asyncio.run(store.close())
    assert (tmp_path / "home" / "cache.sqlite").is_file()


def test_a_sqlite_path_of_your_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    store = open_cache("sqlite:~/caches/moot.db")
    assert store.location == f"sqlite:{tmp_path / 'caches' / 'moot.db'}"
    asyncio.run(store.close())


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("sqlite:", "names no file; write sqlite:PATH"),
        ("memcached://localhost:11211", "is not a cache store; use sqlite"),
        ("SQLite", "is not a cache store"),
        ("redis://localhost:abc", "is not a usable Redis URL"),
    ],
)
def test_bad_specs_say_what_is_accepted(spec: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        open_cache(spec)


def test_a_folder_is_not_a_cache_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a folder; name a file in it"):
        open_cache(f"sqlite:{tmp_path}")


def test_an_unwritable_place_is_a_cache_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(CacheError, match="cannot open the response cache"):
        SqliteCache(blocker / "cache.sqlite")


# -- the policy on top of a store -----------------------------------------------------------
def test_a_hit_returns_the_answer_at_no_cost(tmp_path: Path) -> None:
    async def scenario() -> None:
        cache = ResponseCache(SqliteCache(tmp_path / "c.sqlite"))
        assert await cache.lookup("openai:gpt-x", REQUEST) is None
        assert await cache.save("openai:gpt-x", REQUEST, ANSWER)
        hit = await cache.lookup("openai:gpt-x", REQUEST)
        assert hit is not None
        assert hit.key == cache_key("openai", "gpt-x", REQUEST)
        assert hit.completion.text == "4"
        assert (hit.completion.cost, hit.completion.usage.total) == (0.0, 0)
        assert hit.stored == ANSWER  # what the original call cost, for the journal
        assert await cache.lookup("openai:gpt-y", REQUEST) is None
        await cache.store.close()

    asyncio.run(scenario())


def test_failures_are_not_cached_and_sampled_requests_not_served(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = SqliteCache(tmp_path / "c.sqlite")
        cache = ResponseCache(store)
        failed = Completion.error(FailureKind.SERVER, "overloaded")
        assert not await cache.save("openai:gpt-x", REQUEST, failed)
        assert (await store.stats()).entries == 0
        sampled = replace(REQUEST, seed=None)
        await cache.save("openai:gpt-x", sampled, ANSWER)
        assert await cache.lookup("openai:gpt-x", sampled) is None
        lenient = ResponseCache(store, allow_sampled=True)
        hit = await lenient.lookup("openai:gpt-x", sampled)
        assert hit is not None and hit.completion.text == "4"
        # an Anthropic-like backend takes neither seed nor temperature: one draw among many
        await cache.save("openai:gpt-x", REQUEST, ANSWER)
        assert await cache.lookup("openai:gpt-x", REQUEST) is not None
        assert await cache.lookup("openai:gpt-x", REQUEST, seed_honoured=False) is None
        await store.close()

    asyncio.run(scenario())


def test_an_entry_that_is_not_a_completion_is_a_miss(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = SqliteCache(tmp_path / "c.sqlite")
        cache = ResponseCache(store)
        key = cache.key("openai:gpt-x", REQUEST)
        await store.put(key, {"text": 4, "status": "maybe"})
        assert await cache.lookup("openai:gpt-x", REQUEST) is None
        await store.close()
        with sqlite3.connect(tmp_path / "c.sqlite") as db:
            db.execute("UPDATE entries SET completion = 'not json'")
        store = SqliteCache(tmp_path / "c.sqlite")
        assert await store.get(key) is None
        await store.close()

    asyncio.run(scenario())


# -- Redis ----------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A real redis-server on loopback, private to the test, nothing written to disk."""
    pytest.importorskip("redis", reason="the 'redis' extra is not installed")
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    port = _free_port()
    args = ["--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
    server = subprocess.Popen(
        [binary, *args, "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            assert server.poll() is None, "redis-server exited at start"
            assert time.monotonic() < deadline, "redis-server did not answer within 10 s"
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_redis_round_trip_expiry_and_stats(redis_url: str) -> None:
    async def scenario() -> None:
        store = open_cache(redis_url)
        assert isinstance(store, RedisCache)
        assert await store.get("k") is None
        await store.put("k", {"text": "4"})
        await store.put("brief", {"text": "gone soon"}, ttl=0.3)
        assert await store.get("k") == {"text": "4"}
        assert await store.get("brief") == {"text": "gone soon"}
        await asyncio.sleep(0.5)
        assert await store.get("brief") is None  # Redis expired it
        stats = await store.stats()
        assert (stats.entries, stats.hits, stats.misses) == (1, 2, 2)
        assert stats.store == redis_url
        await store.close()

    asyncio.run(scenario())


def test_redis_clear_removes_only_moot_keys(redis_url: str) -> None:
    async def scenario() -> None:
        from redis.asyncio import Redis

        neighbour = Redis.from_url(redis_url)
        await neighbour.set("someone-else:key", "theirs")
        store = open_cache(redis_url)
        for i in range(3):
            await store.put(f"k{i}", {"text": str(i)})
        assert await store.clear() == 3
        assert (await store.stats()).entries == 0
        assert await neighbour.get("someone-else:key") == b"theirs"
        await neighbour.aclose()
        await store.close()

    asyncio.run(scenario())


def test_a_hit_through_redis_is_shared_between_clients(redis_url: str) -> None:
    async def scenario() -> None:
        first = ResponseCache(open_cache(redis_url))
        await first.save("openai:gpt-x", REQUEST, ANSWER)
        await first.store.close()
        second = ResponseCache(open_cache(redis_url))  # another process, another machine
        hit = await second.lookup("openai:gpt-x", REQUEST)
        assert hit is not None and hit.completion.text == "4" and hit.completion.cost == 0.0
        await second.store.close()

    asyncio.run(scenario())


def test_an_unreachable_redis_is_a_cache_error() -> None:
    pytest.importorskip("redis", reason="the 'redis' extra is not installed")

    async def scenario() -> None:
        store = open_cache(f"redis://127.0.0.1:{_free_port()}/0")
        try:
            with pytest.raises(CacheError, match=r"the Redis cache at redis://127\.0\.0\.1"):
                await store.get("k")
        finally:
            await store.close()

    asyncio.run(scenario())


def test_redis_without_its_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "redis" else real(name, *a)
    )
    monkeypatch.setattr("moot.text.install.editable_checkout", lambda: None)  # a package install
    with pytest.raises(ConfigError, match=r"pip install 'moot\[redis\]'"):
        open_cache("redis://127.0.0.1:6379/0")


def test_a_file_that_is_not_a_database_is_a_cache_error(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"this is not a SQLite database, " * 200)
    with pytest.raises(CacheError, match=r"cannot open the response cache .*not a database"):
        SqliteCache(path)
