"""A session an older moot wrote stored a pasted key unmasked (issue 30): what the session
commands print of it (show, list, --json) masks anything shaped like a key."""

from __future__ import annotations

from typing import Any

import pytest

from moot.engine import opening
from moot.engine.store import list_sessions
from tests.cli.test_cli import moot
from tests.scripts import Debate, verdict

KEY = "sk-proj-" + "Q7w9E1r3T5y7U9i1O3p5A7s9D1f3G5h7"


def test_an_older_sessions_key_is_masked_when_printed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def unmasked(agents: Any, meta: dict[str, Any]) -> dict[str, Any]:
        return meta  # an older moot: the begin meta as given

    debate = Debate(verdicts=[verdict("CONSENSUS", 9, base="Agent B")])
    with monkeypatch.context() as older:
        older.setattr(opening, "_masked_meta", unmasked)
        code, _, _ = moot(capsys, *debate.run_args(task=f"Is {KEY} a valid key? What is 6 x 7?"))
    assert code == 0
    (folder,) = list_sessions()
    assert KEY in folder.session_json.read_text()  # stored unmasked, as an older moot did
    outputs = [
        moot(capsys, *args)
        for args in (
            ["show"],
            ["list"],
            ["show", "--json"],
            ["list", "--json"],
            ["status", "--json"],
        )
    ]
    for code, out, err in outputs:
        assert code == 0, err
        assert KEY not in out + err and KEY[8:20] not in out + err
    assert "[redacted]" in outputs[0][1]
