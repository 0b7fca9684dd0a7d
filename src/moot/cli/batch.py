"""`moot batch` and `moot bench`: many sessions at once (registered by `moot.cli`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from moot.bench.gym import GYM_DATASETS, GYM_PREFIX
from moot.cli.common import Whole, config_option, models_option, say
from moot.text import plural

__all__ = ["batch", "bench"]


def _provider_limits(pairs: tuple[str, ...]) -> dict[str, int]:
    limits: dict[str, int] = {}
    for pair in pairs:
        name, _, number = pair.partition("=")
        if not name or not number.isdigit() or int(number) < 1:
            raise click.BadParameter(
                f"{pair!r}: write PROVIDER=N with N >= 1, e.g. openai=4",
                param_hint="--provider-limit",
            )
        limits[name.strip().lower()] = int(number)
    return limits


def _concurrency_options(command: Callable[..., None]) -> Callable[..., None]:
    command = click.option(
        "--provider-limit",
        "provider_limit",
        multiple=True,
        metavar="PROVIDER=N",
        help="At most N sessions using this provider at once (repeatable), e.g. openai=4.",
    )(command)
    command = click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="local: one event loop in this process; ray: one Ray task per session.",
    )(command)
    command = click.option(
        "--ray-address",
        default=None,
        metavar="ADDRESS",
        help="The Ray cluster to use (default: a local Ray started for the run).",
    )(command)
    return click.option(
        "--concurrency",
        "-j",
        type=Whole(min=1),
        default=8,
        show_default=True,
        help="Sessions running at once.",
    )(command)


@click.command()
@click.argument(
    "tasks", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option("--resume", "resume_id", default=None, metavar="BATCH_ID", help="Continue a batch.")
@click.option("--protocol", default=None, help="Protocol for lines that name none.")
@models_option("One agent per use.")
@config_option()
@_concurrency_options
def batch(
    tasks: Path | None,
    resume_id: str | None,
    protocol: str | None,
    models: tuple[str, ...],
    config_path: Path | None,
    concurrency: int,
    ray_address: str | None,
    executor: str,
    provider_limit: tuple[str, ...],
) -> None:
    """Run one session per line of TASKS (JSONL: {"task": ..., optional "id", "protocol",
    "models", "seed", "config"}); killed, continue with --resume BATCH_ID.

    Exit codes: 0 every session reached an outcome, 1 some did not (listed), 130 interrupted."""
    from moot import batch as batches
    from moot.display.batch import BatchProgress, summary_lines

    limits = _provider_limits(provider_limit)
    if (tasks is None) == (resume_id is None):
        raise click.UsageError("give either TASKS (a .jsonl file) or --resume BATCH_ID")
    if resume_id is not None:
        if protocol or models or config_path:
            raise click.UsageError(
                "--resume continues a batch with the settings it was created with; "
                "drop --protocol, --models and --config"
            )
        folder = batches.open_batch(resume_id)
    else:
        assert tasks is not None
        lines = batches.read_tasks(tasks, config_path=config_path, protocol=protocol, models=models)
        folder = batches.create_batch(lines, source=str(tasks))
    say(f"batch {folder.id}: {plural(len(folder.lines), 'session')}", err=True)
    progress = BatchProgress()
    runner: batches.Runner = batches.run_local
    if executor == "ray":
        from moot.batch.ray import ray_runner

        runner = ray_runner(ray_address)
    try:
        summary = batches.run_batch_sync(
            folder,
            concurrency=concurrency,
            provider_limits=limits,
            observer=progress,
            runner=runner,
        )
    finally:
        progress.close()
    for line in summary_lines(summary, len(folder.lines)):
        say(line)
    say(f"results: {folder.results}", err=True)
    sys.exit(0 if summary.complete else (130 if summary.interrupted else 1))


@click.command()
@click.option(
    "--suite",
    required=True,
    help=(
        "arithmetic; reasoning-gym's "
        + ", ".join(GYM_PREFIX + name for name in GYM_DATASETS)
        + " (the gym extra); the path of a .jsonl suite; or adversarial (scripted personas: "
        "false consensus and false disagreement per protocol; exit 1 if a target is missed)."
    ),
)
@click.option(
    "--protocols",
    "protocol_names",
    default=None,
    help="Comma-separated protocols to compare; vote is always run as the baseline "
    "(default: arena,vote; with --suite adversarial: every protocol with scripted personas).",
)
@models_option("One agent per use.")
@config_option()
@click.option("--n", type=Whole(min=1), default=None, help="Questions.")
@click.option("--seed", type=int, default=0, show_default=True, help="Suite and session seed.")
@click.option(
    "--swap-audit",
    type=click.FloatRange(0, 1),
    default=0.0,
    help="Share of pairwise judgements to ask again with the order swapped (0.2 = 20%).",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Significance level of the paired comparison with vote (McNemar); intervals are 95%.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder for report.md, report.html and bench.json (default: the batch folder).",
)
@_concurrency_options
def bench(
    suite: str,
    protocol_names: str | None,
    provider_limit: tuple[str, ...],
    out: Path | None,
    **fields: Any,  # the other options, each named as the `BenchOptions` field it sets
) -> None:
    """Run the protocols --protocols names (default: arena, with vote as the baseline) on the
    same questions and compare each with vote at equal calls."""
    from moot.bench.runner import BenchOptions, run_bench
    from moot.display.batch import BatchProgress

    if protocol_names is None:
        protocol_names = "" if suite == "adversarial" else "arena,vote"
    names = [name.strip() for name in protocol_names.split(",") if name.strip()]
    limits = _provider_limits(provider_limit)
    options = BenchOptions(suite=suite, protocols=names, provider_limits=limits, **fields)
    progress = BatchProgress()
    report = run_bench(options, observer=progress, out=out)
    say(report.markdown)
    say(f"reports: {report.folder}", err=True)
    met = report.data.get("protocols") if suite == "adversarial" else None
    if isinstance(met, dict) and not all(row["targets_met"] for row in met.values()):
        sys.exit(1)
