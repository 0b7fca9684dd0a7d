"""A key pasted into the task, a config option or a reply, and a token in a config header, are
masked in every file moot writes for the session and in everything it prints: `moot run`,
`list`, `show`, `status`, `export`, `replay` (issue 30). No session file holds the header token,
not even the recorded config: `moot resume --config FILE` takes it again from the user's config,
and without it the resume stops with an error naming the header, never sending the mask."""

from __future__ import annotations

import json
from pathlib import Path

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
    # masked in the recorded config too; a plain header is kept
    headers = meta["config"]["agents"][0]["headers"]
    assert headers == {"Authorization": f"Bearer {MASK}", "X-Trace": "plain"}
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


def _header_run(
    capsys: pytest.CaptureFixture[str], server: HeaderServer, tmp_path: Path, value: str = TOKEN
) -> tuple[Path, int]:
    """A session on `server` whose agents send TOKEN in a header (written as `value` in the
    config), paused by its token budget: its config file, and the calls made."""
    config = tmp_path / "moot.toml"
    agents = "".join(
        f'[[agents]]\nmodel = "{server.spec}"\napi_key_env = "MOOT_HARDENING_KEY"\n'
        f'headers = {{ X-Api-Key = "{value}" }}\n'
        for _ in range(3)
    )
    engine = "[engine]\nbackoff_initial = 0.01\nbackoff_max = 0.01\n"
    config.write_text(f"seed = 5\n{agents}{engine}[arena]\nmax_rounds = 2\n", encoding="utf-8")
    task = f"What is 6 x 7? (token {TOKEN})"
    code, _, err = moot_cli(capsys, "run", task, "--config", str(config), "--max-tokens", "400")
    assert code == 3, err  # paused by the budget
    assert len(server.tokens) >= 1
    return config, len(server.tokens)


def test_a_resumed_session_calls_with_the_header_token_of_the_config_given(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The header token is in no file of the session, the recorded config included; a resume
    without the config stops with exit 1 naming the header and the fix, sending nothing; with
    `--config` its providers send the real token again."""
    monkeypatch.setenv("MOOT_HARDENING_KEY", KEY)
    with serving(HeaderServer()) as server:
        config, asked = _header_run(capsys, server, tmp_path)
        code, out, err = moot_cli(capsys, "resume", "--max-tokens", "100000")
        assert code == 1
        assert "agents[0].headers.X-Api-Key" in err and "moot resume --config" in err
        assert len(server.tokens) == asked  # nothing sent, "[redacted]" least of all
        code, out, err = moot_cli(
            capsys, "resume", "--config", str(config), "--max-tokens", "100000"
        )
        assert code in (0, 2), err
        assert len(server.tokens) > asked and set(server.tokens) == {TOKEN}
        bodies = json.dumps(server.requests)
        assert TOKEN not in bodies and MASK in bodies  # the masked task was asked
    assert TOKEN not in out + err
    files = [p for p in (tmp_path / "moot-home").rglob("*") if p.is_file()]
    assert any(p.name == "events.jsonl" for p in files)
    assert [p for p in files if TOKEN[5:15] in p.read_bytes().decode("utf-8", "replace")] == []
    meta = json.loads(next(p for p in files if p.name == "session.json").read_text("utf-8"))
    assert {a["headers"]["X-Api-Key"] for a in meta["config"]["agents"]} == {MASK}


def test_a_header_read_from_the_environment_is_recorded_as_its_reference(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`${NAME}` in a header is read from the environment when the providers are made: the
    session records the reference, and a resume reads the variable again, no config needed."""
    monkeypatch.setenv("MOOT_HARDENING_KEY", KEY)
    monkeypatch.setenv("MOOT_HEADER_TOKEN", TOKEN)
    with serving(HeaderServer()) as server:
        _, asked = _header_run(capsys, server, tmp_path, value="${MOOT_HEADER_TOKEN}")
        assert set(server.tokens) == {TOKEN}
        code, _, err = moot_cli(capsys, "resume", "--max-tokens", "100000")
        assert code in (0, 2), err
        assert len(server.tokens) > asked and set(server.tokens) == {TOKEN}
        folder = next((tmp_path / "moot-home").rglob("events.jsonl")).parent
        meta = json.loads((folder / "session.json").read_text(encoding="utf-8"))
        recorded = {a["headers"]["X-Api-Key"] for a in meta["config"]["agents"]}
        assert recorded == {"${MOOT_HEADER_TOKEN}"}
        for path in folder.rglob("*"):
            assert not path.is_file() or TOKEN[5:15] not in path.read_text("utf-8", "replace")
        # without the variable, a run names the header and the variable
        monkeypatch.delenv("MOOT_HEADER_TOKEN")
        code, _, err = moot_cli(capsys, "run", "again", "--config", str(tmp_path / "moot.toml"))
        assert code == 1 and "header 'X-Api-Key'" in err and "MOOT_HEADER_TOKEN" in err


def test_a_session_recorded_with_plain_headers_still_resumes_without_its_config(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Sessions from before the masking hold their header tokens in the recorded config: a
    resume calls with those, as it did."""
    from moot.engine import opening, replies

    def kept(meta: object) -> object:  # the masking before issue 30: headers and URLs kept
        return replies.masked(meta, keep=frozenset({"headers", "base_url"}))

    monkeypatch.setenv("MOOT_HARDENING_KEY", KEY)
    with serving(HeaderServer()) as server:
        with monkeypatch.context() as old:  # recorded as moot did before
            old.setattr(opening, "call_settings_masked", lambda config: config)
            old.setattr(opening, "masked", kept)
            _, asked = _header_run(capsys, server, tmp_path)
        folder = next((tmp_path / "moot-home").rglob("events.jsonl")).parent
        assert TOKEN in (folder / "session.json").read_text(encoding="utf-8")
        code, _, err = moot_cli(capsys, "resume", "--max-tokens", "100000")
        assert code in (0, 2), err
        assert len(server.tokens) > asked and set(server.tokens) == {TOKEN}
