"""check_substance gives the very verdicts it gave before it was made linear in words (issue 23):
the current code against a frozen copy of the old one (substance_reference.py), reason and
detail alike, on every reply the substance tests spell out, on the answers of the recorded
sessions, on arena answers like the engine benchmark's, and on generated hostile text (huge
words, Unicode that NFKC or casefold reshapes, markup, code, control codes, prompt-word salad).
"""

from __future__ import annotations

import ast
import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from moot.deliberation import markup, substance
from moot.deliberation.anonymize import quote
from moot.protocols.arena import prompts as arena
from moot.protocols.court import prompts as court
from tests.deliberation import substance_reference as reference
from tests.deliberation import test_substance_stance as stance

HERE = Path(__file__).parent
SESSIONS = HERE.parent / "lifecycle" / "sessions"
TASKS = [
    "What is the capital of France?",
    "Should a small team use Postgres or SQLite for a session store?",
    "How long can a post be, in characters?",
    "Is it safe to run the migration on Friday?",
    "Plan the migration of a service.",
    # (the task the numbered echoes in the substance tests copy)
    "Is 7 a prime number?",
    # (one that asks for a yes or no in so many words, in its question: deliberation/polar.py)
    "Is 91 a prime number, yes or no?",
    "How many retries should a client make?",
    None,
]

Case = tuple[str, tuple[str, ...], str | None]
Verdict = tuple[str, str] | None  # (reason, detail); None: a substantive answer


def _prompt_sets(task: str | None) -> list[tuple[str, ...]]:
    topic = task or "the question"
    solve = (arena.SYSTEM.format(n=3), arena.SOLVE.format(task=topic, format=arena.FORMAT))
    system = court.AGENT_SYSTEM.format(
        label="Agent A", n=3, topic=topic, question="", role="", format=court.AGENT_FORMAT
    )
    propose = (system, court.PROPOSE.format(round=1, rounds=5, history=""))
    # a prompt that quotes others' work, in fences whose ids the substance tests spell out
    critiques = quote("Agent B", topic, nonce="539817c2d0b6", limit=4000) + quote(
        "Agent C", "Use SQLite.", nonce="0c218a4f73d5", limit=4000
    )
    revise = (arena.SYSTEM.format(n=3), arena.REVISE.format(critiques=critiques, format=""))
    # a prompt whose JSON template has example values ("up to 2"), as a tournament's had
    challenge = (stance.SYSTEM.format(task=topic), stance.CHALLENGE)
    return [solve, propose, revise, challenge, ()]


