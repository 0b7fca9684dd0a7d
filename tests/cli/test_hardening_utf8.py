"""Input that is not UTF-8 (a config file, a task file, a piped task, a command-line task, a
library task): a clear error naming the file and the byte, exit 1, no session folder left, and
`moot validate` listing it as a problem instead of a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import moot
from moot import api
from moot.errors import ConfigError
from tests.cli.test_cli import moot as moot_cli
from tests.scripts import Debate

SRC = Path(__file__).resolve().parents[2] / "src"


def no_sessions(home: Path) -> bool:
    """No session folder anywhere under MOOT_HOME (an empty sessions/ is fine)."""
    root = home / "sessions"
    return not root.exists() or not any(root.iterdir())


@pytest.mark.parametrize(
    ("name", "content", "offset"),
    [
        ("bad.toml", b'protocol = "arena"\n# caf\xe9\n', 24),
        ("bad.yaml", b"protocol: arena\n# na\xefve\n", 20),
        ("bad.json", b'{"protocol": "ar\xffena"}', 16),
    ],
)
def test_validate_lists_a_config_that_is_not_utf8(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, content: bytes, offset: int
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    code, out, err = moot_cli(capsys, "validate", str(path))
    assert code == 1
    assert "Traceback" not in out + err
    assert f"{path}: 1 problem" in out
    assert f"is not valid UTF-8 (byte {offset}" in out and "save it as UTF-8" in out


def test_run_with_a_config_that_is_not_utf8_fails_cleanly(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, isolated: Path
) -> None:
    path = tmp_path / "bad.toml"
    path.write_bytes(b'protocol = "arena"\n# caf\xe9\n')
    code, _, err = moot_cli(capsys, "run", "What is 6 x 7?", "--config", str(path))
    assert code == 1
    assert "bad.toml" in err and "not valid UTF-8 (byte 24" in err
    assert "Traceback" not in err
    assert no_sessions(isolated)


def test_a_task_file_that_is_not_utf8_names_the_file_and_byte(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, isolated: Path
) -> None:
    task = tmp_path / "task.txt"
    task.write_bytes(b"What is \xff 6 x 7?")
    specs = [arg for spec in Debate().specs() for arg in ("--models", spec)]
    code, _, err = moot_cli(capsys, "run", "--task-file", str(task), *specs)
    assert code == 1
    assert f"the task in {task} is not valid UTF-8 (byte 8)" in err
    assert no_sessions(isolated)


def _moot_process(args: list[str], stdin: bytes, home: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "MOOT_HOME": str(home)}
    code = "import sys; from moot.cli import main; main(sys.argv[1:])"
    return subprocess.run(
        [sys.executable, "-c", code, *args], input=stdin, capture_output=True, env=env, timeout=120
    )


def test_a_piped_task_that_is_not_utf8_is_an_error_not_an_empty_task(isolated: Path) -> None:
    # Before: the decode error was swallowed and moot said "the task is empty".
    done = _moot_process(["run", "--models", "scripted:@none"], b"What is \xfe 6 x 7?", isolated)
    err = done.stderr.decode()
    assert done.returncode == 1
    assert "the task in standard input is not valid UTF-8 (byte 8)" in err
    assert "the task is empty" not in err
    assert no_sessions(isolated)


def test_a_command_line_task_that_is_not_utf8_leaves_no_session(isolated: Path) -> None:
    # Python hands undecodable argv bytes over as lone surrogates; the journal cannot hold them.
    task = "What is \udcff 6 x 7?"  # os.fsencode passes the byte 0xff on the command line
    models = ["--models", "scripted:@none"] * 2
    done = _moot_process(["run", task, *models], b"", isolated)
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert "the task is not valid UTF-8 (byte 8)" in err and "Traceback" not in err
    assert no_sessions(isolated)


def test_a_library_task_with_lone_surrogates_is_refused_before_any_folder(isolated: Path) -> None:
    config = Debate().config()
    with pytest.raises(ConfigError, match=r"the task is not valid UTF-8 \(byte 5\)"):
        api.start("What \udcff is 6 x 7?", config)
    with pytest.raises(ConfigError, match=r"not valid UTF-8"):
        moot.run("What \ud800 is 6 x 7?", models=Debate().specs())
    assert no_sessions(isolated)
