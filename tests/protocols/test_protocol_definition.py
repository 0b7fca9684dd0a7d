"""A protocol is one folder exporting one record: prove it with a tiny protocol that exists only
in this test. Registered here, it runs end to end through the CLI (options, --rounds, validate,
show), the live view and both reports, with no edit anywhere else."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import pytest
from msgspec import Meta
from rich.console import Console

from moot import protocols
from moot.config import Section
from moot.display.live import LiveView
from moot.engine.session import Session
from moot.engine.store import find_session
from moot.models.scripted import register_script
from moot.protocols.definition import Conduct, Flag, Participants, ProtocolDefinition
from moot.types import Message, Outcome, RoundSummary, Step
from tests.cli.test_cli import moot
from tests.scripts import start


class PollOptions(Section):
    rounds: Annotated[int, Meta(ge=1, le=5)] = 2
    quorum: Annotated[float, Meta(gt=0, le=1)] = 1.0


def describe(record: Mapping[str, Any], options: PollOptions) -> RoundSummary | None:
    if "round" not in record:
        return None
    votes = {str(k): float(v) for k, v in record["votes"].items()}
    return RoundSummary(round=record["round"], votes=votes, needed=record["needed"])


async def poll(s: Session, task: str, opts: PollOptions) -> Outcome:
    """Every agent answers in every round; agreement when enough answers are the same."""
    rounds: list[dict[str, Any]] = []
    answers: dict[str, str] = {}
    for r in range(1, opts.rounds + 1):
        replies = await s.gather(
            *(
                s.ask(
                    a,
                    [Message(role="user", content=f"{task} (round {r})")],
                    step=Step.at(r, "answer", a),
                )
                for a in s.aliases
            )
        )
        answers = {a: c.text.strip() for a, c in zip(s.aliases, replies, strict=True) if c.ok}
        counts: dict[str, int] = {}
        for text in answers.values():
            counts[text] = counts.get(text, 0) + 1
        needed = -(-len(s.aliases) * opts.quorum // 1)
        entry = {"round": r, "votes": counts, "needed": needed}
        rounds.append(entry)
        s.round_done(Step.at(r, "tally"), describe(entry, opts))
    best = max(counts.items(), key=lambda kv: kv[1], default=("", 0))
    agreed = best[1] >= needed
    return Outcome(
        protocol="poll",
        status="consensus" if agreed else "no_consensus",
        consensus=agreed,
        how=f"{best[1]} of {len(s.aliases)} agents gave the same answer",
        final_answer=best[0],
        rounds=opts.rounds,
        positions=answers,
        details={"rounds": rounds},
    )


POLL = ProtocolDefinition(
    name="poll",
    summary="ask everyone, count the same answers",
    options=PollOptions,
    conduct=Conduct(poll, describe),
    flags={Flag.ROUNDS: "rounds"},
    participants=Participants(min_agents=2),
)


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    protocols.register(POLL)
    register_script("poll_yes", lambda request: "Paris")
    register_script(
        "poll_other", lambda request: "Lyon" if "round 1" in request.prompt else "Paris"
    )
    yield
    protocols.unregister("poll")


def test_a_registered_protocol_runs_from_the_cli_with_its_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = moot(
        capsys,
        "run",
        "Capital of France?",
        "--protocol",
        "poll",
        "--rounds",
        "3",
        "--models",
        "scripted:@poll_yes",
        "--models",
        "scripted:@poll_other",
    )
    assert code == 0, err
    assert "Paris" in out and "2 of 2 agents gave the same answer" in out
    # plain lines, from the record's round summaries
    assert re.search(r"round 1: votes (Paris 1, Lyon 1|Lyon 1, Paris 1), 2 needed", err)
    session = out.split("Session ", 1)[1].split(":", 1)[0]
    folder = find_session(session).path
    result = json.loads((folder / "result.json").read_text())
    assert result["protocol"] == "poll" and len(result["details"]["rounds"]) == 3
    begin = json.loads((folder / "events.jsonl").read_text().splitlines()[0])
    assert begin["data"]["config"]["poll"] == {"rounds": 3, "quorum": 1.0}  # --rounds went here
    report = (folder / "report.md").read_text()
    assert "Round 3" in report and "votes Paris 2, 2 needed" in report
    html = (folder / "report.html").read_text()
    assert "Votes per round" in html and "Paris" in html
    code, out, _ = moot(capsys, "show", session)
    assert code == 0 and re.search(r"votes (Paris 1, Lyon 1|Lyon 1, Paris 1)", out)
    code, out, _ = moot(capsys, "replay", session)
    assert code == 0 and "Identical" in out


def test_the_live_view_frames_a_registered_protocol_from_its_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # rich draws a live view's frames only where TERM is not dumb (a fresh shell's env -i has
    # TERM=dumb): the frames under test must not hang on the tester's terminal
    monkeypatch.setenv("TERM", "xterm-256color")
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=100, color_system=None)
    with LiveView(console, auto_refresh=False) as view:
        plan = {"protocol": "poll", "agents": [{"model": "scripted:@poll_yes"}] * 2}
        from moot.config import RunConfig

        run = start("Capital?", RunConfig.read(plan), subscribers=[view])
    assert run.exit_code == 0
    out = stream.getvalue()
    assert "moot poll" in out and "round 2 of 2" in out
    assert "Latest: round 2: votes Paris 2, 2 needed" in out


def test_validate_and_schema_know_a_registered_protocol(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good = tmp_path / "poll.toml"
    good.write_text(
        'protocol = "poll"\n[[agents]]\nmodel = "scripted:@poll_yes"\n'
        '[[agents]]\nmodel = "scripted:@poll_yes"\n[poll]\nrounds = 1\n'
    )
    code, out, _ = moot(capsys, "validate", str(good))
    assert code == 0 and "valid (poll, 2 agents)" in out
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'protocol = "poll"\n[[agents]]\nmodel = "scripted:@poll_yes"\n[poll]\nrounds = 9\n'
    )
    code, out, _ = moot(capsys, "validate", str(bad))
    assert code == 1
    assert "poll.rounds" in out and "the poll needs 2 or more agents (1 given)" in out
    code, out, _ = moot(capsys, "schema")
    assert code == 0 and "PollOptions" in json.loads(out)["$defs"]
    code, _, err = moot(capsys, "run", "x", "--protocol", "pol")
    assert code == 1 and "did you mean 'poll'" in err


class PresetPollOptions(PollOptions):
    preset: Literal["quick"] | None = None


def test_a_registered_protocols_preset_implies_it_from_the_cli(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--preset NAME` finds the protocol whose record has that preset: no CLI edit."""
    protocols.register(
        msgspec.structs.replace(
            POLL, options=PresetPollOptions, flags={**POLL.flags, Flag.PRESET: "preset"}
        )
    )
    models = ["--models", "scripted:@poll_yes", "--models", "scripted:@poll_yes"]
    code, out, err = moot(capsys, "run", "Capital of France?", "--preset", "quick", *models)
    assert code == 0, err
    session = out.split("Session ", 1)[1].split(":", 1)[0]
    begin = (find_session(session).path / "events.jsonl").read_text().splitlines()[0]
    assert json.loads(begin)["data"]["config"]["poll"]["preset"] == "quick"
    code, _, err = moot(capsys, "run", "x", "--preset", "quick", "--protocol", "arena", *models)
    assert code != 0 and "--preset is a poll preset, not one of --protocol arena" in err
    code, _, err = moot(capsys, "run", "x", "--preset", "slow", *models)
    assert code != 0 and "--preset slow: no protocol has that preset" in err
    # the names are the Literal values of each preset option: the test's and refine's
    assert "(quick, plan-defaults, impl-defaults, impl)" in err
