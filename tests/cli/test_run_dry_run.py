"""`moot run --dry-run` approves only what a run would start (a new user's tryout): it makes
every check the run makes before its first model call and fails as the run fails (exit 1, the
same message), and its projection never promises a call more tokens than the model's context
window holds."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from moot.models.local import DEFAULT_CONTEXT
from tests.cli.test_cli import moot


def _sessions() -> list[Path]:
    root = Path(os.environ["MOOT_HOME"]) / "sessions"
    return sorted(root.glob("*")) if root.exists() else []


def _big_task(tmp_path: Path) -> Path:
    """About 10,000 tokens: more than the embedded model's 8,192-token window holds."""
    path = tmp_path / "big.txt"
    path.write_text("Summarise the following notes. " + "word " * 8_000, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["What is 2+2?", "-m", "local:nosuch", "-m", "local:nosuch"],  # no such model file
        ["--task-file", "big.txt"],  # too large for the embedded model's context window
        [""],  # no task
        ["What is 2+2?", "-m", "openai:gpt-5.4", "-m", "openai:gpt-5.4"],  # no key
    ],
)
def test_a_dry_run_refuses_what_the_run_refuses_and_says_the_same(
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _big_task(tmp_path)  # the tests run in tmp_path
    ran = moot(capsys, "run", *args)
    dry = moot(capsys, "run", *args, "--dry-run")
    assert ran[0] == 1 and ran[2].startswith("moot: error: "), ran
    assert dry == ran  # exit 1, nothing printed, the same message
    assert "Traceback" not in dry[2] and _sessions() == []


@pytest.mark.parametrize("cache", [[], ["--cache"]])
def test_a_dry_run_under_a_home_that_is_a_file_fails_as_the_run_does(
    cache: list[str],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """MOOT_HOME set to a file: the run refused it (exit 1) and the dry run printed a projection,
    exit 0; the run's message said "Not a directory" about a path that was no directory."""
    afile = tmp_path / "afile"
    afile.write_text("mine\n", encoding="utf-8")
    monkeypatch.setenv("MOOT_HOME", str(afile))
    args = ["What is 2+2?", *cache]
    ran = moot(capsys, "run", *args)
    dry = moot(capsys, "run", *args, "--dry-run")
    assert ran[0] == 1 and dry == ran, (ran, dry)
    assert f"{afile} is a file, not a folder. Move it, or set MOOT_HOME to a folder" in ran[2]
    assert ("response cache" in ran[2]) == bool(cache)
    assert afile.read_text(encoding="utf-8") == "mine\n"


def test_the_tryouts_large_task_file_is_refused_by_the_dry_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A 100 KB task was projected at `up to 79,100 tokens each`, exit 0."""
    path = tmp_path / "huge.txt"
    path.write_text("word " * 20_000, encoding="utf-8")
    code, out, err = moot(capsys, "run", "--task-file", str(path), "--dry-run")
    assert code == 1 and out == ""
    assert "too large for local:smollm2" in err and "context window is 8,192 tokens" in err


def _per_call(out: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(r"up to ([\d,]+) tokens each", out)]


@pytest.mark.parametrize(
    ("protocol", "max_tokens", "said"),
    [
        ("arena", None, "the arena protocol cuts what it shows to fit"),
        # answers of 4,096 tokens, quoted: the embedded model's own 320 never come near
        ("refine", 4096, "the model refuses it (the call fails)"),
    ],
)
def test_no_call_is_projected_above_the_models_context_window(
    protocol: str,
    max_tokens: int | None,
    said: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """The arena projected `up to 54,097 tokens each` on the 8,192-token embedded model."""
    config = tmp_path / "moot.toml"
    cap = "" if max_tokens is None else f"max_tokens = {max_tokens}\n"
    config.write_text(f'[[agents]]\nmodel = "local:smollm2"\n{cap}' * 3, encoding="utf-8")
    code, out, err = moot(
        capsys, "run", "What is 2+2?", "--protocol", protocol, "--config", str(config),
        "--dry-run",
    )  # fmt: skip
    assert code == 0, err
    per_call = _per_call(out)
    assert per_call and max(per_call) <= DEFAULT_CONTEXT == 8_192
    tokens = re.search(r"Tokens: ([\d,]+)-([\d,]+)", out)
    assert tokens is not None
    calls = re.search(r"Calls: (?:(\d+)-)?(\d+)", out)
    assert calls is not None
    assert int(tokens[2].replace(",", "")) <= int(calls[2]) * DEFAULT_CONTEXT
    assert "local:smollm2 holds 8,192 tokens a call (its context window)" in out
    assert said in out


def test_a_larger_window_is_the_models_own(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The window is the model's as the run makes it: a local model's options.n_ctx."""
    config = tmp_path / "moot.toml"
    agent = '[[agents]]\nmodel = "local:smollm2"\noptions = { n_ctx = 65536 }\n'
    config.write_text(agent * 2, encoding="utf-8")
    code, out, err = moot(capsys, "run", "What is 2+2?", "--config", str(config), "--dry-run")
    assert code == 0, err
    assert max(_per_call(out)) > DEFAULT_CONTEXT and "context window" not in out


def _scripted_agents(tmp_path: Path) -> list[str]:
    replies = tmp_path / "replies.json"
    replies.write_text('["7"]', encoding="utf-8")
    return ["-m", f"scripted:{replies}", "-m", f"scripted:{replies}"]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc, where nothing is made")
def test_a_dry_run_under_a_home_that_cannot_be_written_fails_as_the_run_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MOOT_HOME=/proc/moot: the run said "cannot write /proc/moot" (exit 1), the dry run
    printed a projection (exit 0), though the README says it checks the folders it will write."""
    monkeypatch.setenv("MOOT_HOME", "/proc/moot")
    args = ["What is 3+4?", *_scripted_agents(tmp_path)]
    ran = moot(capsys, "run", *args)
    dry = moot(capsys, "run", *args, "--dry-run")
    assert ran[0] == 1 and "cannot write /proc/moot" in ran[2], ran
    assert dry == ran


def test_the_dry_runs_check_of_a_writable_home_leaves_nothing_behind(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "fresh" / "home"
    monkeypatch.setenv("MOOT_HOME", str(home))
    code, _, err = moot(capsys, "run", "What is 3+4?", *_scripted_agents(tmp_path), "--dry-run")
    assert code == 0, err
    assert not (tmp_path / "fresh").exists()
    (tmp_path / "fresh").mkdir()
    code, _, err = moot(capsys, "run", "What is 3+4?", *_scripted_agents(tmp_path), "--dry-run")
    assert code == 0, err
    assert list((tmp_path / "fresh").iterdir()) == []
