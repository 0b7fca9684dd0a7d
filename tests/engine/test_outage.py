"""An outage pauses every protocol: when calls that failed for a transient reason (a provider
answering 503) leave a run without a consensus, it stops paused (exit 3) naming who failed and
why, and once the provider is back `moot resume` asks the failed steps again and ends with a
real outcome. Against an OpenAI-compatible server on loopback that fails on demand."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from moot import api
from moot.config import RunConfig
from moot.models.scripted import ScriptedFailure
from moot.types import FailureKind, Message, Request, alias_label
from tests import arena_server
from tests.cli.test_cli import moot
from tests.court_scripts import _CANDIDATE, _POSITION, Ask, Behaviour, agreeable
from tests.loopback import serving
from tests.scripts import Debate, events, no_sleep, solution, start

Reply = Callable[[dict[str, Any]], str]
Fails = Callable[[dict[str, Any], int], bool]  # (request body, its number from 1) -> fail it


class FlakyServer(ThreadingHTTPServer):
    """An OpenAI-compatible chat endpoint on loopback: `reply(body)` answers a request, unless
    `fails(body, n)` says its n-th request (from 1) fails, with `status(body)` (503)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reply: Reply = lambda body: "6 x 7 = 42\nAnswer: 42"
        self.fails: Fails = lambda body, n: False
        self.status: Callable[[dict[str, Any]], int] = lambda body: 503  # of a failure
        self.count = 0
        self.failed = 0
        self.lock = threading.Lock()

    def spec(self, model: str = "m0") -> str:
        return f"openai-compat:http://127.0.0.1:{self.server_address[1]}/v1#{model}"


class _Handler(BaseHTTPRequestHandler):
    server: FlakyServer

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        with self.server.lock:
            self.server.count += 1
            failing = self.server.fails(body, self.server.count)
            self.server.failed += failing
        if failing:
            status = self.server.status(body)
            payload: dict[str, Any] = {
                "error": {"message": "upstream connect error", "type": "server_error"}
            }
        else:
            status = 200
            payload = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": self.server.reply(body)},
                    }
                ],
                "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
            }
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server() -> Iterator[FlakyServer]:
    with serving(FlakyServer()) as running:
        yield running


def _config(protocol: str, specs: list[str], **sections: Any) -> RunConfig:
    return RunConfig.read(
        {
            "protocol": protocol,
            "agents": [{"model": s} for s in specs],
            "seed": 5,
            "engine": {"attempts": 2, "retry_max_wait": 1},
            **sections,
        }
    )


def _vote(server: FlakyServer) -> RunConfig:
    """Three agents, three answers each: nine asks."""
    return _config("vote", [server.spec(f"m{i}") for i in range(3)], vote={"samples": 3})


def _stop(folder: Any) -> dict[str, Any]:
    return [e for e in events(folder) if e["kind"] in ("stopped", "finished", "failed")][-1]


def _paused_for_outage(run: api.RunResult) -> None:
    assert run.exit_code == 3, run.message
    assert run.result.status == "paused"
    stop = _stop(run.folder)
    assert stop["kind"] == "stopped" and stop["data"]["reason"] == "outage"
    assert "upstream connect error" in (run.message or "")
    assert f"moot resume {run.session_id}" in (run.message or "")
    assert api.replay(run.session_id).identical is True


def test_vote_with_every_call_failing_pauses_and_resumes_once_the_server_is_back(
    server: FlakyServer,
) -> None:
    # Before: '9 of 9 answers failed', exit 2, and a resume said the session had finished.
    server.fails = lambda body, n: True
    paused = api.start("What is 6 x 7?", _vote(server), sleep=no_sleep)
    _paused_for_outage(paused)
    assert {x["agent"] for x in _stop(paused.folder)["data"]["lost"]} == {
        "agent_a",
        "agent_b",
        "agent_c",
    }
    server.fails = lambda body, n: False
    before = server.count
    resumed = api.resume(paused.session_id, sleep=no_sleep)
    assert resumed.exit_code == 0, resumed.message
    assert resumed.result.status == "consensus" and resumed.result.final_answer == "42"
    assert server.count - before == 9  # the nine failed asks, asked once more each
    assert api.replay(paused.session_id).identical is True


