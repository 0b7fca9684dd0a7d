"""Plugins from a real installed distribution (moot/plugins/): a folder on PYTHONPATH holding a
tiny package and its `*.dist-info` (METADATA, entry_points.txt, RECORD), as pip would install
it. Its provider and protocol run in a real `moot run` in a subprocess; a plugin that cannot be
imported, or names an object of no kind, is skipped with one warning while moot's own protocols
still run; `moot plugins` lists them all and `moot doctor` reports the failed ones."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from moot import plugins

SRC = str(Path(__file__).resolve().parents[2] / "src")

PACKAGE = '''
"""moot-echo: a plugin package as a user would write one."""

from moot.models.base import ProviderInfo
from moot.plugins import GatePlugin, JudgePlugin

PROVIDER = ProviderInfo(
    "echo", "moot_echo.model", "EchoModel", example="echo:four", summary="answers 4", free=True
)
JUDGE = JudgePlugin("strict", "moot_echo.model", "EchoModel", summary="a judge that says 4")


def _check(worktree, patch):
    return "TODO" not in patch, "no TODO left" if "TODO" not in patch else "a TODO is added"


GATE = GatePlugin("no-todo", _check)
NOT_A_PLUGIN = 42  # an entry point naming something of no kind
'''

MODEL = '''
"""A deterministic model: every answer is 4."""

from moot.models.base import Capabilities
from moot.types import Completion, Usage


class EchoModel:
    def __init__(self, spec, settings):
        self.spec = str(spec)
        self.capabilities = Capabilities(seed=True)

    def connection_key(self):
        return "echo"

    async def complete(self, request):
        text = "2 + 2 is 4.\\nAnswer: 4"
        return Completion(text=text, usage=Usage(prompt_tokens=1, completion_tokens=5))

    async def aclose(self):
        return None
'''

PROTOCOL = '''
"""The echoes protocol: every agent answers once; consensus when all answers are the same."""

from moot.config import Section
from moot.protocols.definition import Conduct, ProtocolDefinition
from moot.types import Message, Outcome


class EchoesOptions(Section):
    pass


async def run(s, task, opts):
    agents = sorted(a for a in s.aliases if a.startswith("agent_"))
    prompt = [Message(role="user", content=task)]
    replies = await s.gather(*(s.ask(a, prompt, step=f"r1/answer/{a}") for a in agents))
    answers = [r.text.rpartition("Answer:")[2].strip() for r in replies]
    agreed = bool(answers) and len(set(answers)) == 1
    return Outcome(
        protocol="echoes",
        status="consensus" if agreed else "no_consensus",
        consensus=agreed,
        how="every agent gave the same answer" if agreed else "the answers differ",
        final_answer=answers[0] if agreed else "",
        rounds=1,
    )


PROTOCOL = ProtocolDefinition(
    name="echoes", summary="every agent answers once", options=EchoesOptions, conduct=Conduct(run)
)
'''

ENTRY_POINTS = """
[moot.plugins]
echo = moot_echo:PROVIDER
echoes = moot_echo.protocol:PROTOCOL
strict = moot_echo:JUDGE
no-todo = moot_echo:GATE
wrong = moot_echo:NOT_A_PLUGIN
broken = moot_echo_gone:PROVIDER
"""


def install(root: Path) -> Path:
    """Write the package and its dist-info into `root`, as `pip install --target` would."""
    package = root / "moot_echo"
    package.mkdir(parents=True)
    files = {
        "moot_echo/__init__.py": PACKAGE,
        "moot_echo/model.py": MODEL,
        "moot_echo/protocol.py": PROTOCOL,
    }
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    info = root / "moot_echo-0.3.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: moot-echo\nVersion: 0.3.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(ENTRY_POINTS.lstrip(), encoding="utf-8")
    record = [*files, f"{info.name}/METADATA", f"{info.name}/entry_points.txt"]
    (info / "RECORD").write_text(
        "".join(f"{name},,\n" for name in [*record, f"{info.name}/RECORD"]), encoding="utf-8"
    )
    return root


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return install(tmp_path / "site")


@pytest.fixture
def installed(site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The distribution on this process's sys.path, plugins found afresh (and forgotten after,
    with the providers and protocols it registered)."""
    from moot import protocols
    from moot.models import base

    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(plugins, "_found", None)
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))
    monkeypatch.setattr(protocols, "_REGISTERED", dict(protocols._REGISTERED))
    yield site
    for name in [m for m in sys.modules if m.startswith("moot_echo")]:
        del sys.modules[name]


