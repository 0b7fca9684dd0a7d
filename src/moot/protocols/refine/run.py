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

A text counts as a candidate only if it is a substantive answer (`check_substance`: not empty,
not an echo of the prompt or its template, not a refusal), and a synthesis only if it keeps what
A and B agree on (`keeps_agreed_content`); where A and B contradict each other (moot's claims
relation) there is nothing agreed to keep, and a synthesis that says what A or B says is never
invalid for leaving the other's answer out. An invalid candidate is recorded and journaled with
its reason and never ranked. A pass counts toward convergence only when more than half of its
judges ranked validly.

The end is "converged" (the judges preferred one text k passes in a row), never a consensus on
correctness: the outcome's finding is labelled `converged` (exit 0: the run is done) or
`no_consensus` (not converged, exit 2), and every judge's ranking is a `ModelVerdict`, evidence
of which text it preferred. Every agent's text shown to another
participant is scrubbed of the phrases that name its model (journaled as `.../scrub` notes), and
no protocol markup reaches the final text. The outcome's `trust` says how the winner was chosen.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from moot.deliberation.agreement import keeps_agreed_content
from moot.deliberation.anonymize import quote, scrub_identity
from moot.deliberation.borda import BordaResult
from moot.deliberation.claims import Relation, compare, extract_claim
from moot.deliberation.markup import strip_markup
from moot.deliberation.substance import check_substance
from moot.engine.session import Session
from moot.errors import ProtocolAborted
from moot.protocols.refine import prompts
from moot.protocols.refine.cast import Cast, cast_pass
from moot.protocols.refine.judging import judge_pass
from moot.protocols.refine.options import RefineOptions
from moot.protocols.refine.summary import describe_round
from moot.protocols.refine.trust import qualifiers, trust_statement
from moot.protocols.shown import anonymous, nonce
from moot.text import plural
from moot.types import ClaimAt, Finding, Message, ModelVerdict, Outcome, Step, alias_label

__all__ = ["run"]


@dataclass
class _State:
    task: str
    opts: RefineOptions
    incumbent: str = ""
    writer: str | None = None  # who wrote the incumbent (None: the --input file)
    adopted: tuple[int, str] | None = None  # the pass and candidate that made it incumbent
    streak: int = 0
    rounds: list[dict[str, Any]] = field(default_factory=list)
    warned_self_judging: bool = False
    issues: list[dict[str, Any]] = field(default_factory=list)  # failed or invalid, in order
    said: list[ClaimAt] = field(default_factory=list)  # what each writer's text claims, by pass


def _quoted(s: Session, st: _State, label: str, text: str, step: str) -> str:
    return quote(label, text, nonce=nonce(s, f"{step}/{label}"), limit=st.opts.max_quote_chars)


def _shown_a(s: Session, st: _State, step: str) -> str:
    """The incumbent as the pass's participants see it: an agent's text scrubbed, the user's
    --input text as given."""
    if st.writer is None:
        return st.incumbent
    return anonymous(s, st.incumbent, f"{step}/A")


async def _say(s: Session, alias: str, prompt: str, step: str) -> tuple[str | None, str]:
    """One fresh-context ask: the text without protocol markup, or None and why not (the call
    failed, or it said nothing)."""
    completion = await s.ask(alias, [Message(role="user", content=prompt)], step=step)
    if not completion.ok:
        why = completion.failure.message if completion.failure else "the call failed"
        return None, f"failed: {strip_markup(why)}"
    text = strip_markup(completion.text)
    return (text, "") if text else (None, "invalid: it is empty")


def issue(
    s: Session, st: _State, record: dict[str, Any], role: str, alias: str, why: str, step: str
) -> None:
    """A participant that failed or gave an invalid text this pass: in the pass's record, the
    run's list and (an invalid text's reason being derived, not asked) the journal."""
    status, _, reason = why.partition(": ")
    entry = {"pass": record["round"], "role": role, "by": alias, "status": status, "reason": reason}
    record.setdefault("issues", []).append(entry)
    st.issues.append(entry)
    if status == "invalid":
        s.note(f"{step}/invalid", role=role, by=alias, reason=reason)


def _content(text: str) -> str:
    """An agent's text as others see it (scrubbed), less the neutral phrases the scrubbing put
    in: "an AI assistant" in both A and B is no content they agree on."""
    scrubbed, replaced = scrub_identity(text)
    for r in replaced:
        if r.replacement and r.replacement not in text:
            scrubbed = scrubbed.replace(r.replacement, " ")
    return scrubbed