def test_vote_with_nine_in_ten_calls_failing_pauses_instead_of_ending_without_quorum(
    server: FlakyServer,
) -> None:
    # Before: 'no quorum', final, exit 2, although every failure was transient.
    server.fails = lambda body, n: n % 10 != 0
    paused = api.start("What is 6 x 7?", _vote(server), sleep=no_sleep)
    _paused_for_outage(paused)
    assert 0 < len(_stop(paused.folder)["data"]["lost"]) < 9
    assert _stop(paused.folder)["data"]["without"]["status"] == "no_consensus"
    server.fails = lambda body, n: False
    resumed = api.resume(paused.session_id, sleep=no_sleep)
    assert resumed.exit_code == 0 and resumed.result.final_answer == "42"
    samples = resumed.result.details["samples"]
    assert [x["status"] for x in samples] == ["valid"] * 9
    assert api.replay(paused.session_id).identical is True


def test_the_arena_with_only_one_agent_answering_pauses_and_deliberates_on_resume(
    server: FlakyServer,
) -> None:
    # Before: 'only Agent B answered; nobody to deliberate with', final, exit 2.
    server.reply = lambda body: arena_server.answer(body, rounds=1)
    server.fails = lambda body, n: body.get("model") != "m1"
    config = _config("arena", [server.spec(f"m{i}") for i in range(3)])
    paused = api.start(arena_server.APPROACHES[0], config, sleep=no_sleep)
    _paused_for_outage(paused)
    lost = _stop(paused.folder)["data"]["lost"]
    assert len({x["agent"] for x in lost}) == 2 and all(x["kind"] == "server" for x in lost)
    server.fails = lambda body, n: False
    resumed = api.resume(paused.session_id, sleep=no_sleep)
    assert resumed.exit_code == 0, resumed.message
    assert resumed.result.status == "consensus" and resumed.result.rounds == 1
    assert api.replay(paused.session_id).identical is True


def _court_reply(behaviours: dict[str, Behaviour]) -> Reply:
    """The court's scripted behaviours (tests/court_scripts.py) over the wire: an agent votes
    when its prompt names a candidate, else proposes; the model name picks the behaviour."""

    def reply(body: dict[str, Any]) -> str:
        messages = tuple(
            Message(role=m["role"], content=str(m.get("content") or "")) for m in body["messages"]
        )
        first = next((m.content for m in messages if m.role == "user"), "")
        found = _CANDIDATE.search(first)
        ask = Ask(
            name=str(body.get("model")),
            alias="-",
            step="-",
            round=2 if found else 1,
            reask=False,
            candidate=found.group(1) if found else None,
            positions=tuple(sorted(set(_POSITION.findall(first)))),
            request=Request(messages=messages),
        )
        return behaviours[ask.name](ask)

    return reply


def test_a_court_that_loses_its_quorum_to_an_outage_pauses_and_resumes(
    server: FlakyServer,
) -> None:
    # Before: '2 of 3 agents failed in round 2 and no judge panel can take over', exit 1.
    pg, lite = "Use Postgres.", "Use SQLite."
    server.reply = _court_reply(
        {"m0": agreeable(pg, 0.9), "m1": agreeable(lite, 0.5), "m2": agreeable(pg)}
    )
    server.fails = lambda body, n: body.get("model") != "m0" and "has the id" in str(body)
    config = _config(
        "court", [server.spec(f"m{i}") for i in range(3)], court={"judge_panel_enabled": False}
    )
    paused = api.start("Which database?", config, sleep=no_sleep)
    _paused_for_outage(paused)
    assert "2 of 3 agents failed in round 2" in (paused.message or "")
    server.fails = lambda body, n: False
    resumed = api.resume(paused.session_id, sleep=no_sleep)
    assert resumed.exit_code == 0 and resumed.result.status == "consensus", resumed.message
    assert resumed.result.final_answer == pg
    assert api.replay(paused.session_id).identical is True


def test_a_run_that_also_lost_calls_to_a_lasting_failure_still_ends(server: FlakyServer) -> None:
    """Only an outage pauses: a vote that lost Agent A to a refused key (401) and Agent B to a
    503 ends as it did, without a majority (asking again would not bring Agent A back)."""
    server.status = lambda body: 401 if body.get("model") == "m0" else 503
    server.fails = lambda body, n: body.get("model") != "m2"
    run = api.start("What is 6 x 7?", _vote(server), sleep=no_sleep)
    assert run.exit_code == 2 and run.result.status == "no_consensus"
    assert _stop(run.folder)["kind"] == "finished"


