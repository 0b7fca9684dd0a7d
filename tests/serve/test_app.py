"""`moot serve`'s routes through starlette's TestClient: the token gate, the security
headers, the sessions page (filters, pages), a run started from the page that the CLI sees,
its report with hostile model text inert, stop and resume, and the journal follower."""

from __future__ import annotations

import json
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.testclient import TestClient

from moot.engine.store import SessionFolder, list_sessions
from moot.serve import create_app
from moot.serve.follow import Follower
from moot.serve.live import follow_rows, follow_view
from moot.serve.rows import Filters, page_of
from moot.serve.server import bind, url_of

AGENTS = Path(__file__).with_name("agents.py")
TOKEN = "secret-token"
BOUND = 60.0


class _Tags(HTMLParser):
    """The elements of a page that could run or load something."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str | None] = []
        self.active: list[str] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts.append(dict(attrs).get("src"))
        elif tag in ("img", "iframe", "object", "embed", "link"):
            self.active.append(tag)
        self.handlers += [name for name, _ in attrs if name.lower().startswith("on")]


def fake_session(root: Path, n: int, **meta: Any) -> Path:
    """A session folder as `moot list` reads it (session.json and a begin line), nothing asked."""
    folder = root / f"2026-01-01-{n:05d}"
    folder.mkdir(parents=True)
    data = {
        "session_id": folder.name,
        "protocol": "arena",
        "task": f"task number {n}",
        "aliases": {"agent_a": "openai:gpt-x", "agent_b": "anthropic:claude-y"},
        "created": 1_700_000_000 + n,
        **meta,
    }
    (folder / "session.json").write_text(json.dumps(data))
    (folder / "events.jsonl").write_text(json.dumps({"kind": "begin", "data": data}) + "\n")
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


def _client(root: Path) -> TestClient:
    return TestClient(create_app(root, TOKEN), base_url="http://127.0.0.1")


def test_every_request_without_the_token_is_refused(root: Path) -> None:
    fake_session(root, 1)
    with _client(root) as client:
        for path in ("/", "/app.js", "/session/2026-01-01-00001", "/?token=wrong"):
            refused = client.get(path)
            assert refused.status_code == 403, path
            assert "task number" not in refused.text
        assert client.post("/runs", data={"task": "x"}).status_code == 403
        assert list_sessions(root) and len(list_sessions(root)) == 1  # nothing started

        first = client.get(f"/?token={TOKEN}")
        assert first.status_code == 200 and "task number 1" in first.text
        cookie = first.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert client.get("/").status_code == 200  # the cookie, from now on
        csp = first.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("style-src")[0]
        assert "img-src data:" in csp and first.headers["x-content-type-options"] == "nosniff"


def test_a_host_other_machines_reach_needs_a_token() -> None:
    from moot.errors import ConfigError

    with pytest.raises(ConfigError, match="needs a token"):
        bind("0.0.0.0", 0, None)
    sock = bind("127.0.0.1", 0, None)
    try:
        port = sock.getsockname()[1]
        assert port > 0 and url_of(sock, "t0k") == f"http://127.0.0.1:{port}/?token=t0k"
    finally:
        sock.close()


def test_sessions_are_filtered_and_paged(root: Path) -> None:
    for n in range(1, 131):
        fake_session(root, n, protocol="arena" if n % 2 else "vote")
    fake_session(root, 500, task="the needle question", aliases={"agent_a": "ollama:qwen"})
    page = page_of(root, Filters(), size=50)
    assert page.total == 131 and page.pages == 3 and len(page.rows) == 50
    assert page.rows[0]["session_id"] == "2026-01-01-00500"  # newest first
    assert page_of(root, Filters(page=3), size=50).rows[-1]["session_id"] == "2026-01-01-00001"
    assert page_of(root, Filters(protocol="vote")).total == 65
    assert [r["session_id"] for r in page_of(root, Filters(text="NEEDLE")).rows] == [
        "2026-01-01-00500"
    ]
    assert page_of(root, Filters(model="qwen")).total == 1
    assert page_of(root, Filters(status="consensus")).total == 0
    with _client(root) as client:
        shown = client.get(f"/?token={TOKEN}&protocol=vote&page=2")
        assert shown.status_code == 200
        assert "65 sessions · page 2 of 2" in shown.text
        assert shown.text.count('<tr id="row-') == 15


def test_a_thousand_sessions_page_quickly(root: Path) -> None:
    for n in range(1000):
        fake_session(root, n)
    with _client(root) as client:
        client.get(f"/?token={TOKEN}")
        began = time.perf_counter()
        shown = client.get("/")
        took = time.perf_counter() - began
    assert shown.text.count('<tr id="row-') == 50
    assert took < 2.0, f"the sessions page took {took:.2f}s"


def _wait_status(root: Path, sid: str, wanted: set[str]) -> str:
    """The session's status (as the sessions page shows it) once it is one of `wanted`."""
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        row = page_of(root, Filters(text=sid)).rows
        status = str(row[0]["status"]) if row else "?"
        if status in wanted:
            return status
        time.sleep(0.05)
    pytest.fail(f"session {sid} did not reach {wanted}")


