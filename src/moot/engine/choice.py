"""A human's choice among options (`Session.choose`): the `Chooser` a session reads it through,
the default one, `read_choice`, a line of standard input, and `chosen`, which asks one and
checks its pick."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from moot.types import alias_label

__all__ = ["Chooser", "chosen", "read_choice"]

# (prompt, options) -> an option, or None (no choice made, left for later).
Chooser = Callable[[str, Sequence[str]], Awaitable[str | None]]


async def read_choice(prompt: str, options: Sequence[str]) -> str | None:
    """Ask on standard error, read the answer from standard input: an option's number, its
    letter ("B" or "b" for Agent B, when no two options share one) or its name, as listed
    ("Agent B") or as journaled ("agent_b"). An empty line or the end of input chooses nothing;
    a wrong answer asks again (three times at most)."""
    import sys

    letters: dict[str, list[str]] = {}
    for option in options:
        label = alias_label(option)
        if label != option:  # "Agent B": its letter is the last word
            letters.setdefault(label.rsplit(" ", 1)[-1].casefold(), []).append(option)
    named = {letter: found[0] for letter, found in letters.items() if len(found) == 1}
    named.update({alias_label(option).casefold(): option for option in options})
    named.update({option.casefold(): option for option in options})

    def ask() -> str | None:
        listed = "\n".join(f"  {i}. {alias_label(option)}" for i, option in enumerate(options, 1))
        for _ in range(3):
            sys.stderr.write(
                f"{prompt}\n{listed}\nChoose 1-{len(options)} or a letter (empty: none): "
            )
            sys.stderr.flush()
            line = sys.stdin.readline()
            answer = line.strip()
            if not answer:
                return None
            if answer.isdigit() and 1 <= int(answer) <= len(options):
                return options[int(answer) - 1]
            if answer.casefold() in named:
                return named[answer.casefold()]
            sys.stderr.write(f"{answer!r} is not one of the choices\n")
        return None

    return await asyncio.to_thread(ask)


async def chosen(chooser: Chooser | None, prompt: str, options: Sequence[str]) -> str | None:
    """The choice `chooser` makes among `options` (by default `read_choice`'s); one that is
    not among them is a ValueError."""
    picked = await (chooser or read_choice)(prompt, list(options))
    if picked is not None and picked not in options:
        raise ValueError(f"the chooser returned {picked!r}, not one of {list(options)}")
    return picked
