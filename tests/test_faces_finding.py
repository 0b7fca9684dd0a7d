"""The typed outcome, rendered by every face: result.json, report.md, report.html, `moot show`,
the run's printed outcome, the plain log's and the live view's end, and the JSON logs' last
object. Two outcomes from scripted agents: agreement reached only by two agents giving up their
answer (persuasion), and a judge's CONSENSUS over answers that differ (judge contradicted).

Until every protocol returns moot's finding, the session runs a small two-round protocol of
its own (every effect through the Session, the finding from deliberation/finding.py), in place
of the configured one; the faces cannot tell the difference, which is the point."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from msgspec.structs import replace
from rich.console import Console

from moot import api
from moot.deliberation.finding import judge_answers
from moot.display.jsonlog import JsonLog
from moot.display.live import LiveView
from moot.display.plain import PlainLog
from moot.engine.journal import Journal
from moot.engine.result import Result
from moot.engine.session import Session
from moot.lifecycle import plan as plans
from moot.lifecycle.plan import Plan
from moot.report.html import html_for, markdown_html
from moot.report.markdown import render_markdown
from moot.report.view import build_view
from moot.text import verdict_line
from moot.types import Message, ModelVerdict, Outcome, Step, load
from tests.cli.test_cli import moot
from tests.scripts import Debate, solution, start, verdict

Answers = dict[str, str]
PERSUADED = [
    {"agent_a": "408", "agent_b": "418", "agent_c": "418"},
    {"agent_a": "408", "agent_b": "408", "agent_c": "408"},
]
DIFFERING = [
    {"agent_a": "408", "agent_b": "418", "agent_c": "400"},
    {"agent_a": "408", "agent_b": "418", "agent_c": "400"},
]
HOSTILE = "<script>window.__pwned = 1</script> 4\x1b]0;title\x07\x1b[31m08 | cell"


def two_rounds(judge_says_consensus: bool) -> Callable[[Plan], Any]:
    """A protocol that asks every agent twice (round 0: independent; round 1: revised), then
    lets moot judge the answers, with a judge's verdict as evidence if asked for."""

    def protocol(plan: Plan) -> Any:
        async def run(s: Session) -> Outcome:
            agents = [a for a in s.aliases if a.startswith("agent_")]
            history: list[dict[str, str | None]] = []
            for r in (0, 1):
                asks = [Message(role="user", content=f"round {r}: {s.task}")]
                replies = await s.gather(
                    *(s.ask(a, asks, step=Step.at(r, "solve", a)) for a in agents)
                )
                history.append(
                    {a: c.text if c.ok else None for a, c in zip(agents, replies, strict=True)}
                )
            verdicts = [
                ModelVerdict(
                    by="Agent C",
                    role="judge",
                    says="called it consensus (10/10)",
                    round=1,
                    claims_agreement=True,
                )
            ]
            j = judge_answers(
                history,
                started=agents,
                verdicts=verdicts if judge_says_consensus else (),
                critics={(a, 1): [o for o in agents if o != a] for a in agents},
            )
            return Outcome(
                protocol="arena",
                status="consensus" if j.consensus else "no_consensus",
                consensus=j.consensus,
                how=j.finding.reason,
                final_answer=j.finding.claim or "",
                rounds=1,
                trust=" ".join(j.sentences()),
                positions={a: t for a, t in history[-1].items() if t},
                **j.outcome_fields(),
            )

        return run

    return protocol


def scripted(answers: list[Answers]) -> Debate:
    return Debate(answer=lambda alias, step: answers[int(step[1])][alias])


@pytest.fixture
def persuaded(monkeypatch: pytest.MonkeyPatch) -> api.RunResult:
    monkeypatch.setattr(plans, "protocol_fn", two_rounds(judge_says_consensus=False))
    return start("What is 17 times 24?", scripted(PERSUADED).config())


@pytest.fixture
def contradicted(monkeypatch: pytest.MonkeyPatch) -> api.RunResult:
    monkeypatch.setattr(plans, "protocol_fn", two_rounds(judge_says_consensus=True))
    return start("What is 17 times 24?", scripted(DIFFERING).config())


