"""The refine protocol (seed 004, "Tournaments"): self-refinement by tournament.

    A = input text, or the author's answer to the task
    streak = 0
    for pass in 1..max_passes:
        critique = critic(A)                         # problems only, no fixes
        B = author_b(A, critique)                    # a revision
        AB = synthesizer(A, B as X/Y, seeded labels) # a merge
        rankings = judges(A, B, AB)                  # each in a fresh context, own shuffle,
                                                     # never the critique
        winner = borda(rankings), a tie to A         # no valid ranking: A stays
        if winner == A: streak += 1                  # converged when streak == k
        else: A, streak = winner, 0

Every role is one fresh message: no conversation is carried between roles or passes. The
artifacts beside the journal (`refine/`) are written through the Session.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from moot.deliberation.anonymize import quote
from moot.engine.session import Session
from moot.errors import ProtocolAborted
from moot.protocols.refine import prompts
from moot.protocols.refine.cast import Cast, cast_pass
from moot.protocols.refine.judging import judge_pass
from moot.protocols.refine.options import RefineOptions
from moot.protocols.refine.summary import describe_round
from moot.text import plural
from moot.types import Message, Outcome, Step

__all__ = ["run"]


@dataclass
class _State:
    task: str
    opts: RefineOptions
    incumbent: str = ""
    writer: str | None = None  # who wrote the incumbent (None: the --input file)
    streak: int = 0
    rounds: list[dict[str, Any]] = field(default_factory=list)
    warned_self_judging: bool = False


def _nonce(s: Session, step: str) -> str:
    return f"{s.rng(step).getrandbits(48):012x}"


def _quoted(s: Session, st: _State, label: str, text: str, step: str) -> str:
    return quote(label, text, nonce=_nonce(s, f"{step}/{label}"), limit=st.opts.max_quote_chars)


async def _say(s: Session, alias: str, prompt: str, step: str) -> str | None:
    """One fresh-context ask; the text, or None when the call failed or said nothing."""
    completion = await s.ask(alias, [Message(role="user", content=prompt)], step=step)
    text = completion.text.strip() if completion.ok else ""
    return text or None


def _pass_path(number: int, name: str) -> str:
    return f"refine/pass_{number:02d}/{name}"


async def _initial(s: Session, st: _State) -> None:
    if st.opts.input is not None:
        st.incumbent, st.writer = st.opts.input, None
    else:
        author = sorted(a for a in s.aliases if a.startswith("agent_"))[0]
        step = Step.at(0, "author", author)
        text = await _say(s, author, prompts.AUTHOR.format(task=st.task), step)
        if text is None:  # nothing to refine; resuming would replay the same failure
            raise ProtocolAborted(
                f"the author ({author}) wrote no initial text; start again, or give the text "
                "with --input FILE"
            )
        st.incumbent, st.writer = text, author
    s.artifact("refine/initial_a.md", st.incumbent)


async def _pass(s: Session, st: _State, number: int) -> dict[str, Any]:
    cast = cast_pass(s.aliases, number, st.opts.judges, st.writer)
    if cast.self_judging and not st.warned_self_judging:
        st.warned_self_judging = True
        s.warn(
            "refine: too few agents for judges that never rank their own text; judges come "
            "from all agents (give four agents or a [refine.roles] judge)"
        )
    record: dict[str, Any] = {
        "round": number,
        "roles": _roles(cast),
        "writers": {"A": st.writer},
        "streak_before": st.streak,
    }
    s.artifact(_pass_path(number, "version_a.md"), st.incumbent)
    a = st.incumbent
    step = Step.at(number, "critic", cast.critic)
    critique = await _say(
        s,
        cast.critic,
        prompts.CRITIC.format(task=st.task, a=_quoted(s, st, "Version A", a, step)),
        step,
    )
    if critique is None:
        return _no_challenger(s, st, record, "the critic gave no critique")
    s.artifact(_pass_path(number, "critic.md"), critique)
    step = Step.at(number, "revise", cast.author_b)
    b = await _say(
        s,
        cast.author_b,
        prompts.AUTHOR_B.format(
            task=st.task,
            a=_quoted(s, st, "Version A", a, step),
            critique=_quoted(s, st, "Critique", critique, step),
        ),
        step,
    )
    if b is None:
        return _no_challenger(s, st, record, "author B wrote no revision")
    s.artifact(_pass_path(number, "version_b.md"), b)
    texts = {"A": a, "B": b}
    record["writers"]["B"] = cast.author_b
    step = Step.at(number, "synthesize", cast.synthesizer)
    x, y = s.shuffle(["A", "B"], step=f"{step}/labels")
    record["synthesis_labels"] = {"X": x, "Y": y}
    ab = await _say(
        s,
        cast.synthesizer,
        prompts.SYNTHESIZER.format(
            task=st.task,
            x=_quoted(s, st, "Response X", texts[x], step),
            y=_quoted(s, st, "Response Y", texts[y], step),
        ),
        step,
    )
    if ab is not None:
        s.artifact(_pass_path(number, "version_ab.md"), ab)
        texts["AB"] = ab
        record["writers"]["AB"] = cast.synthesizer
    else:
        record["problem"] = "the synthesizer wrote nothing: A and B only"
    judges, result = await judge_pass(
        s, st.task, number, texts, cast.judges, st.opts.max_quote_chars
    )
    record["judges"] = judges
    record["borda"] = result.as_dict()
    record["winner"] = result.winner
    if result.no_valid_ranking:
        record["problem"] = "no valid ranking: the incumbent stays"
    elif result.incumbent_won:
        st.streak += 1
    else:
        st.incumbent, st.writer, st.streak = (
            texts[result.winner],
            record["writers"][result.winner],
            0,
        )
    return _end_pass(s, st, record)


def _roles(cast: Cast) -> dict[str, Any]:
    return {
        "critic": cast.critic,
        "author_b": cast.author_b,
        "synthesizer": cast.synthesizer,
        "judges": list(cast.judges),
        "self_judging": cast.self_judging,
    }


def _no_challenger(s: Session, st: _State, record: dict[str, Any], why: str) -> dict[str, Any]:
    record.update(winner="A", problem=f"{why}: the incumbent stays", judges=[], borda=None)
    return _end_pass(s, st, record)


def _end_pass(s: Session, st: _State, record: dict[str, Any]) -> dict[str, Any]:
    number = record["round"]
    record["streak"] = st.streak
    record["converged"] = st.streak >= st.opts.convergence_k
    record["k"] = st.opts.convergence_k
    st.rounds.append(record)
    result = {key: record.get(key) for key in ("judges", "borda", "winner", "synthesis_labels")}
    s.artifact(_pass_path(number, "result.json"), json.dumps(result, indent=2) + "\n")
    s.artifact("refine/history.json", json.dumps(_history(st), indent=2) + "\n")
    s.round_done(Step.at(number, "borda"), describe_round(record, st.opts))
    return record


def _history(st: _State) -> list[dict[str, Any]]:
    return [
        {
            "pass": r["round"],
            "winner": r["winner"],
            "streak": r["streak"],
            "converged": r["converged"],
            "scores": (r.get("borda") or {}).get("scores"),
            "problem": r.get("problem"),
        }
        for r in st.rounds
    ]


async def run(s: Session, task: str, opts: RefineOptions) -> Outcome:
    st = _State(task=task, opts=opts)
    await _initial(s, st)
    for number in range(1, opts.max_passes + 1):
        record = await _pass(s, st, number)
        if record["converged"]:
            break
    s.artifact("refine/final_output.md", st.incumbent)
    return _outcome(st)


def _outcome(st: _State) -> Outcome:
    passes = len(st.rounds)
    k = st.opts.convergence_k
    converged = bool(st.rounds) and st.rounds[-1]["converged"]
    changes = sum(1 for r in st.rounds if r["winner"] != "A")
    if converged:
        how = (
            f"converged after {plural(passes, 'pass', 'passes')}: the incumbent won "
            f"{plural(k, 'pass', 'passes')} in a row "
            f"({plural(changes, 'revision')} adopted)"
        )
    else:
        how = (
            f"not converged in {plural(passes, 'pass', 'passes')}: the incumbent's streak is "
            f"{st.streak} of {k} ({plural(changes, 'revision')} adopted); the final output is "
            "the last incumbent"
        )
    return Outcome(
        protocol="refine",
        status="consensus" if converged else "no_consensus",
        consensus=converged,
        how=how,
        final_answer=st.incumbent,
        rounds=passes,
        disagreements=tuple(r["problem"] for r in st.rounds if r.get("problem")),
        details={
            "rounds": st.rounds,
            "history": _history(st),
            "refine": {
                "converged": converged,
                "passes": passes,
                "streak": st.streak,
                "convergence_k": k,
                "judges": st.opts.judges,
                "final_writer": st.writer,
                "from_input": st.opts.input is not None,
            },
        },
    )