def _literals() -> list[str]:
    """Every string the substance tests spell out (replies, prompts and tasks alike)."""
    found: set[str] = set()
    for name in ("test_substance.py", "test_substance_stance.py", "test_substance_polar.py"):
        tree = ast.parse((HERE / name).read_text())
        found |= {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
    return sorted(found)


def _recorded() -> Iterator[Case]:
    """The answers of the recorded sessions, with the prompt and task they answered."""
    for events in sorted(SESSIONS.glob("*/events.jsonl")):
        task: str | None = None
        for line in events.read_text().splitlines():
            event = json.loads(line)
            if event["kind"] == "begin":
                task = event["data"].get("task")
            elif event["kind"] == "ask":
                text = event["data"]["completion"].get("text") or ""
                prompt = event["data"]["prompt"]
                prompts = (prompt,) if isinstance(prompt, str) else tuple(prompt)
                yield text, prompts, task
                if "<solution>" in text and "</solution>" in text:
                    inner = text.split("<solution>", 1)[1].split("</solution>", 1)[0]
                    yield inner, prompts, task


def _benchmark_answers() -> Iterator[Case]:
    """Answers shaped like benchmarks/engine.py's arena answers, with their final lines."""
    task = "Plan the migration of a service."
    solve = _prompt_sets(task)[0]
    for n, step in [(137, "r0/solve/agent_a/reask"), (42, "r12/revise/agent_c/reask")]:
        line = f"the answer is {n}, says agent_a at {step}"
        body = " ".join([line] * 40)
        yield f"## PLAN\n1. {line}\n## CHANGES\n{body}", solve, task
        yield f"## CHANGES\n{body}", solve, task
        yield str(n), solve, task
        yield "I think the answer is 42, but I forgot the required format.", solve, task


HOSTILE = [
    "",
    " ",
    "\n\t ",
    "x" * 30_000,
    "a" * 17_000 + " Paris " + "b" * 5_000,
    "Paris " * 5_000,
    "{a}" * 3_000,
    "<quoted " * 2_000,
    "\x00\u202e" * 2_000,
    "\x1b[1A\x1b[2K" * 50 + "Paris",
    "[1A[2K[0m",
    "Ｐａｒｉｓ is the ﬁnal answer.",
    "İstanbul İİİ and straße ß",
    "e\u0301te\u0301 ﬀ ﬃ ½ ² ㎏ ℌ",
    "’tis the answer’s own, don’t",
    "```python\nprint('Paris')\n```",
    "```\n{ newVote }\n```",
    "<solution>\n## PLAN\n</solution>",
    "&lt;solution&gt;Paris&lt;/solution&gt;",
    '{"type": "object", "properties": {"answer": {"type": "string"}}}',
    '{"answer": "Paris"}',
    "Reasoning: {\nConfidence: { confidence }\nAnswer: Paris",
    "## PLAN\n## CHANGES -\n## RISKS",
    "No.",
    "Absolutely not.",
    "As an AI language model, I cannot answer that.",
    "Under 100 words, please.",
    "At most 280 characters.",
    "Your answer should be concise yet informative.",
    "日本語の答えはパリです。",
    "🙂 🙃 🙂",
    "-- -- -- ... !!!",
    # masked runs that cut into words, beside apostrophes ("a'b'c" is two words: "a'b", "c")
    "reasoning:it's paris'x'y plan:a'b'c {x}y'z",
    "## plan\nsolution: don't'know the answer: it's {{x}}y'z'w",
    "I can't help with that'x, at most 3 words'ish [0m'q",
    # a refusal's "i" is matched ignoring case: the dotless "ı" is one too
    "ı cannot help with that.",
    "Sorry",
    "AS AN AI LANGUAGE MODEL",
    # loops of a passage, and answers that repeat a few words in each line
    stance.LOOP,
    stance.LONG * 3,
    stance.LONG * 2,
    *stance.REPEATED_STRUCTURE,
]
PUNCTUATION = [".", ",", ":", ";", "?", "!", "-", "{", "}", "[", "]", "<", ">", "#", "\n", "'", '"']


def _salad(seed: int) -> Iterator[Case]:
    """Replies drawn from the prompts' own words, talk, filler and punctuation: every rule's
    words in every order, so echo runs, labels, headers and fragments all come up."""
    rng = random.Random(seed)
    vocabulary = sorted(
        set(" ".join(p for t in TASKS for s in _prompt_sets(t) for p in s).split())
        | set(reference._META_WORDS)
        | set(reference._ABOUT_ANSWERS)
        | {"Paris", "SQLite", "42", "yes", "no", "not", "words", "sentences", "at", "most"}
    )
    for _ in range(1_500):
        task = rng.choice(TASKS)
        prompts = rng.choice(_prompt_sets(task))
        size = rng.choice([1, 2, 3, 5, 12, 40, 300])
        parts: list[str] = []
        for _ in range(size):
            roll = rng.random()
            if roll < 0.15:
                parts.append(rng.choice(PUNCTUATION))
            elif roll < 0.25 and prompts:
                # a run copied from a prompt
                words = rng.choice(prompts).split()
                start = rng.randrange(max(1, len(words) - 6))
                parts.append(" ".join(words[start : start + rng.randint(2, 6)]))
            else:
                parts.append(rng.choice(vocabulary))
        yield " ".join(parts), prompts, task


def _cases() -> list[Case]:
    cases: list[Case] = []
    for text in _literals() + HOSTILE:
        for task in TASKS:
            for prompts in _prompt_sets(task):
                cases.append((text, prompts, task))
    cases += list(_recorded())
    cases += list(_benchmark_answers())
    cases += list(_salad(23))
    return cases


def _verdict(problem: object) -> Verdict:
    if problem is None:
        return None
    reason = getattr(problem, "reason")  # noqa: B009 (both classes: theirs and the frozen one)
    return str(reason.value), str(problem)


def _run(cases: Sequence[Case]) -> list[tuple[Case, Verdict, Verdict]]:
    substance._clear_caches()
    reference._instructions.cache_clear()
    return [
        (
            case,
            _verdict(substance.check_substance(case[0], case[1], task=case[2])),
            _verdict(reference.check_substance(case[0], case[1], task=case[2])),
        )
        for case in cases
    ]


def test_the_corpus_holds_every_kind_of_verdict() -> None:
    """The corpus is no list of easy passes: every reason, and substantive answers, come up."""
    seen = {new[0] if new else None for _, new, _ in _run(_cases()[::3])}
    assert seen >= {None} | {why.value for why in reference.Reason}


@pytest.mark.parametrize("part", range(4))
def test_the_verdicts_are_those_of_the_old_code(part: int) -> None:
    cases = _cases()[part::4]
    differ = [(case, new, old) for case, new, old in _run(cases) if new != old]
    shown = [(c[0][:80], c[2], new, old) for c, new, old in differ[:5]]
    assert not differ, f"{len(differ)} of {len(cases)} verdicts differ: {shown}"


def test_strip_markup_skips_only_texts_without_markup() -> None:
    """strip_markup returns a text with no tag opener or cut mark trimmed, without scanning
    it; on every text of the corpus that is what the three substitutions give."""
    for text in {case[0] for case in _cases()}:
        scanned = markup._TAG_LINE.sub("", text)
        scanned = markup._CUT.sub("", markup._TAG.sub("", scanned)).strip()
        assert markup.strip_markup(text) == scanned, text[:80]