PERSUASION = "converged by persuasion: 3 of 3 agents end on '408'"
MOVED_B = "Agent B moved from '418' to '408' in round 1 after Agent A and Agent C's critique"
DIFFER = "the final answers differ: 408 (A); 418 (B); 400 (C)"
NOT_UPHELD = "the judge called it consensus; moot's check does not bear it out"


def test_result_json_carries_the_typed_outcome(
    persuaded: api.RunResult, contradicted: api.RunResult
) -> None:
    stored = json.loads((persuaded.folder / "result.json").read_text())
    assert persuaded.exit_code == 0 and stored["status"] == "consensus"
    assert stored["finding"]["label"] == "persuasion"
    assert stored["finding"]["reason"].startswith(PERSUASION)
    assert stored["finding"]["independent"] == 1 and stored["finding"]["started"] == 3
    assert [(c["agent"], c["round"], c["claim"]) for c in stored["claims"]][:3] == [
        ("agent_a", 0, "408"),
        ("agent_b", 0, "418"),
        ("agent_c", 0, "418"),
    ]
    assert [(c["agent"], c["round"], c["before"], c["after"]) for c in stored["changes"]] == [
        ("agent_b", 1, "418", "408"),
        ("agent_c", 1, "418", "408"),
    ]
    assert "verdicts" not in stored  # none weighed: left out, as results before the finding
    stored = json.loads((contradicted.folder / "result.json").read_text())
    assert contradicted.exit_code == 2 and stored["status"] == "no_consensus"
    assert stored["finding"]["label"] == "no_consensus"
    assert stored["finding"]["reason"].endswith(DIFFER)
    (verdict,) = stored["verdicts"]
    assert verdict["upheld"] is False and verdict["claims_agreement"] is True
    assert verdict["valid"] is True and verdict["problem"] == ""
    assert (
        load(stored, Result).to_json() == (contradicted.folder / "result.json").read_text()
    )  # and it reads back byte for byte


def test_report_md_and_show_render_the_finding(
    persuaded: api.RunResult, contradicted: api.RunResult, capsys: pytest.CaptureFixture[str]
) -> None:
    md = (persuaded.folder / "report.md").read_text()
    assert "## moot's Finding" in md and "**Converged by persuasion: 3 of 3" in md
    assert "### Claims by Round" in md and "| Agent | First answers | Round 1 |" in md
    assert "| Agent B | 418 | 408 (changed) |" in md
    assert "### Changes of Mind" in md and MOVED_B in md
    assert md.index("## moot's Finding") < md.index("## Final Answer") < md.index("## Rounds")
    code, out, _ = moot(capsys, "show", persuaded.session_id)
    assert code == 0 and PERSUASION[1:] in out and MOVED_B in out
    md = (contradicted.folder / "report.md").read_text()
    assert DIFFER in md and "### Model Verdicts" in md
    assert (
        "- Agent C (judge, round 1): called it consensus (10/10); not upheld: " + NOT_UPHELD
    ) in md
    code, out, _ = moot(capsys, "show", contradicted.session_id)
    assert code == 0 and DIFFER in out and NOT_UPHELD in out


def test_report_html_renders_the_finding(
    persuaded: api.RunResult, contradicted: api.RunResult
) -> None:
    page = (persuaded.folder / "report.html").read_text()
    assert "<h2>moot's finding</h2>" in page and "Converged by persuasion: 3 of 3" in page
    assert "<h3>Claims by round</h3>" in page
    assert '<td class="changed">408 <span class="mark">changed</span></td>' in page
    assert MOVED_B.replace("'", "&#x27;") in page
    page = (contradicted.folder / "report.html").read_text()
    assert DIFFER in page
    assert '<li class="not-upheld">' in page and NOT_UPHELD.replace("'", "&#x27;") in page


