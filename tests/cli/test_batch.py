"""`moot bench` hands each of its options to the benchmark as the `BenchOptions` field of the
same meaning (the runner itself is replaced: what is checked is what it is given)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from msgspec.structs import replace

from moot.bench import runner
from moot.bench.runner import BenchOptions
from tests.cli.test_cli import moot


def _given(monkeypatch: pytest.MonkeyPatch) -> list[tuple[BenchOptions, Path | None]]:
    """What `moot bench` gives the runner, its models as a list (any sequence will do)."""
    given: list[tuple[BenchOptions, Path | None]] = []

    def run_bench(options: BenchOptions, observer: Any = None, out: Path | None = None) -> Any:
        given.append((replace(options, models=list(options.models)), out))
        return SimpleNamespace(markdown="the report", folder=out, data={})

    monkeypatch.setattr(runner, "run_bench", run_bench)
    return given


def test_every_bench_option_reaches_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    given = _given(monkeypatch)
    config = tmp_path / "models.toml"
    config.write_text('[[agents]]\nmodel = "scripted:@x"\n')
    code, out, err = moot(
        capsys, "bench", "--suite", "arithmetic", "--protocols", "arena, court",
        "-m", "scripted:@a", "-m", "scripted:@b", "--config", str(config), "--n", "4",
        "--seed", "7", "--swap-audit", "0.25", "--alpha", "0.1", "--out", str(tmp_path / "out"),
        "--provider-limit", "OpenAI=2", "--executor", "local", "--ray-address", "ray://h:1",
        "-j", "3",
    )  # fmt: skip
    assert code == 0, err
    assert "the report" in out
    [(options, folder)] = given
    assert folder == tmp_path / "out"
    assert options == BenchOptions(
        suite="arithmetic",
        protocols=["arena", "court"],
        models=["scripted:@a", "scripted:@b"],
        config_path=config,
        n=4,
        seed=7,
        swap_audit=0.25,
        alpha=0.1,
        concurrency=3,
        provider_limits={"openai": 2},
        executor="local",
        ray_address="ray://h:1",
    )


def test_bench_defaults_compare_arena_with_vote(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    given = _given(monkeypatch)
    code, _, err = moot(capsys, "bench", "--suite", "arithmetic")
    assert code == 0, err
    [(options, folder)] = given
    assert folder is None
    assert options == BenchOptions(suite="arithmetic", protocols=["arena", "vote"], models=[])
