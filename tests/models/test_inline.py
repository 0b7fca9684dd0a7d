"""Inline delegation: an `inline:` agent's ask becomes a delegation file, the run pauses (exit
3), and `moot resume` reads the response the user's coding agent wrote. Through `moot run`."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from moot.models.inline import MAX_RESPONSE_BYTES
from moot.models.scripted import register_script
from moot.types import Request
from tests.cli.test_cli import moot
from tests.code.test_code_tasks import TASK as CODE_TASK
from tests.code.test_code_tasks import agents_file, git_env, repo  # noqa: F401 (fixtures)
from tests.code.test_code_tasks import config as code_config
from tests.scripts import events

TASK = "What is 6 times 7?"


@pytest.fixture
def calls() -> Counter[str]:
    """The scripted agent's calls, by step: it answers 42."""
    counted: Counter[str] = Counter()

    def reply(request: Request) -> str:
        counted[request.meta["step"]] += 1
        return "6 x 7 = 42\nAnswer: 42"

    register_script("steady", reply)
    return counted


def _run(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    args = ["run", TASK, "--protocol", "vote", "--seed", "3", "-m", "scripted:@steady"]
    return moot(capsys, *args, "-m", "inline:claude", *extra)


def _session(isolated: Path) -> Path:
    return next(isolated.glob("sessions/*/events.jsonl")).parent


def _delegation(folder: Path) -> dict[str, Any]:
    [request] = [
        p for p in (folder / "delegations").glob("*.json") if not p.name.endswith(".response.json")
    ]
    data: dict[str, Any] = json.loads(request.read_text())
    return data


def test_an_inline_ask_pauses_then_resume_reads_the_response(
    capsys: pytest.CaptureFixture[str], isolated: Path, calls: Counter[str]
) -> None:
    code, out, err = _run(capsys)
    assert code == 3, out + err
    folder = _session(isolated)
    delegation = _delegation(folder)
    assert delegation["messages"][-1]["content"].startswith(TASK)
    assert delegation["response_schema"]["required"] == ["text"]
    assert delegation["worktree"] is None
    assert delegation["resume"] == f"moot resume {folder.name}"
    markdown = Path(delegation["response_path"].replace(".response.json", ".md"))
    assert TASK in markdown.read_text()
    assert f"moot resume {folder.name}" in out + err and str(markdown) in out + err
    # the scripted agent's answer was journaled before the pause
    asks = [e for e in events(folder) if e["kind"] == "ask"]
    assert [e["data"]["completion"]["text"] for e in asks] == ["6 x 7 = 42\nAnswer: 42"]
    assert sum(calls.values()) == 1
    pause = out + err

    Path(delegation["response_path"]).write_text(json.dumps({"text": "Answer: 42"}))
    code, out, err = moot(capsys, "resume", folder.name)
    assert code == 0, out + err
    assert "consensus" in out
    assert sum(calls.values()) == 1  # nothing asked twice
    inline = [e for e in events(folder) if e["kind"] == "ask"][-1]["data"]
    assert inline["completion"]["text"] == "Answer: 42"
    assert inline["completion"]["cost"] == 0.0
    assert inline["completion"]["model"] == "inline:claude"
    code, out, _ = moot(capsys, "replay", folder.name)
    assert code == 0 and "byte for byte" in out
    assert "waiting for your coding agent: 1 delegation" in pause


def test_a_missing_response_pauses_again(
    capsys: pytest.CaptureFixture[str], isolated: Path, calls: Counter[str]
) -> None:
    assert _run(capsys)[0] == 3
    folder = _session(isolated)
    code, out, err = moot(capsys, "resume", folder.name)
    assert code == 3
    name = Path(_delegation(folder)["response_path"]).name.replace(".response.json", ".md")
    assert "1 delegation to answer" in out + err and name in out + err
    assert sum(calls.values()) == 1


def test_every_delegation_of_a_phase_is_named(
    capsys: pytest.CaptureFixture[str], isolated: Path, calls: Counter[str]
) -> None:
    code, out, err = _run(capsys, "-m", "inline:cursor")
    assert code == 3
    folder = _session(isolated)
    waiting = sorted((folder / "delegations").glob("*.md"))
    assert len(waiting) == 2 and "2 delegations to answer" in out + err
    assert all(str(p) in out + err for p in waiting)
    first = json.loads(waiting[0].with_suffix(".json").read_text())
    Path(first["response_path"]).write_text(json.dumps({"text": "Answer: 42"}))
    code, out, err = moot(capsys, "resume", folder.name)
    assert code == 3 and "1 delegation to answer" in out + err
    assert str(waiting[1]) in out + err and str(waiting[0]) not in out + err
    assert sum(calls.values()) == 1


@pytest.mark.parametrize(
    ("response", "problem"),
    [
        ("{not json", "does not fit its schema: the reply is not JSON"),
        (json.dumps({"answer": "42"}), "does not fit its schema"),
        ("", "is empty"),
        (json.dumps({"text": "   "}), 'has an empty "text"'),
        (json.dumps({"text": "x" * (MAX_RESPONSE_BYTES + 1)}), "bytes, more than the"),
    ],
)
def test_a_malformed_response_is_that_asks_failure(
    capsys: pytest.CaptureFixture[str],
    isolated: Path,
    calls: Counter[str],
    response: str,
    problem: str,
) -> None:
    assert _run(capsys)[0] == 3
    folder = _session(isolated)
    answer = Path(_delegation(folder)["response_path"])
    answer.write_text(response)
    code, out, err = moot(capsys, "resume", folder.name)
    assert code != 3, out + err  # it ended: the failed ask is recorded, the run went on
    failed = [e for e in events(folder) if e["kind"] == "ask"][-1]["data"]["completion"]
    assert failed["status"] == "error"
    assert str(answer) in failed["failure"]["message"]
    assert problem in failed["failure"]["message"]
    asks = [e for e in events(folder) if e["kind"] == "ask"]
    assert asks[0]["data"]["completion"]["text"] == "6 x 7 = 42\nAnswer: 42"  # kept
    assert sum(calls.values()) == 1
    assert f"moot resume {folder.name} --retry-failed" in failed["failure"]["message"]

    # fixed, the response is read again; the scripted agent is still asked nothing more
    answer.write_text(json.dumps({"text": "Answer: 42"}))
    code, out, err = moot(capsys, "resume", folder.name, "--retry-failed")
    assert code == 0 and "consensus" in out, out + err
    assert sum(calls.values()) == 1


def test_a_structured_ask_asks_for_its_own_schema(tmp_path: Path) -> None:

    from moot.models.base import CALL_CONTEXT, CallContext
    from moot.models.inline import Delegated, InlineModel, response_path
    from moot.types import Message, parse_spec

    schema = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}
    request = Request(messages=(Message(role="user", content="rate it"),), json_schema=schema)
    model = InlineModel(parse_spec("inline:"))
    assert model.label == "inline"

    async def ask(folder: Path) -> Any:
        token = CALL_CONTEXT.set(
            CallContext(
                "r1/rate", "agent_a", (), lambda d: None, lambda m: None, "/wt", False, str(folder)
            )
        )
        try:
            return await model.complete(request)
        finally:
            CALL_CONTEXT.reset(token)

    with pytest.raises(Delegated):
        asyncio.run(ask(tmp_path))
    data = json.loads((tmp_path / "delegations" / "r1--rate.json").read_text())
    assert data["response_schema"] == schema and data["worktree"] == "/wt"
    response_path(tmp_path, "r1/rate").write_text('{"score": 7}')
    completion = asyncio.run(ask(tmp_path))
    assert completion.ok and json.loads(completion.text) == {"score": 7}


