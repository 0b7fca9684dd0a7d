"""`moot run --dry-run`: the projected calls, tokens and cost range of every protocol, printed
without calling a model or creating a session; the projection equals the worst case a scripted
run reaches; a projection above --max-cost is refused off a terminal."""

from __future__ import annotations

import os
import re
from collections import Counter
from itertools import product
from pathlib import Path
from typing import get_args

import msgspec
import pytest

from moot import protocols
from moot.errors import ConfigError
from moot.lifecycle.plan import load_config
from moot.lifecycle.projection import estimate
from moot.models.base import create_model
from moot.protocols.definition import Flag
from moot.types import Usage
from tests.cli.test_cli import moot
from tests.protocols.vote.test_vote import Voters
from tests.refine_scripts import Refinery
from tests.scripts import start

TASK = "How should the service store its sessions?"


def _sessions() -> list[Path]:
    """Session folders under this test's MOOT_HOME (conftest gives each test its own)."""
    root = Path(os.environ["MOOT_HOME"]) / "sessions"
    return sorted(root.glob("*")) if root.exists() else []


PROJECTING = [name for name in protocols.names() if protocols.get(name).conduct.project is not None]
# pick runs a code task only: its projection is tested with a repository in test_code_tasks.py
# the pipeline too: its projections are checked against runs in tests/pipeline
ON_A_QUESTION = [name for name in PROJECTING if name not in ("pick", "pipeline")]


def test_every_protocol_projects() -> None:
    assert set(PROJECTING) == set(protocols.names())
    assert {"arena", "court", "tournament", "refine", "vote", "council", "pick"} <= set(PROJECTING)


@pytest.mark.parametrize("protocol", ON_A_QUESTION)
def test_every_protocol_projects_without_running(
    protocol: str, capsys: pytest.CaptureFixture[str]
) -> None:
    never = Refinery(lambda p, j: ["A", "B", "AB"])
    never.config()  # registers the script, which must not be called
    code, out, err = moot(
        capsys, "run", TASK, "--protocol", protocol, "--dry-run",
        "--models", "scripted:@refinery", "--models", "scripted:@refinery",
        "--models", "scripted:@refinery",
    )  # fmt: skip
    assert code == 0, err
    assert "Projected worst case" in out and re.search(r"Calls: \d+", out)
    assert "Cost: $0.0000" in out  # scripted models are free
    assert _sessions() == [] and not never.requests


def test_the_refine_projection_is_the_worst_case_a_scripted_run_reaches() -> None:
    """Agents of one model are bounded together (tests/protocols/refine/test_refine_projection.py
    runs every way a run can go against each participant's own bounds)."""
    r = Refinery(lambda p, j: ["B", "A", "AB"])  # a new incumbent every pass: never converges
    config = r.config(agents=4, judges=3, convergence_k=2, max_passes=3)
    projected = estimate(load_config(None, config.dump()), TASK)
    run = start(TASK, config)
    assert run.exit_code == 2
    assert projected is not None and projected.calls[1] == sum(r.steps.values()) == 1 + 3 * 6
    (line,) = projected.lines  # one model: one line, every participant's calls together
    assert line.role.startswith("Agent A, Agent B, Agent C, Agent D (")
    # the fewest: A wins the first k passes
    quick = Refinery(lambda p, j: ["A", "B", "AB"])
    done = start(TASK, quick.config(agents=4, judges=3, convergence_k=2, max_passes=3))
    assert done.exit_code == 0 and projected.calls[0] == sum(quick.steps.values())


def test_the_vote_projection_is_k_times_agents() -> None:
    v = Voters(lambda a, k: "Answer: 42")
    config = v.config(agents=3, samples=4)
    projected = estimate(load_config(None, config.dump()), TASK)
    start(TASK, config)
    assert projected is not None and projected.calls == (12, 12) == (sum(v.steps.values()),) * 2


