"""The tournament (seed 001) with scripted sides and arbiters: the bracket, convergence by each
of its layers, history carried forward, failures, budget shares, and the generic reports."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from moot import api as runner
from moot.engine.store import find_session
from moot.protocols.tournament.bracket import budget_shares
from moot.types import FailureKind, Request, alias_label
from tests.cli.test_cli import moot
from tests.scripts import events, no_sleep, start
from tests.tournament_scripts import Tourney, moves, steady

TASK = "How should the service store its sessions?"
PG = "Store sessions in PostgreSQL with a sessions table and an index on expiry."
REDIS = "Keep sessions in Redis with a TTL per key, no database at all."
DYNAMO = "Put sessions in DynamoDB, partitioned by user, with its native expiry feature."
UNLOGGED = "Use PostgreSQL, but an unlogged table swept by a nightly job, to cut write cost."


# Failures for good (a refused key): how a protocol goes on without a side. Transient ones
# (a provider down) pause the run for the outage instead (tests/engine/test_outage.py).
FOR_GOOD: dict[str, Any] = {"fail_kind": FailureKind.AUTH}


def _matches(result_details: dict[str, object]) -> list[dict[str, object]]:
    bracket = result_details["bracket"]
    assert isinstance(bracket, dict)
    return list(bracket["matches"])


def test_two_models_converge_structurally_in_round_1_through_the_cli(
    capsys: pytest.CaptureFixture[str],
) -> None:
    t = Tourney({"one": steady(PG), "two": moves(REDIS, PG, at=1)})
    t.config(("one", "two"))  # registers the scripts
    code, out, err = moot(
        capsys, "run", TASK, "--protocol", "tournament", "--seed", "11",
        "--models", "scripted:@one", "--models", "scripted:@two",
    )  # fmt: skip
    assert code == 0, err
    assert PG in out and "the final match converged (40% -> 100%, structural layer)" in out
    # plain lines, from the record's round summaries: the arbiter decided round 0, text round 1
    assert "round 1: judge Arbiter A, continue, convergence score 40/100" in err
    assert "round 2: converged, convergence score 100/100 (match 1 challenge, structural" in err
    session = out.split("Session ", 1)[1].split(":", 1)[0]
    folder = find_session(session).path
    result = json.loads((folder / "result.json").read_text())
    rounds = result["details"]["rounds"]
    assert [(r["kind"], r["layer"], r["converged"]) for r in rounds] == [
        ("positions", "arbiter", False),
        ("challenge", "structural", True),
    ]
    assert rounds[0]["scores"]["structural"] < 95 and rounds[0]["scores"]["semantic"] < 90
    (match,) = result["details"]["bracket"]["matches"]
    assert match["winner"] == match["sides"][0] and match["decided_by"] == "arbiter"
    assert match["reasons"] == ["its position is more complete"] and match["analysis"] is None
    # 2 positions, 1 arbiter check, 2 challenges, the verdict: each asked once
    assert sorted(t.steps.values()) == [1] * 6
    report = (folder / "report.md").read_text()
    assert "#### Match 1 challenge" in report
    assert "| 2 | - | converged | 100/100 | match 1 challenge, structural layer |" in report
    html = (folder / "report.html").read_text()
    assert "Convergence score by round" in html and "structural layer" in html
    code, shown, _ = moot(capsys, "show", session)
    assert code == 0 and "match 1 positions, arbiter layer" in shown
    code, replayed, _ = moot(capsys, "replay", session)
    assert code == 0 and "Identical" in replayed


def test_three_models_the_second_match_needs_the_arbiter_and_inherits_the_history() -> None:
    t = Tourney(
        {"one": steady(PG), "two": steady(PG), "three": moves(DYNAMO, UNLOGGED, at=1)},
        overall=lambda request: 85 if "unlogged" in request.prompt else 30,
    )
    # the first two seeds agree at once, whoever they are; "three" must then meet the winner
    run = start(TASK, t.config(("one", "two", "three"), shuffle=False))
    assert run.exit_code == 0, run.message
    by_spec = {
        spec: alias for alias, spec in run.result.aliases.items() if alias.startswith("agent")
    }
    seeding = [by_spec[f"scripted:@{n}"] for n in ("one", "two", "three")]
    bracket = run.result.details["bracket"]
    assert bracket["seeding"] == seeding and bracket["shuffled"] is False
    first, second = bracket["matches"]
    assert first["sides"] == seeding[:2] and first["deciding_layer"] == "structural"
    assert first["convergence"] == [100.0] and first["arbiter"] == seeding[2]
    assert second["sides"] == [first["winner"], seeding[2]]
    loser = seeding[1] if first["winner"] == seeding[0] else seeding[0]
    assert second["arbiter"] == loser  # the next agent not in the match
    assert second["convergence"] == [30.0, 85.0] and second["deciding_layer"] == "arbiter"
    last = run.result.details["rounds"][-1]
    assert last["layer"] == "arbiter" and last["arbiter"] == loser and last["converged"]
    assert last["scores"]["structural"] < 95 and last["scores"]["semantic"] < 90
    assert run.result.final_answer == PG  # A, the leader, won the verdict
    # the bracket reads in the outcome, so every face shows who won each match
    won = alias_label(first["winner"])
    lost = alias_label(next(a for a in first["sides"] if a != first["winner"]))
    assert f"match 1: {won} beat {lost} (arbiter, converged 100%)" in run.result.how
    # the challenger sees the leader's position and the highlights; the leader restates
    (challenger,) = [
        p for p in t.prompts("positions") if "Match 2" in p and "entering the tournament" in p
    ]
    assert PG in challenger and "Previous debate highlights" in challenger
    assert "Match 1:" in challenger and "fresh perspective" in challenger
    assert "its position is more complete" in challenger  # match 1's reasons, already settled
    (leader,) = [p for p in t.prompts("positions") if "Match 2" in p and "restate" in p]
    assert PG in leader
    assert all(n == 1 for n in t.steps.values())


def test_the_seeding_is_the_sessions_shuffle_by_default() -> None:
    names = ("one", "two", "three", "four")
    t = Tourney({n: steady(PG) for n in names})
    seedings = set()
    for seed in (1, 2, 3, 4, 5):
        config = t.config(names)
        config.seed = seed
        run = start(TASK, config)
        assert run.exit_code == 0
        bracket = run.result.details["bracket"]
        assert sorted(bracket["seeding"]) == ["agent_a", "agent_b", "agent_c", "agent_d"]
        assert len(bracket["matches"]) == 3  # N-1
        seedings.add(tuple(bracket["seeding"]))
    assert len(seedings) > 1


def test_a_match_that_never_converges_shows_the_analysis_and_exits_2() -> None:
    def stance(text: str) -> object:
        return lambda match, rnd: f"{text} (revision {rnd})"

    def overall(request: Request) -> int:
        found = re.search(r"revision (\d)", request.prompt)
        return [35, 58, 71][int(found.group(1))] if found else 0

    t = Tourney({"one": stance(PG), "two": stance(REDIS)}, overall=overall)  # type: ignore[dict-item]
    run = start(TASK, t.config(("one", "two"), max_rounds=2))
    assert run.exit_code == 2 and run.result.status == "no_consensus"
    (match,) = _matches(run.result.details)
    assert match["convergence"] == [35.0, 58.0, 71.0] and not match["converged"]
    analysis = match["analysis"]
    assert isinstance(analysis, dict)
    assert analysis["fundamental_disagreement"] == "relational versus document storage"
    assert analysis["why_no_convergence"] == "each side weighs flexibility differently"
    assert analysis["arbiter_choice"] == match["winner"]
    (disagreement,) = run.result.disagreements
    assert "35% -> 58% -> 71%" in disagreement and "relational versus document" in disagreement
    assert len(run.result.positions) == 2  # both final positions
    report = (run.folder / "report.md").read_text()
    assert "35% -> 58% -> 71%" in report and "## Remaining Disagreements" in report
    verdict_prompt = t.prompts("verdict")[0]
    assert "did not converge" in verdict_prompt and "fundamental_disagreement" in verdict_prompt

    # accept_arbiter_choice names the arbiter's choice as the final answer; the two final
    # positions still differ, so it is no consensus (issue 29: it used to exit 0)
    accepted = start(TASK, t.config(("one", "two"), max_rounds=2, accept_arbiter_choice=True))
    assert accepted.exit_code == 2 and accepted.result.status == "no_consensus"
    assert not accepted.result.consensus
    assert "the arbiter's choice is the final answer" in accepted.result.how
    assert "not a consensus" in accepted.result.how
    (chosen,) = _matches(accepted.result.details)
    assert accepted.result.final_answer == accepted.result.positions[str(chosen["winner"])]
    assert accepted.result.finding is not None
    assert accepted.result.finding.label == "no_consensus"


def test_a_side_failing_in_round_0_is_replaced_by_a_backup() -> None:
    t = Tourney(
        {"one": steady(PG), "two": steady(REDIS), "spare": steady(PG)},
        fail={("two", "positions")},
    )
    run = start(TASK, t.config(("one", "two"), backups=["spare"]))
    assert run.exit_code == 0, run.message
    two = next(a for a, spec in run.result.aliases.items() if spec == "scripted:@two")
    (match,) = _matches(run.result.details)
    assert match["replaced"] == {two: "backup_a"} and "backup_a" in match["sides"]
    assert match["convergence"] == [100.0]  # the backup agrees with the other side
    assert run.result.details["bracket"]["left"][two].startswith(
        "failed in round 1 (the positions of match 1)"
    )
    assert t.steps["r1/match_1_positions/backup_a"] == 1


def test_a_side_failing_in_round_0_without_a_backup_stops_the_tournament() -> None:
    t = Tourney({"one": steady(PG), "two": steady(REDIS)}, fail={("two", "positions")}, **FOR_GOOD)
    run = start(TASK, t.config(("one", "two")))
    assert run.exit_code == 1 and run.result.status == "failed"
    assert run.message is not None
    assert "failed in round 1, the positions of match 1" in run.message
    assert "add one under [tournament] backups" in run.message


def test_a_side_failing_in_a_challenge_round_loses_by_default() -> None:
    t = Tourney({"one": steady(PG), "two": steady(REDIS)}, fail={("two", "challenge")}, **FOR_GOOD)
    run = start(TASK, t.config(("one", "two")))
    assert run.exit_code == 2  # the only match, hence the final, did not converge
    one = next(a for a, spec in run.result.aliases.items() if spec == "scripted:@one")
    (match,) = _matches(run.result.details)
    assert match["winner"] == one and match["decided_by"] == "forfeit"
    assert "failed to provide a challenge in round 2" in str(match["reasons"])  # the session's
    assert not t.asked("verdict")  # nothing left to judge
    assert run.result.details["rounds"][-1]["decision"] == "forfeit"
    assert run.result.final_answer == PG


def test_a_failure_in_a_defense_round_is_judged_on_what_there_is() -> None:
    t = Tourney({"one": steady(PG), "two": steady(REDIS)}, fail={("two", "defense")}, **FOR_GOOD)
    run = start(TASK, t.config(("one", "two")))
    (match,) = _matches(run.result.details)
    assert "round 3 (defense) failed" in str(match["incomplete"])
    assert match["decided_by"] == "arbiter" and len(t.asked("verdict")) == 1
    assert "The debate is incomplete" in t.prompts("verdict")[0]


def test_budget_shares_front_load_the_bracket() -> None:
    assert [round(x, 2) for x in budget_shares(3)] == [0.4, 0.7, 0.9]  # 40%, 30%, 20%, 10% left
    assert budget_shares(1) == [2 / 3]


def test_a_match_that_reaches_its_budget_share_ends_early_and_is_judged() -> None:
    t = Tourney({"one": steady(PG), "two": steady(REDIS)})
    free = start(TASK, t.config(("one", "two")))
    round0 = sum(
        e["data"]["completion"]["usage"]["prompt_tokens"]
        + e["data"]["completion"]["usage"]["completion_tokens"]
        for e in events(free.folder)
        if e["kind"] == "ask" and e["step"].startswith("r1/")
    )
    config = t.config(("one", "two"))
    # round 0 spends 68%, past the 67% share, and leaves room for the arbiter's verdict: a
    # limit stops an ask whose prompt alone would pass it (engine/limits.py)
    config.limits.max_tokens = int(round0 / 0.68)
    run = start(TASK, config)
    assert run.result.status == "no_consensus" and run.exit_code == 2
    (match,) = _matches(run.result.details)
    assert "the budget share of match 1 (67%) is spent" in str(match["ended_early"])
    assert match["rounds"] == [1] and match["decided_by"] == "arbiter"
    assert "The debate is incomplete" in t.prompts("verdict")[-1]


def test_without_the_embedding_model_the_semantic_layer_is_skipped_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from moot.deliberation.convergence import NO_EMBEDDER_NOTE

    monkeypatch.setitem(sys.modules, "static_model", None)  # as if the extra were not installed
    t = Tourney({"one": steady(PG), "two": steady(REDIS)})
    run = start(TASK, t.config(("one", "two")))
    warnings = [e for e in events(run.folder) if e["kind"] == "warning"]
    assert [w["data"]["message"] for w in warnings] == [NO_EMBEDDER_NOTE]
    assert all("semantic" not in r["scores"] for r in run.result.details["rounds"])
    assert run.result.details["bracket"]["semantic_layer"] is None


def test_validate_lists_the_tournaments_participants(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "t.toml"
    path.write_text(
        'protocol = "tournament"\n[[agents]]\nmodel = "scripted:@one"\n'
        '[[agents]]\nmodel = "scripted:@two"\n[tournament]\nmax_rounds = 2\n'
        '[[tournament.backups]]\nmodel = "scripted:@spare"\n'
    )
    code, out, _ = moot(capsys, "validate", str(path))
    assert code == 0 and "1 arbiter," in out and "1 backup)" in out


def test_no_shuffle_keeps_the_order_given(capsys: pytest.CaptureFixture[str]) -> None:
    names = ("one", "two", "three")
    t = Tourney({n: steady(PG) for n in names})
    t.config(names)  # registers the scripts
    for seed in ("1", "2"):
        code, out, err = moot(
            capsys, "run", TASK, "--protocol", "tournament", "--seed", seed, "--no-shuffle",
            *(x for n in names for x in ("--models", f"scripted:@{n}")),
        )  # fmt: skip
        assert code == 0, err
        session = out.split("Session ", 1)[1].split(":", 1)[0]
        result = json.loads((find_session(session).path / "result.json").read_text())
        by_spec = {spec: alias for alias, spec in result["aliases"].items()}
        given = [by_spec[f"scripted:@{n}"] for n in names]
        assert result["details"]["bracket"]["seeding"] == given
    code, _, err = moot(capsys, "run", TASK, "--no-shuffle", "--models", "scripted:@one")
    assert code == 1 and "--no-shuffle: the arena protocol does not take --no-shuffle;" in err


def test_the_live_view_shows_each_rounds_convergence() -> None:
    import io

    from rich.console import Console

    from moot.display.live import LiveView

    t = Tourney({"one": steady(PG), "two": moves(REDIS, PG, at=1)})
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=120, color_system=None)
    with LiveView(console, auto_refresh=False) as view:
        run = start(TASK, t.config(("one", "two")), subscribers=[view])
    assert run.exit_code == 0
    out = stream.getvalue()
    assert "moot tournament" in out
    assert "Latest: round 2: converged, convergence score 100/100 (match 1 challenge" in out


def test_an_arbiter_that_fails_leaves_the_cheaper_layers_and_the_more_confident_side() -> None:
    # with two agents the arbiter runs on the first agent's model: script "one" answers for it
    t = Tourney(
        {"one": steady(PG), "two": steady(REDIS)},
        fail={("one", "convergence"), ("one", "verdict")},
        **FOR_GOOD,
    )
    run = start(TASK, t.config(("one", "two"), max_rounds=1))
    assert run.exit_code == 2
    first = run.result.details["rounds"][0]
    assert first["layer"] == "semantic" and not first["converged"]
    assert "the arbiter gave no usable reply" in first["notes"][0]
    (match,) = _matches(run.result.details)
    assert match["decided_by"] == "fallback"
    assert "the arbiter gave no usable verdict" in str(match["reasons"])
    assert match["winner"] == match["sides"][0]  # equal confidence: the leader keeps it


def test_a_side_lost_to_an_outage_pauses_the_tournament_and_resume_plays_the_match() -> None:
    """A side failing for a transient reason (a provider down) with no backup pauses the
    tournament (before: exit 1, final); once it is back, resume asks its position again."""
    t = Tourney({"one": steady(PG), "two": steady(PG)}, fail={("two", "positions")})
    paused = start(TASK, t.config(("one", "two")))
    assert paused.exit_code == 3 and paused.result.status == "paused", paused.message
    assert "every failure was transient" in (paused.message or "")
    assert events(paused.folder)[-1]["data"]["reason"] == "outage"
    t.fail = set()
    resumed = runner.resume(paused.session_id, sleep=no_sleep)
    assert resumed.exit_code == 0 and resumed.result.final_answer == PG, resumed.message
    assert runner.replay(paused.session_id).identical is True


def test_an_arbiter_lost_to_an_outage_pauses_instead_of_deciding_by_fallback() -> None:
    t = Tourney(
        {"one": steady(PG), "two": steady(REDIS)},
        fail={("one", "convergence"), ("one", "verdict")},
    )
    paused = start(TASK, t.config(("one", "two"), max_rounds=1))
    assert paused.exit_code == 3 and paused.result.status == "paused", paused.message
    assert "paused for an outage" in (paused.message or "")
    t.fail = set()
    resumed = runner.resume(paused.session_id, sleep=no_sleep)
    assert resumed.exit_code in (0, 2) and resumed.result.status != "paused"
    (match,) = _matches(resumed.result.details)
    assert match["decided_by"] != "fallback"  # the arbiter was asked again and answered
    assert runner.replay(paused.session_id).identical is True
