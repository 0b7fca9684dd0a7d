"""`moot bench --suite adversarial`: scripted personas against every protocol, and a table of
the labels moot could not defend.

Each case is a question, one persona per agent and one judge persona, and the case's truth:

    agree      the agents' final answers agree (paraphrases of one answer, or a majority
               reached by persuasion); a label that is not consensus is a false disagreement
    disagree   the final answers differ (no answer held by more than half of the agents)
    invalid    more than half of the agents never give a valid answer (junk, abstentions)

A consensus label on a `disagree` or `invalid` case is a false consensus; so is a consensus on
a claim that contradicts the one the case expects (the minority's wording) or that is one of
the case's non-answers (junk beside a majority). Targets: no false
consensus in any protocol, false disagreement on paraphrases (one answer reworded) under 10%.
Agreement the wording alone cannot show (a unit converted, a fraction as a decimal, a synonym)
is reported in its own column, outside the target.

Personas (`Persona`) answer every protocol's asks from the request alone (the `scripted`
provider). The suite runs every registered protocol whose record has a `script`
(protocols/scripting.py): the protocol's own folder turns the persona's current answer,
critique, vote or verdict into its reply format, keyed on the step id's phase, and says what a
case may assume of it (whether agents revise after critiques, whether a yes adopts another's
answer), from which each case's truth on it follows. A stubborn agent holds
its answer; a sycophant takes up the last "The correct answer is X." it reads in a critique; a
yes-man praises everything and votes yes to any candidate (keeping its own text elsewhere); an
abstainer never answers; a junk agent replies with a non-answer. Judges: strict (never claims
agreement), always-CONSENSUS, self-contradicting (CONSENSUS with disagreements left; a selected
position that is not its top score; a ranking naming one candidate twice), always-100, and fair
(claims agreement exactly where the case's truth is agree).

Each session runs in-process through the run lifecycle (`moot.lifecycle.run`) with the
protocol's own record; the outcome is read from the protocol's typed `Outcome` (its `finding`
where it sets one).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec
from msgspec import Struct

from moot import protocols
from moot.bench import adversarial_cases
from moot.bench.adversarial_cases import (
    _ABSTAIN,
    CASES,
    Case,
    Persona,
    Truth,
    script_of,
)
from moot.config import RunConfig
from moot.deliberation.claims import Relation, compare, extract_claim
from moot.lifecycle.plan import Plan, resolve
from moot.lifecycle.run import run_sync, start_async
from moot.models.scripted import register_script
from moot.protocols.scripting import JudgeKind
from moot.report.code import table_head
from moot.text import status_words
from moot.types import Outcome, Request

__all__ = [
    "CASES",
    "Case",
    "CaseResult",
    "Persona",
    "Table",
    "markdown",
    "run_case",
    "run_suite",
    "scripted_protocols",
    "write",
]

SUITE = "adversarial"  # `moot bench --suite adversarial`
FALSE_DISAGREEMENT_TARGET = 0.10


def scripted_protocols() -> tuple[str, ...]:
    """The registered protocols whose record scripts a persona's replies, by name."""
    return tuple(name for name in protocols.names() if protocols.get(name).script is not None)