def moot(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, str(site)])}
    return subprocess.run(
        [sys.executable, "-m", "moot.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def skipped_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "is skipped" in line]


def test_a_plugin_provider_and_protocol_run_in_a_real_moot_run(site: Path) -> None:
    ran = moot(site, "run", "What is 2 + 2?", "--protocol", "echoes", "-m", "echo:four", "-q")
    assert ran.returncode == 0, ran.stderr
    shown = moot(site, "show", "--json")
    assert shown.returncode == 0, shown.stderr
    result = json.loads(shown.stdout)
    assert result["protocol"] == "echoes"
    assert result["status"] == "consensus" and result["final_answer"] == "4"
    # a normal session: its journal holds the agents' asks, and it replays to the same outcome
    replayed = moot(site, "replay")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    # the two plugins that fail are each warned about once, and the run went on
    warned = skipped_lines(ran.stderr)
    assert len(warned) == 2, ran.stderr
    assert any("'broken'" in w and "ModuleNotFoundError" in w for w in warned)
    assert any("'wrong'" in w and "is a int, not a plugin" in w for w in warned)


def test_a_builtin_protocol_still_runs_beside_broken_plugins(site: Path) -> None:
    ran = moot(site, "run", "What is 2 + 2?", "--protocol", "vote", "-m", "echo:four", "-q")
    assert ran.returncode == 0, ran.stderr
    assert len(skipped_lines(ran.stderr)) == 2
    assert json.loads(moot(site, "show", "--json").stdout)["status"] == "consensus"


def test_moot_plugins_lists_each_plugin_with_its_kind_package_and_state(site: Path) -> None:
    listed = moot(site, "plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    mine = {name: row for name, row in rows.items() if row["distribution"] == "moot-echo"}
    assert {name: (row["kind"], row["loaded"]) for name, row in mine.items()} == {
        "echo": ("provider", True),
        "echoes": ("protocol", True),
        "strict": ("judge", True),
        "no-todo": ("gate", True),
        "wrong": (None, False),
        "broken": (None, False),
    }
    assert {row["version"] for row in mine.values()} == {"0.3.1"}
    assert "ModuleNotFoundError" in mine["broken"]["problem"]
    assert rows["pipeline"]["kind"] == "protocol" and rows["pipeline"]["loaded"]  # moot's own
    text = moot(site, "plugins").stdout
    assert "echoes         protocol  moot-echo 0.3.1" in text
    assert "wrong          ?         moot-echo 0.3.1          skipped: is a int" in text


def test_moot_doctor_reports_the_failed_plugins_as_problems(site: Path) -> None:
    checked = moot(site, "doctor", "--models", "echo:four")
    assert checked.returncode == 1
    lines = checked.stdout.splitlines()
    assert "plugin broken (no kind, moot-echo 0.3.1)" in lines
    assert "plugin wrong (no kind, moot-echo 0.3.1)" in lines
    assert "echo:four" in lines and "  ok    model created" in lines
    assert "1 of 1 model ready" in lines


def test_a_plugin_of_the_wrong_class_or_a_taken_name_is_skipped_with_one_warning(
    installed: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from moot import protocols
    from moot.models.base import provider_info, providers

    (installed / "moot_echo-0.3.1.dist-info" / "entry_points.txt").write_text(
        "[moot.plugins]\n"
        "court = moot_echo.protocol:PROTOCOL\n"  # not its name
        "openai = moot_echo:OPENAI\n"  # moot's own provider's name
        "echoes = moot_echo:PROVIDER\n"  # says protocol by its name, is a provider named echo
        "no-todo = moot_echo:GATE\n",
        encoding="utf-8",
    )
    with (installed / "moot_echo" / "__init__.py").open("a", encoding="utf-8") as file:
        file.write('OPENAI = ProviderInfo("openai", "moot_echo.model", "EchoModel")\n')
    with caplog.at_level(logging.WARNING, logger="moot"):
        names = protocols.names()
        providers()
        providers()  # asked again: no second warning
    assert "echoes" not in names and "court" in names
    info = provider_info("openai")
    assert info is not None and info.module == "moot.models.openai_chat"  # moot's own kept
    problems = {p.name: p.problem for p in plugins.found() if not p.loaded}
    assert problems == {
        "court": "its protocol is named 'echoes', its entry point 'court'",
        "openai": "moot already has a provider 'openai'",
        "echoes": "its provider is named 'echo', its entry point 'echoes'",
    }
    assert len(caplog.records) == 3
    assert all("is skipped" in r.getMessage() for r in caplog.records)


def test_a_gate_plugin_and_a_judge_plugin_reach_the_pipeline_and_the_providers(
    installed: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from moot.models.base import create_model, provider_info
    from moot.pipeline.gates import plugins as gate_plugins
    from moot.pipeline.gates import run_plugin

    offered = gate_plugins()
    assert offered == {"no-todo": "moot_echo:GATE"}
    todo, clean = "+++ b/x.py\n+x = 1  # TODO\n", "+++ b/x.py\n+x = 1\n"
    assert run_plugin(offered["no-todo"], tmp_path, todo) == (False, "a TODO is added")
    assert run_plugin(offered["no-todo"], tmp_path, clean) == (True, "no TODO left")
    judge = provider_info("strict")
    assert judge is not None and judge.summary == "judge: a judge that says 4"
    assert create_model("strict:any").connection_key() == "echo"


def test_moot_help_imports_no_plugin(site: Path) -> None:
    code = (
        "import sys\n"
        "from moot.cli import cli\n"
        "try:\n"
        "    cli.main(['--help'], prog_name='moot', standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('moot_echo', 'moot.plugins'))))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, str(site)])}
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert "plugins" in ran.stdout  # the command is listed
    assert ran.stdout.splitlines()[-1] == "[]"


def test_a_plugin_that_asks_for_the_providers_as_it_is_imported_loads(installed: Path) -> None:
    """Its import finds the plugins loading: it sees moot's own providers, and no endless
    reload."""
    from moot.models.base import provider_info

    (installed / "moot_echo" / "asks.py").write_text(
        "from moot.models.base import providers\n"
        "from moot_echo import PROVIDER\n"
        "SEEN = [info.name for info in providers()]\n",
        encoding="utf-8",
    )
    (installed / "moot_echo-0.3.1.dist-info" / "entry_points.txt").write_text(
        "[moot.plugins]\necho = moot_echo.asks:PROVIDER\n", encoding="utf-8"
    )
    info = provider_info("echo")
    assert info is not None and info.module == "moot_echo.model"
    seen = sys.modules["moot_echo.asks"].SEEN
    assert "openai" in seen and "echo" not in seen


def test_a_judge_plugin_takes_judge_seats_and_never_an_agents(site: Path, tmp_path: Path) -> None:
    seats = (
        'protocol = "court"\n'
        '[[agents]]\nmodel = "AGENT"\n[[agents]]\nmodel = "echo:b"\n'
        '[court]\njudges = [{model = "strict:x"}, {model = "strict:y"}, {model = "strict:z"}]\n'
    )
    judged = tmp_path / "judged.toml"
    judged.write_text(seats.replace("AGENT", "echo:a"), encoding="utf-8")
    seated = tmp_path / "seated.toml"
    seated.write_text(seats.replace("AGENT", "strict:a"), encoding="utf-8")
    ok = moot(site, "validate", str(judged))
    assert ok.returncode == 0 and "valid (court, 2 agents, 3 judges)" in ok.stdout
    refused = moot(site, "validate", str(seated))
    assert refused.returncode == 1
    assert (
        "agents.0.model: 'strict:a' is a judge (the strict plugin): seat it as a judge "
        "(court.judges, pick.judge), not as an agent" in refused.stdout
    )


def test_the_older_groups_still_offer_a_protocol_and_a_bare_gate(installed: Path) -> None:
    from moot import protocols
    from moot.pipeline.gates import plugins as gate_plugins
    from moot.pipeline.gates import run_plugin

    (installed / "moot_echo-0.3.1.dist-info" / "entry_points.txt").write_text(
        "[moot.protocols]\nechoes = moot_echo.protocol:PROTOCOL\n"
        "[moot.gates]\nlegacy = moot_echo:_check\n",
        encoding="utf-8",
    )
    assert protocols.get("echoes").name == "echoes"
    assert gate_plugins() == {"legacy": "moot_echo:_check"}
    assert run_plugin("moot_echo:_check", installed, "+x = 1\n") == (True, "no TODO left")
    mine = [(p.group, p.name, p.kind) for p in plugins.found() if p.distribution == "moot-echo"]
    assert mine == [("moot.protocols", "echoes", "protocol"), ("moot.gates", "legacy", "gate")]