def test_the_run_prints_the_finding_and_its_log_ends_with_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plans, "protocol_fn", two_rounds(judge_says_consensus=True))
    args = ["run", "What is 17 times 24?", "--seed", "3"]
    for spec in scripted(DIFFERING).specs():
        args += ["--models", spec]
    code, out, err = moot(capsys, *args)
    assert code == 2
    assert DIFFER in out
    assert "Claims by round (the first answers, round 1):" in out and "  Agent B: 418 -> 418" in out
    assert f"model verdict: Agent C (judge, round 1): called it consensus (10/10); not upheld: " \
        f"{NOT_UPHELD}" in out  # fmt: skip
    # the plain log (not a terminal) ends with how the run ended: the printed outcome says
    # moot's finding and the verdicts, once (the log said them again)
    assert err.strip().splitlines()[-1] == "finished: no consensus"
    assert (out + err).count(DIFFER) == 1 and (out + err).count(NOT_UPHELD) == 1
    code, out, err = moot(capsys, *args, "--json")  # the outcome printed as JSON: the log says it
    lines = err.strip().splitlines()
    assert lines[-3] == "finished: no consensus"
    assert lines[-2] == f"finding: No consensus: Agent C called it consensus (10/10); {DIFFER}"
    assert lines[-1].startswith("model verdict: Agent C (judge, round 1)")
    assert lines[-1].endswith(NOT_UPHELD)

    monkeypatch.setattr(plans, "protocol_fn", two_rounds(judge_says_consensus=False))
    args = ["run", "What is 17 times 24?", "--seed", "3", "--json-logs"]
    for spec in scripted(PERSUADED).specs():
        args += ["--models", spec]
    code, out, err = moot(capsys, *args)
    assert code == 0 and MOVED_B in out  # named by the trust statement
    last = json.loads(err.strip().splitlines()[-1])
    assert last["event"] == "outcome" and last["status"] == "consensus"
    assert last["finding"]["label"] == "persuasion"
    assert last["finding"]["reason"].startswith(PERSUASION)
    assert [(c["agent"], c["before"], c["after"]) for c in last["changes"]] == [
        ("agent_b", "418", "408"),
        ("agent_c", "418", "408"),
    ]
    assert {"ts", "level", "sessionId", "round", "agentId", "error"} <= set(last)


def test_the_live_view_ends_with_the_finding(persuaded: api.RunResult) -> None:
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=140, height=40, color_system=None)
    with LiveView(console, auto_refresh=False, clock=lambda: 0.0) as view:
        for event in Journal.open(persuaded.folder / "events.jsonl", repair=False)[0].events:
            view(event)
        view.outcome(persuaded.result)
    final = stream.getvalue()
    final = final[final.rindex("moot ") :]
    assert "Ended: consensus" in final
    assert "finding: Converged by persuasion: 3 of 3 agents end on '408'" in final
    assert f"changed their mind: {MOVED_B}" in final


def test_every_face_keeps_model_text_untrusted() -> None:
    """A claim that holds markup, escape sequences and a pipe: escaped in HTML, one safe line
    in Markdown (its pipe cannot end a table cell) and in the plain log."""
    j = judge_answers(
        [{"agent_a": HOSTILE, "agent_b": "408"}, {"agent_a": HOSTILE, "agent_b": HOSTILE}],
        started=["agent_a", "agent_b"],
        verdicts=[ModelVerdict(by="Agent A", role="judge", says=HOSTILE)],
    )
    result = Result(
        session_id="s",
        protocol="arena",
        task="t",
        status="consensus" if j.consensus else "no_consensus",
        consensus=j.consensus,
        how=j.finding.reason,
        final_answer="",
        rounds=1,
        disagreements=[],
        positions={},
        details={},
        aliases={"agent_a": "scripted:@x", "agent_b": "scripted:@y"},
        agents={},
        tokens=0,
        cost=None,
        finding=j.finding,
        claims=list(j.claims),
        changes=list(j.changes),
        verdicts=list(j.verdicts),
    )
    view = build_view(result, [])
    page = html_for(view)
    assert "<script>" not in page
    assert re.search(r"<(script|img|iframe)\b", page) is None
    assert "\x1b" not in page and "\x07" not in page
    md = render_markdown(view)
    assert "\x1b" not in md and "\x07" not in md
    rows = [line for line in md.splitlines() if line.startswith("| Agent A |")]
    assert rows and all(row.count(" | ") == 2 for row in rows)  # the pipe is escaped
    assert "<script>" not in markdown_html(md)
    stream = io.StringIO()
    PlainLog(stream).outcome(result)
    JsonLog(stream).outcome(result)
    assert "\x1b" not in stream.getvalue() and "\x07" not in stream.getvalue()