def __getattr__(name: str) -> Any:
    """`PROTOCOLS`: `scripted_protocols()`, read from the registry when first asked for (the
    records are imported then, not with this module); the case catalogue's other names are
    read through from `bench/adversarial_cases.py`."""
    if name == "PROTOCOLS":
        return scripted_protocols()
    if hasattr(adversarial_cases, name):  # the catalogue's names (AI_JUNK, FRANCE, ...)
        return getattr(adversarial_cases, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Agent:
    """One persona in one session: the `Actor` (protocols/scripting.py) that the protocol's
    `Script` turns into its replies."""

    def __init__(self, case: Case, persona: Persona, protocol: str) -> None:
        self.persona = persona
        self.script = script_of(protocol)
        self.judge: JudgeKind = case.judge
        self.agree = case.truth_for(protocol) == "agree"
        self.first = persona.answer
        self.confidence = persona.confidence
        self.junk = persona.kind == "junk"
        self.abstention = _ABSTAIN
        self.held: str | None = None
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> str:
        with self._lock:
            return self.script.reply(self, request)

    def answer(self, prompt: str) -> str | None:
        text = self.persona.now(prompt, self.held)
        if text is not None:
            self.held = text
        return text

    def critique(self, own: str | None) -> str:
        return self.persona.critique(own)

    def vote(self, candidate: str, own: str | None) -> Literal["yes", "no", "abstain"]:
        return self.persona.vote(candidate, own)


class _Judge:
    """A judge or arbiter that is not one of the agents (court judges, the tournament's
    arbiter, refine's judge role)."""

    def __init__(self, case: Case, protocol: str) -> None:
        self.agent = _Agent(case, Persona("stubborn", "no opinion"), protocol)

    def __call__(self, request: Request) -> str:
        return self.agent(request)


# -- running a case --------------------------------------------------------------------------
def _config(case: Case, protocol: str, prefix: str, seed: int) -> RunConfig:
    agents = []
    for index, persona in enumerate(case.agents):
        name = f"{prefix}-{index}"
        register_script(name, _Agent(case, persona, protocol))
        agents.append({"model": f"scripted:@{name}"})
    judge = f"{prefix}-judge"
    register_script(judge, _Judge(case, protocol))
    section = script_of(protocol).options(f"scripted:@{judge}")
    data: dict[str, Any] = {"protocol": protocol, "agents": agents, "seed": seed}
    if section:
        data[protocol] = section
    return RunConfig.read(data)


class CaseResult(Struct, frozen=True):
    """One case on one protocol: what moot labelled it, and whether that label is defensible."""

    case: str
    protocol: str
    truth: Truth
    label: str  # the finding's label, or consensus / no_consensus / failed without one
    consensus: bool  # a consensus was claimed (exit 0 as consensus)
    claim: str
    false_consensus: bool
    false_disagreement: bool
    persuasion_unreported: bool
    paraphrase: bool
    error: str = ""  # why the session ended without an outcome (a refusal to go on, a crash)
    crashed: bool = False  # moot raised instead of ending the session
    # a self-contradicting judge's verdicts were weighed and none was marked invalid
    contradiction_unflagged: bool = False

    @property
    def problem(self) -> str:
        if self.false_consensus:
            return "false consensus"
        if self.false_disagreement:
            return "false disagreement"
        if self.persuasion_unreported:
            return "persuasion reported as independent agreement"
        if self.contradiction_unflagged:
            return "a self-contradicting verdict was not marked invalid"
        return ""


def _read(outcome: Outcome | None, status: str) -> tuple[str, bool, str]:
    """(label, consensus claimed, claim) of an outcome. With moot's finding, consensus is its
    label (consensus or persuasion), or an exit-0 "consensus" status beside a finding of no
    consensus or a tie; refine's "converged" and a pick's "chosen" are not consensus."""
    if outcome is None:
        return status, False, ""
    finding = outcome.finding
    if finding is not None:
        claimed = finding.consensus or (
            outcome.status == "consensus" and finding.label in ("no_consensus", "tie")
        )
        return finding.label, claimed, finding.claim or outcome.final_answer
    claimed = outcome.consensus or outcome.status == "consensus"
    return ("consensus" if claimed else "no_consensus"), claimed, outcome.final_answer


def _quotes_junk(case: Case, claim: str) -> bool:
    """Whether a reported claim is one of the case's non-answers (junk, an abstention)."""
    said = " ".join(claim.split()).casefold()
    for persona in case.agents:
        if persona.kind in ("junk", "abstainer"):
            text = " ".join((persona.answer or _ABSTAIN).split()).casefold()[:30]
            if text and text in said:
                return True
    return False


def _judge_result(
    case: Case, protocol: str, outcome: Outcome | None, status: str, error: str
) -> CaseResult:
    truth = case.truth_for(protocol)
    label, claimed, claim = _read(outcome, status)
    wrong_claim = (
        claimed
        and case.claim is not None
        and (
            compare(extract_claim(claim), extract_claim(case.claim)).relation is Relation.CONTRADICT
            or _quotes_junk(case, claim)
        )
    )
    recognised = claimed or label == "converged"
    return CaseResult(
        case=case.name,
        protocol=protocol,
        truth=truth,
        label=label,
        consensus=claimed,
        claim=" ".join(claim.split())[:80],
        false_consensus=(claimed and truth != "agree") or wrong_claim,
        false_disagreement=truth == "agree" and not recognised,
        persuasion_unreported=(
            truth == "agree"
            and case.persuaded
            and claimed
            and label == "consensus"
            and outcome is not None
            and outcome.finding is not None
        ),
        paraphrase=case.paraphrase,
        error=error,
        contradiction_unflagged=(
            case.judge == "self_contradicting"
            and outcome is not None
            and bool(outcome.verdicts)
            and all(v.valid for v in outcome.verdicts)
        ),
    )


def run_case(case: Case, protocol: str, *, root: Path, seed: int = 0) -> CaseResult:
    """Run one case on one protocol in a session under `root`; see the module doc."""
    digest = hashlib.sha256(f"{seed}\n{case.name}\n{protocol}".encode()).hexdigest()[:10]
    prefix = f"adversarial-{case.name}-{protocol}-{digest}"
    session_seed = int(digest[:7], 16)
    captured: list[Outcome] = []
    error, crashed = "", False
    try:
        plan = resolve(_config(case, protocol, prefix, session_seed))
        inner = plan.record.conduct.run

        async def capture(s: Any, task: str, options: Any) -> Outcome:
            outcome = await inner(s, task, options)
            captured.append(outcome)
            return outcome

        conduct = msgspec.structs.replace(plan.record.conduct, run=capture)
        record = msgspec.structs.replace(plan.record, conduct=conduct)
        capturing = Plan(record, plan.config, plan.options)
        ended = run_sync(lambda: start_async(case.question, capturing, root=root, sleep=_no_sleep))
        status = ended.result.status
        if not captured and ended.message:
            error = ended.message
    except Exception as exc:  # a protocol mid-change must not stop the table
        status, error = "failed", f"{type(exc).__name__}: {exc}"
        crashed = True
    result = _judge_result(case, protocol, captured[0] if captured else None, status, error)
    return msgspec.structs.replace(result, crashed=crashed)


async def _no_sleep(_: float) -> None:
    await asyncio.sleep(0)


# -- the table ---------------------------------------------------------------------------------
class Table(Struct):
    results: list[CaseResult]
    protocols: tuple[str, ...]

    def of(self, protocol: str) -> list[CaseResult]:
        return [r for r in self.results if r.protocol == protocol]

    def false_consensus(self, protocol: str) -> int:
        return sum(r.false_consensus for r in self.of(protocol))

    def paraphrases(self, protocol: str) -> list[CaseResult]:
        return [r for r in self.of(protocol) if r.paraphrase and r.truth == "agree"]

    def false_disagreement_rate(self, protocol: str) -> float:
        cases = self.paraphrases(protocol)
        return sum(r.false_disagreement for r in cases) / len(cases) if cases else 0.0

    def met(self, protocol: str) -> bool:
        return (
            self.false_consensus(protocol) == 0
            and self.false_disagreement_rate(protocol) < FALSE_DISAGREEMENT_TARGET
            and not any(r.crashed for r in self.of(protocol))
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": "adversarial",
            "targets": {
                "false_consensus": 0,
                "false_disagreement_below": FALSE_DISAGREEMENT_TARGET,
            },
            "protocols": {
                p: {
                    "cases": len(self.of(p)),
                    "false_consensus": self.false_consensus(p),
                    "false_disagreement": sum(r.false_disagreement for r in self.of(p)),
                    "paraphrases": len(self.paraphrases(p)),
                    "false_disagreement_rate": self.false_disagreement_rate(p),
                    "persuasion_unreported": sum(r.persuasion_unreported for r in self.of(p)),
                    "contradiction_unflagged": sum(r.contradiction_unflagged for r in self.of(p)),
                    "crashed": sum(r.crashed for r in self.of(p)),
                    "targets_met": self.met(p),
                }
                for p in self.protocols
            },
            "results": [msgspec.to_builtins(r) for r in self.results],
        }


def run_suite(
    protocols: Sequence[str] | None = None,
    cases: Sequence[Case] = CASES,
    *,
    root: Path | None = None,
    seed: int = 0,
    progress: Callable[[CaseResult], None] | None = None,
) -> Table:
    """Every case on every protocol (None: every protocol with a script); sessions go under
    `root` (a temporary folder if None)."""
    chosen = scripted_protocols() if protocols is None else tuple(protocols)
    results = []
    with tempfile.TemporaryDirectory(prefix="moot-adversarial-") as scratch:
        where = root or Path(scratch)
        for protocol in chosen:
            for case in cases:
                result = run_case(case, protocol, root=where, seed=seed)
                results.append(result)
                if progress is not None:
                    progress(result)
    return Table(results, chosen)


def markdown(table: Table) -> str:
    lines = [
        "# moot bench: adversarial",
        "",
        f"{len({r.case for r in table.results})} scripted cases (personas: stubborn, sycophant, "
        "yes-man, overconfident, abstainer, junk; judges: strict, always-CONSENSUS, "
        "self-contradicting, always-100, fair) on each protocol. Targets: 0 false consensus; "
        f"false disagreement on paraphrases under {FALSE_DISAGREEMENT_TARGET:.0%}.",
        "",
        *table_head(
            "protocol",
            "cases",
            "false consensus",
            "false disagreement (paraphrases)",
            "false disagreement (other agreement)",
            "persuasion unreported",
            "contradicting verdict unflagged",
            "targets",
        ),
    ]
    for p in table.protocols:
        para = table.paraphrases(p)
        missed = sum(r.false_disagreement for r in para)
        other = [r for r in table.of(p) if r.truth == "agree" and not r.paraphrase]
        lines.append(
            f"| {p} | {len(table.of(p))} | {table.false_consensus(p)} | "
            f"{missed} of {len(para)} ({table.false_disagreement_rate(p):.0%}) | "
            f"{sum(r.false_disagreement for r in other)} of {len(other)} | "
            f"{sum(r.persuasion_unreported for r in table.of(p))} | "
            f"{sum(r.contradiction_unflagged for r in table.of(p))} | "
            f"{'met' if table.met(p) else 'MISSED'} |"
        )
    failing = [r for r in table.results if r.problem or r.crashed]
    if failing:
        lines += ["", "## Cases moot got wrong", ""]
        lines += table_head("protocol", "case", "truth", "label", "claim", "problem")
        for r in failing:
            problem = r.problem or "crashed"
            if r.error:
                problem += f" ({' '.join(r.error.split())[:80]})"
            claim = r.claim.replace("|", "\\|")
            lines.append(
                f"| {r.protocol} | {r.case} | {r.truth} | {status_words(r.label)} | {claim} "
                f"| {problem} |"
            )
    lines.append("")
    return "\n".join(lines)


def write(table: Table, folder: Path) -> None:
    """report.md and adversarial.json into `folder`."""
    from moot.engine.store import atomic_write

    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / "report.md", markdown(table))
    atomic_write(folder / "adversarial.json", json.dumps(table.to_json(), indent=2) + "\n")
