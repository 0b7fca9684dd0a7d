"""`moot stats`: per model over every session, how its answers fared and what it spent."""

from __future__ import annotations

import json

import click

__all__ = ["stats"]


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def stats(as_json: bool) -> None:
    """Per model, over every finished session: how often its final answer was valid, agreed
    with the answer moot found, was the final answer (picked), changed under critique; its
    calls, tokens and cost. One row a model; an agent seat is one agent of one session (a
    model can hold several)."""
    from moot.engine.store import list_sessions, readable_root
    from moot.lifecycle.stats import model_stats

    rows = model_stats(list_sessions(readable_root()))
    if as_json:
        click.echo(json.dumps([r.as_json() for r in rows], indent=2))
        return
    if not rows:
        click.echo("no finished session yet")
        return
    head = ("model", "sessions", "valid", "agreed", "picked", "changed", "tokens", "cost")
    lines = [head] + [
        (
            r.model,
            str(r.sessions),
            r.share(r.valid) or "-",
            r.share(r.agreed) or "-",
            r.share(r.picked) or "-",
            r.share(r.changed) or "-",
            f"{r.tokens:,}",
            f"${r.cost:.4f}" if r.cost_known else "unknown",
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    for line in lines:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())
