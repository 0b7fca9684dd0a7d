"""moot as an `llm` plugin, with the real `llm` package: its own CLI (click's runner, in this
process) runs `llm -m moot ...` on scripted agents, with llm's user folder in the test's tmp.
One test starts llm in a fresh process through moot's `llm` entry point as pyproject declares
it, and checks that llm's start-up imports nothing heavy of moot."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

llm = pytest.importorskip("llm", reason="needs the 'llm' extra: pip install 'moot[llm]'")

from click.testing import CliRunner, Result  # noqa: E402
from llm.cli import cli as llm_cli  # noqa: E402
from llm.plugins import pm  # noqa: E402

import moot.integrations.llm as plugin  # noqa: E402
from tests.cli.test_cli import moot as moot_cli  # noqa: E402
from tests.scripts import Debate  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "What is 6 times 7?"


@pytest.fixture(autouse=True)
def llm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """llm's user folder (keys, logs.db) in tmp, and moot's plugin registered in this process
    (an installed moot registers it through its entry point)."""
    folder = tmp_path / "llm-user"
    folder.mkdir()
    monkeypatch.setenv("LLM_USER_PATH", str(folder))
    monkeypatch.delenv("LLM_RAISE_ERRORS", raising=False)
    if not pm.is_registered(plugin):
        pm.register(plugin, name="moot")
    return folder


def ask(*args: str, raise_errors: bool = False) -> Result:
    env = {"LLM_RAISE_ERRORS": "1"} if raise_errors else {}
    return CliRunner().invoke(llm_cli, ["prompt", "-m", "moot", *args], env=env)


def sessions() -> list[Path]:
    root = Path(os.environ["MOOT_HOME"]) / "sessions"
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.exists() else []


def test_llm_lists_moot_with_its_options() -> None:
    listed = CliRunner().invoke(llm_cli, ["models", "list", "--options"])
    assert listed.exit_code == 0, listed.output
    assert "moot" in listed.output
    for option in ("protocol", "models", "config", "rounds", "max_cost"):
        assert f"{option}:" in listed.output


def test_a_deliberation_prints_the_answer_then_the_label_and_trust_and_is_a_moot_session(
    capsys: pytest.CaptureFixture[str], llm_home: Path
) -> None:
    models = ",".join(Debate().specs())
    # LLM_RAISE_ERRORS: any exception would surface here, not as a tidy "Error:" line
    done = ask("-o", "models", models, "-o", "seed", "3", QUESTION, raise_errors=True)
    assert done.exit_code == 0, done.output
    (session,) = sessions()
    answer, _, finding = done.output.partition(f"\n\nSession {session.name}: consensus: ")
    assert "the answer is 42" in answer
    assert "How far to trust it: " in finding
    recorded = json.loads((session / "session.json").read_text())
    assert recorded["task"] == QUESTION
    assert recorded["config"]["seed"] == 3
    assert [a["model"] for a in recorded["config"]["agents"]] == models.split(",")
    code, out, err = moot_cli(capsys, "list", "--json")
    assert code == 0, err
    assert [row["session_id"] for row in json.loads(out)] == [session.name]
    logged = CliRunner().invoke(llm_cli, ["logs", "list", "--json", "-n", "1"])
    (entry,) = json.loads(logged.output)
    assert entry["response_json"]["session_id"] == session.name
    assert entry["response_json"]["status"] == "consensus"


def test_the_protocol_option_chooses_the_protocol_and_a_system_prompt_leads_the_task() -> None:
    specs = Debate(answer=lambda alias, step: "6 x 7 = 42\nAnswer: 42").specs()
    models = ",".join(specs)
    done = ask("-o", "protocol", "vote", "-o", "models", models, "-s", "Be brief.", QUESTION)
    assert done.exit_code == 0, done.output
    (session,) = sessions()
    recorded = json.loads((session / "session.json").read_text())
    assert recorded["protocol"] == "vote"
    assert recorded["task"] == f"Be brief.\n\n{QUESTION}"  # the system prompt first
    assert f"Session {session.name}: consensus" in done.output


def test_a_session_stopped_by_a_limit_says_how_to_resume_and_resumes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    models = ",".join(Debate().specs())
    done = ask("-o", "models", models, "-o", "max_tokens", "1", QUESTION, raise_errors=True)
    assert done.exit_code == 0, done.output
    (session,) = sessions()
    assert f"Session {session.name}: paused" in done.output
    assert f"moot resume {session.name}" in done.output  # how to go on
    code, out, err = moot_cli(capsys, "resume", session.name, "--max-tokens", "1000000")
    assert code == 0, out + err
    assert "the answer is 42" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "protocol", "courtt"], "courtt"),
        (["-o", "models", "nosuch:model"], "unknown model provider 'nosuch'"),
        (["-o", "config", "missing.toml"], "missing.toml"),
    ],
)
def test_a_bad_option_is_an_llm_error_with_moots_message(args: list[str], message: str) -> None:
    raised = ask(*args, QUESTION, raise_errors=True)
    assert isinstance(raised.exception, llm.ModelError), raised.exception
    assert message in str(raised.exception)
    shown = ask(*args, QUESTION)
    assert shown.exit_code == 1
    assert shown.output.startswith("Error: ") and message in shown.output
    assert "Traceback" not in shown.output
    assert sessions() == []  # refused before any session was made


def test_a_provider_whose_extra_is_missing_is_an_llm_error_naming_the_fix() -> None:
    if importlib.util.find_spec("llama_cpp") is not None:
        pytest.skip("llama-cpp-python is installed here")
    models = "llama:/models/a.gguf,llama:/models/b.gguf"
    raised = ask("-o", "models", models, QUESTION, raise_errors=True)
    assert isinstance(raised.exception, llm.ModelError), raised.exception
    assert "needs llama_cpp, which is not installed" in str(raised.exception)
    assert sessions() == []


def test_an_option_llm_cannot_read_is_refused_by_llm() -> None:
    done = ask("-o", "rounds", "many", QUESTION)
    assert done.exit_code == 1 and "rounds" in done.output and "Traceback" not in done.output
    assert sessions() == []


def test_a_follow_up_in_a_conversation_is_refused_with_the_way_on() -> None:
    models = ",".join(Debate().specs())
    assert ask("-o", "models", models, QUESTION).exit_code == 0
    again = ask("-c", "-o", "models", models, "And 6 times 8?")
    assert again.exit_code == 1 and "conversation" in again.output
    assert len(sessions()) == 1


def test_the_entry_point_loads_in_a_fresh_llm_without_importing_moots_library(
    tmp_path: Path,
) -> None:
    """pyproject's `llm` entry point, as a distribution's metadata on the path: llm finds moot
    there and lists it; starting llm imports moot's plugin module and nothing below the faces."""
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    points = "".join(f"{name} = {target}\n" for name, target in table["llm"].items())
    dist = tmp_path / "site" / "moot_llm_probe-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: moot-llm-probe\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(f"[llm]\n{points}")
    probe = (
        "import json, sys, llm\n"
        "ids = [m.model_id for m in llm.get_models()]\n"
        "moot = sorted(n for n in sys.modules if n == 'moot' or n.startswith('moot.'))\n"
        "print(json.dumps({'listed': 'moot' in ids, 'modules': moot}))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT / "src")])}
    env.pop("LLM_LOAD_PLUGINS", None)
    shown = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout)
    assert found["listed"], shown.stdout
    assert found["modules"] == [
        "moot",
        "moot.errors",
        "moot.integrations",
        "moot.integrations.llm",
        "moot.version",
    ]


