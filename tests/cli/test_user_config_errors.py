"""A wrong user config is named whole (a new user's tryout): a file that does not parse is
named with the line and column of the problem and the fix, also by `moot config set`; every
problem of the file is listed at once; a problem a run meets with a value of the file names
the file and its key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from moot.config.user import user_config_path
from moot.errors import ConfigError
from moot.lifecycle.plan import load_run
from tests.cli.test_cli import moot


def _write(text: str | bytes) -> Path:
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (b"models = [\n[limits", "cannot be parsed: Invalid value (at line 2, column 2)"),
        (b'protocol = "caf\xe9"\n', "is not valid UTF-8 (byte 15"),
    ],
)
def test_set_on_a_file_that_does_not_read_names_the_problem_and_the_fix(
    text: bytes, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(text)
    code, _, err = moot(capsys, "config", "set", "protocol", "vote")
    assert code == 1, err
    assert f"protocol not set ({path} is unchanged):" in err
    assert named in err and "moot config edit" in err
    assert "Traceback" not in err
    assert path.read_bytes() == text


def test_a_folder_where_the_user_config_goes_is_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = user_config_path()
    path.mkdir(parents=True)
    for args in (["config", "set", "protocol", "vote"], ["config"], ["config", "edit"]):
        code, _, err = moot(capsys, *args)
        assert code == 1, args
        assert f"user config {path} is not a file" in err and "MOOT_CONFIG" in err, err
        assert "Traceback" not in err


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (
            'protocol = "nosuch"\nfoo = 1\n[limits]\nmax_cost = -3\n',
            [
                "protocol: unknown protocol 'nosuch'",
                "foo: unknown key",
                "limits.max_cost: -3 is not more than 0; give a number more than 0",
            ],
        ),
        (
            'protocol = "nosuch"\nmodels = ["bogus:x"]\n',
            ["protocol: unknown protocol 'nosuch'", "models.0: unknown model provider 'bogus'"],
        ),
        (
            # a wrong alias is named once: the models that use it are not "neither" too
            'models = ["fast", "bogus:x"]\n[aliases]\nfast = ["gpt4"]\n',
            ["aliases.fast.0: model spec 'gpt4'", "models.1: unknown model provider 'bogus'"],
        ),
        (
            'models = ["openai:", "fst"]\n',
            ["models.0: model spec 'openai:' is not of the form", "models: 'fst' is neither"],
        ),
    ],
)
def test_every_problem_of_the_user_config_is_named_at_once(
    text: str, named: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(text)
    for args in (["run", "x", "--dry-run"], ["config"], ["config", "set", "limits.timeout", "5"]):
        code, _, err = moot(capsys, *args)
        assert code == 1, args
        assert str(path) in err
        for line in named:
            assert line in err, (args, err)
        problems = [line for line in err.splitlines() if line.startswith("  ")]
        assert len(problems) == len(named), err


def test_a_run_problem_with_the_user_configs_models_names_the_file_and_the_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _write('models = ["local:smollm2"]\n')
    for args in (["run", "x", "--dry-run"], ["doctor"]):
        code, _, err = moot(capsys, *args)
        assert code == 1, args
        assert f"models in user config {path}: the arena needs 2 or more agents (1 given)" in err, (
            err
        )
        assert "moot config edit" in err
    with pytest.raises(ConfigError, match=f"models in user config {re.escape(str(path))}: "):
        load_run()
    # the run's own models: nothing of the file's is wrong
    code, _, err = moot(
        capsys, "run", "x", "--dry-run", "-m", "local:smollm2", "-m", "local:smollm2"
    )
    assert code == 0, err
    # a problem with a value given as a flag names the flag, not the file
    code, _, err = moot(capsys, "run", "x", "--dry-run", "-m", "local:smollm2")
    assert code == 1 and "--models: the arena needs 2" in err and str(path) not in err, err


def test_batch_and_bench_name_the_user_config_as_run_does(tmp_path: Path) -> None:
    """`moot batch` and `moot bench` read the user config too, and said 'the options given have
    1 problem' for its one model, naming neither the file nor its key."""
    from moot.batch import read_tasks
    from moot.bench.runner import BenchOptions, _plan

    path = _write('models = ["local:smollm2"]\n')
    lines = tmp_path / "tasks.jsonl"
    lines.write_text('{"task": "What is 2 + 3?"}\n')
    named = f"models in user config {re.escape(str(path))}: the arena needs 2 or more agents"
    with pytest.raises(ConfigError, match=named):
        read_tasks(lines)
    with pytest.raises(ConfigError, match=named):
        _plan(BenchOptions(suite="arithmetic", protocols=["arena"]), "arena")
