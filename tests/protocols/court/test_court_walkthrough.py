"""What a new user's walkthrough of the court (`moot run --protocol court`, the embedded model)
found: judge-verdict counts that contradicted each other and the report, a live line that
said other than the report, invalid reasons repeated once per verdict, a proposal round shown
as if the agents abstained, a demonstration that could never vote, a model's control bytes in
report.html, and junk positions seated as answers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from moot.cli.run import _demo_rounds
from moot.deliberation.consensus import position_id
from moot.protocols.court import PROTOCOL, CourtOptions
from moot.protocols.court.rounds import describe_round
from moot.text.rounds import round_result
from moot.types import Event, RoundSummary, load
from tests.court_scripts import Ask, Behaviour, Court, reply, stubborn
from tests.scripts import start

PG, LITE, FILES = "Use Postgres.", "Use SQLite.", "Use flat files."
TASK = "Which database should the service use for its sessions?"
# the C0 and C1 control characters a terminal or a browser would obey or hide
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def judged(scores: Callable[[tuple[str, ...]], dict[str, int]], pick: int = 0) -> Behaviour:
    """A judge that selects the `pick`-th position shown (by id) and scores them by `scores`."""

    def behave(ask: Ask) -> str:
        return json.dumps(
            {
                "selectedPositionId": ask.positions[pick],
                "scoresByPositionId": scores(ask.positions),
                "reasoning": "It is the most complete and best argued position.",
                "confidence": 0.9,
            }
        )

    return behave


def contradicts(ask: Ask) -> str:
    """Selects the position it scored lowest: an invalid verdict."""
    return judged(lambda ids: {p: 10 if i == 0 else 90 for i, p in enumerate(ids)})(ask)


def flat(ask: Ask) -> str:
    """Scores every position the same: an invalid verdict (it prefers none)."""
    return judged(lambda ids: dict.fromkeys(ids, 50))(ask)


def valid(ask: Ask) -> str:
    return judged(lambda ids: {p: 90 if i == 0 else 10 for i, p in enumerate(ids)})(ask)


def valid_in_round_2(ask: Ask) -> str:
    return valid(ask) if ask.round == 2 else flat(ask)


def deadlocked_panel() -> Court:
    """Three stubborn agents, then three judge rounds in which 8 of the 9 verdicts are
    invalid (two distinct reasons) and the one valid verdict cannot decide."""
    court = Court(
        {"one": stubborn(PG), "two": stubborn(LITE), "three": stubborn(FILES)},
        {"j1": contradicts, "j2": contradicts, "j3": valid_in_round_2},
    )
    return court


def test_the_status_says_what_its_verdict_counts_count() -> None:
    """It said "3 of the 3 judges' verdicts were invalid" of 9 verdicts in 3 judge rounds."""
    run = start(TASK, deadlocked_panel().config(max_agent_rounds=2))
    how = run.result.how
    assert run.exit_code == 2 and "deadlock" in how
    assert "8 of the 9 verdicts of the 3 judges in 3 judge rounds were invalid" in how
    assert "in judge round 3, no valid verdict selected a position" in how
    assert "3 of its 3 verdicts were invalid" in how
    assert "judges' verdicts were invalid" not in how


def test_each_distinct_invalid_reason_is_said_once_with_who_gave_it() -> None:
    """The trust statement repeated each invalid verdict's reason in full, 8 times."""
    run = start(TASK, deadlocked_panel().config(max_agent_rounds=2))
    trust = run.result.trust
    assert trust.count("is not its own top score") == 1
    assert trust.count("so it prefers none of them") == 1
    assert "verdict was invalid" not in trust  # no sentence per verdict
    assert "8 of the 9 verdicts of the 3 judges in 3 judge rounds were invalid" in trust
    contradicting = re.search(r"6 because its selectedPositionId [^(]*\(([^)]*)\)", trust)
    assert contradicting is not None, trust
    assert "judge rounds 1, 2 and 3" in contradicting.group(1)
    flat_reason = "it scored every position the same (50/100), so it prefers none of them"
    assert re.search(
        re.escape(f"2 because {flat_reason} (Judge ") + r"\w in judge rounds 1 and 3\)", trust
    )
    # every verdict is still listed, one by one, where verdicts are listed
    assert len(run.result.verdicts) == 9
    assert sum(not v.valid for v in run.result.verdicts) == 8