def test_llms_async_api_runs_a_deliberation_and_refuses_a_bad_protocol() -> None:
    """`llm.get_async_model("moot")`: moot.arun inside the caller's event loop."""
    models = ",".join(Debate().specs())

    async def asked() -> tuple[str, dict[str, object] | None]:
        model = llm.get_async_model("moot")
        response = model.prompt(QUESTION, models=models, seed=3)
        text = await response.text()
        with pytest.raises(llm.ModelError, match="unknown protocol 'courtt'"):
            await model.prompt(QUESTION, protocol="courtt").text()
        return text, response.response_json

    text, logged = asyncio.run(asked())
    (session,) = sessions()
    assert "the answer is 42" in text
    assert f"Session {session.name}: consensus: " in text and "How far to trust it: " in text
    assert logged is not None and logged["session_id"] == session.name


@pytest.mark.local_model
def test_with_no_models_the_embedded_model_deliberates() -> None:
    """No models and no user config: the embedded model, as `moot run` has it (a vote of three
    answers, about 20 s on two cores)."""
    if not os.environ.get("CI"):  # in CI the embedded model must be there: never skip
        pytest.importorskip("xllamacpp", reason="needs the 'local' extra")
    done = ask("-o", "protocol", "vote", "-o", "seed", "1", "What is 2 + 2?", raise_errors=True)
    assert done.exit_code == 0, done.output
    (session,) = sessions()
    agents = json.loads((session / "session.json").read_text())["config"]["agents"]
    assert [agent["model"] for agent in agents] == ["local:smollm2"] * 3
    assert f"Session {session.name}: " in done.output
    assert "How far to trust it: This answer is a demonstration" in done.output


def test_the_readme_names_only_options_the_plugin_takes() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## From llm\n", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"-o ([a-z_]+)", section))
    assert named and named <= set(plugin.MootOptions.model_fields)
    listed = re.search(r"Options \(`-o NAME\s+VALUE`.*?\): (.*?)\. Without", section, re.DOTALL)
    assert listed, "the README lists the options"
    assert set(re.findall(r"`(\w+)`", listed.group(1))) == set(plugin.MootOptions.model_fields)
