"""The response cache wired into `moot run --cache`: a re-run of the same tournament is
answered from the store with zero model calls and the same outcome, with SQLite and with a real
redis-server on loopback; hits are journaled asks that cost nothing; a store that fails warns
once and the run goes on without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from moot.config import CacheSettings
from moot.engine.store import find_session
from tests.cli.test_cli import moot
from tests.engine.test_cache import _free_port, redis_url  # noqa: F401  (the fixture)
from tests.scripts import events, start
from tests.tournament_scripts import Tourney, moves, steady

TASK = "How should the service store its sessions?"
PG = "Store sessions in PostgreSQL with a sessions table and an index on expiry."
REDIS = "Keep sessions in Redis with a TTL per key, no database at all."


def _tourney() -> Tourney:
    t = Tourney({"one": steady(PG), "two": moves(REDIS, PG, at=2), "three": steady(REDIS)})
    t.config(("one", "two", "three"))  # registers the scripts
    return t


def _run(capsys: pytest.CaptureFixture[str], spec: str) -> tuple[int, str, dict[str, Any], str]:
    code, out, err = moot(
        capsys, "run", TASK, "--protocol", "tournament", "--seed", "5",
        "--models", "scripted:@one", "--models", "scripted:@two", "--models", "scripted:@three",
        f"--cache={spec}",
    )  # fmt: skip
    assert code in (0, 2), err
    session = out.split("Session ", 1)[1].split(":", 1)[0]
    folder = find_session(session).path
    return code, out, json.loads((folder / "result.json").read_text()), err


def _rerun_is_served_from_the_cache(capsys: pytest.CaptureFixture[str], spec: str) -> str:
    t = _tourney()
    code, _, first, _ = _run(capsys, spec)
    asked = sum(t.steps.values())
    assert asked > 10 and first["tokens"] > 0
    again, _, second, err = _run(capsys, spec)
    assert "answered from the cache" in err  # plain lines say so
    assert sum(t.steps.values()) == asked  # zero calls
    assert again == code
    for key in ("status", "how", "final_answer", "disagreements", "positions", "details"):
        assert second[key] == first[key], key
    assert second["tokens"] == 0 and second["cost"] == 0.0  # hits cost nothing
    folder = find_session(second["session_id"]).path
    asks = [e for e in events(folder) if e["kind"] == "ask"]
    assert len(asks) == asked and all(e["data"]["cache"]["hit"] for e in asks)
    assert {e["data"]["cache"]["store"] for e in asks} == {
        spec if spec.startswith("redis") else f"sqlite:{spec.removeprefix('sqlite:')}"
    }
    assert all(e["data"]["cache"]["saved_tokens"] > 0 for e in asks)
    code, replayed, _ = moot(capsys, "replay", second["session_id"])
    assert code == 0 and "Identical" in replayed  # replay reads the journal, not the cache
    return str(asked)


def test_a_rerun_is_answered_from_sqlite_with_zero_calls(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = f"sqlite:{tmp_path / 'answers.sqlite'}"
    asked = _rerun_is_served_from_the_cache(capsys, spec)
    code, out, _ = moot(capsys, "cache", "stats", spec)
    assert code == 0 and f"{asked} entries" in out and f"{asked} hits" in out
    code, out, _ = moot(capsys, "cache", "clear", spec)
    assert code == 0 and f"removed {asked} entries" in out
    code, out, _ = moot(capsys, "cache", "stats", spec)
    assert "0 entries, 0 hits, 0 misses" in out


def test_a_rerun_is_answered_from_redis_with_zero_calls(
    capsys: pytest.CaptureFixture[str],
    redis_url: str,  # noqa: F811
) -> None:
    asked = _rerun_is_served_from_the_cache(capsys, redis_url)
    code, out, _ = moot(capsys, "cache", "stats", redis_url)
    assert code == 0 and out.startswith(f"{redis_url}: {asked} entries, {asked} hits")


def test_the_default_store_lives_under_moot_home(capsys: pytest.CaptureFixture[str]) -> None:
    t = _tourney()
    code, out, err = moot(
        capsys, "run", TASK, "--protocol", "tournament", "--seed", "5",
        "--models", "scripted:@one", "--models", "scripted:@two", "--cache",
    )  # fmt: skip
    assert code in (0, 2), err
    code, out, _ = moot(capsys, "cache", "stats")
    assert code == 0 and f"{sum(t.steps.values())} entries" in out and "cache.sqlite" in out


def test_an_unreachable_store_warns_once_and_the_run_goes_on() -> None:
    t = Tourney({"one": steady(PG), "two": steady(REDIS)})
    config = t.config(("one", "two"))
    config.cache = CacheSettings(store=f"redis://127.0.0.1:{_free_port()}/0")  # nobody there
    run = start(TASK, config)
    assert run.exit_code in (0, 2) and run.model_calls == sum(t.steps.values()) > 0
    warnings = [e["data"]["message"] for e in events(run.folder) if e["kind"] == "warning"]
    assert (
        len(warnings) == 1 and "the response cache is off for the rest of this run" in warnings[0]
    )


def test_a_bad_cache_spec_is_refused_before_anything_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = moot(capsys, "run", TASK, "--cache=memcached://x", "--models", "scripted:@x")
    assert code == 1 and "is not a cache store; use sqlite, sqlite:PATH or redis://" in err


def test_the_readmes_cache_example_run_twice_makes_no_calls_the_second_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # README: moot run "Monolith or services?" --protocol tournament --models ... --cache
    # (no --seed: the run derives its seed from the task and config, so the requests repeat)
    t = _tourney()
    args = (
        "run", "Monolith or services?", "--protocol", "tournament",
        "--models", "scripted:@one", "--models", "scripted:@two", "--models", "scripted:@three",
        "--cache",
    )  # fmt: skip
    code, out, err = moot(capsys, *args)
    assert code in (0, 2), err
    asked = sum(t.steps.values())
    assert asked > 10
    first = find_session(out.split("Session ", 1)[1].split(":", 1)[0]).path
    again, out, err = moot(capsys, *args)
    assert again == code, err
    assert sum(t.steps.values()) == asked  # zero provider calls
    second = find_session(out.split("Session ", 1)[1].split(":", 1)[0]).path
    seeds = [json.loads((f / "session.json").read_text())["seed"] for f in (first, second)]
    assert seeds[0] == seeds[1]  # recorded in each session's begin record
    # another task is another seed: its aliases and samples are its own
    moot(capsys, *args[:1], "Services or monolith?", *args[2:])
    assert sum(t.steps.values()) > asked
    # without --cache a run still draws a seed of its own
    _, out, _ = moot(capsys, *args[:-1])
    fresh = find_session(out.split("Session ", 1)[1].split(":", 1)[0]).path
    assert json.loads((fresh / "session.json").read_text())["seed"] != seeds[0]