def _wrote(st: _State, alias: str, number: int, text: str | None, why: str) -> None:
    """The claim of the text `alias` wrote in pass `number` (0: the first text), or why it
    had none; one row per writer and pass (a synthesizer that also wrote B keeps B's)."""
    if any(c.agent == alias and c.round == number for c in st.said):
        return
    if text is None or why:
        reason = why.partition(": ")[2] or why or "no text"
        st.said.append(ClaimAt(agent=alias, round=number, claim="", valid=False, reason=reason))
    else:
        st.said.append(ClaimAt(agent=alias, round=number, claim=extract_claim(text).text))


def _substance(text: str, prompt: str, task: str) -> str:
    """An empty string for a substantive text, else "invalid: <why>"."""
    problem = check_substance(text, prompt, task=task)
    return "" if problem is None else f"invalid: {problem}"


def _drops_agreed(ab: str, basis: list[str], task: str) -> str:
    """An empty string for a synthesis that keeps what A and B agree on, else "invalid: <why>".
    A synthesis whose claim agrees with A's or B's says what one of them says, and where A and
    B contradict each other they agree on nothing it must keep: neither is invalid for leaving
    the other's answer out."""
    claims = [extract_claim(text) for text in basis]
    mine = extract_claim(ab)
    if any(compare(mine, c).relation is Relation.AGREE for c in claims):
        return ""
    if compare(claims[0], claims[1]).relation is Relation.CONTRADICT:
        return ""
    kept, reason = keeps_agreed_content(ab, basis, task=task)
    if kept:
        return ""
    reason = reason.replace("every agent's answer holds", "both A and B hold")
    return f"invalid: it drops what A and B agree on: {reason}"


def _pass_path(number: int, name: str) -> str:
    return f"refine/pass_{number:02d}/{name}"


async def _initial(s: Session, st: _State) -> None:
    if st.opts.input is not None:
        st.incumbent, st.writer = st.opts.input, None
    else:
        author = sorted(a for a in s.aliases if a.startswith("agent_"))[0]
        step = Step.at(0, "author", author)
        prompt = prompts.AUTHOR.format(task=st.task)
        text, why = await _say(s, author, prompt, step)
        if text is not None:
            why = _substance(text, prompt, st.task)
        if text is None or why:  # nothing to refine; resuming would replay the same failure
            what = "wrote no initial text" if text is None else "wrote no usable initial text"
            raise ProtocolAborted(
                f"the author ({author}) {what} ({why}); start again, or give the text "
                "with --input FILE"
            )
        st.incumbent, st.writer = text, author
        _wrote(st, author, 0, text, "")
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
    critique, why = await _say(
        s,
        cast.critic,
        prompts.CRITIC.format(
            task=st.task, a=_quoted(s, st, "Version A", _shown_a(s, st, step), step)
        ),
        step,
    )
    if critique is None:
        issue(s, st, record, "critic", cast.critic, why, step)
        return _no_challenger(s, st, record, "the critic gave no critique")
    s.artifact(_pass_path(number, "critic.md"), critique)
    step = Step.at(number, "revise", cast.author_b)
    prompt = prompts.AUTHOR_B.format(
        task=st.task,
        a=_quoted(s, st, "Version A", _shown_a(s, st, step), step),
        critique=_quoted(s, st, "Critique", anonymous(s, critique, f"{step}/critique"), step),
    )
    b, why = await _say(s, cast.author_b, prompt, step)
    if b is not None:
        why = _substance(b, prompt, st.task)
    _wrote(st, cast.author_b, number, b, why)
    if b is None or why:
        issue(s, st, record, "author B", cast.author_b, why, step)
        what = "wrote no revision" if b is None else "wrote an invalid revision"
        return _no_challenger(s, st, record, f"author B {what}")
    s.artifact(_pass_path(number, "version_b.md"), b)
    texts = {"A": a, "B": b}
    record["writers"]["B"] = cast.author_b
    step = Step.at(number, "synthesize", cast.synthesizer)
    x, y = s.shuffle(["A", "B"], step=f"{step}/labels")
    record["synthesis_labels"] = {"X": x, "Y": y}
    seen = {"A": _shown_a(s, st, step), "B": anonymous(s, b, f"{step}/B")}
    prompt = prompts.SYNTHESIZER.format(
        task=st.task,
        x=_quoted(s, st, "Response X", seen[x], step),
        y=_quoted(s, st, "Response Y", seen[y], step),
    )
    ab, why = await _say(s, cast.synthesizer, prompt, step)
    if ab is not None:
        why = _substance(ab, prompt, st.task)
    if ab is not None and not why:
        # the synthesis must keep what A and B agree on, as the synthesizer saw them
        basis = [a if st.writer is None else _content(a), _content(b)]
        why = _drops_agreed(ab, basis, st.task)
    _wrote(st, cast.synthesizer, number, ab, why)
    if ab is not None and not why:
        s.artifact(_pass_path(number, "version_ab.md"), ab)
        texts["AB"] = ab
        record["writers"]["AB"] = cast.synthesizer
    else:
        issue(s, st, record, "synthesizer", cast.synthesizer, why, step)
        what = "wrote nothing" if ab is None else "wrote an invalid synthesis"
        record["problem"] = f"the synthesizer {what}: A and B only"
    judged = Step.at(number, "judges")  # the texts every judge of the pass is shown
    shown = {"A": _shown_a(s, st, judged)}
    shown.update({n: anonymous(s, t, f"{judged}/{n}") for n, t in texts.items() if n != "A"})
    judges, result = await judge_pass(
        s, st.task, number, shown, cast.judges, st.opts.max_quote_chars
    )
    winner = decide(s, st, record, judges, result)
    if winner is not None and _same_text(texts[winner], a):
        # a challenger that only repeats the incumbent is the incumbent preferred again
        record["problem"] = f"{winner} repeats the incumbent: the incumbent stays"
        record["winner"] = "A"
        st.streak += 1 if record["quorum"] else 0
    elif winner is not None:
        st.incumbent, st.writer, st.streak = texts[winner], record["writers"][winner], 0
        st.adopted = (number, winner)
    return _end_pass(s, st, record)


