"""Long text on a terminal through a pager (`moot show`): MOOT_PAGER, else PAGER, else
`less`, as git does. Only the caller knows whether stdout is a terminal; piped text never
reaches here."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

__all__ = ["page", "pager_command"]


def pager_command() -> list[str]:
    """The pager to run: MOOT_PAGER, else PAGER, else `less`; empty where either is set to
    nothing or to `cat` (no pager wanted)."""
    for name in ("MOOT_PAGER", "PAGER"):
        value = os.environ.get(name)
        if value is not None:
            words = shlex.split(value)
            return [] if not words or words == ["cat"] else words
    return ["less"]


def page(text: str) -> None:
    """Show `text` (which may hold the terminal's colours) through the pager, or print it where
    there is none or it cannot be started."""
    command = pager_command()
    if command:
        # less shows colours with -R, leaves the screen as it was with -X, quits at once if
        # it all fits with -F (git's LESS default); a LESS the user set wins
        env = {"LESS": "FRX", **os.environ}
        try:
            subprocess.run(command, input=text.encode(), env=env, check=False)
            return
        except OSError:  # not installed: print it instead
            pass
    sys.stdout.write(text)
    sys.stdout.flush()
