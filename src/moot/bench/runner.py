"""`moot bench`: every protocol on the same questions, then `vote` at the same number of calls.

1. One batch (`moot.batch`) runs each protocol on every question of the suite: each question is
   an ordinary session, so `moot show` explains any single result.
   Each session's seed derives from the bench seed and the question (`session_seed`), so alias
   maps, presentation orders and judge rotations vary across questions while a rerun with the
   same seed gives the same sessions.
2. For each protocol, vote's `samples` is chosen so that vote's calls (samples x agents) come
   closest to the protocol's mean calls per question; one more batch runs vote at each such
   size. The calls each made are counted exactly from the sessions' journals and reported side
   by side; where they differ the report says "approximately" equal calls, with both counts.
3. Each session's final answer is extracted and scored by the question's scorer; a session that
   reached no outcome counts as wrong (it answered nothing). Accuracy gets a Wilson 95% interval
   and each protocol a paired McNemar comparison with its vote, on the same questions.
4. Debate protocols (agents answering in several rounds) also get flips per round, on claims:
   each agent's claim per round (result.json's claims, else read from the journal, a court vote
   as the position it supports: `moot.bench.journals`), right or wrong by the question's scorer.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct, field
from msgspec.structs import replace

from moot import batch as batches
from moot import protocols
from moot.bench import adversarial
from moot.bench.journals import agent_trajectories, answer_of, calls_made
from moot.bench.statistics import RoundFlips, compare, count_flips, wilson_interval
from moot.bench.suites import Suite, suite_for
from moot.bench.swap import audit_judgements, pairwise_judgements
from moot.config import RunConfig
from moot.errors import ConfigError
from moot.lifecycle.plan import Plan, load_run
from moot.protocols.definition import Flag

__all__ = ["BASELINE", "BenchOptions", "BenchReport", "ProtocolRow", "run_bench", "session_seed"]

BASELINE = "vote"


def session_seed(seed: int, question: str) -> int:
    """The seed of one question's sessions: a stable hash (SHA-256, not Python's salted
    `hash`) of the bench seed and the question's text, 31 bits. Every protocol answering the
    question, and its vote baseline, gets the same seed; each question a different one."""
    digest = hashlib.sha256(f"{seed}\n{question}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


class BenchOptions(Struct, frozen=True):
    suite: str
    protocols: Sequence[str]
    models: Sequence[str] = ()
    config_path: Path | None = None
    n: int | None = None
    seed: int = 0
    swap_audit: float = 0.0
    alpha: float = 0.05
    concurrency: int = 8
    provider_limits: Mapping[str, int] = field(default_factory=dict)
    executor: str = "local"
    ray_address: str | None = None


class ProtocolRow(Struct):
    """One protocol's numbers on the suite."""

    name: str  # "arena", or "vote (samples=3)" for a baseline run
    protocol: str
    correct: list[bool]
    calls: list[int]
    tokens: list[int]
    costs: list[float | None]
    seconds: float  # the sum of its sessions' wall times
    sessions: list[str | None]
    failed: int
    baseline: str | None = None  # the vote row it is compared with
    comparison: dict[str, Any] | None = None
    flips: list[RoundFlips] = field(default_factory=list)
    swap_audit: dict[str, Any] | None = None  # numbers, or a note why there are none

    @property
    def n(self) -> int:
        return len(self.correct)

    @property
    def accuracy(self) -> float:
        return sum(self.correct) / self.n if self.n else 0.0

    def mean(self, values: Sequence[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    @property
    def total_calls(self) -> int:
        return sum(self.calls)

    @property
    def cost_per_question(self) -> float | None:
        if any(c is None for c in self.costs):
            return None
        return self.mean([c or 0.0 for c in self.costs])

    def to_json(self) -> dict[str, Any]:
        interval = wilson_interval(sum(self.correct), self.n)
        return {
            "name": self.name,
            "protocol": self.protocol,
            "questions": self.n,
            "correct": sum(self.correct),
            "accuracy": self.accuracy,
            "interval_95": [interval.low, interval.high],
            "calls": self.total_calls,
            "calls_per_question": self.mean([float(c) for c in self.calls]),
            "tokens_per_question": self.mean([float(t) for t in self.tokens]),
            "cost_per_question": self.cost_per_question,
            "session_seconds": round(self.seconds, 3),
            "failed_sessions": self.failed,
            "baseline": self.baseline,
            "comparison": self.comparison,
            "flips": [
                {
                    "round": f.round,
                    "correct_to_wrong": f.correct_to_wrong,
                    "wrong_to_correct": f.wrong_to_correct,
                    "stayed_correct": f.stayed_correct,
                    "stayed_wrong": f.stayed_wrong,
                }
                for f in self.flips
            ],
            "swap_audit": self.swap_audit,
            "per_question": [
                {"correct": c, "calls": k, "session": s}
                for c, k, s in zip(self.correct, self.calls, self.sessions, strict=True)
            ],
        }


class BenchReport(Struct):
    options: BenchOptions
    suite: Suite
    rows: list[ProtocolRow]
    models: list[str]
    batches: list[str]
    seconds: float
    folder: Path
    markdown: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def _plan(options: BenchOptions, protocol: str, extra: Mapping[str, Any] | None = None) -> Plan:
    overrides: dict[str, Any] = {"protocol": protocol, "seed": options.seed}
    if options.models:
        overrides["agents"] = [{"model": spec} for spec in options.models]
    overrides.update(extra or {})
    try:
        return load_run(options.config_path, overrides)  # the user config's problems name it
    except ConfigError as error:
        raise ConfigError(f"protocol {protocol}: {error}") from None


def _runner(options: BenchOptions) -> batches.Runner:
    if options.executor == "ray":
        from moot.batch.ray import ray_runner

        runner: batches.Runner = ray_runner(options.ray_address)
        return runner
    return batches.run_local


def _run(
    options: BenchOptions,
    lines: list[tuple[str, str, RunConfig]],
    observer: batches.BatchObserver | None,
) -> tuple[str, dict[str, batches.LineResult]]:
    folder = batches.create_batch(lines, source=f"moot bench --suite {options.suite}")
    summary = batches.run_batch_sync(
        folder,
        concurrency=options.concurrency,
        provider_limits=options.provider_limits,
        observer=observer,
        runner=_runner(options),
    )
    if summary.interrupted:
        raise ConfigError(
            f"the bench was interrupted; its sessions are kept: moot batch --resume {folder.id}"
        )
    return folder.id, {r.label: r for r in summary.results}


def _lines(
    options: BenchOptions, suite: Suite, label: str, plan: Plan
) -> list[tuple[str, str, RunConfig]]:
    """One batch line per question, each with its own seed (`session_seed`)."""
    return [
        (
            f"{label}/{q.id}",
            q.question,
            replace(plan.config, seed=session_seed(options.seed, q.question)),
        )
        for q in suite.questions
    ]


def _calls(result: batches.LineResult) -> int:
    """The calls a session made, counted in its journal (the batch's count without one)."""
    counted = calls_made(Path(result.folder)) if result.folder else None
    return result.calls if counted is None else counted


def _row(
    name: str, protocol: str, suite: Suite, results: Mapping[str, batches.LineResult]
) -> ProtocolRow:
    row = ProtocolRow(name, protocol, [], [], [], [], 0.0, [], 0)
    for question in suite.questions:
        result = results[f"{name}/{question.id}"]
        reached = result.status in batches.DONE
        row.correct.append(reached and question.score(answer_of(result.final_answer)))
        row.calls.append(_calls(result))
        row.tokens.append(result.tokens)
        row.costs.append(result.cost)
        row.seconds += result.seconds
        row.sessions.append(result.session_id)
        row.failed += not reached
    return row


def _flips(row: ProtocolRow, suite: Suite, results: Mapping[str, batches.LineResult]) -> None:
    """Flips per round, for protocols whose agents answered in more than one round: each
    agent's claim per round scored against the question's answer."""
    trajectories: list[list[bool | None]] = []
    for question in suite.questions:
        folder = results[f"{row.name}/{question.id}"].folder
        if folder is None:
            continue
        for answers in agent_trajectories(Path(folder)).values():
            trajectories.append([None if a is None else question.score(a) for a in answers])
    if any(len(t) > 1 for t in trajectories):
        row.flips = list(count_flips(trajectories, first_round=0))


def _swap_audit(
    row: ProtocolRow, results: Mapping[str, batches.LineResult], options: BenchOptions
) -> dict[str, Any]:
    """Re-ask a share of the row's pairwise judgements swapped (`moot.bench.swap`)."""
    judgements = [
        judgement
        for label, result in results.items()
        if label.startswith(f"{row.name}/") and result.folder
        for judgement in pairwise_judgements(Path(result.folder))
    ]
    if not judgements:
        return {
            "note": "no pairwise judgement was recorded (its judges, if any, do not compare "
            "two candidates), so there is nothing to swap"
        }
    audit = audit_judgements(judgements, options.swap_audit, options.seed)
    interval = audit.interval()
    return {
        "judgements": len(judgements),
        "asked_swapped": audit.judged + audit.unusable,
        "judged": audit.judged,
        "stable": audit.stable,
        "unusable": audit.unusable,
        "stability": audit.stability,
        "interval_95": None if interval is None else [interval.low, interval.high],
    }


def _adversarial(options: BenchOptions, out: Path | None, began: float) -> BenchReport:
    """`--suite adversarial`: scripted personas on each protocol (`moot.bench.adversarial`);
    the report is its table, its data the table's numbers (`targets_met` per protocol). The
    sessions are kept under the report folder's `sessions/`."""
    if options.models:
        raise ConfigError(
            "--suite adversarial runs scripted personas, not models: leave --models out"
        )
    known = set(adversarial.PROTOCOLS)
    unknown = [p for p in options.protocols if p not in known]
    if unknown:
        raise ConfigError(
            f"--suite adversarial runs {', '.join(adversarial.PROTOCOLS)}; not {', '.join(unknown)}"
        )
    chosen = tuple(dict.fromkeys(options.protocols)) or adversarial.PROTOCOLS
    cases = adversarial.CASES[: options.n] if options.n else adversarial.CASES
    folder = out or batches.batches_root() / (
        time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-adversarial"
    )
    table = adversarial.run_suite(chosen, cases, root=folder / "sessions", seed=options.seed)
    adversarial.write(table, folder)
    data = table.to_json()
    return BenchReport(
        options=options,
        suite=Suite(adversarial.SUITE, ()),
        rows=[],
        models=[],
        batches=[],
        seconds=time.monotonic() - began,
        folder=folder,
        markdown=adversarial.markdown(table),
        data=data,
    )


def run_bench(
    options: BenchOptions,
    *,
    observer: batches.BatchObserver | None = None,
    out: Path | None = None,
) -> BenchReport:
    """Run the bench and write report.md, report.html and bench.json (see the module doc)."""
    from moot.bench.report import write_report

    began = time.monotonic()
    if options.suite == adversarial.SUITE:
        return _adversarial(options, out, began)
    suite = suite_for(options.suite, options.n, options.seed)
    names = list(dict.fromkeys(options.protocols))
    if not names:
        raise ConfigError("--protocols is empty: name at least one protocol, e.g. arena,vote")
    plans = {name: _plan(options, name) for name in names}
    lines = [line for name in names for line in _lines(options, suite, name, plans[name])]
    first_id, results = _run(options, lines, observer)
    rows = {name: _row(name, name, suite, results) for name in names}
    for name in names:
        _flips(rows[name], suite, results)
    # vote at each protocol's mean calls per question
    vote_agents = len(_plan(options, BASELINE).config.agents)
    sizes: dict[str, int] = {}
    for name in names:
        if name != BASELINE:
            mean_calls = rows[name].mean([float(c) for c in rows[name].calls])
            sizes[name] = max(1, round(mean_calls / vote_agents))
    baseline_ids: list[str] = []
    if sizes:
        samples = protocols.get(BASELINE).flags[Flag.SAMPLES]  # answers per agent, from its record
        baseline_plans = {
            k: _plan(options, BASELINE, {f"{BASELINE}.{samples}": k})
            for k in sorted(set(sizes.values()))
        }
        vote_lines = [
            line
            for k, plan in baseline_plans.items()
            for line in _lines(options, suite, f"{BASELINE} (samples={k})", plan)
        ]
        vote_id, vote_results = _run(options, vote_lines, observer)
        baseline_ids.append(vote_id)
        for k in baseline_plans:
            label = f"{BASELINE} (samples={k})"
            rows[label] = _row(label, BASELINE, suite, vote_results)
    for name, k in sizes.items():
        row, base = rows[name], rows[f"{BASELINE} (samples={k})"]
        row.baseline = base.name
        comparison = compare(name, row.correct, base.name, base.correct, options.alpha)
        row.comparison = {
            "baseline": base.name,
            "calls": row.total_calls,
            "baseline_calls": base.total_calls,
            "equal_calls": row.total_calls == base.total_calls,
            "only_protocol_right": comparison.test.only_first,
            "only_baseline_right": comparison.test.only_second,
            "p_value": comparison.test.p_value,
            "alpha": options.alpha,
            "direction": comparison.direction,
            "sentence": comparison.sentence,
        }
    if options.swap_audit > 0:
        for name in names:
            if name != BASELINE:
                rows[name].swap_audit = _swap_audit(rows[name], results, options)
    models = sorted(
        {
            member.model
            for plan in plans.values()
            for role in plan.record.participants(plan.config, plan.options)
            for member in role.members
        }
    )
    report = BenchReport(
        options=options,
        suite=suite,
        rows=list(rows.values()),
        models=models,
        batches=[first_id, *baseline_ids],
        seconds=time.monotonic() - began,
        folder=out or batches.batches_root() / first_id,
    )
    write_report(report)
    return report