def _same_text(text: str, incumbent: str) -> bool:
    """Whether two texts are one after normalisation (case, spacing, punctuation, markup), or
    two short answers that agree by moot's check ("(B)" and "Option B", "Paris." and "It's
    Paris")."""
    mine, theirs = strip_markup(text), strip_markup(incumbent)
    words, other = _WORDS.findall(mine.casefold()), _WORDS.findall(theirs.casefold())
    if words == other:
        return True
    short = max(len(words), len(other)) <= _SHORT_ANSWER
    return short and compare(extract_claim(mine), extract_claim(theirs)).relation is Relation.AGREE


_SHORT_ANSWER = 6  # words: an answer this short is compared as an answer, not as a text


_WORDS = re.compile(r"[^\W_]+")


def decide(
    s: Session,
    st: _State,
    record: dict[str, Any],
    judges: list[dict[str, Any]],
    result: BordaResult,
) -> str | None:
    """Record the judges and the pass's decision; the challenger that won, or None when the
    incumbent stays. The incumbent's win counts toward convergence only with a quorum: more
    than half of the pass's judges ranked validly."""
    for judge in judges:
        if judge["problem"]:
            status = "invalid" if judge.get("invalid") else "failed"
            why = f"{status}: {judge['problem']}"
            issue(s, st, record, "judge", judge["judge"], why, judge["step"])
    record["judges"] = judges
    record["borda"] = result.as_dict()
    record["winner"] = result.winner
    record["quorum"] = quorum = result.valid_rankings * 2 > len(judges)
    if result.no_valid_ranking:
        record["problem"] = "no valid ranking: the incumbent stays"
    elif result.incumbent_won and not quorum:
        record["problem"] = (
            f"only {result.valid_rankings} of {len(judges)} judges ranked validly, no quorum: "
            "the incumbent stays, but the pass does not count toward convergence"
        )
    elif result.incumbent_won:
        st.streak += 1
    else:
        return result.winner
    return None


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
    final = strip_markup(st.incumbent)  # the --input text too: no protocol markup in answers
    s.artifact("refine/final_output.md", final)
    return _outcome(s, st, final)


def _outcome(s: Session, st: _State, final: str) -> Outcome:
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
            f"converged after {plural(passes, 'pass', 'passes')}: {preferred(k)} "
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
            f"converged: {preferred(k)}"
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
        verdicts=rankings(st.rounds),
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


def preferred(k: int) -> str:
    """What convergence means: "the judges preferred this text 2 passes in a row"."""
    return f"the judges preferred this text {plural(k, 'pass', 'passes')} in a row"


def rankings(rounds: list[dict[str, Any]]) -> tuple[ModelVerdict, ...]:
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