@pytest.mark.parametrize(
    ("section", "role"),
    [
        (
            '[court]\njudges = [{model = "scripted:@steady"}, {model = "inline:claude"}, '
            '{model = "scripted:@steady"}]\n',
            "a judge of the court protocol",
        ),
        ('[council]\nchairman = {model = "inline:claude"}\n', "a chairman of the council protocol"),
        ('[tournament]\narbiter = {model = "inline:"}\n', "an arbiter of the tournament protocol"),
        ('[arena]\n[[agents]]\nmodel = "inline:claude"\n', "an agent of the arena protocol"),
        # no arbiter: an agent that sits out a match arbitrates it
        (
            '[tournament]\n[[agents]]\nmodel = "inline:claude"\n',
            "an agent of the tournament protocol",
        ),
        ('[council]\n[[agents]]\nmodel = "inline:claude"\n', "an agent of the council protocol"),
        # no judge in [refine.roles]: the agents take turns as judges
        ('[refine]\n[[agents]]\nmodel = "inline:claude"\n', "an agent of the refine protocol"),
    ],
)
def test_an_inline_judge_is_refused(
    capsys: pytest.CaptureFixture[str], isolated: Path, calls: Counter[str], section: str, role: str
) -> None:
    protocol = section[1 : section.index("]")]
    config = isolated.parent / "judged.toml"
    config.write_text(
        f'protocol = "{protocol}"\n' + '[[agents]]\nmodel = "scripted:@steady"\n' * 3 + section
    )
    code, out, err = moot(capsys, "run", TASK, "--config", str(config))
    assert code == 1, out + err
    assert "inline agent" in err and f"cannot be {role}" in err
    assert not list(isolated.glob("sessions/*"))
    code, out, err = moot(capsys, "validate", str(config))
    assert code == 1 and f"cannot be {role}" in out + err


