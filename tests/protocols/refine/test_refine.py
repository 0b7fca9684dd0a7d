"""The refine protocol (seed 004, "Tournaments") with scripted participants: convergence, a
revision adopted, Borda ties to the incumbent, abstentions, seeded labels, the critique kept
from the judges, role rotation, the artifacts and the generic views."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from msgspec.structs import replace

from moot.config import read
from moot.engine.store import find_session
from moot.models.scripted import register_script
from moot.protocols.refine.cast import cast_pass
from moot.protocols.refine.passes import unwrap_pre
from tests.cli.test_cli import moot
from tests.refine_scripts import CRITIQUE, INITIAL, Refinery, merge, revision, shown
from tests.scripts import start

TASK = "How should the service store its sessions?"


def _folder(session_id: str) -> Path:
    return find_session(session_id).path


def test_a_always_winning_converges_after_k_passes_with_its_artifacts() -> None:
    r = Refinery(lambda p, j: ["A", "AB", "B"])
    run = start(TASK, r.config(judges=3, convergence_k=2))
    assert run.exit_code == 0, run.message
    result = run.result
    assert result.final_answer == INITIAL and result.rounds == 2
    assert "converged after 2 passes" in result.how
    history = [(h["pass"], h["winner"], h["streak"]) for h in result.details["history"]]
    assert history == [(1, "A", 1), (2, "A", 2)]
    # Borda: 3 judges, 2 points for first place: A 6, AB 3, B 0
    assert result.details["rounds"][0]["borda"]["scores"] == {"A": 6, "B": 0, "AB": 3}
    # 1 author + 2 passes x (critic, author B, synthesizer, 3 judges), each asked once
    assert sum(r.steps.values()) == 1 + 2 * 6 and set(r.steps.values()) == {1}
    folder = run.folder / "refine"
    assert (folder / "initial_a.md").read_text() == INITIAL
    assert (folder / "pass_01" / "critic.md").read_text() == CRITIQUE
    assert (folder / "pass_02" / "version_b.md").read_text() == revision(2)
    assert (folder / "pass_02" / "version_ab.md").read_text() == merge(2)
    assert (folder / "final_output.md").read_text() == INITIAL
    saved = json.loads((folder / "pass_01" / "result.json").read_text())
    assert saved["borda"]["winner"] == "A" and len(saved["judges"]) == 3
    assert [h["streak"] for h in json.loads((folder / "history.json").read_text())] == [1, 2]


def test_b_winning_once_then_a_twice_adopts_the_revision() -> None:
    r = Refinery(lambda p, j: ["B", "A", "AB"] if p == 1 else ["A", "B", "AB"])
    run = start(TASK, r.config(judges=3, convergence_k=2))
    assert run.exit_code == 0, run.message
    assert run.result.final_answer == revision(1)
    assert [(h["winner"], h["streak"]) for h in run.result.details["history"]] == [
        ("B", 0),
        ("A", 1),
        ("A", 2),
    ]
    # pass 2's incumbent is pass 1's B
    assert (run.folder / "refine" / "pass_02" / "version_a.md").read_text() == revision(1)
    assert (run.folder / "refine" / "final_output.md").read_text() == revision(1)


def test_a_three_way_borda_tie_goes_to_the_incumbent() -> None:
    orders = [["A", "B", "AB"], ["B", "AB", "A"], ["AB", "A", "B"]]  # 3 points each
    r = Refinery(lambda p, j: orders[j - 1])
    run = start(TASK, r.config(judges=3, convergence_k=1))
    assert run.exit_code == 0, run.message
    borda = run.result.details["rounds"][0]["borda"]
    assert borda["scores"] == {"A": 3, "B": 3, "AB": 3}
    assert borda["winner"] == "A" and borda["tiebreak"] == "incumbent"
    assert run.result.final_answer == INITIAL


def test_an_invalid_ranking_is_an_abstention_and_none_valid_keeps_the_incumbent() -> None:
    def prefer(p: int, j: int) -> list[str] | str:
        if p == 1:
            return ["B", "A", "AB"] if j == 1 else '{"ranking": ["X", "X", "Y"]}'
        return "I like them all."

    r = Refinery(prefer)
    run = start(TASK, r.config(judges=2, convergence_k=1, max_passes=2))
    first, second = run.result.details["rounds"]
    assert first["winner"] == "B" and first["borda"]["valid_rankings"] == 1
    assert first["borda"]["abstained"] == [1]
    assert "invalid ranking, abstains" in first["judges"][1]["problem"]
    # pass 2: nobody ranked validly; B (pass 1's winner) stays, and that is no win
    assert second["borda"]["no_valid_ranking"] and second["streak"] == 0
    assert "no valid ranking" in second["problem"]
    assert run.exit_code == 2 and run.result.final_answer == revision(1)
    # no re-asks: an invalid ranking is not asked again
    assert not any(step.endswith("/reask") for step in r.steps)


def test_labels_are_seeded_shuffles_and_judges_never_see_the_critique() -> None:
    r = Refinery(lambda p, j: ["A", "B", "AB"])
    run = start(TASK, r.config(agents=5, judges=3, convergence_k=1, max_passes=1))
    judged = r.prompts("judge")
    assert len(judged) == 3
    orders = set()
    for _, prompt in judged:
        assert CRITIQUE not in prompt and "Problem:" not in prompt
        texts = shown(prompt)
        assert sorted(texts) == ["X", "Y", "Z"]
        orders.add(tuple(texts[label] for label in "XYZ"))
    labels = [j["labels"] for j in run.result.details["rounds"][0]["judges"]]
    assert len({json.dumps(x, sort_keys=True) for x in labels}) > 1  # own shuffles
    # the recorded labels are the ones the judges saw
    for record, (_, prompt) in zip(run.result.details["rounds"][0]["judges"], judged, strict=True):
        names = {"A": INITIAL, "B": revision(1), "AB": merge(1)}
        assert {k: names[v] for k, v in record["labels"].items()} == shown(prompt)
    (_, synth_prompt) = r.prompts("synthesize")[0]
    recorded = run.result.details["rounds"][0]["synthesis_labels"]
    names = {"A": INITIAL, "B": revision(1)}
    assert shown(synth_prompt) == {k: names[v] for k, v in recorded.items()}
    assert CRITIQUE not in synth_prompt
    # seeded: the same seed shows the same labels again
    again = Refinery(lambda p, j: ["A", "B", "AB"])
    rerun = start(TASK, again.config(agents=5, judges=3, convergence_k=1, max_passes=1))
    assert [j["labels"] for j in rerun.result.details["rounds"][0]["judges"]] == labels
    seeds = {json.dumps(x, sort_keys=True) for x in labels}
    shifted = Refinery(lambda p, j: ["A", "B", "AB"])
    other = shifted.config(agents=5, judges=3, convergence_k=1, max_passes=1)
    other = replace(other, **{"seed": 99})
    moved = start(TASK, other).result.details["rounds"][0]["judges"]
    assert {json.dumps(j["labels"], sort_keys=True) for j in moved} != seeds


def test_roles_rotate_and_no_judge_ranks_its_own_text_with_six_agents() -> None:
    aliases = ["agent_a", "agent_b", "agent_c", "agent_d", "agent_e", "agent_f"]
    writer = "agent_a"
    for number in range(1, 6):
        cast = cast_pass(aliases, number, 3, writer)
        assert not cast.self_judging
        assert not {writer, cast.author_b, cast.synthesizer} & set(cast.judges)
        writer = cast.author_b
    few = cast_pass(["agent_a", "agent_b"], 1, 3, "agent_a")
    assert few.self_judging and len(few.judges) == 3
    own = cast_pass(["agent_a", "judge_a"], 1, 3, "agent_a")
    assert own.judges == ("judge_a",) * 3 and not own.self_judging


def test_with_fewer_non_writers_than_judges_the_judges_are_distinct_agents() -> None:
    # a three-agent run's pass 2: Agent C wrote A and B, Agent A the synthesis; Agent B wrote
    # nothing and once judged alone three times, one model sampled again
    three = ["agent_a", "agent_b", "agent_c"]
    cast = cast_pass(three, 2, 3, "agent_c")
    assert (cast.author_b, cast.synthesizer) == ("agent_c", "agent_a")
    assert sorted(cast.judges) == three and cast.judges[0] == "agent_b"
    assert cast.self_judging  # the writers judge too, and the pass says so
    # four agents, three judges: the one agent that wrote nothing first, then two writers
    four = ["agent_a", "agent_b", "agent_c", "agent_d"]
    cast = cast_pass(four, 1, 3, "agent_a")
    assert cast.judges[0] == "agent_d" and len(set(cast.judges)) == 3 and cast.self_judging
    # enough agents: judges that wrote nothing, no writer among them
    six = [*four, "agent_e", "agent_f"]
    cast = cast_pass(six, 1, 3, "agent_a")
    assert set(cast.judges) == {"agent_d", "agent_e", "agent_f"} and not cast.self_judging
    # an agent judges twice only where the judges outnumber the agents
    assert sorted(cast_pass(three, 1, 4, "agent_a").judges) == sorted([*three, "agent_a"])


def test_too_few_agents_warn_that_judges_rank_their_own_text() -> None:
    r = Refinery(lambda p, j: ["A", "B", "AB"])
    run = start(TASK, r.config(agents=2, judges=1, convergence_k=1))
    assert run.exit_code == 0
    warnings = [
        json.loads(line)["data"]["message"]
        for line in (run.folder / "events.jsonl").read_text().splitlines()
        if json.loads(line)["kind"] == "warning"
    ]
    assert any("too few agents" in w for w in warnings)


def test_input_file_preset_and_generic_views_through_the_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    r = Refinery(lambda p, j: ["AB", "A", "B"] if p == 1 else ["A", "AB", "B"])
    r.config()  # registers the script
    given = tmp_path / "plan.md"
    given.write_text("My own plan: cookies only.")
    code, out, err = moot(
        capsys, "run", TASK, "--protocol", "refine", "--input", str(given), "--seed", "4",
        "--models", "scripted:@refinery", "--models", "scripted:@refinery",
        "--models", "scripted:@refinery", "--models", "scripted:@refinery",
    )  # fmt: skip
    assert code == 0, err
    assert merge(1) in out
    assert "round 1: AB wins: the new incumbent (streak 0 of 2)" in err
    assert "votes A 3, B 0, AB 6" in err
    assert not any("/author/" in step for step in r.steps)  # A came from the file
    session = out.split("Session ", 1)[1].split(":", 1)[0]
    folder = _folder(session)
    assert (folder / "refine" / "initial_a.md").read_text() == "My own plan: cookies only."
    report = (folder / "report.md").read_text()
    assert "AB wins: the new incumbent" in report and "A holds: converged" in report
    assert "AB wins: the new incumbent" in (folder / "report.html").read_text()
    code, out, _ = moot(capsys, "show", session)
    assert code == 0 and "votes A 3, B 0, AB 6" in out
    code, out, _ = moot(capsys, "replay", session)
    assert code == 0 and "Identical" in out


def test_the_impl_preset_gives_the_seeds_implementation_defaults() -> None:
    from moot.protocols.refine.options import RefineOptions

    opts = read(RefineOptions, {"preset": "impl-defaults"})
    assert (opts.judges, opts.convergence_k, opts.max_passes) == (1, 1, 3)
    assert read(RefineOptions, {"preset": "impl-defaults", "judges": 2}).judges == 2
    assert (RefineOptions().judges, RefineOptions().convergence_k) == (3, 2)
    assert RefineOptions().max_passes == 15


def test_session_artifacts_stay_inside_the_folder_and_replay_writes_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from types import SimpleNamespace

    from moot.engine.session import Session

    live = SimpleNamespace(folder=SimpleNamespace(path=tmp_path), mode="live", warn=print)
    live._copy = lambda path, text: Session._copy(live, path, text)  # type: ignore[arg-type]
    assert Session.artifact(live, "refine/pass_01/critic.md", "x") == "refine/pass_01/critic.md"  # type: ignore[arg-type]
    assert (tmp_path / "refine" / "pass_01" / "critic.md").read_text() == "x"
    for bad in ("../outside.md", "/etc/passwd", "refine/../../x.md", "."):
        with pytest.raises(ValueError, match="inside the session folder"):
            Session.artifact(live, bad, "x")  # type: ignore[arg-type]
    assert not (tmp_path.parent / "outside.md").exists()
    # replay rebuilds the result without writing a file
    r = Refinery(lambda p, j: ["A", "B", "AB"])
    run = start(TASK, r.config(judges=1, convergence_k=1))
    shutil.rmtree(run.folder / "refine")
    code, out, _ = moot(capsys, "replay", run.session_id)
    assert code == 0 and "Identical" in out
    assert not (run.folder / "refine").exists()


def test_the_live_view_shows_the_borda_table_and_the_streak(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    # rich draws a live view's frames only where TERM is not dumb: not the tester's to decide
    monkeypatch.setenv("TERM", "xterm-256color")

    from rich.console import Console

    from moot.display.live import LiveView

    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=120, color_system=None)
    r = Refinery(lambda p, j: ["A", "AB", "B"])
    with LiveView(console, auto_refresh=False) as view:
        run = start(TASK, r.config(judges=1, convergence_k=2), subscribers=[view])
    assert run.exit_code == 0
    out = stream.getvalue()
    assert "moot refine" in out and "round 2 of 15" in out
    assert "A holds: converged (streak 2 of 2)" in out and "votes A 2, B 0, AB 1" in out


def test_the_synthesizer_sees_a_and_b_under_both_label_orders_across_passes() -> None:
    r = Refinery(lambda p, j: ["B", "A", "AB"])  # never converges: six passes
    run = start(TASK, r.config(judges=1, convergence_k=1, max_passes=6))
    orders = [rec["synthesis_labels"]["X"] for rec in run.result.details["rounds"]]
    assert set(orders) == {"A", "B"}, orders
    for (_, prompt), rec in zip(r.prompts("synthesize"), run.result.details["rounds"], strict=True):
        number = rec["round"]
        names = {"B": revision(number), "A": revision(number - 1) if number > 1 else INITIAL}
        assert shown(prompt) == {k: names[v] for k, v in rec["synthesis_labels"].items()}


def test_configured_roles_play_their_part_every_pass() -> None:
    r = Refinery(lambda p, j: ["A", "B", "AB"])
    register = r.config()  # registers the script
    data = register.dump()
    data["refine"] = {
        "judges": 2,
        "convergence_k": 2,
        "roles": {
            "judge": {"model": "scripted:@refinery"},
            "critic": {"model": "scripted:@refinery"},
        },
    }
    from moot.config import RunConfig

    run = start(TASK, RunConfig.read(data))
    assert run.exit_code == 0
    by_phase = {
        (step.split("/")[1], step.split("/")[2]) for step in r.steps if not step.startswith("r0/")
    }
    assert {alias for phase, alias in by_phase if phase == "judge"} == {"judge_a"}
    assert {alias for phase, alias in by_phase if phase == "critic"} == {"critic_a"}
    assert all(alias.startswith("agent_") for phase, alias in by_phase if phase == "revise")


def test_an_author_that_writes_nothing_aborts_with_the_fix() -> None:
    r = Refinery(lambda p, j: ["A", "B", "AB"])
    config = r.config()
    register_script(
        "refinery", lambda request: "" if "/author/" in request.meta["step"] else r.reply(request)
    )
    run = start(TASK, config)
    assert run.exit_code == 1 and "--input FILE" in (run.message or run.result.how)


@pytest.mark.parametrize(
    ("winner", "tiebreak", "says"),
    [
        ("A", "incumbent", "tie between A and B: the incumbent A holds"),
        ("B", "candidate_order", "tie between B and AB: B, the first of them in candidate order"),
    ],
)
def test_a_round_summary_says_how_a_tie_was_broken_in_words(
    winner: str, tiebreak: str, says: str
) -> None:
    from moot.protocols.refine.options import RefineOptions
    from moot.protocols.refine.summary import describe_round

    tied = ["A", "B"] if tiebreak == "incumbent" else ["B", "AB"]
    entry = {
        "round": 2,
        "streak": 1,
        "k": 2,
        "winner": winner,
        "borda": {"tie": True, "tied": tied, "tiebreak": tiebreak, "scores": {"A": 3, "B": 3}},
        "judges": [],
    }
    summary = describe_round(entry, RefineOptions())
    assert summary is not None and summary.problem is not None
    assert says in summary.problem
    assert "broken by" not in summary.problem and "_" not in summary.problem


@pytest.mark.parametrize(
    ("reply", "text"),
    [
        ("<pre><code>Madrid is the capital.\n</code></pre>", "Madrid is the capital."),
        ('  <pre class="x"><code class="language-text">a &lt; b</code></pre>\n', "a < b"),
        ("<pre>Madrid.</pre>", "Madrid."),
        # cut at the size cap: the closing tags never came
        ("<pre><code>La capital de España es Madrid, y", "La capital de España es Madrid, y"),
    ],
)
def test_a_reply_that_is_one_pre_block_is_its_content(reply: str, text: str) -> None:
    assert unwrap_pre(reply) == text


@pytest.mark.parametrize(
    "reply",
    [
        "Use this:\n<pre><code>x = 1</code></pre>",  # a block among other text
        "<pre><code>x = 1</code></pre>\nThen run it.",
        "<pre>one</pre>\n<pre>two</pre>",  # two blocks
        "Plain text with a &lt; sign.",
    ],
)
def test_a_reply_with_a_block_among_other_text_is_kept_as_written(reply: str) -> None:
    assert unwrap_pre(reply) == reply


class Wrapping(Refinery):
    """Author B wraps its revision in an HTML block, as a tiny model did; judges prefer it."""

    def answer(self, request, phase, number, judge):  # type: ignore[no-untyped-def]
        if phase == "revise":
            return f"<pre><code>{revision(number)}</code></pre>"
        return super().answer(request, phase, number, judge)


def test_a_revision_wrapped_in_a_pre_block_wins_as_its_text_without_the_tags() -> None:
    r = Wrapping(lambda p, j: ["B", "A", "AB"] if p == 1 else ["A", "B", "AB"])
    run = start(TASK, r.config(judges=3, convergence_k=1))
    assert run.exit_code == 0, run.message
    assert run.result.final_answer == revision(1)
    assert (run.folder / "refine" / "final_output.md").read_text() == revision(1)
    # the judges and the next pass were shown the text, not the tags
    assert not any("<pre>" in prompt for _, prompt in r.prompts("judge"))
