"""Size caps: a reply past `engine.max_reply_bytes` is cut where every provider's answer passes
(the session), marked in the journal (`truncated_from`), the reports, the run's output and the
text other agents are shown; a task past `engine.max_task_bytes` is refused by the library as
by the CLI, before any folder exists; a quoted text is cut with a visible mark."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import moot
from moot import api
from moot.config import RunConfig
from moot.deliberation.anonymize import CUT_MARK as QUOTE_CUT
from moot.engine.replies import CUT_MARK, settle
from moot.errors import ConfigError
from tests.cli.test_cli import moot as moot_cli
from tests.cli.test_hardening_utf8 import no_sessions
from tests.engine.test_hardening_retry import Answer, ChatServer
from tests.loopback import serving
from tests.scripts import Debate, events, solution, start

BIG = 10_000_000  # bytes: the reply that made a 525 MB session folder


def long_answer(alias: str, word: str) -> str:
    """A different long answer per agent (alike ones would agree at once and end the run)."""
    number = {"agent_a": 42, "agent_b": 41, "agent_c": 40}[alias]
    return f"{alias} answers {number} " + " ".join(f"{alias}{word}{i}" for i in range(3000))


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with serving(ChatServer()) as running:
        yield running


def _asks(folder: Path) -> list[dict[str, Any]]:
    return [e for e in events(folder) if e["kind"] == "ask"]


def _vote_once(
    capsys: pytest.CaptureFixture[str], server: ChatServer
) -> tuple[int, str, str, Path]:
    """One vote sample of the server's model through the CLI: exit code, output, errors and
    the session folder the output names."""
    code, out, err = moot_cli(
        capsys, "run", "What is 6 x 7?", "--protocol", "vote", "--samples", "1",
        "--models", server.spec,
    )  # fmt: skip
    return code, out, err, Path(out.split("Report: ")[1].split()[0]).parent


def test_a_10_mb_reply_is_cut_to_the_default_cap_and_marked_everywhere(
    server: ChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.answers = [Answer(text="Answer: 42\n" + "x" * BIG)]
    code, out, err, folder = _vote_once(capsys, server)
    assert code == 0, err
    (ask,) = _asks(folder)
    completion = ask["data"]["completion"]
    size = len("Answer: 42\n") + BIG
    assert completion["truncated_from"] == size
    text = completion["text"]
    assert text.endswith(CUT_MARK) and text.startswith("Answer: 42\n")
    assert len(text.encode()) == 4_000_000 + len(CUT_MARK.encode())
    # the reports say so, and neither holds the whole reply
    for name in ("report.md", "report.html"):
        report = (folder / name).read_text(encoding="utf-8")
        assert f"truncated: the reply was {size:,} bytes" in report
        assert len(report) < 5_000_000
    assert sum(p.stat().st_size for p in folder.iterdir()) < 15_000_000
    # the run says so as it happens, and the answer it prints carries the mark
    assert f"reply to r1/answer/agent_a/1 was {size:,} bytes: cut to its first 4,000,000" in err
    assert "the rest of this reply was cut by moot" in out.split("Report: ")[0]
    assert api.replay(folder.name).identical is True


def test_every_provider_s_reply_is_cut_in_the_session_and_others_see_the_mark() -> None:
    # A scripted agent (no HTTP at all) goes through the same cap: the session cuts, not the
    # provider. The next phase quotes the cut text to the other agents, mark included.
    debate = Debate(answer=lambda alias, step: solution(long_answer(alias, "y")))
    config = debate.config(engine={"max_reply_bytes": 2000}, arena={"max_rounds": 1})
    run = start("What is 6 x 7?", config)
    solves = [a for a in _asks(run.folder) if "/solve/" in a["step"]]
    assert solves and all(a["data"]["completion"]["truncated_from"] > 5000 for a in solves)
    assert all(a["data"]["completion"]["text"].endswith(CUT_MARK) for a in solves)
    later = [r for r in debate.requests if "/solve/" not in r.meta["step"]]
    assert later, "the debate should go on after the solve phase"
    shown = "\n".join(m.content for r in later for m in r.messages)
    assert "the rest of this reply was cut by moot" in shown
    assert "agent_ay400 " not in shown  # past the cap: never shown to anyone


def test_a_reply_under_the_cap_is_journaled_as_before() -> None:
    run = start("What is 6 x 7?", Debate().config())
    for ask in _asks(run.folder):
        assert "truncated_from" not in ask["data"]["completion"]  # no new key in old shapes


def test_the_cap_is_checked_in_the_config() -> None:
    with pytest.raises(ValueError, match="max_reply_bytes"):
        RunConfig.read({"engine": {"max_reply_bytes": 10}})


# -- the task ----------------------------------------------------------------------------------
def test_an_oversize_task_is_refused_by_the_library_as_by_the_cli(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    task = "What is 6 x 7? " + "z" * 2_000_000
    message = "the task is 2,000,015 bytes, more than the cap of 2,000,000 (engine.max_task_bytes)"
    debate = Debate()
    with pytest.raises(ConfigError) as library:
        api.start(task, debate.config())
    assert message in str(library.value)
    with pytest.raises(ConfigError, match=r"engine\.max_task_bytes"):
        moot.run(task, models=debate.specs())
    specs = [arg for spec in debate.specs() for arg in ("--models", spec)]
    code, _, err = moot_cli(capsys, "run", task, *specs)
    assert code == 1 and message in err and "raise max_task_bytes" in err
    assert no_sessions(isolated)
    assert not debate.requests


def test_the_task_cap_follows_the_config(isolated: Path) -> None:
    debate = Debate()
    with pytest.raises(ConfigError, match=r"the task is 40 bytes, more than the cap of 30"):
        api.start("x" * 40, debate.config(engine={"max_task_bytes": 30}))
    assert no_sessions(isolated)
    assert start("What is 6 x 7?", debate.config(engine={"max_task_bytes": 30})).exit_code == 0


# -- quoted texts -------------------------------------------------------------------------------
def test_a_long_answer_quoted_to_another_agent_is_cut_with_a_visible_mark() -> None:
    # Already true before this work (each protocol's max_quote_chars); kept as a regression.
    debate = Debate(answer=lambda alias, step: solution(long_answer(alias, "w")))
    config = debate.config(arena={"max_rounds": 1, "max_quote_chars": 1000})
    start("What is 6 x 7?", config)
    quoted = [
        m.content
        for r in debate.requests
        if "/solve/" not in r.meta["step"]
        for m in r.messages
        if "<quoted" in m.content
    ]
    assert sum(text.count(QUOTE_CUT) for text in quoted) >= 3  # each answer, cut and marked
    assert all("w1500 " not in text for text in quoted)


def test_a_reply_cut_before_is_not_cut_again() -> None:
    # A cache hit holds the cut reply with its mark: serving it again keeps it as it is.
    from moot.types import Completion

    first = settle(Completion(text="a" * 5000), 1000)
    assert first.truncated_from == 5000 and first.text == "a" * 1000 + CUT_MARK
    assert settle(first, 1000) == first
    smaller = settle(first, 500)  # a later session with a smaller cap still cuts it
    assert smaller.text == "a" * 500 + CUT_MARK and smaller.truncated_from == 5000


def test_a_reply_stopped_at_max_tokens_is_journaled_and_reported(
    server: ChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model that stops at max_tokens may leave its answer without an end: the journal keeps
    its finish reason and both reports show it beside the reply. An ordinary stop adds nothing
    to the journal, so sessions from before read and replay unchanged."""
    server.answers = [Answer(text="Answer: 42, because six sevens", finish="length")]
    code, _, err, folder = _vote_once(capsys, server)
    assert code == 0, err
    (ask,) = _asks(folder)
    assert ask["data"]["completion"]["hit_max_tokens"] is True
    for name in ("report.md", "report.html"):
        report = (folder / name).read_text(encoding="utf-8")
        said = "the model stopped at its token limit (max_tokens): the end may be missing"
        assert said in report, name
    assert api.replay(folder.name).identical is True

    server.answers = [Answer(text="Answer: 42")]
    *_, folder = _vote_once(capsys, server)
    (ask,) = _asks(folder)
    assert "hit_max_tokens" not in ask["data"]["completion"]
    assert "max_tokens" not in (folder / "report.md").read_text(encoding="utf-8")
