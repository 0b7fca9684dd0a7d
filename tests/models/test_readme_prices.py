"""Every hosted model the README and docs name has a price in the bundled table: a user who
copies an example gets a cost, not "no price is known" (issue 24)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from moot.models.pricing import find_price, price_table
from moot.types import parse_spec

ROOT = Path(__file__).resolve().parents[2]
HOSTED = re.compile(r"\b(?:openai|anthropic|google|openrouter):[A-Za-z0-9][\w./-]*[\w]")


def _named() -> list[str]:
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return sorted({m for path in texts for m in HOSTED.findall(path.read_text("utf-8"))})


def test_the_docs_name_hosted_models() -> None:
    assert "openai:gpt-5.4" in _named()  # the pattern finds what it should


@pytest.mark.parametrize("spec", _named())
def test_every_model_the_docs_name_is_priced(spec: str) -> None:
    parsed = parse_spec(spec)
    keys = [str(parsed), parsed.name]
    if parsed.provider == "openrouter":
        keys.append(parsed.name.replace("/", ":", 1))
    assert find_price(keys, price_table()) is not None, f"{spec} has no bundled price"
