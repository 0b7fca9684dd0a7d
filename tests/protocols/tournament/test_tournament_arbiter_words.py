"""An arbiter's fields that say nothing. A walkthrough's arbiter (the embedded model) answered
`{"winner": "A", "reasons": ["..."], "fundamental_disagreement": ".", "why_no_convergence":
".."}` and the reports printed "Arbiter A, as arbiter, chose Agent A's position: ." and
"fundamental disagreement: .; why: ..". A field of bare punctuation is left out, and where the
arbiter gave no reason the reports say so."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from moot.types import Request, Step
from tests.scripts import start
from tests.tournament_scripts import Tourney, steady

TASK = "Which store should the service use for its sessions?"
TERSE = {
    "winner": "A",
    "reasons": ["..."],
    "fundamental_disagreement": ".",
    "why_no_convergence": "..",
}


class TerseArbiter(Tourney):
    """The scripted tournament whose arbiter's verdict says nothing in words."""

    def script(self, name: str) -> Callable[[Request], str]:
        reply = super().script(name)

        def answer(request: Request) -> str:
            if (Step.parse(request.meta["step"]).phase or "").endswith("verdict"):
                return json.dumps(TERSE)
            return reply(request)

        return answer


def test_an_arbiters_empty_fields_are_left_out_and_a_missing_reason_is_named() -> None:
    t = TerseArbiter({"one": steady("Use Postgres."), "two": steady("Use Redis.")})
    run = start(TASK, t.config(("one", "two"), max_rounds=2))
    result = run.result
    report = (run.folder / "report.md").read_text()
    html = (run.folder / "report.html").read_text()
    said = [result.how, result.trust, *result.disagreements, report, html]
    for text in said:
        for line in text.splitlines():
            if "as arbiter" in line or "fundamental disagreement" in line or "decided by" in line:
                assert not re.search(r": \.|: ;|why: \.|; \.", line), line
    assert "chose Agent" in result.trust and "position: ." not in result.trust
    assert "it gave no reason" in result.trust, result.trust
    assert "fundamental disagreement" not in " ".join(result.disagreements)
    assert "why: .." not in report and "why: .." not in html
    assert "position: ." not in report and "position: ." not in html
    assert "decided by arbiter, which gave no reason;" in result.how, result.how
    # the verdict's turn in the reports: what it chose, no reason after a colon
    assert "in match 1*" in report and "in match 1: ..." not in report
