"""The council's chairman held to the test of an answer, and what stands where it fails it: a
chairman's text that copies moot's quote fence back is no answer; without a consensus, the
best-ranked valid answer stands (labelled, not a consensus), or none where no ranking placed
one, and the report never shows "(none)" as a picked answer; a ranking whose reasons only name
a label is an abstention."""

from __future__ import annotations

import json
import re

from moot import api
from tests.protocols.council.test_council import SPLIT, TASK, Council
from tests.scripts import start

FENCE = re.compile(r'<quoted from="[^"]*" id="([0-9a-f]{12})">\n(.*?)\n</quoted id="\1">', re.S)


class FenceCopier(Council):
    """A chairman that copies the first quoted answer of its prompt back, fence and id included,
    as a tiny model does."""

    def reply(self, request):  # type: ignore[no-untyped-def]
        if request.meta["step"].split("/")[1] == "chair":
            fence_id, body = FENCE.findall(request.prompt)[0]
            return f'<quoted from="An Answer" id="{fence_id}">\n{body}\n</quoted id="{fence_id}">'
        return super().reply(request)


def _section(report: str, title: str) -> str:
    return report.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_a_chairman_that_copies_a_quote_fence_is_no_answer_and_the_best_ranked_stands() -> None:
    c = FenceCopier(SPLIT, prefer=lambda text: text.splitlines()[-1] != "Answer: 48")
    run = start(TASK, c.config())
    assert run.exit_code == 2, run.message
    chair = run.result.details["chairman"]
    assert chair["status"] == "invalid" and "copies moot's quote markup" in chair["problem"]
    # every ranker puts 48 first: Agent B's answer ranks first and stands, labelled
    assert run.result.details["aggregate"]["top"] == "agent_b"
    assert run.result.final_answer == SPLIT["agent_b"]
    assert (
        "the chairman's text gave no valid answer (it copies moot's quote markup" in run.result.how
    )
    best = "so the final answer is Agent B's, the best-ranked answer by mean rank, not a consensus"
    assert run.result.how.endswith(best), run.result.how
    synthesis = run.result.synthesis
    assert synthesis is not None and not synthesis.accepted
    assert synthesis.picked == SPLIT["agent_b"]
    section = _section((run.folder / "report.md").read_text(), "Synthesis")
    assert "The picked answer stands" in section and "(none)" not in section, section
    assert "I make it 48." in section
    assert api.replay(run.session_id).identical is True


def test_a_failed_chairman_without_a_placed_answer_leaves_none_and_no_picked_answer() -> None:
    # every ranking abstains, so no answer is placed, and the chairman gives no answer
    bad = '{"ranking": ["P"], "reasons": {"P": "good"}}'
    c = Council(SPLIT, chair="I cannot help with that.", bad_ranking=dict.fromkeys(SPLIT, bad))
    run = start(TASK, c.config())
    assert run.exit_code == 2, run.message
    assert run.result.final_answer == "" and run.result.synthesis is None
    assert run.result.how.endswith(
        "no final answer: the chairman's text gave no valid answer (it refuses to answer "
        "('I cannot help with that.')), and no valid ranking placed an answer"
    ), run.result.how
    report = (run.folder / "report.md").read_text()
    assert "The picked answer" not in report and "## Synthesis" not in report
    stage3 = _section(report, "Stage 3: The Chairman")
    assert "I cannot help with that." in stage3 and "under Synthesis" not in stage3, stage3


def test_a_ranking_whose_reasons_only_name_labels_is_an_abstention() -> None:
    bare = json.dumps({"ranking": ["Q", "P"], "reasons": {"P": "A:", "Q": "B"}})
    terse = json.dumps({"ranking": ["P", "Q"], "reasons": {"P": "Italia", "Q": "wrong sum"}})
    c = Council(SPLIT, bad_ranking={"agent_a": bare, "agent_b": terse})
    run = start(TASK, c.config())
    rows = {r["ranker"]: r for r in run.result.details["rankings"]}
    assert rows["agent_a"]["status"] == "invalid" and rows["agent_a"]["ranking"] is None
    assert "only names a label or a rank, not a reason" in rows["agent_a"]["problem"]
    assert "P ('A:'), Q ('B')" in rows["agent_a"]["problem"]
    # a terse word is a reason: the order stands (a ranking is evidence, not the decision)
    assert rows["agent_b"]["status"] == "valid"
    assert "Rankings counted as abstentions: Agent A: invalid ranking" in run.result.trust
    assert "over 2 valid rankings" in run.result.trust


