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
