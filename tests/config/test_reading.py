"""Reading a config table into its Structs (moot/config/reading.py): every problem at once,
each at its path and in words; shorthands at any depth; the dump is what a file holds."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from msgspec import Meta

from moot.config import (
    AgentConfig,
    EngineConfig,
    Problems,
    RunConfig,
    SynthesisSettings,
    problem_lines,
    read,
)
from moot.config.reading import FieldProblem, Strict
from moot.errors import ConfigError
from moot.lifecycle.plan import resolve
from moot.protocols.arena.options import ArenaOptions
from moot.protocols.court.options import CourtOptions
from moot.protocols.refine.options import RefineOptions


def lines(data: dict[str, Any], cls: type[Any] = RunConfig, owner: str | None = None) -> list[str]:
    with pytest.raises(Problems) as caught:
        read(cls, data)
    return problem_lines(caught.value, "", cls, owner)


def test_every_problem_of_a_table_is_reported_at_once_each_at_its_path() -> None:
    found = lines(
        {
            "agents": [{"model": "openai:gpt-5", "temperature": "hot"}, {"model": "nocolon"}],
            "engine": {"concurency": 4, "attempts": 0},
            "limits": {"max_cost": -1},
            "code": {},
            "seed": "x",
        }
    )
    assert found == [
        "agents.0.temperature: must be a number, not text",
        "agents.1.model: model spec 'nocolon' is not of the form PROVIDER:MODEL (for example "
        "local:smollm2); `moot models` lists the providers",
        "limits.max_cost: -1 is not more than 0; give a number more than 0",
        "engine.concurency: unknown key; did you mean 'concurrency'?",
        "engine.attempts: 0 is less than 1; give a whole number from 1 to 100",
        "seed: must be a whole number, not text",
        "code.repo: is required",
    ]


def test_a_bound_is_worded_with_who_sets_it() -> None:
    found = lines({"max_agent_rounds": 50}, CourtOptions, "the court protocol")
    assert found == [
        "max_agent_rounds: 50 is more than 10; the court protocol takes a whole number from 1 to 10"
    ]


def test_a_check_across_fields_is_reported_at_its_field_beside_the_other_problems() -> None:
    judges = [{"model": "openai:gpt-5"}]
    found = lines({"judges": judges, "max_judge_rounds": 9, "context_topology": "x"}, CourtOptions)
    assert found == [
        "max_judge_rounds: 9 is more than 5; give a whole number from 1 to 5",
        "context_topology: 'x' is not one of 'full_history', 'last_round' or "
        "'last_round_with_self'",
        "judges: the judge panel needs at least 3 judges when enabled (1 given); add judges or "
        "set judge_panel_enabled = false",
    ]
    assert read(CourtOptions, {"judges": judges, "judge_panel_enabled": False}).judges


def test_numbers_and_switches_given_as_text_are_taken_and_a_fraction_is_no_whole_number() -> None:
    config = read(RunConfig, {"engine": {"concurrency": "4"}, "cache": {"allow_sampled": "true"}})
    assert config.engine.concurrency == 4
    assert config.cache is not None and config.cache.allow_sampled is True
    assert lines({"engine": {"concurrency": 2.5}}) == [
        "engine.concurrency: must be a whole number, not a number"
    ]


def test_shorthands_are_read_at_any_depth() -> None:
    config = read(RunConfig, {"synthesis": {"chairman": "openai:gpt-5"}})
    assert config.synthesis == SynthesisSettings(chairman=AgentConfig(model="openai:gpt-5"))
    refine = read(RefineOptions, {"preset": "impl", "max_passes": 5})
    assert (refine.judges, refine.convergence_k, refine.max_passes) == (1, 1, 5)
    found = lines({"synthesis": {"chairman": "bad"}})
    assert found == [
        "synthesis.chairman.model: model spec 'bad' is not of the form PROVIDER:MODEL (for "
        "example local:smollm2); `moot models` lists the providers"
    ]


def test_a_wrong_value_inside_a_table_of_values_is_named_by_its_key() -> None:
    found = lines(
        {
            "agents": [{"model": "x:y", "headers": {"A": 1, "B": "ok"}}],
            "prices": {"openai:gpt-5": {"input": "cheap", "output": 1.0}},
        }
    )
    assert found == [
        "agents.0.headers.A: must be text, not a whole number",
        "prices.openai:gpt-5.input: must be a number, not text",
    ]


def test_a_table_that_is_no_table_is_said_so() -> None:
    assert lines({"engine": 3}) == ["engine: must be a table, not a whole number"]
    assert lines({"agents": "openai:gpt-5"}) == ["agents: must be a list, not text"]
    assert lines({"agents": []}) == ["agents: must have at least 1 item"]


def test_the_protocol_sections_are_kept_as_given_and_dumped_at_the_top_level() -> None:
    data = {"protocol": "court", "court": {"max_agent_rounds": 2}, "agents": [{"model": "x:y"}]}
    config = read(RunConfig, data)
    assert config.section("court") == {"max_agent_rounds": 2}
    dumped = config.dump()
    assert dumped["court"] == {"max_agent_rounds": 2} and "sections" not in dumped
    assert read(RunConfig, dumped) == config
    # `sections` is no key of a config file: kept as a section, so that the plan refuses it
    assert read(RunConfig, {"sections": {}}).sections == {"sections": {}}


class _Pair(Strict):
    low: Annotated[int, Meta(ge=0)] = 0
    high: int = 10

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise FieldProblem("high", f"must be at least low ({self.low})")


def test_a_struct_of_ones_own_reads_the_same_way() -> None:
    assert read(_Pair, {"low": "3"}) == _Pair(low=3)
    assert lines({"low": 20, "hgh": 1}, _Pair) == [
        "hgh: unknown key; did you mean 'high'?",
        "high: must be at least low (20)",
    ]
    # the check across the fields runs on those that fit, a wrong one at its default, and
    # says nothing more of a field reported wrong
    assert lines({"low": -1, "high": 5, "hgh": 0}, _Pair) == [
        "hgh: unknown key; did you mean 'high'?",
        "low: -1 is less than 0; give a whole number of 0 or more",
    ]
    assert lines({"low": 30, "high": "x"}, _Pair) == ["high: must be a whole number, not text"]


def test_a_config_made_in_python_is_checked_as_a_files_is() -> None:
    config = RunConfig(agents=[AgentConfig(model="x:y")], engine=EngineConfig(concurrency=0))
    with pytest.raises(ConfigError, match=r"engine\.concurrency: 0 is less than 1"):
        resolve(config)
    agents = [AgentConfig(model="x:y"), AgentConfig(model="x:z")]
    made = resolve(RunConfig(agents=agents, sections={"arena": {}}))
    assert made.config.section("arena") == ArenaOptions() == made.options