# A tiny model's council on "What is 5 + 5?": three answers apart, every ranking invalid, and a
# chairman's text mostly about the council whose answer, 6, agrees with none of them.
APART = {
    "agent_a": "5 + 1 = 6, and 10 x 6 = 60 ways.\nAnswer: 60",
    "agent_b": "So, answer: Answer: 7",
    "agent_c": "20 - 14 = 16. So the answer is 2.\nAnswer: 2",
}
COUNCIL_TALK = (
    "The Council of Experts has decided to give a 5 + 1 = 6 answer based on their reasoning "
    "process. They have ranked this question with the best possible reasons."
)


def test_a_chairman_answer_that_agrees_with_no_answer_is_rejected_and_says_why() -> None:
    bad = '{"ranking": ["P"], "reasons": {"P": "20"}}'
    c = Council(APART, chair=COUNCIL_TALK, bad_ranking=dict.fromkeys(APART, bad))
    run = start("What is 5 + 5?", c.config())
    assert run.exit_code == 2, run.message
    assert run.result.final_answer == ""
    synthesis = run.result.synthesis  # kept, so the reports say why it is not the answer
    assert synthesis is not None and not synthesis.accepted and synthesis.picked == ""
    why = (
        "its answer '6' agrees with none of the agents' answers and contradicts Agent A's "
        "(60), Agent B's (7) and Agent C's (2), so it is no synthesis of them"
    )
    assert synthesis.reason == why
    assert run.result.how.endswith(
        f"no final answer: the chairman's text was rejected ({why}), and no valid ranking "
        "placed an answer"
    ), run.result.how
    trust = run.result.trust
    assert "and there is no final answer." in trust
    assert "No ranking was valid, so the answers were not ordered." in trust
    assert "over 0 valid rankings" not in trust
    assert f"The chairman's text (Agent A's model chaired) was rejected: {why}." in trust
    report = (run.folder / "report.md").read_text()
    section = _section(report, "Synthesis")
    assert "rejected:** its answer '6'" in section and "There is no final answer." in section
    assert "## Final Answer" not in report
    assert api.replay(run.session_id).identical is True


def test_one_valid_ranking_orders_the_answers_and_names_the_one_it_leaves_unranked() -> None:
    bad = '{"ranking": ["P"], "reasons": {"P": "20"}}'
    c = Council(APART, chair=COUNCIL_TALK, bad_ranking={"agent_a": bad, "agent_c": bad})
    run = start("What is 5 + 5?", c.config())
    assert run.exit_code == 2, run.message
    # Agent B ranked the others by their text: Agent C's "20 - 14" first
    assert run.result.final_answer == APART["agent_c"]
    trust = run.result.trust
    assert "the final answer is the best-ranked answer, Agent C's, not a consensus." in trust, trust
    assert (
        "The answers were ordered by the one valid ranking, Agent B's; Agent B's answer was not "
        "ranked by any." in trust
    ), trust
    assert "was rejected: its answer '6' agrees with none" in trust
    section = _section((run.folder / "report.md").read_text(), "Synthesis")
    assert "The picked answer stands" in section and "20 - 14 = 16" in section


def test_a_chairman_sentence_naming_a_label_is_cut_from_the_final_answer() -> None:
    c = Council(SPLIT, chair="Six sevens are 42. I follow Answer P, the best ranked.\nAnswer: 42")
    run = start(TASK, c.config())
    assert run.result.final_answer == "Six sevens are 42.\nAnswer: 42"
    prompt = next(p for step, p in c.prompts.items() if "/chair/" in step)
    assert "which answer you follow" not in prompt and "do not name a label" in prompt
