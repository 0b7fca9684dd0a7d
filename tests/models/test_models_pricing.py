"""Prices: the bundled table, user overrides, and what an unknown price does to a session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from moot.config import RunConfig
from moot.errors import ConfigError
from moot.models import pricing
from moot.models.base import ModelSettings
from moot.models.pricing import Price, Pricer, find_price, lookup_price, price_table
from moot.types import Usage
from tests.fakes.fake_agent import install
from tests.scripts import events, start


def test_bundled_prices_cover_the_three_vendors_and_dated_snapshots() -> None:
    table = price_table()
    sonnet = find_price(["anthropic:claude-sonnet-4-6-20260101"], table)
    assert sonnet == Price(input=3.0, output=15.0, cache_read=0.30, cache_write=3.75)
    assert find_price(["openai:gpt-5.4-mini-2026-03-05"], table) is not None
    assert find_price(["google:gemini-2.5-pro"], table) is not None
    assert find_price(["openai:gpt-2"], table) is None


def test_cost_counts_cache_reads_and_writes_at_their_own_rates() -> None:
    price = Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    usage = Usage(
        prompt_tokens=2500, completion_tokens=50, cache_read_tokens=2000, cache_write_tokens=400
    )
    assert price.cost(usage) == pytest.approx((100 * 3 + 2000 * 0.3 + 400 * 3.75 + 50 * 15) / 1e6)


def test_the_user_file_overrides_and_extends_the_bundled_table(isolated: Path) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / "prices.toml").write_text(
        '["anthropic:claude-sonnet-4-6"]\ninput = 1.0\noutput = 2.0\n'
        '["vllm:qwen3"]\ninput = 0.1\noutput = 0.2\n'
    )
    table = price_table()
    assert table["anthropic:claude-sonnet-4-6"] == Price(input=1.0, output=2.0)
    assert table["vllm:qwen3"].output == 0.2
    (isolated / "prices.toml").write_text('["x:y"]\ninput = "cheap"\noutput = 1\n')
    os.utime(isolated / "prices.toml", (1, 1))  # a new mtime: the file is read again
    with pytest.raises(ConfigError, match="bad price"):
        price_table()


def test_the_run_config_prices_reach_the_provider() -> None:
    config = RunConfig.read(
        {
            "agents": [{"model": "openai:gpt-5.4-mini"}],
            "prices": {"openai:gpt-5.4-mini": {"input": 100.0, "output": 100.0}},
        }
    )
    settings = config.agents[0].settings(config.prices)
    pricer = Pricer("openai:gpt-5.4-mini", ["openai:gpt-5.4-mini"], settings)
    assert pricer.cost(Usage(prompt_tokens=10_000)) == pytest.approx(1.0)
    own = ModelSettings(options={"price": {"input": 1.0, "output": 1.0}})
    assert Pricer("x:y", ["x:y"], own).cost(Usage(completion_tokens=10**6)) == 1.0


@pytest.fixture
def unpriced_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunConfig:
    """Three agents whose CLI reports no usage and no cost (cursor-agent's shape)."""
    bin_dir = install(tmp_path / "bin", ("cursor-agent",))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return RunConfig.read(
        {
            "agents": [{"model": "cli:cursor-agent"}] * 3,
            "seed": 3,
            # the fake agents all answer alike: keep debating so the limit is reached
            "arena": {"max_rounds": 1, "stop_on_agreement": False},
        }
    )


def test_an_unknown_price_is_reported_unknown_with_one_warning(
    unpriced_agents: RunConfig,
) -> None:
    run = start("What is 6 x 7?", unpriced_agents)
    assert run.exit_code == 0
    assert run.result.cost is None
    assert all(agent.cost is None for agent in run.result.agents.values())
    warnings = [e for e in events(run.folder) if e["kind"] == "warning"]
    priced = [w for w in warnings if "no price is known" in w["data"]["message"]]
    assert len(priced) == 1  # ten calls, three agents, one warning
    assert "cost limits count its tokens" in priced[0]["data"]["message"]


def test_a_cost_limit_still_bounds_calls_without_a_price(unpriced_agents: RunConfig) -> None:
    unpriced_agents.limits.max_cost = 0.002  # about 200 tokens at the fallback rate
    run = start("What is 6 x 7?", unpriced_agents)
    assert run.exit_code == 3, run.result.how
    assert "cost limit reached" in (run.message or "")


# -- the maintained source (genai-prices, the `prices` extra) ---------------------------------
def test_the_maintained_package_prices_models_the_bundled_table_lacks() -> None:
    pytest.importorskip("genai_prices")
    assert find_price(["deepseek:deepseek-chat"], price_table()) is None
    deepseek = lookup_price(["deepseek:deepseek-chat"])
    assert deepseek is not None and deepseek.input > 0 and deepseek.output > deepseek.input
    # the package's price comes first; of a tiered one (gpt-5.4 charges more above a
    # long-context threshold) the base tier, what a short prompt pays
    from genai_prices import Usage as Used
    from genai_prices import calc_price

    short = calc_price(Used(input_tokens=1000, output_tokens=1000), "gpt-5.4", provider_id="openai")
    price = lookup_price(["openai:gpt-5.4"])
    assert price is not None
    assert price.input + price.output == pytest.approx(float(short.total_price) * 1000)
    assert lookup_price(["openrouter:openai/gpt-5.4"]) is not None


def test_the_bundled_table_is_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("genai_prices")
    # a model the package does not know: the bundled table prices it; one it knows: its price
    stale = Price(99.0, 99.0)
    bundled = {"openai:moot-only-model": Price(1.0, 2.0), "openai:gpt-5.4": stale}
    monkeypatch.setattr(pricing, "_bundled", lambda: bundled)
    assert pricing._maintained(["openai:moot-only-model"]) is None
    assert lookup_price(["openai:moot-only-model"]) == Price(1.0, 2.0)
    assert lookup_price(["openai:gpt-5.4"]) not in (None, stale)
    # not installed: every price the bundled table has, and nothing else
    monkeypatch.setattr(pricing, "_snapshot", lambda: None)
    assert lookup_price(["openai:gpt-5.4"]) == price_table()["openai:gpt-5.4"]
    assert lookup_price(["deepseek:deepseek-chat"]) is None


def test_the_users_prices_win_over_the_package_and_nothing_is_guessed(isolated: Path) -> None:
    pytest.importorskip("genai_prices")
    mine = {"deepseek:deepseek-chat": {"input": 9.0, "output": 9.0}}
    assert lookup_price(["deepseek:deepseek-chat"], mine) == Price(9.0, 9.0)
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / "prices.toml").write_text('["openai:gpt-5.4"]\ninput = 1.0\noutput = 2.0\n')
    assert lookup_price(["openai:gpt-5.4"]) == Price(1.0, 2.0)
    # a key of no vendor it prices, or a bare name, is never matched to some vendor's model
    assert pricing._maintained(["cli:cursor-agent", "local:smollm2", "gpt-5.4"]) is None
    pricer = Pricer("cli:cursor-agent", ["cli:cursor-agent"], ModelSettings())
    assert pricer.price is None
