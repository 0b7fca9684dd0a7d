"""The refine protocol's worst case for `moot run --dry-run` and the `--max-cost` check: per
model, the fewest and the most calls any run can give it, with the largest prompt it may get.

Who plays which role in a pass depends on the pass's number and on who wrote the incumbent
(cast.py: the judges are the agents that wrote none of A, B and AB), and the writer depends on
how every earlier pass ended. So the bounds are taken over every way a run can go, as states
(pass, the incumbent's writer, the streak). After a pass in which everyone answered, a run

- keeps A with a win that counts: the streak grows, and the run ends at `convergence_k`;
- keeps A without one (no quorum of valid rankings): nothing changes but the pass;
- adopts B or AB: author B or the synthesizer writes the incumbent, the streak starts again;

and it never runs past `max_passes`. The fewest are the least over runs in which every turn is
taken (a critique, a revision and a merge that count as texts, a ranking from every judge, valid
or not), the most the greatest over all runs; each is reached by some run. A call that fails,
or a text that is no answer, ends a pass (or, the first text, the run) sooner: the fewest do not
count those runs, as no protocol's projection does. The participants that share a model
config are bounded together, on one line: a run on one model is bounded exactly (the fewest
1 + min(k, max_passes) x (3 + judges) calls, with the first text written; the most
1 + max_passes x (3 + judges)), and with several models each line's bounds hold, while their
sums may be looser than one run's total. As in the other projections, the agents' models are
counted in the configured order (a run's aliases are shuffled by its seed).

On a code task (`--repo`) a writer that answers with a diff (any model but a CLI agent, which
edits its worktree) is asked once more when its diff does not apply (protocols/codework.py),
and the writers see the repository's context.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from moot.config import AgentConfig, RunConfig
from moot.protocols.definition import Projected, Projection, completion_cap
from moot.protocols.refine.cast import Cast, cast_pass
from moot.protocols.refine.options import RefineOptions
from moot.types import alias_for, alias_label, parse_spec

__all__ = ["project"]

_PROMPT_OVERHEAD = 300  # tokens of instructions and labels around the quoted texts
_REASK = 2  # a code task's writer: its answer, and once more with git's error


def project(config: RunConfig, options: RefineOptions) -> Projection:
    """Calls per model over every way a run can go, with the largest prompt each may get:
    one line for the participants that share a model config (their calls bounded together,
    so a run of one model is bounded exactly), in the configured order."""
    members: dict[str, AgentConfig] = {
        alias_for(i, "agent"): agent for i, agent in enumerate(config.agents)
    }
    for prefix, member in options.roles.by_prefix():
        if member is not None:
            members[f"{prefix}_a"] = member
    code = config.code is not None
    writes = {
        alias: _REASK if code and parse_spec(m.model).provider != "cli" else 1
        for alias, m in members.items()
    }
    groups: list[tuple[AgentConfig, list[str]]] = []
    for alias, member in members.items():
        same = next((g for m, g in groups if m == member), None)
        if same is None:
            groups.append((member, [alias]))
        else:
            same.append(alias)
    prompts = _prompts(config, options, list(members.values()))
    runs = _Runs(list(members), options, writes)
    result = []
    for member, aliases in groups:
        played = set().union(*(runs.roles(alias) for alias in aliases))
        if not played:
            continue
        who = ", ".join(alias_label(alias) for alias in aliases)
        result.append(
            Projected(
                member=member,
                role=f"{who} ({', '.join(sorted(played))})",
                fewest=runs.calls(frozenset(aliases), most=False),
                most=runs.calls(frozenset(aliases), most=True),
                prompt_tokens=_PROMPT_OVERHEAD + max(prompts[r] for r in played),
                cut_to_window=False,  # quoted texts are cut at max_quote_chars, not to a window
            )
        )
    return result


def _prompts(
    config: RunConfig, options: RefineOptions, members: list[AgentConfig]
) -> dict[str, int]:
    """The largest prompt of each role, without the task: the texts it is shown, each at most
    a completion (a code change: its diff and its verification, each quoted up to
    `max_quote_chars`)."""
    cap = max(completion_cap(m) for m in members)
    quoted = options.max_quote_chars // 4 + 20
    if config.code is None:
        text, context, reask = min(cap, quoted), 0, 0
    else:
        text, context, reask = 2 * quoted, config.code.context_budget_tokens, cap + 200
    return {
        "author": context + reask,
        "critic": text,
        "author_b": context + 2 * text + reask,
        "synthesizer": context + 2 * text + reask,
        "judge": 3 * min(text, quoted),
    }


class _Runs:
    """Every way a run can go, as states (pass, the incumbent's writer, the streak)."""

    def __init__(self, aliases: list[str], options: RefineOptions, writes: dict[str, int]) -> None:
        self.aliases, self.options, self.writes = aliases, options, writes
        agents = sorted(a for a in aliases if a.startswith("agent_"))
        # the first text's author (none with --input)
        self.first = agents[0] if options.input is None and agents else None
        self.cast = cache(self._cast)

    def _cast(self, number: int, writer: str | None) -> Cast:
        return cast_pass(self.aliases, number, self.options.judges, writer)

    def calls(self, group: frozenset[str], *, most: bool) -> int:
        """The fewest calls the participants in `group` get in a run where every call answers
        (`most` False), or the most they get in any run."""
        k, last = self.options.convergence_k, self.options.max_passes
        pick: Callable[[list[int]], int] = max if most else min

        def asked(alias: str) -> int:  # calls of one writing turn
            return self.writes[alias] if most else 1

        @cache
        def rest(number: int, writer: str | None, streak: int) -> int:
            """The group's calls from pass `number` on, to the run's end."""
            if number > last:
                return 0
            c = self.cast(number, writer)
            here = sum(1 for a in (c.critic, *c.judges) if a in group)
            here += sum(asked(a) for a in (c.author_b, c.synthesizer) if a in group)
            after = [
                rest(number + 1, writer, streak + 1) if streak + 1 < k else 0,  # A wins
                rest(number + 1, writer, streak),  # A holds without a quorum: no win
                rest(number + 1, c.author_b, 0),  # B is adopted
                rest(number + 1, c.synthesizer, 0),  # AB is adopted
            ]
            return here + pick(after)

        author = asked(self.first) if self.first in group and self.first is not None else 0
        return author + rest(1, self.first, 0)

    def roles(self, alias: str) -> set[str]:
        """The roles `alias` plays in some pass of some run: over every writer the incumbent
        can have by each pass (the streak does not change who plays)."""
        played = {"author"} if alias == self.first else set()
        writers: set[str | None] = {self.first}
        for number in range(1, self.options.max_passes + 1):
            casts = [self.cast(number, writer) for writer in writers]
            for c in casts:
                for role, who in (
                    ("critic", c.critic),
                    ("author_b", c.author_b),
                    ("synthesizer", c.synthesizer),
                ):
                    if who == alias:
                        played.add(role)
                if alias in c.judges:
                    played.add("judge")
            writers |= {who for c in casts for who in (c.author_b, c.synthesizer)}
        return played
