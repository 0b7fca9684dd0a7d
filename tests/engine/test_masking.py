"""A key pasted into the task, a config option or a reply, and a token in a config header, are
masked in every file moot writes for the session and in everything it prints: `moot run`,
`list`, `show`, `status`, `export`, `replay` (issue 30). The header token is kept in one
place only, the recorded config's `headers`, which a resume rebuilds its providers from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from moot.models import keys
from moot.models.keys import MASK
from tests.cli.test_cli import moot as moot_cli
from tests.engine.test_hardening_retry import _Handler
from tests.loopback import serving
from tests.models.test_hardening_secrets import DebateServer
from tests.scripts import Debate, solution

# Not shaped like any provider's key: only what moot learnt masks it.
KEY = "moot-test-Q7rX2vLp9Ks4Tz8Wn3Hy6Bd1"  # in a provider's key variable
TOKEN = "hdr-Vb5Nc8Xq2Lk7Mz4Pw9Jt"  # in a config header only


def _config(tmp_path: Path, debate: Debate) -> Path:
    specs = debate.specs()
    lines = ["seed = 3", ""]
    for i, spec in enumerate(specs):
        lines += ["[[agents]]", f'model = "{spec}"']
        if i == 0:
            lines += [
                f'headers = {{ Authorization = "Bearer {TOKEN}", X-Trace = "plain" }}',
                f'options = {{ note = "deploy with {KEY}" }}',
            ]
        lines.append("")
    folder = tmp_path / "config"
    folder.mkdir()
    path = folder / "moot.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _without_headers(meta: dict[str, Any]) -> dict[str, Any]:
    """The begin meta with the agents' headers taken out (the one place the token is kept)."""
    config = dict(meta["config"])
    config["agents"] = [{k: v for k, v in a.items() if k != "headers"} for a in config["agents"]]
    return {**meta, "config": config}


def test_a_key_in_the_task_an_option_and_a_reply_and_a_header_token_are_masked_everywhere(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    isolated: Path,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # a provider's key variable: remembered
    debate = Debate(
        answer=lambda alias, step: solution(f"42, set {KEY} and send {TOKEN} ({alias})")
    )
    config = _config(tmp_path, debate)
    task = f"What is 6 x 7? My key is {KEY} and my token {TOKEN}."
    outputs = []
    code, out, err = moot_cli(capsys, "run", task, "--config", str(config))
    assert code == 0, err
    outputs.append(out + err)
    folder = Path(out.split("Report: ")[1].split()[0]).parent
    meta = json.loads((folder / "session.json").read_text(encoding="utf-8"))
    assert meta["task"] == f"What is 6 x 7? My key is {MASK} and my token {MASK}."
    assert meta["config"]["agents"][0]["options"] == {"note": f"deploy with {MASK}"}
    # kept as configured, for a resume to call with
    assert meta["config"]["agents"][0]["headers"]["Authorization"] == f"Bearer {TOKEN}"
    # the models were asked the masked task too: a resume or a replay asks the same prompts
    assert KEY not in "\n".join(debate.prompts()) and TOKEN not in "\n".join(debate.prompts())

    monkeypatch.setattr(keys, "_SECRETS", set())  # as a new process: nothing read yet
    exported = tmp_path / "report.html", tmp_path / "report.md"
    for args in (
        ["list"],
        ["show"],
        ["show", "--full"],
        ["status"],
        ["export", "--html", str(exported[0]), "--md", str(exported[1])],
        ["replay"],
    ):
        code, out, err = moot_cli(capsys, *args)
        assert code == 0, (args, err)
        outputs.append(out + err)
    assert MASK in outputs[2]  # show prints the masked task
    for output in outputs:
        assert KEY not in output and TOKEN not in output
        assert KEY[12:22] not in output and TOKEN[5:15] not in output

    files = [p for p in tmp_path.rglob("*") if p.is_file() and p != config]
    assert any(p.name == "result.json" for p in files) and all(p.exists() for p in exported)
    leaks = []
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        if path == folder / "session.json":
            text = json.dumps(_without_headers(json.loads(text)))
        elif path == folder / "events.jsonl":
            begin, *rest = text.splitlines()
            event = json.loads(begin)
            text = json.dumps(_without_headers(event["data"])) + "\n".join(rest)
        if KEY[12:22] in text or TOKEN[5:15] in text:
            leaks.append(path.relative_to(tmp_path))
    assert leaks == []


class _HeaderHandler(_Handler):
    server: HeaderServer

    def do_POST(self) -> None:
        self.server.tokens.append(self.headers.get("X-Api-Key"))
        super().do_POST()


class HeaderServer(DebateServer):
    """Arena's phases answered on loopback, recording the X-Api-Key header of each call."""

    def __init__(self) -> None:
        super().__init__()
        self.RequestHandlerClass = _HeaderHandler
        self.tokens: list[str | None] = []


def test_a_resumed_session_calls_with_the_configured_header_token(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The header token is masked in the journal's replies but kept in the recorded config, so
    the providers a resume rebuilds from it still send it."""
    monkeypatch.setenv("MOOT_HARDENING_KEY", KEY)
    with serving(HeaderServer()) as server:
        config = tmp_path / "moot.toml"
        agents = "".join(
            f'[[agents]]\nmodel = "{server.spec}"\napi_key_env = "MOOT_HARDENING_KEY"\n'
            f'headers = {{ X-Api-Key = "{TOKEN}" }}\n'
            for _ in range(3)
        )
        engine = "[engine]\nbackoff_initial = 0.01\nbackoff_max = 0.01\n"
        config.write_text(f"seed = 5\n{agents}{engine}[arena]\nmax_rounds = 2\n", encoding="utf-8")
        task = f"What is 6 x 7? (token {TOKEN})"
        code, out, err = moot_cli(
            capsys, "run", task, "--config", str(config), "--max-tokens", "400"
        )
        assert code == 3, err  # paused by the budget
        asked = len(server.tokens)
        assert asked >= 1
        code, out, err = moot_cli(capsys, "resume", "--max-tokens", "100000")
        assert code in (0, 2), err
        assert len(server.tokens) > asked and set(server.tokens) == {TOKEN}
        bodies = json.dumps(server.requests)
        assert TOKEN not in bodies and MASK in bodies  # the masked task was asked
    folder = next((tmp_path / "moot-home").rglob("events.jsonl")).parent
    begin, *rest = (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert TOKEN in begin and TOKEN not in "\n".join(rest)
    assert TOKEN not in json.dumps(_without_headers(json.loads(begin)["data"]))
    assert TOKEN not in out + err
