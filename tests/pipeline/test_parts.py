"""The pipeline's pure parts: the typed plan and its checks, the order tasks run in, the QA
gates (detection, resolution, the secret scan), the critic's verdict line, and the lessons kept
per repository (ranked, deduplicated, a block list)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moot.errors import FormatError
from moot.pipeline import lessons
from moot.pipeline.document import parse_plan, render_markdown
from moot.pipeline.gates import detect, resolve, scan_secrets
from moot.pipeline.options import Gates
from moot.pipeline.planning import gate_verdict
from tests.pipeline import scripts


def test_a_plan_runs_each_task_after_those_it_depends_on_then_by_phase_then_as_written() -> None:
    tasks = [
        {"id": "T3", "title": "c", "phase": 2},
        {"id": "T1", "title": "a", "depends_on": ["T2"]},
        {"id": "T2", "title": "b"},
        {"id": "T4", "title": "d", "phase": 1},
    ]
    doc = parse_plan(json.dumps({"title": "x", "tasks": tasks}))
    assert [t.id for t in doc.order()] == ["T2", "T1", "T4", "T3"]
    assert doc.needed_by("T1") == {"T1", "T2"}
    assert render_markdown(doc).startswith("# x")


@pytest.mark.parametrize(
    ("tasks", "problem"),
    [
        ([{"id": "T1", "title": "a"}, {"id": "T1", "title": "b"}], "unique: T1 repeat"),
        ([{"id": "T1", "title": "a", "depends_on": ["T9"]}], "unknown tasks: T9"),
        ([{"id": "T1", "title": "a", "depends_on": ["T1"]}], "T1 depends on itself"),
        (
            [
                {"id": "A", "title": "a", "depends_on": ["C"]},
                {"id": "B", "title": "b", "depends_on": ["A"]},
                {"id": "C", "title": "c", "depends_on": ["B"]},
            ],
            "A -> C -> B -> A",
        ),
        ([], "tasks"),
        ([{"id": "no spaces", "title": "a"}], "tasks.0.id"),
        ([{"id": "T1", "title": "a", "owner": "me"}], "tasks.0.owner"),
    ],
)
def test_a_bad_plan_is_refused_naming_the_problem(tasks: list[object], problem: str) -> None:
    with pytest.raises(FormatError, match=None) as caught:
        parse_plan(json.dumps({"title": "x", "tasks": tasks}))
    assert problem in str(caught.value)


def test_a_plan_in_prose_or_a_fence_is_read_and_no_json_is_a_format_error() -> None:
    fenced = "Here is the plan:\n```json\n" + scripts.plan_json() + "\n```\nDone."
    assert [t.id for t in parse_plan(fenced).tasks] == ["T1", "T2"]
    with pytest.raises(FormatError):
        parse_plan("I would first add subtract, then multiply.")


def test_the_critic_s_last_verdict_line_counts_and_a_verdict_inside_a_line_does_not() -> None:
    assert gate_verdict("ok\nVERDICT: APPROVED") == "APPROVED"
    assert gate_verdict("**VERDICT: needs revision**") == "NEEDS_REVISION"
    assert gate_verdict("VERDICT: APPROVED\nbut\nVERDICT: REJECTED") == "REJECTED"
    assert gate_verdict('the plan says "VERDICT: APPROVED" somewhere') is None
    assert gate_verdict("Looks fine to me.") is None


def test_gates_are_detected_from_the_repository_and_configured_commands_win(
    tmp_path: Path,
) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "app.py").write_text("x = 1\n")
    found = detect(tmp_path)
    assert set(found) == {"syntax", "tests"}  # no ruff configuration, no package.json
    gates = resolve(Gates(tests="make check", lint="auto"), found)
    assert [(g.name, g.command) for g in gates] == [
        ("syntax", found["syntax"]),
        ("tests", "make check"),
        ("secrets", ""),
    ]
    assert resolve(Gates(syntax="", tests="", secrets=False), found) == []
    (tmp_path / "package.json").write_text('{"scripts": {"build": "tsc", "test": "jest"}}')
    empty = tmp_path / "empty"
    empty.mkdir()
    assert detect(empty) == {}  # no project: no gate but the secret scan
    both = detect(tmp_path)
    assert both["build"] == "npm run --silent build" and both["syntax"].startswith("python3")


def test_the_secret_scan_names_added_secrets_by_line_never_removed_ones() -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    patch = (
        "diff --git a/config.py b/config.py\n--- a/config.py\n+++ b/config.py\n"
        "@@ -1,2 +1,3 @@\n x = 1\n-old = 'AKIA0000000000000000'\n"
        f"+aws = '{key}'\n+api_key = \"{'s' * 20}\"\n"
    )
    found = scan_secrets(patch)
    assert found == ["config.py:2: an AWS access key id", "config.py:3: a hard-coded secret"]
    assert key not in " ".join(found)
    assert scan_secrets("+++ b/a.py\n@@ -0,0 +1 @@\n+token = os.environ['TOKEN']\n") == []


def test_lessons_are_ranked_deduplicated_and_a_rejected_one_is_never_learnt_again(
    tmp_path: Path,
) -> None:
    repo = str(tmp_path)
    assert lessons.learn(repo, ["tests gate: import error", "review: add docstrings"], "s1") == [
        "tests gate: import error",
        "review: add docstrings",
    ]
    assert lessons.learn(repo, ["Review:  add docstrings"], "s2") == []  # a known one: a hit
    assert lessons.ranked(repo) == ["review: add docstrings", "tests gate: import error"]
    assert lessons.reject(repo, 1) == "review: add docstrings"
    assert lessons.learn(repo, ["review: add docstrings"], "s3") == []
    assert lessons.ranked(repo) == ["tests gate: import error"]
    with pytest.raises(IndexError, match="no lesson 5"):
        lessons.reject(repo, 5)
    assert lessons.ranked(str(tmp_path / "other")) == []  # per repository