def _specs() -> list[str]:
    return [f"scripted:{AGENTS}#agent_{n}" for n in ("one", "two", "three")]


def test_a_run_started_from_the_page_is_a_session_with_its_verdict(root: Path) -> None:
    with _client(root) as client:
        client.get(f"/?token={TOKEN}")
        started = client.post(
            "/runs",
            data={"task": "What is 6 times 7?", "models": ",".join(_specs())},
            follow_redirects=False,
        )
        assert started.status_code == 303, started.text
        sid = started.headers["location"].rsplit("/", 1)[1]
        assert _wait_status(root, sid, {"consensus", "failed"}) == "consensus"
        page = client.get(f"/session/{sid}").text
        listed = client.get("/").text
        models = client.get("/models").text
    row = listed.split(f'<tr id="row-{sid}"', 1)[1].split("</tr>", 1)[0]
    result = json.loads((root / sid / "result.json").read_text())
    assert result["trust"] and result["trust"] in row.replace("&#x27;", "'")
    assert f"<td>{result['finding']['label']}</td>" in row and f"{result['tokens']:,}" in row
    assert f"scripted:{AGENTS}#agent_one" in row and "$0.0000" in row
    assert f"scripted:{AGENTS}#agent_one" in models and "1/1 (100%)" in models
    assert [f.id for f in list_sessions(root)] == [sid]  # a normal session: the CLI sees it
    assert 'class="card verdict"' in page and "How far to trust it" in page
    assert "&lt;script&gt;window.__pwned" in page  # the hostile reply shown, as text
    tags = _Tags()
    tags.feed(page)
    assert tags.scripts == ["/app.js"]  # ours only
    assert tags.active == [] and tags.handlers == []


def test_a_bad_start_names_the_problem_and_starts_nothing(root: Path) -> None:
    with _client(root) as client:
        client.get(f"/?token={TOKEN}")
        refused = client.post("/runs", data={"task": "  ", "models": ",".join(_specs())})
        assert refused.status_code == 400 and "give the question" in refused.text
        refused = client.post("/runs", data={"task": "x", "rounds": "many"})
        assert refused.status_code == 400 and "rounds: not a number" in refused.text
    assert list_sessions(root) == []


def test_a_session_not_found_is_a_404_on_each_of_its_routes(root: Path) -> None:
    fake_session(root, 1)
    with _client(root) as client:
        client.get(f"/?token={TOKEN}")
        missing = "/session/2026-01-01-99999"
        answers = [
            client.get(missing),
            client.get(f"{missing}/events"),
            client.post(f"{missing}/say", data={"agent": "a", "text": "hi"}),
            client.post(f"{missing}/ask", data={"question": "why?"}),
        ]
        for answer in answers:
            assert answer.status_code == 404 and answer.text.startswith("not found: ")
        assert client.get("/session/2026-01-01-00001").status_code == 200
    assert len(list_sessions(root)) == 1  # the ask started nothing


