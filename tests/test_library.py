"""The library face as the README shows it: the example runs as written, with the embedded
model's specs swapped for scripted agents (the embedded model is tested in test_local.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import moot
from moot.errors import ConfigError
from tests.scripts import Debate, verdict

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```python\n(import moot\n.*?)```", text, re.DOTALL)
    assert block, "README.md has no `import moot` example"
    return block.group(1)


def test_the_readme_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    debate = Debate(verdicts=[verdict("CONSENSUS", 9, base="Agent B")])
    specs = debate.specs()
    code = readme_example()
    assert code.count('"local:smollm2"') == 3
    for spec in specs:
        code = code.replace('"local:smollm2"', f'"{spec}"', 1)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.startswith("consensus - ")
    assert "scored the convergence" in out and "the answer is 42" in out
    assert any(step.startswith("r1/") for step in debate.steps)


def test_run_returns_the_outcome_and_refuses_bad_options() -> None:
    result = moot.run("What is 6 times 7?", models=Debate().specs(), max_rounds=1)
    assert result.status == "consensus" and "42" in result.final_answer
    with pytest.raises(ConfigError, match=r"arena\.max_round: unknown key"):
        moot.run("x", models=Debate().specs(), max_round=1)
