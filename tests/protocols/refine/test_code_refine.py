"""`refine --preset impl`, the seed's implementation tournament, against real git repositories:
worktree a (the first diff), b<n> (a redo guided by the critic), ab<n> (a synthesis), judged by
Borda count on their diffs and verification results; the winner's worktree kept, the losers'
pruned, and `moot apply` applying the winner."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moot import api
from moot.engine.store import find_session
from moot.lifecycle.code import apply_session, clean, strays
from tests.code import test_code_tasks as base
from tests.scripts import no_sleep
from tests.waiting import asks, wait_for_journal, wait_until

NEWS = (
    "diff --git a/NEWS.md b/NEWS.md\nnew file mode 100644\n--- /dev/null\n+++ b/NEWS.md\n"
    "@@ -0,0 +1 @@\n+add() returns the sum\n"
)

IMPL = f"""
import json, os, re
from pathlib import Path

GOOD = {base.GOOD!r}
WRONG = {base.WRONG!r}
NEWS = {NEWS!r}
LOG = Path(os.environ["AGENT_LOG"])


def _log(request):
    with LOG.open("a") as handle:
        prompt = "\\n".join(m.content for m in request.messages)
        entry = {{"agent": request.meta["agent"], "step": request.meta["step"], "prompt": prompt}}
        handle.write(json.dumps(entry) + "\\n")


def _diff(text):
    return "```diff\\n" + text + "```"


def impl(request):
    # every role by pass: A is wrong; B1 is right and small; every AB is right but larger;
    # B2 and later are wrong again, so A (B1) holds in pass 2
    _log(request)
    step = request.meta["step"]
    text = request.messages[-1].content
    if "/author/" in step:
        return "First try.\\n" + _diff(WRONG)
    if "/critic/" in step:
        return "add() multiplies; its verification fails."
    if "/revise/" in step:
        return _diff(GOOD if step.startswith("r1/") else WRONG)
    if "/synthesize/" in step:
        return _diff(GOOD + NEWS if step.startswith("r1/") else WRONG + NEWS)
    if "/judge/" in step:
        blocks = re.findall(r'from="Response ([XYZ])" id="[0-9a-f]+">(.*?)</quoted', text, re.S)
        def key(item):
            label, block = item
            added = sum(1 for line in block.splitlines() if line.startswith("+") and
                        not line.startswith("+++"))
            if os.environ.get("PREFER") == "more":  # passing, then the most lines added
                added = -added
            return (0 if "[passed]" in block else 1, added, label)
        ranking = [label for label, _ in sorted(blocks, key=key)]
        return json.dumps({{"ranking": ranking, "reason": "passing and small first"}})
    raise RuntimeError("unexpected step " + step)