def test_a_consensus_reached_without_an_agent_lost_to_an_outage_says_so(
    server: FlakyServer,
) -> None:
    """One agent's provider is down, the other two agree: the vote ends with its consensus, and its
    trust statement names the ask it was reached without and how to ask it again."""
    server.fails = lambda body, n: body.get("model") == "m2"
    config = _config("vote", [server.spec(f"m{i}") for i in range(3)])
    run = api.start("What is 6 x 7?", config, sleep=no_sleep)
    assert run.exit_code == 0 and run.result.status == "consensus"
    down = next(a for a, spec in run.result.aliases.items() if spec.endswith("#m2"))
    assert (
        f"Reached without 1 ask that failed for a transient reason ({alias_label(down)} "
        "(1 ask: server: openai-compat: HTTP 503" in run.result.trust
    )
    assert f"moot resume {run.session_id} --retry-failed" in run.result.trust
    assert [x["agent"] for x in _stop(run.folder)["data"]["lost"]] == [down]
    assert api.replay(run.session_id).identical is True
    # a plain resume asks nothing, and says how to ask the failed call again
    plain = api.resume(run.session_id, sleep=no_sleep)
    assert plain.model_calls == 0 and "--retry-failed asks them again" in (plain.message or "")


def test_resume_retry_failed_asks_a_finished_sessions_failed_calls_and_records_the_change(
    server: FlakyServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A vote that ended without a majority because two agents' keys were refused (a lasting
    failure: it ends, exit 2) is asked again once they are fixed: `moot resume --retry-failed`
    asks only the failed calls, the outcome is recomputed, and the end event keeps the one it
    replaced (before: a finished session said 'already finished; nothing was asked')."""
    server.status = lambda body: 401
    server.fails = lambda body, n: body.get("model") != "m0"
    config = _config("vote", [server.spec(f"m{i}") for i in range(3)])
    ended = api.start("What is 6 x 7?", config, sleep=no_sleep)
    assert ended.exit_code == 2 and ended.result.status == "no_consensus"
    server.fails = lambda body, n: False
    before = server.count
    code, out, _ = moot(capsys, "resume", ended.session_id, "--retry-failed")
    assert code == 0, out
    assert server.count - before == 2  # the two failed calls, nothing else
    result = json.loads((ended.folder / "result.json").read_text())
    assert result["status"] == "consensus" and result["final_answer"] == "42"
    assert "before, the outcome was no consensus" in result["trust"]
    end = _stop(ended.folder)
    assert end["kind"] == "finished"
    assert end["data"]["before"] == {"status": "no_consensus", "final_answer": ""}
    finishes = [e["data"]["status"] for e in events(ended.folder) if e["kind"] == "finished"]
    assert finishes == ["no_consensus", "consensus"]  # the first outcome stays on record
    assert api.replay(ended.session_id).identical is True


def test_a_retry_asks_again_what_was_answered_without_the_failed_steps() -> None:
    """An arena that reached its consensus while one agent's provider was down: asked again,
    that agent's answer joins, and the critiques and revisions that were given without it are
    asked again too (their prompts now show it), not kept from the earlier run with a warning
    that the prompt changed."""
    plans = {
        "agent_a": "Run the export from a queue worker that retries failed batches.",
        "agent_b": "Schedule it nightly and alert the on-call engineer when a batch fails.",
        "agent_c": "Keep the exporter idempotent so a rerun after a crash is harmless.",
    }

    class SolveDown(Debate):
        """Script "three" fails its first answer while `down`."""

        down = True

        def script(self, name: str) -> Callable[[Request], str]:
            reply = super().script(name)

            def answer(request: Request) -> str:
                if name == "three" and self.down and "/solve/" in request.meta["step"]:
                    self.steps[request.meta["step"]] += 1
                    raise ScriptedFailure(FailureKind.SERVER, "upstream connect error")
                return reply(request)

            return answer

    debate = SolveDown(
        answer=lambda alias, step: solution(
            plans[alias] if "/solve/" in step else "Queue worker, nightly, idempotent."
        )
    )
    run = start("How should the export run?", debate.config(engine={"attempts": 1}))
    assert run.exit_code == 0 and run.result.status == "consensus", run.message
    assert "Reached without 1 ask" in run.result.trust
    first = {s for s in debate.steps if not s.startswith("r0/")}
    assert first  # the two others deliberated without the third
    debate.down = False
    retried = api.resume(run.session_id, sleep=no_sleep, retry_failed=True)
    assert retried.exit_code == 0 and retried.result.status == "consensus", retried.message
    assert all(debate.steps[s] == 2 for s in first)  # asked again, now seeing the third
    assert len(debate.steps) > len(first) + 3  # and the third took part
    warnings = [e for e in events(run.folder) if e["kind"] == "warning" and e.get("step")]
    assert warnings == []  # nothing was kept that its prompt no longer matches
    assert len(retried.result.positions) == 3
    assert "the outcome is unchanged" in retried.result.trust
    assert api.replay(run.session_id).identical is True
