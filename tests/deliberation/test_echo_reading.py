"""The prompts' reading (deliberation/echo.py): a phase's prompts share their template, and the
template is read once for all of them, while what each prompt quotes stays its own."""

from __future__ import annotations

from moot.deliberation import echo
from moot.deliberation.anonymize import quote

TEMPLATE = "Here is how every expert critiqued the solutions:\n\n{quotes}\n\nNow revise yours."


def _prompt(order: list[str], nonce: str) -> str:
    quotes = "\n\n".join(
        quote(f"Agent {name}", f"critique by {name}", nonce=f"{nonce}{name}", limit=500)
        for name in order
    )
    return TEMPLATE.format(quotes=quotes)


def test_the_template_of_a_phases_prompts_is_read_once() -> None:
    echo.clear_caches()
    prompts = [_prompt(["B", "C", "D"], "n1"), _prompt(["D", "B", "A"], "n2")]
    readings = [echo.read_prompts((p,), "Count the pairs.") for p in prompts]
    # every piece between quotes is read once: the second prompt's are all cache hits
    info = echo._piece_reading.cache_info()
    assert info.hits >= info.misses > 0
    # the template's words are in both readings; the quoted words are in neither
    for reading in readings:
        assert {"critiqued", "revise"} <= reading.vocabulary
        assert "critique" not in reading.vocabulary
    # each prompt keeps its own fences
    assert readings[0].fences.ids != readings[1].fences.ids


def test_a_reading_is_that_of_the_whole_prompt() -> None:
    """Reading the pieces one by one gives what reading the prompt gave: trigrams never span
    a quote, and the task is cut out of every piece."""
    echo.clear_caches()
    prompt = _prompt(["A", "B"], "n3") + " Count the pairs. Then say which is right."
    reading = echo.read_prompts((prompt,), "Count the pairs.")
    assert ("now", "revise", "yours") in reading.grams
    assert ("the", "solutions", "now") not in reading.grams  # across a quote
    assert not any("pairs" in gram for gram in reading.grams)  # the task is no template
    assert ("then", "say", "which") in reading.grams