"""


@pytest.fixture(autouse=True)
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base.git_env.__wrapped__(tmp_path, monkeypatch)  # type: ignore[attr-defined]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return base.repo.__wrapped__(tmp_path)  # type: ignore[attr-defined, no-any-return]


@pytest.fixture
def agents_file(tmp_path: Path) -> Path:
    path = tmp_path / "impl_agents.py"
    path.write_text(IMPL)
    return path


def _worktrees(repo: Path) -> list[str]:
    listed = base.sh(repo, "worktree", "list", "--porcelain")
    return sorted(
        Path(line.split(" ", 1)[1]).name
        for line in listed.splitlines()
        if line.startswith("worktree ") and Path(line.split(" ", 1)[1]) != repo
    )


def _impl_config(agents_file: Path, repo: Path, agents: int = 4, **extra: Any) -> Any:
    specs = [f"scripted:{agents_file}#impl"] * agents
    return base.config(specs, repo, protocol="refine", refine={"preset": "impl"}, **extra)


def test_b_wins_its_worktree_is_kept_the_losers_pruned_and_apply_applies_it(
    repo: Path, agents_file: Path, tmp_path: Path
) -> None:
    before = base.state(repo)
    run = api.start(base.TASK, _impl_config(agents_file, repo), sleep=no_sleep)
    assert base.state(repo) == before  # the user's tree is untouched before apply
    result = run.result
    passes = result.details["rounds"]
    assert [p["winner"] for p in passes] == ["B", "A"]  # B wins, then holds: converged (k=1)
    # converged is done (exit 0), not a consensus on the change (issue 29)
    assert run.exit_code == 0 and not result.consensus
    assert result.finding is not None and result.finding.label == "converged"
    assert result.details["winner"] == "b1"
    # the winner's worktree stays; a, ab1, b2, ab2 and the agents' own are pruned
    assert _worktrees(repo) == ["b1"]
    assert [p.name for p in (run.folder / "worktrees").iterdir() if p.is_dir()] == ["b1"]
    branches = base.sh(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/moot")
    assert branches.split() == [f"moot/{run.session_id}/b1"]
    # every candidate's patch is kept in the session folder
    patches = sorted(p.name for p in (run.folder / "patches").glob("*.patch"))
    assert patches == ["a.patch", "ab1.patch", "ab2.patch", "b1.patch", "b2.patch"]
    code = result.details["code"]
    assert code["a"]["checks"][0]["exit_code"] == 1 and code["b1"]["checks"][0]["exit_code"] == 0
    assert code["ab1"]["files"] == 2
    entries = base.log(tmp_path)
    # the critic saw A's diff and its failing verification, quoted as untrusted text
    critic = next(e["prompt"] for e in entries if e["step"].startswith("r1/critic/"))
    assert "+    return a * b" in critic and "[failed (exit code 1)]" in critic
    assert '<quoted from="Version A diff"' in critic
    # author B got A and the critique; the synthesizer got both changes with verification
    redo = next(e["prompt"] for e in entries if e["step"] == f"r1/revise/{e['agent']}")
    assert "add() multiplies" in redo and "ORIGINAL state" in redo
    merge = next(e["prompt"] for e in entries if e["step"].startswith("r1/synthesize/"))
    assert merge.count("[failed (exit code 1)]") == 1 and merge.count("[passed]") == 1
    judged = next(e["prompt"] for e in entries if e["step"].startswith("r1/judge/"))
    assert judged.count("[passed]") == 2 and '<quoted from="Response X"' in judged
    assert "+    return a + b" in result.final_answer
    # the reports show every candidate: diff stats, verification, patch, and the winner
    report = (run.folder / "report.md").read_text()
    section = report.split("## Code Changes", 1)[1]
    assert "| Worktree b1 (Agent B) | completed | 1 file, +1 -1 | 1/1 passed | **winner** |" in (
        section
    )
    assert "| Worktree a (Agent A) | completed | 1 file, +1 -1 | 0/1 passed |  |" in section
    assert "Worktree ab1 (Agent C) | completed | 2 files, +2 -1" in section
    assert f"`moot apply {run.session_id}` applies Worktree b1 (Agent B)'s change." in section
    assert "failed (exit code 1)" in section and "```diff\ndiff --git a/NEWS.md" in section
    page = (run.folder / "report.html").read_text()
    assert "Code changes" in page and "Worktree b1 (Agent B) (winner)" in page
    assert "+    return a * b" in page  # a loser's patch too, not only the winner's
    assert api.replay(run.session_id).identical is True
    done = apply_session(find_session(run.session_id))
    assert done.alias == "b1"
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert not (repo / "NEWS.md").exists()  # B's change, not the synthesis
    # the reports now say which change was applied
    assert "| 1/1 passed | **winner, applied** |" in (run.folder / "report.md").read_text()
    assert "Worktree b1 (Agent B) (winner, applied)" in (run.folder / "report.html").read_text()
    assert _worktrees(repo) == [] and strays(repo) == []


def test_ab_wins_the_synthesis_is_kept_and_applied(
    repo: Path, agents_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFER", "more")  # the judge prefers the larger passing change
    run = api.start(base.TASK, _impl_config(agents_file, repo), sleep=no_sleep)
    assert [p["winner"] for p in run.result.details["rounds"]] == ["AB", "A"]
    assert run.result.details["winner"] == "ab1"
    assert _worktrees(repo) == ["ab1"]  # a, b1, b2, ab2 and the agents' own: pruned
    assert run.result.details["code"]["ab2"]["checks"][0]["exit_code"] == 1
    apply_session(find_session(run.session_id))
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (repo / "NEWS.md").read_text() == "add() returns the sum\n"  # the synthesis


def test_preset_impl_from_the_command_line_and_without_a_repository(
    repo: Path, agents_file: Path
) -> None:
    args = [base.MOOT, "run", base.TASK, "--preset", "impl", "--verify", base.VERIFY]
    args += ["--models", f"scripted:{agents_file}#impl"] * 4
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "impl is the implementation tournament of a code task" in done.stderr
    assert "--repo" in done.stderr
    done = subprocess.run([*args, "--repo", str(repo)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "b1: completed" in done.stdout and "verify 1/1 passed" in done.stdout
    wrong = subprocess.run(
        [*args, "--protocol", "arena"], capture_output=True, text=True, timeout=60
    )
    assert wrong.returncode == 1 and "--preset is a refine preset" in wrong.stderr


EDITOR = """#!{python}
# A coding CLI stand-in for author B: fixes calc.py in its working folder.
import os, sys, time
from pathlib import Path
if "--version" in sys.argv:
    print("editor 1.0")
    sys.exit(0)
