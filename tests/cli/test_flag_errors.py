"""A problem with a value given on the command line names the flag and the value as typed
(issue 24: "flag errors in the user's terms"), not the config path moot built from it
(`agents.0.model`, `cache.store`); a value from a config file keeps its path."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.lifecycle.flags import reworded
from tests.cli.test_cli import moot

TWO = ("--models", "local:smollm2", "--models", "local:smollm2")


@pytest.mark.parametrize(
    ("flags", "problems"),
    [
        (
            ["--models", "local:smollm2", "--models", "foo:bar"],
            ["--models 'foo:bar': unknown model provider 'foo' in 'foo:bar'"],
        ),
        (
            ["--models", "foo:bar"],
            [
                "--models: the arena needs 2 or more agents (1 given); "
                "a model given twice is two agents",
                "--models 'foo:bar': unknown model provider 'foo'",
            ],
        ),
        (
            [*TWO, "--cache", "memcached://x"],
            ["--cache 'memcached://x': 'memcached://x' is not a cache store"],
        ),
        (
            [*TWO, "--chairman", "nope"],
            ["--chairman 'nope': model spec 'nope' is not of the form PROVIDER:MODEL"],
        ),
        (
            [*TWO, "--protocol", "court", "--rounds", "50"],
            [
                "--rounds 50: 50 is more than 10; "
                "the court protocol takes a whole number from 1 to 10"
            ],
        ),
        (
            [*TWO, "--samples", "3"],
            ["--samples: the arena protocol does not take --samples"],
        ),
    ],
)
def test_a_bad_flag_is_named_with_its_value(
    capsys: pytest.CaptureFixture[str], flags: list[str], problems: list[str]
) -> None:
    code, _, err = moot(capsys, "run", "x", "--dry-run", *flags)
    assert code == 1
    lines = err.splitlines()
    assert lines[0].startswith("moot: error: the options given have")
    assert len(lines) == 1 + len(problems)
    for line, expected in zip(lines[1:], problems, strict=True):
        assert line.strip().startswith(expected), line
    assert "agents." not in err and "cache.store" not in err and "synthesis." not in err


def test_a_value_from_a_config_file_keeps_its_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "moot.toml"
    config.write_text("[[agents]]\nmodel = 'foo:bar'\n[[agents]]\nmodel = 'local:smollm2'\n")
    code, _, err = moot(capsys, "run", "x", "--dry-run", "--config", str(config))
    assert code == 1 and "agents.0.model: unknown model provider 'foo'" in err
    # the file's agents, and a flag's cache: each in its own terms
    code, _, err = moot(
        capsys, "run", "x", "--dry-run", "--config", str(config), "--cache", "memcached://x"
    )
    assert code == 1 and "agents.0.model: unknown model provider 'foo'" in err
    assert "--cache 'memcached://x': " in err


def test_the_longest_path_a_flag_set_words_the_problem() -> None:
    terms = {"agents": "--models", "agents.1": "--models 'b:c'", "limits.max_cost": "--max-cost 0"}
    assert reworded(
        [
            "agents.1.model: unknown",
            "agents: too few",
            "agents.10.model: from elsewhere",
            "limits.max_cost: must be positive",
            "limits.max_tokens: untouched",
            "a problem without a path",
        ],
        terms,
    ) == [
        "--models 'b:c': unknown",
        "--models: too few",
        "--models: from elsewhere",
        "--max-cost 0: must be positive",
        "limits.max_tokens: untouched",
        "a problem without a path",
    ]
