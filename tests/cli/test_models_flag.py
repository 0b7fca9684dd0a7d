"""-m/--models takes one PROVIDER:MODEL spec per use (issue 24): a comma-separated list is
refused with the flags it meant, a bare model name with the spec it most likely means; and the
library's problems say the same."""

from __future__ import annotations

import pytest

import moot
from moot.errors import ConfigError
from moot.models.pricing import suggest_spec
from tests.cli.test_cli import moot as moot_cli


@pytest.mark.parametrize("command", [["run", "x"], ["plan", "x"], ["bench"]])
def test_a_comma_separated_list_is_refused_with_the_fix(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = moot_cli(capsys, *command, "--models", "openai:gpt-5.4,local:smollm2")
    assert code == 1
    assert "names 2 models; one per use: --models openai:gpt-5.4 --models local:smollm2" in err


@pytest.mark.parametrize(
    ("bare", "meant"),
    [
        ("gpt-4o", "openai:gpt-4o"),
        ("claude-sonnet-4.6", "anthropic:claude-sonnet-4.6"),
        ("gemini-2.5-flash", "google:gemini-2.5-flash"),
        ("smollm2", "local:smollm2"),
        ("qwen3", "ollama:qwen3"),
    ],
)
def test_a_bare_model_name_suggests_its_spec(
    bare: str, meant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert suggest_spec(bare) == meant
    code, _, err = moot_cli(capsys, "run", "x", "-m", bare, "-m", bare)
    assert code == 1 and f"did you mean --models {meant}?" in err


def test_nothing_close_suggests_nothing() -> None:
    assert suggest_spec("zzzzzzzz") is None
    assert suggest_spec("openai:gpt-5.4") is None  # already a spec


def test_the_short_flag_runs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = moot_cli(
        capsys, "run", "x", "--dry-run", "-m", "local:smollm2", "-m", "local:smollm2"
    )
    assert code == 0, err
    assert "Projected worst case" in out


def test_the_library_says_the_same_in_the_users_terms() -> None:
    with pytest.raises(ConfigError) as raised:
        moot.run("x", models=["gpt-4o", "local:smollm2"])
    message = str(raised.value)
    assert message.startswith("the options given have 1 problem")
    assert "--models 'gpt-4o': model spec 'gpt-4o' is not of the form" in message
    assert message.endswith("lists the providers; did you mean 'openai:gpt-4o'?")


def test_a_provider_without_an_example_does_not_break_the_suggestion() -> None:
    """A provider registered with no example (a plugin's, a test's) made the suggestion crash."""
    from moot.models.base import _REGISTRY, register_provider

    register_provider("bare", "moot.models.scripted", "ScriptedModel.from_spec")
    try:
        assert suggest_spec("gpt-4o") == "openai:gpt-4o"
    finally:
        _REGISTRY.pop("bare")


@pytest.mark.parametrize(
    ("provider", "meant"),
    [("antropic", "anthropic"), ("olama", "ollama"), ("lmstuido", "lmstudio"), ("nope", None)],
)
def test_an_unknown_provider_is_matched_only_to_one_it_misspells(
    provider: str, meant: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    """A letter missed, doubled or swapped gets its "did you mean"; "nope" gets none, where
    difflib's own cutoff offered 'openai'."""
    code, _, err = moot_cli(capsys, "run", "x", "-m", f"{provider}:m", "-m", f"{provider}:m")
    assert code == 1 and f"unknown model provider {provider!r}" in err, err
    if meant is None:
        assert "did you mean" not in err
    else:
        assert f"(did you mean {meant!r}?)" in err
