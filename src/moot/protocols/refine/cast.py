"""Who plays which role in a pass of the refine protocol.

A role configured in `[refine.roles]` is always played by its own participant (`critic_a`,
`reviser_a` for author B, `synthesizer_a`, `judge_a`). An unset role rotates through the agents
given with `--models` (in alias order), one step further every pass: critic agents[p-1], author B
agents[p], synthesizer agents[p+1] (indices modulo the number of agents). Judges are the agents
that wrote none of the texts they rank (the incumbent's writer, author B, the synthesizer),
taken in rotation. Where they are fewer than the judges asked for, the other seats go to the
writers, in rotation, before any agent judges twice: several models' rankings are more evidence
than one model's sampled again (with three agents, one non-writer would otherwise judge alone
three times), and the pass records `self_judging` (the run warns once, and the trust statement
says judges ranked texts they had written). An agent judges twice only where the judges asked
for outnumber the agents. Give as many agents as the writers and judges together, or a
`[refine.roles] judge`, for judges that never rank their own text.
"""

from __future__ import annotations

from msgspec import Struct

__all__ = ["Cast", "cast_pass"]


class Cast(Struct, frozen=True):
    critic: str
    author_b: str
    synthesizer: str
    judges: tuple[str, ...]
    self_judging: bool


def _rotated(agents: list[str], offset: int) -> list[str]:
    k = offset % len(agents)
    return agents[k:] + agents[:k]


def cast_pass(aliases: list[str], number: int, judges: int, incumbent_writer: str | None) -> Cast:
    """The cast of pass `number` (1-based) among the session's `aliases`."""
    agents = sorted(a for a in aliases if a.startswith("agent_"))
    own = {prefix: f"{prefix}_a" for prefix in ("critic", "reviser", "synthesizer", "judge")}
    present = {prefix: alias in aliases for prefix, alias in own.items()}
    turn = _rotated(agents, number - 1) if agents else []

    def pick(prefix: str, index: int) -> str:
        if present[prefix] or not turn:
            return own[prefix]
        return turn[index % len(turn)]

    critic, author_b, synthesizer = pick("critic", 0), pick("reviser", 1), pick("synthesizer", 2)
    if present["judge"] or not turn:
        return Cast(critic, author_b, synthesizer, (own["judge"],) * judges, False)
    writers = {incumbent_writer, author_b, synthesizer}
    seats = _rotated(turn, 3)
    pool = [a for a in seats if a not in writers] + [a for a in seats if a in writers]
    chosen = tuple(pool[i % len(pool)] for i in range(judges))
    return Cast(critic, author_b, synthesizer, chosen, bool(writers & set(chosen)))