def test_a_result_without_a_finding_shows_no_finding_section() -> None:
    result = Result(
        session_id="s",
        protocol="arena",
        task="t",
        status="consensus",
        consensus=True,
        how="Agent C judged consensus in round 1 (score 9/10)",
        final_answer="42",
        rounds=1,
        disagreements=[],
        positions={},
        details={},
        aliases={},
        agents={},
        tokens=0,
        cost=None,
    )
    view = build_view(result, [])
    assert view.finding is None and not view.claims
    assert "moot's Finding" not in render_markdown(view)
    assert "<h2>moot's finding" not in html_for(view)
    stream = io.StringIO()
    PlainLog(stream).outcome(result)
    assert stream.getvalue() == ""


def test_verdict_lines_mark_what_moot_does_not_bear_out() -> None:
    contradicted = ModelVerdict(
        by="Agent C (judge, round 1)",
        role="judge",
        round=1,
        says="called it consensus (score 10/10)",
        claims_agreement=True,
        upheld=False,
    )
    assert verdict_line(contradicted) == (
        "Agent C (judge, round 1): called it consensus (score 10/10); not upheld: " + NOT_UPHELD
    )
    invalid = replace(contradicted, valid=False, problem="CONSENSUS with 2 remaining disagreements")
    assert verdict_line(invalid).endswith(
        "; invalid verdict: CONSENSUS with 2 remaining disagreements"
    )
    upheld = ModelVerdict(by="Agent A", role="arbiter", says="scored 90", claims_agreement=True)
    assert verdict_line(upheld) == "Agent A (arbiter): scored 90; upheld by moot's check"
    denied = replace(upheld, claims_agreement=False, upheld=False)
    assert verdict_line(denied).endswith(
        "not upheld: the arbiter did not call it consensus; moot's check finds agreement"
    )


def arena_answers(answers: list[Answers]) -> Callable[[str, str], str]:
    def answer(alias: str, step: str) -> str:
        r = int(step.split("/")[0][1:])
        return solution(f"The answer is {answers[min(r, len(answers) - 1)][alias]}.")

    return answer


def test_the_arena_s_outcome_reaches_every_face(capsys: pytest.CaptureFixture[str]) -> None:
    """The arena itself, on the finding: B and C give up 418 for A's 408 after round 1's
    critiques (persuasion, exit 0); a judge's CONSENSUS 10/10 over 408, 418 and 400 is not
    borne out (no consensus, exit 2)."""
    persuaded = Debate(
        verdicts=[verdict("CONSENSUS", 9, base="Agent A")], answer=arena_answers(PERSUADED)
    )
    run = start("What is 17 times 24?", persuaded.config(arena={"max_rounds": 2}))
    assert run.exit_code == 0
    finding = run.result.finding
    assert finding is not None and finding.label == "persuasion"
    assert "moved from '418' to '408' in round 1" in finding.reason
    md = (run.folder / "report.md").read_text()
    assert "**Converged by persuasion: 3 of 3 agents end on '408'" in md
    assert "| Agent B | 418 | 408 (changed) |" in md
    section = md[md.index("## moot's Finding") : md.index("### Claims by Round")]
    assert "independent answer" not in section  # the persuasion's reason says it once
    page = (run.folder / "report.html").read_text()
    assert '<span class="mark">changed</span>' in page
    code, out, _ = moot(capsys, "show", run.session_id)
    assert code == 0 and "Converged by persuasion" in out

    judged = Debate(
        verdicts=[verdict("CONSENSUS", 10, base="Agent A")], answer=arena_answers(DIFFERING)
    )
    run = start("What is 17 times 24?", judged.config(arena={"max_rounds": 2}))
    assert run.exit_code == 2 and run.result.status == "no_consensus"
    assert run.result.finding is not None
    assert run.result.finding.reason.endswith(DIFFER)
    assert run.result.verdicts and not any(v.upheld for v in run.result.verdicts)
    md = (run.folder / "report.md").read_text()
    assert DIFFER in md and NOT_UPHELD in md
    assert NOT_UPHELD.replace("'", "&#x27;") in (run.folder / "report.html").read_text()
    code, out, _ = moot(capsys, "show", run.session_id)
    assert code == 0 and NOT_UPHELD in out
