"""The `moot` command (its console script) and `python -m moot`: the CLI, in a process of its own.

The collector is paused before anything else is imported (moot/collector.py says why); the CLI
ends the pause once it knows the command, or the run's engine does when its loop starts."""

from __future__ import annotations

from moot import collector


def main() -> None:
    collector.pause()
    from moot.cli import main as cli

    cli()


if __name__ == "__main__":
    main()
