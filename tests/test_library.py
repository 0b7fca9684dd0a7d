"""The library face as the README shows it: the example runs as written, with the embedded
model's specs swapped for scripted agents (the embedded model is tested in test_local.py)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import moot
from moot.errors import ConfigError
from tests.cli.test_cli import moot as moot_cli
from tests.protocols.vote.test_vote import Voters
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


def notebook_example() -> str:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```python\n(# in a Jupyter cell.*?)```", text, re.DOTALL)
    assert block, "README.md has no notebook example"
    return block.group(1)


def _sessions() -> list[Path]:
    root = Path(os.environ["MOOT_HOME"]) / "sessions"
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.exists() else []


def test_the_readme_notebook_example_runs_in_a_running_event_loop() -> None:
    """The cell's top-level await, as Jupyter runs it: inside a loop that is already running."""
    Voters(lambda alias, sample: "17 x 23 = 391\nAnswer: 391").config(agents=2, samples=3)
    code = notebook_example()
    assert code.count('"local:smollm2"') == 2
    code = code.replace('"local:smollm2"', '"scripted:@voter"')
    body = "async def cell():\n" + "".join(f"    {line}\n" for line in code.splitlines())
    body += "    return result\n"
    namespace: dict[str, Any] = {"moot": moot}
    exec(compile(body, "README.md", "exec"), namespace)
    result = asyncio.run(namespace["cell"]())
    assert result.status == "consensus" and "391" in result.final_answer
    (session,) = _sessions()
    recorded = json.loads((session / "session.json").read_text())
    assert recorded["config"]["seed"] == 7
    assert recorded["config"]["limits"]["max_cost"] == 0.5


def test_run_works_inside_a_running_event_loop_and_leaves_no_broken_session(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """moot.run called from async code (an async web app, a notebook) used to raise "Cannot
    run the event loop while another loop is running" and leave a broken session behind."""

    async def handler() -> moot.Outcome:
        return moot.run("What is 6 times 7?", models=Debate().specs(), max_rounds=1, seed=3)

    result = asyncio.run(handler())
    assert result.status == "consensus" and "42" in result.final_answer
    assert len(_sessions()) == 1
    code, _, err = moot_cli(capsys, "status")
    assert code == 0, err


def test_run_takes_every_option_the_cli_takes() -> None:
    """seed=, max_cost=, max_tokens=, timeout=, rounds=, shuffle= reach the recorded config."""
    result = moot.run(
        "What is 6 times 7?",
        models=Debate().specs(),
        seed=11,
        rounds=1,
        max_cost=2.5,
        max_tokens=100_000,
        timeout=600,
    )
    assert result.status == "consensus"
    (session,) = _sessions()
    config = json.loads((session / "session.json").read_text())["config"]
    assert config["seed"] == 11 and config["arena"]["max_rounds"] == 1
    assert config["limits"] == {**config["limits"], "max_cost": 2.5, "max_tokens": 100_000}
    assert config["limits"]["timeout"] == 600
    with pytest.raises(ConfigError, match="samples"):
        moot.run("x", models=Debate().specs(), samples=3)  # arena takes no --samples
    assert len(_sessions()) == 1  # a refused option makes no session


def test_the_library_s_types_read_in_help_and_their_signatures() -> None:
    """`help(moot.api.RunResult)` in a fresh interpreter: every field's type resolves. (A type
    named only for the checker, under TYPE_CHECKING, made pydoc raise a NameError.)"""
    code = (
        "import inspect, pydoc\n"
        "from moot.api import RunResult\n"
        "from moot.engine.lifecycle import Ended\n"
        "for kind in (RunResult, Ended):\n"
        "    inspect.signature(kind)\n"
        "    assert 'result' in pydoc.render_doc(kind)\n"
        "print('ok')\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert shown.stdout.strip() == "ok", shown.stderr[-2000:]