def test_a_projection_above_max_cost_is_refused_off_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a dry run makes the models as a run does: a key, and a remote host allowed (it connects to
    # nothing: the tests' socket guard would fail it)
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    monkeypatch.setenv("MOOT_ALLOW_NETWORK", "1")
    code, _, err = moot(
        capsys, "run", TASK, "--protocol", "vote", "--samples", "5", "--max-cost", "0.0001",
        "--models", "openai:gpt-5.4", "--models", "openai:gpt-5.4",
    )  # fmt: skip
    assert code == 1
    assert "the projected worst case costs $" in err and "more than --max-cost $0.0001" in err
    assert "--dry-run" in err and _sessions() == []
    code, out, _ = moot(
        capsys, "run", TASK, "--protocol", "vote", "--samples", "5", "--dry-run",
        "--models", "openai:gpt-5.4", "--models", "openai:gpt-5.4",
    )  # fmt: skip
    assert code == 0 and "Calls: 10" in out
    cost = re.search(r"^Cost: \$([\d.]+)$", out, re.M)  # as many calls at most as at least
    assert cost is not None and float(cost[1]) > 0.0001


def test_a_max_cost_from_the_user_config_is_named_as_the_config_s(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A tryout saw the refusal say '--max-cost $0.0001' for a limit it had set in its user
    config, a flag it never gave."""
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    monkeypatch.setenv("MOOT_ALLOW_NETWORK", "1")
    user = tmp_path / "config.toml"
    user.write_text("[limits]\nmax_cost = 0.0001\n")
    monkeypatch.setenv("MOOT_CONFIG", str(user))
    models = ["--models", "openai:gpt-5.4", "--models", "openai:gpt-5.4"]
    code, _, err = moot(capsys, "run", TASK, "--protocol", "vote", "--samples", "5", *models)
    assert code == 1 and _sessions() == []
    assert "more than limits.max_cost of the config $0.0001" in err, err
    assert "--max-cost $" not in err and "or give --max-cost" in err


def test_on_a_terminal_a_costly_projection_asks_first(tmp_path: Path) -> None:
    """A real pseudo-terminal: the projection and a question; answering no runs nothing."""
    import pty
    import subprocess
    import sys
    import time

    leader, follower = pty.openpty()
    moot_bin = str(Path(sys.executable).parent / "moot")
    child = subprocess.Popen(
        [moot_bin, "run", TASK, "--protocol", "vote", "--samples", "5", "--max-cost", "0.0001",
         "--models", "openai:gpt-5.4"],
        stdin=follower, stdout=follower, stderr=follower, cwd=tmp_path, env=os.environ.copy(),
    )  # fmt: skip
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 30
    while b"Run anyway?" not in seen and time.monotonic() < deadline:
        try:
            seen += os.read(leader, 4096)
        except OSError:
            break
    assert b"Run anyway?" in seen and b"Calls: 5" in seen, seen
    os.write(leader, b"n\n")
    assert child.wait(timeout=30) == 1
    rest = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        rest += chunk
    os.close(leader)
    assert b"not run: the projected cost is above --max-cost" in rest
    assert _sessions() == []


def test_the_refine_projection_counts_configured_roles_as_their_own_participants() -> None:
    r = Refinery(lambda p, j: ["AB", "A", "B"])  # a new incumbent every pass
    data = r.config(agents=2).dump()
    data["refine"] = {
        "judges": 3,
        "max_passes": 2,
        # a config of its own (the same script), so a line of its own
        "roles": {"judge": {"model": "scripted:@refinery", "max_tokens": 500}},
    }
    plan = load_config(None, data)
    projected = estimate(plan, TASK)
    run = start(TASK, plan.config)
    assert run.exit_code == 2 and projected is not None
    asked = Counter(step.split("/")[2] for step in r.steps)
    by_alias = {x.role.split(" (")[0]: x.most for x in projected.lines}
    assert by_alias["Judge A"] == asked["judge_a"] == 3 * 2
    assert projected.calls[1] == sum(r.steps.values())


TEXTS = {  # untagged and far apart, so nobody agrees and every answer is re-asked
    "agent_a": "Postgres with a nightly vacuum, because the team knows it well.",
    "agent_b": "Flat JSON files on a shared disk; no database server to run at all.",
}


def test_the_arena_projection_bounds_a_run_that_never_converges_and_is_always_reasked() -> None:
    from tests.scripts import Debate

    # Every solve and revise answer is unstructured (re-asked), every verdict too: the worst case.
    debate = Debate(verdicts=["no verdict here"], answer=lambda alias, step: TEXTS[alias])
    config = debate.config(("one", "two"), arena={"max_rounds": 3})
    projected = estimate(load_config(None, config.dump()), TASK)
    run = start(TASK, config)
    assert run.exit_code == 2 and projected is not None
    made = sum(debate.steps.values())
    fewest, most = projected.calls
    assert fewest <= made <= most, (fewest, made, most)
    # exact but for the verifies: each agent may judge twice in 3 rounds (4), the run has 3
    assert made == most - 2
    # per agent, its own bound holds: solve, evaluate and revise every round, judging included
    per_agent = Counter(r.meta["agent"] for r in debate.requests)
    assert max(per_agent.values()) <= max(x.most for x in projected.lines)


def test_the_default_agents_take_a_protocol_without_rounds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No --models and no config gives the one-round demonstration, but only to protocols that
    have rounds: vote has none and must not be refused for a --rounds nobody gave."""
    code, out, err = moot(capsys, "run", TASK, "--protocol", "vote", "--dry-run")
    assert code == 0, err
    assert "Calls: 3" in out and "local:smollm2" in out


# A server on this machine is free in the projection as in the run (issue 24): Ollama, vLLM
# and LM Studio at their default ports, any OpenAI-compatible server at a loopback address.
LOCAL_SERVERS = [
    ("ollama:qwen3", None),
    ("vllm:Qwen/Qwen3-8B", None),
    ("lmstudio:qwen3-8b", None),
    ("openai-compat:http://127.0.0.1:8080/v1#qwen3", None),
    ("openai:gpt-5.4-mini", "http://localhost:9000/v1"),
]


@pytest.mark.parametrize(("spec", "base_url"), LOCAL_SERVERS)
def test_a_server_on_this_machine_is_free_in_the_projection_as_in_the_run(
    spec: str, base_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLLM_API_KEY", "unused")
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    agent = {"model": spec, **({"base_url": base_url} if base_url else {})}
    plan = load_config(None, {"agents": [agent, agent]}, rounds=1)
    projected = estimate(plan, TASK)
    assert projected is not None and projected.cost == (0.0, 0.0)
    assert projected.unpriced == []
    model = create_model(spec, plan.config.agents[0].settings(), prepare=False)
    assert model.price(Usage(prompt_tokens=1000, completion_tokens=1000)) == 0.0  # the run agrees


@pytest.mark.parametrize(
    ("spec", "base_url"),
    [("openai-compat:http://10.1.2.3:8080/v1#qwen3", None), ("ollama:q", "http://gpu-box:1/v1")],
)
def test_a_server_elsewhere_is_not_free(spec: str, base_url: str | None) -> None:
    agent = {"model": spec, **({"base_url": base_url} if base_url else {})}
    projected = estimate(load_config(None, {"agents": [agent, agent]}, rounds=1), TASK)
    assert projected is not None and projected.cost[1] > 0
    assert projected.unpriced == [spec]


def test_max_cost_does_not_refuse_a_local_server(capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: an Ollama run with --max-cost 0.05 was refused ("projected $16.23")."""
    code, out, err = moot(
        capsys, "run", TASK, "--dry-run", "--max-cost", "0.05",
        "--models", "ollama:qwen3", "--models", "ollama:qwen3",
    )  # fmt: skip
    assert code == 0, err
    assert re.search(r"^Cost: \$0\.0000$", out, re.M) and "No price known" not in out


def test_the_arena_projection_bounds_a_run_settled_by_the_first_answers() -> None:
    """The fewest was 3 calls an agent (4 for one): a run whose first answers agree asks each
    agent once (`stop_on_agreement`)."""
    from tests.scripts import Debate, solution

    debate = Debate(answer=lambda alias, step: solution("The answer is 42."))  # all agree
    config = debate.config(("one", "two", "three"))
    projected = estimate(load_config(None, config.dump()), TASK)
    run = start(TASK, config)
    assert run.exit_code == 0 and projected is not None
    per_agent = Counter(r.meta["agent"] for r in debate.requests)
    assert sorted(per_agent.values()) == [1, 1, 1]  # the solve alone
    assert [x.fewest for x in projected.lines] == [1, 1, 1]
    assert projected.calls[0] == sum(per_agent.values())


def _variants(protocol: str) -> list[dict[str, object]]:
    """The protocol's section with each of its switches on and off."""
    fields = msgspec.structs.fields(protocols.get(protocol).options)
    switches = [f.name for f in fields if bool in (f.type, *get_args(f.type)[:1])]
    every = product((False, True), repeat=len(switches))
    return [dict(zip(switches, values, strict=True)) for values in every]


@pytest.mark.parametrize(
    "protocol",
    ON_A_QUESTION,
)
def test_every_protocols_fewest_calls_are_never_more_than_its_most(protocol: str) -> None:
    """The tryout's refine dry run printed `4-3 calls` and `Calls: 13-7`: over agent counts,
    --rounds (refine's below convergence_k too) and every switch of the protocol's section,
    no line and no total has its fewest above its most."""
    wrong, loaded = [], 0
    rounds_given = (None, 1, 2, 3) if Flag.ROUNDS in protocols.get(protocol).flags else (None,)
    for agents, rounds, section in product((2, 3, 4, 5), rounds_given, _variants(protocol)):
        data = {"agents": [{"model": "scripted:x"}] * agents, protocol: section}
        try:
            plan = load_config(None, {"protocol": protocol, **data}, rounds=rounds)
        except ConfigError:  # too few agents for it (the council's 3), or switches that clash
            continue
        loaded += 1
        projected = estimate(plan, TASK)
        assert projected is not None
        lines = [(x.role, x.fewest, x.most) for x in projected.lines]
        lines.append(("total", *projected.calls))
        lines.append(("tokens", *projected.tokens))
        wrong += [(agents, rounds, section, x) for x in lines if not 0 <= x[1] <= x[2]]
    assert loaded >= 2 and wrong == []
