"""The user config file (issue 24): default models, aliases (`-m fast`), default protocol and
limits, applied by `load_run` under the flags and a project's config file; a wrong one is an
error naming the file and the key; `moot config` shows, edits, gets and sets it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import moot as moot_library
from moot.config.user import TEMPLATE, load_user_config, set_key, user_config_path
from moot.errors import ConfigError
from moot.lifecycle.plan import load_run
from moot.models.scripted import register_script
from tests.cli.test_cli import moot

FAST = ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"]


def _write(text: str) -> Path:
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


USER = """\
protocol = "vote"
models = ["fast", "local:smollm2"]
[limits]
max_cost = 0.5
timeout = 60
[aliases]
fast = ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"]
one = "openai:gpt-5.4"
"""


def _models(plan: object) -> list[str]:
    return [agent.model for agent in plan.config.agents]  # type: ignore[attr-defined]


def test_the_file_is_in_the_platform_config_folder_unless_moot_config_names_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert user_config_path() == Path(os.environ["MOOT_CONFIG"])
    monkeypatch.delenv("MOOT_CONFIG")
    if sys.platform.startswith("linux"):  # platformdirs reads XDG_CONFIG_HOME (conftest's)
        assert user_config_path() == tmp_path / "xdg-config" / "moot" / "config.toml"
    assert user_config_path().name == "config.toml"


def test_a_run_takes_the_users_protocol_models_and_limits() -> None:
    _write(USER)
    plan = load_run()
    assert plan.record.name == "vote"
    assert _models(plan) == [*FAST, "local:smollm2"]  # the alias expanded, one agent each
    assert plan.config.limits.max_cost == 0.5 and plan.config.limits.timeout == 60


def test_without_a_user_config_the_built_in_defaults_apply() -> None:
    plan = load_run()
    assert plan.record.name == "arena"
    assert _models(plan) == ["local:smollm2"] * 3
    assert plan.config.limits.max_cost is None


def test_flags_win_over_the_project_file_which_wins_over_the_user_config(
    tmp_path: Path,
) -> None:
    _write(USER)
    project = tmp_path / "moot.toml"
    project.write_text(
        'protocol = "arena"\n[[agents]]\nmodel = "local:smollm2"\n[[agents]]\n'
        'model = "local:smollm2"\n[limits]\nmax_cost = 3.0\n',
        encoding="utf-8",
    )
    plan = load_run(project)
    assert plan.record.name == "arena" and _models(plan) == ["local:smollm2"] * 2
    assert plan.config.limits.max_cost == 3.0  # the file's
    assert plan.config.limits.timeout == 60  # the file sets none: the user's
    plan = load_run(project, protocol="court", models=["one", "fast"], max_cost=9.0)
    assert plan.record.name == "court"
    assert _models(plan) == ["openai:gpt-5.4", *FAST]  # aliases given as models expand too
    assert plan.config.limits.max_cost == 9.0


def test_the_short_flag_takes_an_alias(capsys: pytest.CaptureFixture[str]) -> None:
    _write('[aliases]\nfast = ["scripted:@a", "scripted:@b"]\n')
    for name in ("a", "b"):  # a dry run makes the models as the run would
        register_script(name, lambda request: "unused")
    code, out, err = moot(capsys, "run", "x", "--dry-run", "-m", "fast", "-m", "local:smollm2")
    assert code == 0, err
    assert "Agent C: local:smollm2" in out
    assert out.count("scripted:@") == 2


def test_a_default_protocol_without_rounds_runs_without_a_demo_round(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # no --models and no config is the embedded demo, which runs one round where the protocol
    # has rounds: the user's protocol (vote has none) is the one that decides
    _write('protocol = "vote"\n')
    code, out, err = moot(capsys, "run", "x", "--dry-run")
    assert code == 0, err
    assert "for the vote protocol" in out


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (
            "[limits]\nmax_cost = -1\n",
            "limits.max_cost: -1 is not more than 0; give a number more than 0",
        ),
        ('modles = ["x:y"]\n', "modles: unknown key; did you mean 'models'?"),
        ('models = ["fst"]\n[aliases]\nfast = "a:b"\n', "models: 'fst' is neither"),
        ('[aliases]\nfast = ["gpt-4o"]\n', "aliases.fast.0: model spec 'gpt-4o' is not"),
        ('protocol = "cout"\n', "protocol: unknown protocol 'cout' (did you mean 'court'?)"),
        ('[aliases]\nx = "opnai:gpt-4o"\n', "aliases.x: unknown model provider 'opnai'"),
        ("protocol = [", "cannot be parsed"),
    ],
)
def test_a_wrong_user_config_is_an_error_naming_the_file_and_the_key(
    text: str, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(text)
    code, _, err = moot(capsys, "run", "x", "--dry-run", "-m", "local:smollm2")
    assert code == 1
    assert str(path) in err and named in err
    with pytest.raises(ConfigError, match="config"):
        load_run()


def test_set_get_and_unset_keep_the_files_comments(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = moot(capsys, "config", "set", "aliases.fast", *FAST)
    assert code == 0, err
    path = user_config_path()
    assert path.read_text(encoding="utf-8").startswith(TEMPLATE.splitlines()[0])  # a template
    for key, *values in (["models", "fast"], ["limits.max_cost", "0.25"], ["protocol", "court"]):
        assert moot(capsys, "config", "set", key, *values)[0] == 0
    assert moot(capsys, "config", "get", "models")[1].split() == FAST
    assert moot(capsys, "config", "get", "limits.max_cost")[1] == "0.25\n"
    user = load_user_config()
    assert (user.protocol, user.models, user.aliases["fast"]) == ("court", ["fast"], FAST)
    assert "# smart = " in path.read_text(encoding="utf-8")  # the comments stay
    assert moot(capsys, "config", "unset", "protocol")[0] == 0
    assert moot(capsys, "config", "get", "protocol")[1] == "arena\n"  # the built-in default
    code, _, err = moot(capsys, "config", "get", "limits.timeout")
    assert code == 1 and "limits.timeout is not set" in err


def test_a_wrong_value_is_refused_and_the_file_left_as_it_was(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _write(USER)
    for key, value, named in [
        (
            "limits.max_cost",
            "-2",
            "limits.max_cost: -2.0 is not more than 0; give a number more than 0",
        ),
        ("protocol", "courtt", "did you mean 'court'?"),
        ("aliases.x", "gpt4", "aliases.x.0: model spec 'gpt4'"),
        ("limit.max_cost", "1", "'limit.max_cost' is not a key of the user config"),
    ]:
        code, _, err = moot(capsys, "config", "set", key, value)
        assert code == 1 and named in err, err
        assert path.read_text(encoding="utf-8") == USER


def test_set_replaces_a_value_written_over_several_lines() -> None:
    text = '[aliases]\nfast = [\n  "a:b",\n  "c:d",\n]\nslow = "e:f"\n'
    assert set_key(text, "aliases.fast", ["x:y"]) == '[aliases]\nfast = ["x:y"]\nslow = "e:f"\n'
    assert set_key(text, "aliases.fast", None) == '[aliases]\nslow = "e:f"\n'
    assert set_key("", "limits.timeout", 5.0) == "\n[limits]\ntimeout = 5.0\n"


def test_config_shows_the_path_and_where_each_setting_comes_from(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = moot(capsys, "config")
    assert code == 0 and "not there yet" in out and str(user_config_path()) in out
    assert "local:smollm2 local:smollm2 local:smollm2  (built-in)" in out
    _write(USER)
    code, out, _ = moot(capsys, "config")
    assert "protocol             vote  (user config)" in out
    assert "limits.max_tokens    none  (built-in)" in out
    assert f"aliases.fast         {' '.join(FAST)}  (user config)" in out
    assert moot(capsys, "config", "--path")[1] == f"{user_config_path()}\n"


def test_edit_opens_the_editor_on_a_commented_template(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = tmp_path / "seen.txt"
    editor = tmp_path / "editor.py"
    # the editor puts a setting at the top of the file it is given, as a user would
    prepend = (
        "import pathlib, sys\nf = pathlib.Path(sys.argv[1])\nf.write_text({!r} + f.read_text())\n"
    )
    editor.write_text(
        f"import shutil, sys\nshutil.copy(sys.argv[1], {str(seen)!r})\n"
        + prepend.format('protocol = "court"\n'),
        encoding="utf-8",
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    monkeypatch.delenv("VISUAL", raising=False)
    code, _, err = moot(capsys, "config", "edit")
    assert code == 0, err
    assert seen.read_text(encoding="utf-8") == TEMPLATE
    assert load_user_config().protocol == "court"
    # a mistake made in the editor is named at once
    editor.write_text(prepend.format("protocl = 1\n"), encoding="utf-8")
    code, _, err = moot(capsys, "config", "edit")
    assert code == 1 and "protocl: unknown key; did you mean 'protocol'?" in err


def test_the_library_reads_a_protocols_options_as_the_users_default_protocols() -> None:
    _write('protocol = "court"\n')
    with pytest.raises(ConfigError) as raised:  # court's option, read as court's
        moot_library.run("x", max_agent_rounds=0)
    assert "court.max_agent_rounds" in str(raised.value)


def test_a_batch_and_a_bench_take_the_users_models_and_limits(tmp_path: Path) -> None:
    """`moot batch` and `moot bench` read a run's config as `moot run` does: under the user
    config, so a task line or a bench without models runs the user's models."""
    from moot.batch import read_tasks
    from moot.bench.runner import BenchOptions, _plan

    _write(USER)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"task": "2+2?"}\n{"task": "3+3?", "models": ["one"]}\n', encoding="utf-8")
    (_, _, first), (_, _, second) = read_tasks(tasks)
    assert first.record.name == "vote" and _models(first) == [*FAST, "local:smollm2"]
    assert _models(second) == ["openai:gpt-5.4"]  # the line's alias, expanded
    assert first.config.limits.max_cost == 0.5
    bench = _plan(BenchOptions(suite="smoke", protocols=["vote"]), "vote")
    assert _models(bench) == [*FAST, "local:smollm2"] and bench.config.limits.timeout == 60
