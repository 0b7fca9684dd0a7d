"""The passes of the refine protocol, on a text and on a code task alike: the state carried
between passes, a pass's cast and record, the critic's ask, the judges' decision (Borda, ties to
the incumbent, a quorum for the streak), the stopping rule, and the outcome.

    for pass in 1..max_passes:
        record = one_pass(pass)                      # run.py: texts; code.py: changes
        stop when the incumbent has won k passes in a row
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from msgspec import Struct, field

from moot.deliberation.borda import BordaResult, borda, is_valid_ranking
from moot.deliberation.claims import extract_claim
from moot.deliberation.markup import strip_markup
from moot.engine.session import Session
from moot.protocols.refine.cast import Cast, cast_pass
from moot.protocols.refine.judging import judge_pass
from moot.protocols.refine.options import RefineOptions
from moot.protocols.refine.summary import describe_round
from moot.protocols.refine.trust import qualifiers, trust_statement
from moot.text import plural
from moot.types import ClaimAt, Finding, Message, ModelVerdict, Outcome, Step, alias_label

__all__ = [
    "State",
    "adopt",
    "begin_pass",
    "criticise",
    "end_pass",
    "issue",
    "no_challenger",
    "outcome",
    "pass_path",
    "play_passes",
    "rank",
    "say",
]


class State(Struct):
    """What the passes carry: the incumbent and its writer, the streak, each pass's record,
    and who failed or wrote what."""

    task: str
    opts: RefineOptions
    incumbent: str = ""
    writer: str | None = None  # who wrote the incumbent (None: the user, by --input)
    adopted: tuple[int, str] | None = None  # the pass and candidate that made it incumbent
    streak: int = 0
    rounds: list[dict[str, Any]] = field(default_factory=list)
    warned_self_judging: bool = False
    issues: list[dict[str, Any]] = field(default_factory=list)  # failed or invalid, in order
    said: list[ClaimAt] = field(default_factory=list)  # what each writer's text claims, by pass


S = TypeVar("S", bound=State)


async def play_passes(
    s: Session, st: S, one_pass: Callable[[Session, S, int], Awaitable[dict[str, Any]]]
) -> None:
    """Pass after pass until the incumbent has won k in a row, or `max_passes` are played."""
    for number in range(1, st.opts.max_passes + 1):
        record = await one_pass(s, st, number)
        if record["converged"]:
            break


def begin_pass(
    s: Session, st: State, number: int, own: str, extra: Mapping[str, Any]
) -> tuple[Cast, dict[str, Any]]:
    """Pass `number`'s cast (warning once when too few agents leave judges that never rank
    their `own` text or change) and its record, `extra` after the writers."""
    cast = cast_pass(s.aliases, number, st.opts.judges, st.writer)
    if cast.self_judging and not st.warned_self_judging:
        st.warned_self_judging = True
        s.warn(
            f"refine: too few agents for {plural(st.opts.judges, 'judge')} that never rank "
            f"their own {own}; writers judge too (give {st.opts.judges + 3} agents or a "
            "[refine.roles] judge)"
        )
    record: dict[str, Any] = {
        "round": number,
        "roles": _roles(cast),
        "writers": {"A": st.writer},
        **extra,
        "streak_before": st.streak,
    }
    return cast, record


async def criticise(
    s: Session, st: State, record: dict[str, Any], critic: str, prompt: Callable[[str], str]
) -> str | None:
    """The critic's problems with A (`prompt` of the step, which quotes A), kept beside the
    journal; None when it gave none (recorded as the critic's issue)."""
    number = int(record["round"])
    step = Step.at(number, "critic", critic)
    critique, why = await say(s, critic, prompt(step), step)
    if critique is None:
        issue(s, st, record, "critic", critic, why, step)
        return None
    s.artifact(pass_path(number, "critic.md"), critique)
    return critique


async def rank(
    s: Session,
    st: State,
    record: dict[str, Any],
    task: str,
    shown: Mapping[str, str],
    judges: tuple[str, ...],
    *,
    among: Sequence[str] | None = None,
    counts: bool = True,
) -> str | None:
    """The judges rank the candidates as `shown` (Borda, ties to A) and the pass is decided:
    the challenger that won, or None when the incumbent stays. A code task gives `among`, the
    candidates that fare best on the verify commands (moot's own evidence, which comes first):
    the judges' Borda count decides among those alone; and `counts` false when A fails them, so
    its win does not count toward convergence."""
    number = int(record["round"])
    ranked, result = await judge_pass(s, task, number, shown, judges, st.opts.max_quote_chars)
    return _decide(s, st, record, ranked, result, among, counts)


def adopt(st: State, record: dict[str, Any], winner: str, text: str) -> None:
    """The winning challenger becomes the incumbent; the streak starts again."""
    st.incumbent, st.writer, st.streak = text, record["writers"][winner], 0
    st.adopted = (int(record["round"]), winner)


# A reply that is one HTML preformatted block from its first character to its last (a tiny
# model wrapped its texts in <pre><code> ... </code></pre>, and the final text was printed
# with the tags). The closing tags may be missing: a reply cut at its size cap.
_PRE_OPEN = re.compile(r"\A<pre(?:\s[^>]*)?>\s*(?:<code(?:\s[^>]*)?>)?", re.IGNORECASE)
_PRE_CLOSE = re.compile(r"(?:</code>\s*)?</pre>\s*\Z", re.IGNORECASE)
_PRE_TAG = re.compile(r"</?(?:pre|code)\b", re.IGNORECASE)


def unwrap_pre(text: str) -> str:
    """`text` as the model meant it where the whole reply is one <pre> (or <pre><code>) block:
    the block's content, its HTML entities read (&lt; is <); any other text as it is (a block
    among other text, or two blocks, is the model's own markup)."""
    stripped = text.strip()
    opened = _PRE_OPEN.match(stripped)
    if opened is None:
        return text
    body = stripped[opened.end() :]
    closed = _PRE_CLOSE.search(body)
    if closed is not None:
        body = body[: closed.start()]
    if _PRE_TAG.search(body):
        return text
    return html.unescape(body).strip()


async def say(s: Session, alias: str, prompt: str, step: str) -> tuple[str | None, str]:
    """One fresh-context ask: the text without protocol markup, or None and why not (the call
    failed, or it said nothing). A reply that is one HTML <pre><code> block is its content
    (`unwrap_pre`): the tags are the model's wrapping, not its text."""
    completion = await s.ask(alias, [Message(role="user", content=prompt)], step=step)
    if not completion.ok:
        why = completion.failure.message if completion.failure else "the call failed"
        return None, f"failed: {strip_markup(why)}"
    text = unwrap_pre(strip_markup(completion.text))
    return (text, "") if text else (None, "invalid: it is empty")


def issue(
    s: Session, st: State, record: dict[str, Any], role: str, alias: str, why: str, step: str
) -> None:
    """A participant that failed or gave an invalid text this pass: in the pass's record, the
    run's list and (an invalid text's reason being derived, not asked) the journal."""
    status, _, reason = why.partition(": ")
    entry = {"pass": record["round"], "role": role, "by": alias, "status": status, "reason": reason}
    record.setdefault("issues", []).append(entry)
    st.issues.append(entry)
    if status == "invalid":
        s.note(f"{step}/invalid", role=role, by=alias, reason=reason)


def pass_path(number: int, name: str) -> str:
    return f"refine/pass_{number:02d}/{name}"


def _decide(
    s: Session,
    st: State,
    record: dict[str, Any],
    judges: list[dict[str, Any]],
    result: BordaResult,
    among: Sequence[str] | None = None,
    counts: bool = True,
) -> str | None:
    """Record the judges and the pass's decision; the challenger that won, or None when the
    incumbent stays. The incumbent's win counts toward convergence only with a quorum (more
    than half of the pass's judges ranked validly) and when it `counts`. With `among`, the
    judges' Borda count is taken over those candidates alone (see `rank`)."""
    for judge in judges:
        if judge["problem"]:
            status = "invalid" if judge.get("invalid") else "failed"
            why = f"{status}: {judge['problem']}"
            issue(s, st, record, "judge", judge["judge"], why, judge["step"])
    record["judges"] = judges
    record["borda"] = result.as_dict()
    decided = result
    if among is not None and tuple(among) != result.candidates:
        decided = _among(result, [j["ranking"] for j in judges], among)
        record["verified"] = {"among": list(among), "borda": decided.as_dict()}
    record["winner"] = winner = decided.winner
    record["quorum"] = quorum = result.valid_rankings * 2 > len(judges)
    notes = []
    if winner != result.winner:
        lead = (
            f"no valid ranking, and {result.winner}"
            if result.no_valid_ranking
            else f"the judges' Borda count put {result.winner} first, but it"
        )
        notes.append(
            f"{lead} passes fewer of the verify commands than {winner}: {winner} "
            f"{'holds' if winner == 'A' else 'wins'}"
        )
    if winner == "A":
        uncounted = _uncounted(result, len(judges), quorum, counts)
        if uncounted is None:
            st.streak += 1
        else:
            notes.append(uncounted)
    if notes:
        record["problem"] = "; ".join(notes)
    return None if winner == "A" else winner


def _uncounted(result: BordaResult, judges: int, quorum: bool, counts: bool) -> str | None:
    """Why the incumbent's win this pass does not count toward convergence; None when it does."""
    if result.no_valid_ranking:
        return "no valid ranking: the incumbent stays"
    if not quorum:
        return (
            f"only {result.valid_rankings} of {judges} judges ranked validly, no quorum: "
            "the incumbent stays, but the pass does not count toward convergence"
        )
    if not counts:
        return (
            "the incumbent fails its verify commands: it stays, but the pass does not count "
            "toward convergence"
        )
    return None


def _among(
    result: BordaResult, rankings: Sequence[Sequence[str] | None], among: Sequence[str]
) -> BordaResult:
    """The judges' Borda count over the candidates `among` alone: each valid ranking with the
    others left out (an invalid one still abstains); ties to A when it is among them, else to
    the first of them in candidate order."""
    kept = [
        [name for name in ranking if name in among]
        if ranking is not None and is_valid_ranking(ranking, result.candidates)
        else None
        for ranking in rankings
    ]
    return borda(list(among), kept, incumbent="A" if "A" in among else among[0])


def _roles(cast: Cast) -> dict[str, Any]:
    return {
        "critic": cast.critic,
        "author_b": cast.author_b,
        "synthesizer": cast.synthesizer,
        "judges": list(cast.judges),
        "self_judging": cast.self_judging,
    }


def no_challenger(s: Session, st: State, record: dict[str, Any], why: str) -> dict[str, Any]:
    """No challenger this pass (`why`): the incumbent stays, and the pass ends."""
    record.update(winner="A", problem=f"{why}: the incumbent stays", judges=[], borda=None)
    return end_pass(s, st, record)


def end_pass(s: Session, st: State, record: dict[str, Any]) -> dict[str, Any]:
    """The pass's streak and whether it converged, in its record, beside the journal and to
    the faces."""
    number = record["round"]
    record["streak"] = st.streak
    record["converged"] = st.streak >= st.opts.convergence_k
    record["k"] = st.opts.convergence_k
    st.rounds.append(record)
    result = {key: record.get(key) for key in ("judges", "borda", "winner", "synthesis_labels")}
    s.artifact(pass_path(number, "result.json"), json.dumps(result, indent=2) + "\n")
    s.artifact("refine/history.json", json.dumps(_history(st), indent=2) + "\n")
    s.round_done(Step.at(number, "borda"), describe_round(record, st.opts))
    return record


def _history(st: State) -> list[dict[str, Any]]:
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


def outcome(s: Session, st: State, final: str) -> Outcome:
    """The outcome of the passes; `final` is the answer to give (the last incumbent as text,
    or a code task's patch). Converged is "done" (exit 0), not a consensus: the finding says
    the judges preferred this text k passes in a row, and `consensus` stays false."""
    passes = len(st.rounds)
    k = st.opts.convergence_k
    converged = bool(st.rounds) and st.rounds[-1]["converged"]
    changes = sum(1 for r in st.rounds if r["winner"] != "A")
    adopted = plural(changes, "revision")
    if converged:
        how = (
            f"converged after {plural(passes, 'pass', 'passes')}: {_preferred(k)} "
            f"({adopted} adopted)"
        )
    else:
        how = (
            f"not converged in {plural(passes, 'pass', 'passes')}: the incumbent's streak is "
            f"{st.streak} of {k} ({adopted} adopted); the final output is the last incumbent"
        )
    noted = qualifiers(st.issues)
    if noted:
        how = f"{how}; {', '.join(noted)}"
    trust = trust_statement(
        converged=converged,
        passes=passes,
        k=k,
        streak=st.streak,
        judges=st.opts.judges,
        rounds=st.rounds,
        writer=st.writer,
        adopted=st.adopted,
        issues=st.issues,
        specs=s.specs,
    )
    failed = {i["by"] for i in st.issues}
    finding = Finding(
        label="converged" if converged else "no_consensus",
        reason=(
            f"converged: {_preferred(k)}"
            if converged
            else f"not converged: the judges preferred the incumbent {st.streak} of the {k} "
            f"passes in a row it needs, after {plural(passes, 'pass', 'passes')}"
        ),
        claim=extract_claim(final).text if converged else None,
        started=len(s.specs),
        valid=len([a for a in s.specs if a not in failed]),
    )
    return Outcome(
        protocol="refine",
        status="consensus" if converged else "no_consensus",  # exit 0: done, not agreement
        consensus=False,
        how=how,
        trust=trust,
        final_answer=final,
        rounds=passes,
        disagreements=tuple(r["problem"] for r in st.rounds if r.get("problem")),
        finding=finding,
        claims=tuple(st.said),
        verdicts=_rankings(st.rounds),
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
                "adopted": list(st.adopted) if st.adopted else None,
                "issues": st.issues,
            },
        },
    )


def _preferred(k: int) -> str:
    """What convergence means: "the judges preferred this text 2 passes in a row"."""
    return f"the judges preferred this text {plural(k, 'pass', 'passes')} in a row"


def _rankings(rounds: list[dict[str, Any]]) -> tuple[ModelVerdict, ...]:
    """Every judge's ranking, as evidence of which text it preferred (never a claim that the
    text is right); a ranking that was no permutation of the candidates is an invalid verdict.
    A judge whose call failed gave no verdict."""
    verdicts = []
    for record in rounds:
        number = int(record["round"])
        for judge in record.get("judges") or []:
            by, ranking = alias_label(judge["judge"]), judge.get("ranking")
            if ranking:
                says = f"ranked {' over '.join(ranking)} in pass {number}"
                verdicts.append(ModelVerdict(by=by, role="judge", says=says, round=number))
            elif judge.get("invalid"):
                problem = str(judge.get("problem") or "an invalid ranking")
                says = f"gave no valid ranking in pass {number}"
                verdicts.append(
                    ModelVerdict(
                        by=by, role="judge", says=says, round=number, valid=False, problem=problem
                    )
                )
    return tuple(verdicts)