def test_a_code_task_delegation_names_the_worktree(
    repo: Path,  # noqa: F811 (the fixture imported above)
    agents_file: Path,  # noqa: F811
    isolated: Path,
) -> None:
    from moot import api
    from tests.scripts import no_sleep

    run = api.start(
        CODE_TASK,
        code_config(["inline:claude", f"scripted:{agents_file}#good"], repo, pick={"by": "none"}),
        sleep=no_sleep,
    )
    assert run.exit_code == 3, run.message
    delegation = _delegation(run.folder)
    worktree = Path(delegation["worktree"])
    assert worktree.parent == run.folder / "worktrees" and (worktree / "calc.py").exists()
    assert (
        str(worktree)
        in Path(delegation["response_path"].replace(".response.json", ".md")).read_text()
    )

    # the user's coding agent edits the worktree, answers, and resumes
    (worktree / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    Path(delegation["response_path"]).write_text(json.dumps({"text": "add() returns the sum"}))
    done = api.resume(run.session_id, sleep=no_sleep)
    assert done.exit_code == 2, done.message  # two changes, nobody picks (by = none)
    code = done.result.details["code"]
    assert code[worktree.name]["status"] == "completed" and code[worktree.name]["files"] == 1
    assert code[worktree.name]["checks"][0]["exit_code"] == 0


@pytest.mark.parametrize(
    "section",
    [
        '[court]\njudges = [{model = "scripted:@steady"}, {model = "scripted:@steady"}, '
        '{model = "scripted:@steady"}]\n',
        '[tournament]\narbiter = {model = "scripted:@steady"}\n',
        '[refine.roles]\njudge = {model = "scripted:@steady"}\n',
        "[vote]\n",
    ],
)
def test_an_inline_agent_that_judges_nobody_is_accepted(
    capsys: pytest.CaptureFixture[str], isolated: Path, calls: Counter[str], section: str
) -> None:
    protocol = section[1 : section.index("]")].split(".")[0]
    config = isolated.parent / "fine.toml"
    config.write_text(
        f'protocol = "{protocol}"\n'
        + '[[agents]]\nmodel = "scripted:@steady"\n' * 2
        + '[[agents]]\nmodel = "inline:claude"\n'
        + section
    )
    code, out, err = moot(capsys, "validate", str(config))
    assert code == 0, out + err