def test_a_run_stopped_from_the_page_resumes_to_its_verdict(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_TEST_AGENT_DELAY", "1.0")
    with _client(root) as client:
        client.get(f"/?token={TOKEN}")
        started = client.post(
            "/runs",
            data={"task": "What is 6 times 7?", "models": ",".join(_specs())},
            follow_redirects=False,
        )
        sid = started.headers["location"].rsplit("/", 1)[1]
        stopped = client.post(f"/session/{sid}/stop", follow_redirects=False)
        assert stopped.status_code == 303
        assert _wait_status(root, sid, {"interrupted", "consensus"}) == "interrupted"
        monkeypatch.setenv("MOOT_TEST_AGENT_DELAY", "0")
        resumed = client.post(f"/session/{sid}/resume", follow_redirects=False)
        assert resumed.status_code == 303, resumed.text
        assert _wait_status(root, sid, {"consensus", "failed"}) == "consensus"


def test_the_follower_reads_only_what_was_appended(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    line = json.dumps({"kind": "warning", "data": {"message": "m"}})
    path.write_text(line + "\n")
    follower = Follower(path)
    assert [e.kind for e in follower.read()] == ["warning"]
    assert follower.read() == []
    with path.open("a") as handle:
        handle.write(line[:10])  # a line half written: not yet an event
    assert follower.read() == []
    with path.open("a") as handle:
        handle.write(line[10:] + "\n")
    assert [e.data for e in follower.read()] == [{"message": "m"}]
    assert follower.offset == path.stat().st_size


def test_the_view_stream_sends_the_report_of_what_is_journaled(root: Path) -> None:
    folder = SessionFolder(fake_session(root, 7, task="the streamed task"))

    async def first() -> dict[str, Any]:
        stream = follow_view(folder)
        message = await anext(stream)
        await stream.aclose()  # type: ignore[attr-defined]
        return message

    message = anyio.run(first)
    assert message["event"] == "view" and "the streamed task" in message["data"]


def test_a_shown_row_is_sent_again_when_its_state_changes(root: Path) -> None:
    changing = SessionFolder(fake_session(root, 1))
    still = SessionFolder(fake_session(root, 2))

    async def first_row() -> dict[str, Any]:
        stream = follow_rows(root, [changing.id, still.id, "no-such-session"])
        with anyio.fail_after(BOUND):
            pending = anext(stream)

            async def change() -> None:
                await anyio.sleep(0.2)
                state = {"status": "paused", "updated": time.time(), "pid": 0}
                changing.state_json.write_text(json.dumps(state))

            async with anyio.create_task_group() as group:
                group.start_soon(change)
                message = await pending
        await stream.aclose()  # type: ignore[attr-defined]
        return message

    message = anyio.run(first_row)
    assert message["event"] == "row"
    assert (
        f'id="row-{changing.id}"' in message["data"] and 'data-status="paused"' in message["data"]
    )


def test_a_session_created_while_the_first_page_is_open_is_sent_as_a_new_row(root: Path) -> None:
    shown = SessionFolder(fake_session(root, 1))

    async def rows() -> list[str]:
        stream = follow_rows(root, [shown.id], new=True)
        sent: list[str] = []
        with anyio.fail_after(BOUND):

            async def create() -> None:
                await anyio.sleep(0.2)
                half = root / "2026-01-01-00003"  # being created: no session.json yet
                half.mkdir()
                await anyio.sleep(0.7)
                fake_session(root, 2)
                (half / "session.json").write_text(json.dumps({"protocol": "vote"}))
                begin = {"kind": "begin", "data": {"protocol": "vote"}}
                (half / "events.jsonl").write_text(json.dumps(begin) + "\n")

            async with anyio.create_task_group() as group:
                group.start_soon(create)
                while len(sent) < 2:
                    sent.append((await anext(stream))["data"])
        await stream.aclose()  # type: ignore[attr-defined]
        return sent

    sent = anyio.run(rows)
    assert sorted(s.split('"', 2)[1] for s in sent) == [
        "row-2026-01-01-00002",
        "row-2026-01-01-00003",
    ]


def _run_to_end(client: TestClient, root: Path, path: str, data: dict[str, str]) -> str:
    started = client.post(path, data=data, follow_redirects=False)
    assert started.status_code == 303, started.text
    sid = started.headers["location"].rsplit("/", 1)[1]
    ended = {"consensus", "no_consensus", "failed", "paused", "stopped unexpectedly"}
    assert _wait_status(root, sid, ended) == "consensus"
    return sid


def test_a_follow_up_from_the_page_is_a_linked_session_shown_as_one_thread(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_TEST_AGENT_DELAY", "0")
    models = ",".join(_specs())
    with _client(root) as client:
        client.get(f"/?token={TOKEN}")
        first = _run_to_end(client, root, "/runs", {"task": "What is 6 times 7?", "models": models})
        refused = client.post(f"/session/{first}/ask", data={"question": " "})
        assert refused.status_code == 400 and "give the follow-up question" in refused.text
        question = {"question": "And 6 times 8?", "models": models}
        second = _run_to_end(client, root, f"/session/{first}/ask", question)
        page = client.get(f"/session/{second}").text
    task = json.loads((root / second / "session.json").read_text())["task"]
    assert task.startswith(f"Follow-up to moot session {first}.\n")
    assert "What is 6 times 7?" in task and "the answer is 42" in task  # the earlier answer
    assert task.endswith("The follow-up question:\nAnd 6 times 8?")
    thread = page.split('<section class="card thread">', 1)[1].split("</section>", 1)[0]
    assert f'href="/session/{first}"' in thread and "What is 6 times 7?" in thread
    assert "the answer is 42" in thread


def _models_args() -> list[str]:
    return [arg for spec in _specs() for arg in ("--models", spec)]


def test_moot_ask_asks_a_follow_up_from_the_cli(
    isolated: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.cli import main

    monkeypatch.setenv("MOOT_TEST_AGENT_DELAY", "0")
    with pytest.raises(SystemExit) as done:
        main(["run", "What is 6 times 7?", *_models_args()])
    assert done.value.code == 0
    (first,) = [f.id for f in list_sessions()]
    with pytest.raises(SystemExit) as done:
        main(["ask", first, "And 6 times 8?", *_models_args()])
    assert done.value.code == 0, capsys.readouterr().err
    second = next(f for f in list_sessions() if f.id != first)
    assert json.loads(second.session_json.read_text())["task"].startswith(
        f"Follow-up to moot session {first}."
    )
    with pytest.raises(SystemExit) as done:
        main(["ask", "no-such-session", "?"])
    assert done.value.code == 1


def test_runs_started_at_once_each_lead_to_their_own_session(root: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with _client(root) as client:
        client.get(f"/?token={TOKEN}")

        def start(n: int) -> tuple[str, str]:
            task = f"What is 6 times 7? (asker {n})"
            sent = client.post(
                "/runs", data={"task": task, "models": ",".join(_specs())}, follow_redirects=False
            )
            assert sent.status_code == 303, sent.text
            return task, sent.headers["location"].rsplit("/", 1)[1]

        with ThreadPoolExecutor(4) as pool:
            started = list(pool.map(start, range(4)))
        for _, sid in started:
            _wait_status(root, sid, {"consensus", "no_consensus", "failed"})
    assert len({sid for _, sid in started}) == 4
    for task, sid in started:
        assert json.loads((root / sid / "session.json").read_text())["task"] == task


def test_another_sites_post_and_a_rebound_host_are_refused(root: Path) -> None:
    with _client(root) as client:
        client.get(f"/?token={TOKEN}")
        evil = {"origin": "http://evil.example"}
        assert client.post("/runs", data={"task": "x"}, headers=evil).status_code == 403
        sandboxed = {"origin": "null"}
        assert client.post("/runs", data={"task": "x"}, headers=sandboxed).status_code == 403
        own = {"origin": "http://127.0.0.1"}
        assert client.post("/runs", data={"task": " "}, headers=own).status_code == 400
    open_app = TestClient(create_app(root, None), base_url="http://127.0.0.1:8123")
    with open_app as client:
        assert client.get("/").status_code == 200  # no token asked, on loopback
        assert client.get("/", headers={"host": "localhost:8123"}).status_code == 200
        assert client.get("/", headers={"host": "[::1]:8123"}).status_code == 200
        rebound = client.get("/", headers={"host": "evil.example:8123"})
        assert rebound.status_code == 403
    assert list_sessions(root) == []


def test_moot_serve_refuses_an_open_host_without_a_token(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from moot.cli import main

    with pytest.raises(SystemExit) as refused:
        main(["serve", "--host", "0.0.0.0", "--no-token"])
    assert refused.value.code == 1
    assert "reachable from other machines: it needs a token" in capsys.readouterr().err


def test_without_the_web_server_moot_serve_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    from moot.cli import main

    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else found(name, *a)
    )
    with pytest.raises(SystemExit) as exited:
        main(["serve"])
    assert exited.value.code == 1
    from moot.text.install import extra_install_hint

    assert extra_install_hint("serve") in capsys.readouterr().err