sys.stdin.read()
with open(os.environ["AGENT_LOG"], "a") as log:
    log.write('{{"agent": "editor", "step": "", "cwd": "%s"}}\\n' % os.getcwd())
hold = os.environ.get("EDITOR_HOLD")
if hold and not Path(hold + ".release").exists():
    Path(hold).write_text(str(os.getpid()))
    time.sleep(60)
Path("calc.py").write_text(Path("calc.py").read_text().replace("a * b", "a + b")
                           .replace("a - b", "a + b"))
print("Fixed add().")
"""


def test_sigkill_while_a_cli_agent_edits_a_candidate_then_resume_asks_nobody_twice(
    repo: Path, agents_file: Path, tmp_path: Path
) -> None:
    editor = tmp_path / "bin" / "editor"
    editor.parent.mkdir()
    editor.write_text(EDITOR.format(python=sys.executable))
    editor.chmod(0o755)
    hold = tmp_path / "hold"
    toml = tmp_path / "moot.toml"
    # one CLI agent among scripted ones; seed 5 makes it the author of A (checked below)
    lines = ['protocol = "refine"', "seed = 5", "[refine]", 'preset = "impl"', "max_passes = 1"]
    for spec in ("editor", "impl", "impl", "impl"):
        lines.append("[[agents]]")
        if spec == "editor":
            lines.append('model = "cli:editor"')
            lines.append(f'options = {{ command = "{editor}", output = "text" }}')
        else:
            lines.append(f'model = "scripted:{agents_file}#impl"')
    lines += ["[code]", f'repo = "{repo}"', f"verify_commands = ['{base.VERIFY}']"]
    toml.write_text("\n".join(lines) + "\n")
    env = {**os.environ, "EDITOR_HOLD": str(hold)}
    process = subprocess.Popen(
        [base.MOOT, "run", base.TASK, "--config", str(toml)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )

    def alive() -> bool:
        return process.poll() is None

    wait_until(hold.exists, "the editor to start", alive=alive)
    folder = find_session(None)

    def scripted_all_journaled(events: list[dict[str, Any]]) -> bool:
        logged = {e["step"] for e in base.log(tmp_path) if e["agent"] != "editor"}
        return logged <= {e["step"] for e in asks(events)}

    # the scripted agents' calls made so far are in the journal: only the editor is in flight
    wait_for_journal(folder.path, scripted_all_journaled, "the scripted answers", alive=alive)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(30)
    cwd = next(e["cwd"] for e in base.log(tmp_path) if e["agent"] == "editor")
    assert Path(cwd) == folder.path / "worktrees" / "a"  # it edits the candidate's worktree
    asked = [(e["agent"], e["step"]) for e in base.log(tmp_path) if e["agent"] != "editor"]
    Path(str(hold) + ".release").write_text("")
    done = subprocess.run(
        [base.MOOT, "resume", folder.id], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr  # finished; one pass is too few to converge
    after = [(e["agent"], e["step"]) for e in base.log(tmp_path) if e["agent"] != "editor"]
    assert after[: len(asked)] == asked
    assert not set(after[len(asked) :]) & set(asked)  # nobody asked twice for the same step
    # killed mid-call, so asked again in the same worktree; then it was the critic, in its own
    edits = [e["cwd"] for e in base.log(tmp_path) if e["agent"] == "editor"]
    assert edits[:2] == [cwd, cwd] and cwd not in edits[2:]
    result = json.loads(folder.result_json.read_text())
    assert result["details"]["winner"] in ("a", "b1", "ab1")
    assert _worktrees(repo) == [result["details"]["winner"]]
    clean(folder)
    assert _worktrees(repo) == [] and strays(repo) == []