def test_the_live_lines_say_what_the_report_says_of_every_round() -> None:
    """The live line said "judge round 2: votes d84c84aff245 1, failed 2", the report "votes
    d84c84aff245 1, 2 needed"; judge rounds without a valid vote read "no result recorded"."""
    seen: list[Event] = []
    run = start(TASK, deadlocked_panel().config(max_agent_rounds=2), subscribers=[seen.append])
    live = [load(e.data, RoundSummary) for e in seen if e.kind == "round_result"]
    options = CourtOptions()
    recorded = [describe_round(entry, options) for entry in run.result.details["rounds"]]
    assert [round_result(x) for x in live] == [round_result(x) for x in recorded if x is not None]
    judges = [x for x in live if x.stage == "judges"]
    assert [x.votes.get("invalid") for x in judges] == [3, 2, 3]
    assert all(x.needed == 2 for x in judges)
    assert "no result recorded" not in " ".join(round_result(x) for x in live)


def test_a_valid_pick_says_what_moot_checked_of_it() -> None:
    """ "Judge A: selected position ...; upheld by moot's check" said nothing of what moot
    checked, nor in which judge round the pick was made."""
    run = start(TASK, deadlocked_panel().config(max_agent_rounds=2))
    (pick,) = [v for v in run.result.verdicts if v.valid]
    assert pick.round == 2 and "in judge round 2" in pick.says
    assert "its own top score" in pick.says and "argument" in pick.says


def test_a_proposal_round_is_not_shown_as_abstentions() -> None:
    """Round 1 proposes; its live line said "votes yes 0, no 0, abstain 3" as if every agent
    had abstained."""
    court = Court({"one": stubborn(PG), "two": stubborn(LITE), "three": stubborn(FILES)})
    seen: list[Event] = []
    start(TASK, court.config(max_agent_rounds=2), subscribers=[seen.append])
    first = next(
        load(e.data, RoundSummary)
        for e in seen
        if e.kind == "round_result" and e.data["round"] == 1
    )
    assert "abstain" not in round_result(first) and not first.votes
    assert round_result(first).startswith("3 positions proposed by 3 agents"), round_result(first)


def test_the_demonstration_runs_long_enough_to_vote() -> None:
    """The demonstration (no --models, no config) ran 1 round, and the court votes only from
    round 2: it went straight to the judges. Too few rounds now warn as refine's do."""
    demo = _demo_rounds("court", None)
    assert demo is not None and demo >= 2
    short = PROTOCOL.short_of_rounds(CourtOptions(max_agent_rounds=1))
    assert short is not None and short.rounds == 2 and "round 2" in short.why
    assert PROTOCOL.short_of_rounds(CourtOptions(max_agent_rounds=2)) is None


def test_report_html_holds_no_control_bytes_of_a_position() -> None:
    """report.html showed a position's raw 0x7F and 0x12 (the reply's gist, read from its
    JSON): anything of a model's in a report must be safe to show."""
    noisy = "Use Postgres.\x07 It keeps sessions durable\x12."
    court = Court({"one": stubborn(noisy), "two": stubborn(LITE), "three": stubborn(FILES)})
    run = start(TASK, court.config(max_agent_rounds=1))
    assert noisy in run.result.positions.values()  # a real answer, with noise in it
    page = (run.folder / "report.html").read_text()
    assert CONTROL.search(page) is None


def test_the_judge_votes_table_keeps_position_ids_as_written() -> None:
    """Its header read "D84c84aff245": the id with its first letter capitalised."""
    texts = ("Use Oracle.", "Use MariaDB.", "Use Firebird.")  # ids that start with a letter
    court = Court(
        {"one": stubborn(texts[0]), "two": stubborn(texts[1]), "three": stubborn(texts[2])},
        {"j1": valid, "j2": valid, "j3": contradicts},
    )
    run = start(TASK, court.config(max_agent_rounds=2))
    report = (run.folder / "report.md").read_text()
    header = report.split("## Judge Votes by Round", 1)[1].strip().splitlines()[0]
    picked = min(position_id(t) for t in texts)
    assert picked[0].isalpha() and f"| {picked} |" in header, header


def proposes(text: str) -> Behaviour:
    return lambda ask: reply(text=text, reasoning="Rome is the capital of Italy.")


@pytest.mark.parametrize("junk", [",1234567890,", "\x152", "\x7f\x12[m"])
def test_a_junk_position_is_no_answer(junk: str) -> None:
    """The embedded model's positions to "What is the capital of Italy?" were seated as
    answers and handed to the judges."""
    court = Court({"one": proposes(junk), "two": proposes("Rome."), "three": proposes("Rome.")})
    run = start("What is the capital of Italy?", court.config(max_agent_rounds=1))
    (claim,) = [c for c in run.result.claims if court.names[c.agent] == "one"]
    assert not claim.valid
