"""`moot config`: the user config file (moot/config/user.py) shown, edited, read and set."""

from __future__ import annotations

from typing import Any

import click

from moot.cli.common import fail, json_option, say, say_json

__all__ = ["config"]


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, list):
        return " ".join(str(item) for item in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


@click.group(invoke_without_command=True)
@click.option("--path", "path_only", is_flag=True, help="Print only the file's path.")
@json_option
@click.pass_context
def config(ctx: click.Context, path_only: bool, as_json: bool) -> None:
    """Your defaults for every run: models, aliases (-m NAME), protocol and limits.

    Flags win over a project's config file (--config), which wins over this file, which wins
    over moot's built-in defaults. With no command: the file's path and what a run takes from
    it, setting by setting.

    \b
    Examples:
      moot config set aliases.fast openai:gpt-5.4-mini anthropic:claude-haiku-4-5
      moot config set models fast          # every run without -m: those two agents
      moot config set limits.max_cost 0.5
      moot config get protocol
      moot config edit                     # $EDITOR on the file (made from a template)"""
    if ctx.invoked_subcommand is not None:
        return
    from moot.config.user import effective, user_config_path
    from moot.lifecycle.specs import user_config

    path = user_config_path()
    if path_only:
        say(str(path))
        return
    rows = effective(user_config())
    if as_json:
        settings = {key: {"value": value, "source": source} for key, value, source in rows}
        say_json({"path": str(path), "exists": path.is_file(), "settings": settings})
        return
    missing = "" if path.is_file() else " (not there yet: moot config edit makes it)"
    say(f"user config: {path}{missing}")
    width = max(len(key) for key, _, _ in rows)
    for key, value, source in rows:
        say(f"  {key:<{width}}  {_shown(value)}  ({source})")


def _text(path: Any) -> str:
    from moot.config.user import TEMPLATE

    return path.read_text(encoding="utf-8") if path.is_file() else TEMPLATE


@config.command()
def edit() -> None:
    """Open the user config in $EDITOR (made from a commented template when there is none);
    then check it."""
    from moot.config.user import TEMPLATE, read_user_file, user_config_path
    from moot.files import atomic_write
    from moot.lifecycle.specs import user_config

    path = user_config_path()
    if path.exists() and not path.is_file():
        read_user_file(path)  # a folder there: the error naming it (a wrong file is edited)
    if not path.is_file():
        atomic_write(path, TEMPLATE)
    click.edit(filename=str(path))
    user_config()  # a mistake is named now, not at the next run
    say(f"user config: {path}", err=True)


@config.command("set", context_settings={"ignore_unknown_options": True})
@click.argument("key")
@click.argument("values", nargs=-1, required=True)
def set_(key: str, values: tuple[str, ...]) -> None:
    """Set KEY to VALUE: protocol NAME, models SPEC-OR-ALIAS..., limits.max_cost USD,
    limits.max_tokens N, limits.timeout SECONDS, limits.call_timeout SECONDS,
    aliases.NAME SPEC... The file keeps its comments."""
    from moot.config.user import value_of

    _write(key, value_of(key, values))


@config.command()
@click.argument("key")
def unset(key: str) -> None:
    """Remove KEY from the user config: the built-in default applies again."""
    from moot.config.user import check_key

    check_key(key)
    _write(key, None)


def _write(key: str, value: Any) -> None:
    from moot.config.user import parse_user_config, read_user_file, set_key, user_config_path
    from moot.errors import ConfigError
    from moot.files import atomic_write
    from moot.lifecycle.specs import user_config_problems

    path = user_config_path()
    if path.suffix.lower() != ".toml":
        fail(f"moot config sets keys in a .toml file only; edit {path} by hand")
    done = "removed" if value is None else "set"
    try:
        read_user_file(path)  # the file as it is reads (its own line numbers in an error)
        text = set_key(_text(path), key, value)
        parse_user_config(path, text, user_config_problems)
    except ConfigError as exc:  # a wrong value leaves the file as it was
        lines = str(exc).splitlines()
        # a list of problems, each `key: message`; else the whole message (a parse error)
        problems = [line for line in lines if line.startswith("  ")] or [f"  {x}" for x in lines]
        fail("\n".join([f"{key} not {done} ({path} is unchanged):", *problems]))
    atomic_write(path, text)
    say(f"{key} {done} in {path}", err=True)


@config.command()
@click.argument("key")
def get(key: str) -> None:
    """Print KEY's value as a run takes it: the user config's, else the built-in default
    (a list one item a line). Exit 1 when neither has one."""
    from moot.config.user import check_key, effective
    from moot.lifecycle.specs import user_config

    check_key(key)
    rows = {name: value for name, value, _ in effective(user_config())}
    value = rows.get(key)
    if value is None:
        fail(f"{key} is not set")
    for item in value if isinstance(value, list) else [value]:
        say(_shown(item))
