"""Keys are masked in everything moot writes, model output included: agents on a real
OpenAI-compatible server on loopback, called with a key from the environment, reply with the
key and with 10 characters of it, and one call fails with an error quoting part of the key.
No file of the session folder, and nothing moot prints, holds either."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from moot import api as runner
from moot.models.keys import MASK, mask_known, redact, remember_secret
from tests.cli.test_cli import moot as moot_cli
from tests.engine.test_hardening_retry import Answer, ChatServer
from tests.loopback import serving
from tests.scripts import Debate, solution, start, verdict

# Not shaped like any provider's key: only what moot learnt from the environment masks it.
KEY = "moot-test-Q7rX2vLp9Ks4Tz8Wn3Hy6Bd1"
PART = KEY[12:22]  # 10 characters from inside the key: "rX2vLp9Ks4"


class DebateServer(ChatServer):
    """Answers arena's phases from the prompt: a solution (different per agent, quoting the
    key and part of it), a critique, a verdict; the first call of all fails with an error
    that quotes part of the key."""

    def next_answer(self, body: dict[str, Any]) -> Answer:
        with self.lock:
            self.requests.append(body)
            count = len(self.requests)
        prompt = str(body["messages"][-1]["content"])
        if count == 1:
            return Answer(500, f"upstream rejected credential ending {PART}; try again")
        if "<verdict>" in prompt:
            return Answer(text=verdict("CONSENSUS", 9) + f"\nSeen key {KEY}.")
        if "Critique each of them" in prompt:
            return Answer(text=f"Strengths: clear. Weaknesses: it leaks {PART}. Errors: none.")
        return Answer(
            text=solution(f"the answer is {40 + count % 3}; configure it with {KEY}")
            + f"\nAlso remember {PART} (call {count})."
        )


@pytest.fixture
def server() -> Iterator[DebateServer]:
    with serving(DebateServer()) as running:
        yield running


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def test_no_file_of_the_session_and_no_output_holds_the_key_or_part_of_it(
    server: DebateServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("MOOT_HARDENING_KEY", KEY)
    config = tmp_path / "moot.toml"
    agents = "".join(
        f'[[agents]]\nmodel = "{server.spec}"\napi_key_env = "MOOT_HARDENING_KEY"\n'
        for _ in range(3)
    )
    engine = "[engine]\nbackoff_initial = 0.01\nbackoff_max = 0.01\n"  # the retry: no real wait
    config.write_text(f"seed = 5\n{agents}{engine}[arena]\nmax_rounds = 2\n", encoding="utf-8")
    code, out, err = moot_cli(capsys, "run", "What is 6 x 7?", "--config", str(config))
    assert code in (0, 2), err
    # the key was really sent (so moot knew it), and the replies really quoted it
    assert len(server.requests) >= 7
    folder = Path(out.split("Report: ")[1].split()[0]).parent
    files = _files(folder)
    names = {p.name for p in files}
    assert {"events.jsonl", "result.json", "report.md", "report.html", "state.json"} <= names
    assert any("rounds" in p.relative_to(folder).parts for p in files), "arena archives rounds"
    leaks = [
        p.relative_to(folder)
        for p in files
        if KEY.encode() in p.read_bytes() or PART.encode() in p.read_bytes()
    ]
    assert leaks == []
    journal = (folder / "events.jsonl").read_text(encoding="utf-8")
    assert journal.count(MASK) >= 5  # masked, not dropped: replies and the failed attempt
    assert '"kind":"attempt"' in journal
    for command in (["show", folder.name, "--full"], ["status", folder.name]):
        _, shown, shown_err = moot_cli(capsys, *command)
        assert KEY not in shown + shown_err and PART not in shown + shown_err
    assert KEY not in out + err and PART not in out + err


def test_redact_masks_parts_of_a_known_key_and_leaves_other_text() -> None:
    remember_secret(KEY)
    text = f"a {KEY} b {PART} c {KEY[:8]} d {KEY[:7]} e"
    assert redact(text) == f"a {MASK} b {MASK} c {MASK} d {KEY[:7]} e"
    # model text: known keys only; a key's shape alone is not a secret there
    example = "Authorization: Bearer YOUR_TOKEN_HERE_123"
    assert mask_known(example) == example
    assert MASK in redact(example)


def test_doctor_s_ping_does_not_show_part_of_the_key(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # An API that quotes the start of the key it refused (as some do: "invalid key moot-test-Q7r
    # ..."): before, only whole keys were masked and this reached the terminal.
    server = ChatServer()
    server.answers = [Answer(401, f"Incorrect API key provided: {KEY[:16]}****")]
    with serving(server):
        monkeypatch.setenv("MOOT_HARDENING_KEY", KEY)
        config = tmp_path / "moot.toml"
        config.write_text(
            f'[[agents]]\nmodel = "{server.spec}"\napi_key_env = "MOOT_HARDENING_KEY"\n'
            f'[[agents]]\nmodel = "{server.spec}"\napi_key_env = "MOOT_HARDENING_KEY"\n',
            encoding="utf-8",
        )
        _, out, err = moot_cli(capsys, "doctor", "--config", str(config), "--ping")
    assert "ping failed (auth)" in out + err
    assert KEY[:16] not in out + err and KEY[:8] not in out + err
    assert MASK in out + err


def test_a_placeholder_key_does_not_mask_plain_words() -> None:
    # Local servers take any key; "sk-no-key-required" is a common one. Its pieces that are
    # plain words stay readable; the key itself and its mixed pieces are masked.
    placeholder = "sk-no-key-required"
    text = f"This field is required. Use {placeholder}, or no-key-req for short."
    assert (
        mask_known(text, [placeholder])
        == f"This field is required. Use {MASK}, or {MASK} for short."
    )


def test_a_verify_command_printing_the_key_is_masked_for_the_judge_and_the_journal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MOOT_HARDENING_KEY", KEY)
    remember_secret(KEY)  # as a provider does when it reads its key from the environment
    debate = Debate(answer=lambda alias, step: solution(f"{alias}: 42"))
    config = debate.config(
        arena={
            "verify_commands": [
                'echo "token $MOOT_HARDENING_KEY"; echo "${MOOT_HARDENING_KEY:12:10}"'
            ]
        }
    )
    run = start("What is 6 x 7?", config)
    shells = [e for e in _journal(run.folder) if e["kind"] == "shell"]
    assert shells and f"token {MASK}" in shells[0]["data"]["result"]["stdout"]
    judged = [r for r in debate.requests if "/verify/" in r.meta["step"]]
    shown = "\n".join(m.content for r in judged for m in r.messages)
    assert f"token {MASK}" in shown  # the protocol used the journaled (masked) output
    leaks = [
        p
        for p in _files(run.folder)
        if KEY.encode() in p.read_bytes() or PART.encode() in p.read_bytes()
    ]
    assert leaks == []
    assert runner.replay(run.session_id).identical is True


def _journal(folder: Path) -> list[dict[str, Any]]:
    import json

    lines = (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_a_cli_agent_quoting_a_provider_key_from_its_environment_is_masked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A CLI agent runs with the user's environment, so it can print a provider's key that moot
    itself never read (ANTHROPIC_API_KEY, with no anthropic: agent in the session): every key
    variable moot knows is masked as soon as a model is created."""
    key = "zq-Kd83jLmW02xRtYb7Hs5vNa1"  # shaped like no provider's key
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    agent = tmp_path / "agent.sh"
    agent.write_text(
        '#!/bin/sh\ncat >/dev/null\necho "<solution>Paris, says $ANTHROPIC_API_KEY</solution>"\n'
    )
    agent.chmod(0o755)
    code, out, err = moot_cli(
        capsys, "run", "Capital of France?", "--models", f"cli:{agent}", "--models", f"cli:{agent}"
    )
    assert code == 0, err
    assert "Paris, says [redacted]" in out
    folder = Path(out.split("Report: ")[1].split()[0]).parent
    leaks = [p.relative_to(folder) for p in _files(folder) if key[3:13].encode() in p.read_bytes()]
    assert leaks == [] and key[3:13] not in out + err
