"""The session page's note form (`moot say` from the browser): a note to one agent while the
run goes on reaches that agent's next prompt and the report; a finished session has no form
and refuses a note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.serve.test_app import TOKEN, _client, _specs, _wait_status

NOTE = "Please state the units."


def test_a_note_sent_from_the_page_reaches_the_agent_and_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "sessions"
    monkeypatch.setenv("MOOT_TEST_AGENT_DELAY", "0.5")
    with _client(root) as client:
        client.get(f"/?token={TOKEN}")
        started = client.post(
            "/runs",
            data={"task": "What is 6 times 7?", "models": ",".join(_specs())},
            follow_redirects=False,
        )
        sid = started.headers["location"].rsplit("/", 1)[1]
        page = client.get(f"/session/{sid}").text
        assert f'action="/session/{sid}/say"' in page
        assert '<option value="agent_b">Agent B</option>' in page
        refused = client.post(f"/session/{sid}/say", data={"agent": "agent_z", "text": NOTE})
        assert refused.status_code == 400 and "no agent &#x27;agent_z&#x27;" in refused.text
        sent = client.post(
            f"/session/{sid}/say", data={"agent": "agent_b", "text": NOTE}, follow_redirects=False
        )
        assert sent.status_code == 303
        assert _wait_status(root, sid, {"consensus", "failed"}) == "consensus"
        page = client.get(f"/session/{sid}").text
        late = client.post(f"/session/{sid}/say", data={"agent": "agent_b", "text": "late"})
    lines = (root / sid / "events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    human = [e for e in events if e["kind"] == "human"]
    assert [(h["data"]["agent"], h["data"]["text"]) for h in human] == [("agent_b", NOTE)]
    carried = [e for e in events if e["kind"] == "ask" and NOTE in e["data"]["prompt"]]
    assert [(e["step"], e["data"]["agent"]) for e in carried] == [(human[0]["step"], "agent_b")]
    assert "Notes from you" in page and NOTE in page
    assert f'action="/session/{sid}/say"' not in page  # finished: no form
    assert late.status_code == 400 and "has finished" in late.text
