"""A court of custom CLI agents (`cli:NAME` with `options.command`): its default judges are
called as its agents are, so the court starts, and `moot validate` says what a run says."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from moot.cli import main
from moot.deliberation.consensus import position_id
from moot.lifecycle.plan import load_config, participants

PG = "Use Postgres."

# Proposes PG, then votes yes for it: every agent alike, so the court agrees in round 2.
AGENT = f"""#!{sys.executable}
import json, sys
prompt = sys.stdin.read()
pid = {position_id(PG)!r}
if pid in prompt:
    answer = {{"vote": "yes", "targetPositionId": pid, "reasoning": "It holds.", "confidence": 0.9}}
else:
    answer = {{"vote": "abstain", "newPositionText": {PG!r}, "reasoning": "Mine.",
              "confidence": 0.9}}
print(json.dumps({{"result": json.dumps(answer)}}))
"""


def moot(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out, err


def court_config(tmp_path: Path, command: Path) -> Path:
    agents = [
        {"model": f"cli:{name}", "options": {"command": str(command)}} for name in ("one", "two")
    ]
    path = tmp_path / "court.json"
    path.write_text(json.dumps({"protocol": "court", "agents": agents}))
    return path


def test_a_court_of_custom_cli_agents_starts_its_judges_called_as_its_agents(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tool = tmp_path / "agent-tool"
    tool.write_text(AGENT)
    tool.chmod(0o755)
    path = court_config(tmp_path, tool)

    plan = load_config(path)
    judges = [a for a in participants(plan, 1) if a.alias.startswith("judge_")]
    assert len(judges) == 3
    assert all(j.config.options == {"command": str(tool)} for j in judges)
    assert all(j.config.temperature == 0.3 for j in judges)  # a judge's, not the agents' 0.7

    code, out, _ = moot(capsys, "validate", str(path))
    assert code == 0 and "valid (court, 2 agents, 3 judges)" in out
    code, out, err = moot(capsys, "run", "Which database?", "--config", str(path), "--quiet")
    assert code == 0, out + err  # it failed at start: "needs an absolute path"
    result = json.loads(
        next((tmp_path / "moot-home" / "sessions").glob("*/result.json")).read_text()
    )
    assert result["status"] == "consensus" and result["final_answer"] == PG


def test_validate_refuses_what_a_run_refuses_at_start_in_the_same_words(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = court_config(tmp_path, tmp_path / "no-such-tool")
    code, _, err = moot(capsys, "run", "Which database?", "--config", str(path))
    assert code == 1 and not (tmp_path / "moot-home" / "sessions").exists()
    message = err.strip().removeprefix("moot: error: ")  # the first agent it made
    assert message.endswith(f"{tmp_path / 'no-such-tool'} is not an executable file")

    code, out, _ = moot(capsys, "validate", str(path))
    assert code == 1 and "2 problems" in out
    assert f"  {message}" in out.splitlines()
    for name in ("one", "two"):  # every agent's problem at once
        assert f"  cli:{name}: {tmp_path / 'no-such-tool'} is not an executable file" in out
