"""The refine protocol (seed 004, "Tournaments"): self-refinement by tournament.

    A = input text, or the author's answer to the task  # a code task: refine/code.py
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

import re
from typing import Any

from moot.deliberation.agreement import keeps_agreed_content
from moot.deliberation.anonymize import quote, scrub_identity
from moot.deliberation.claims import Relation, compare, extract_claim
from moot.deliberation.markup import strip_markup
from moot.deliberation.substance import check_substance
from moot.engine.session import Session
from moot.errors import ProtocolAborted
from moot.protocols.refine import prompts
from moot.protocols.refine.options import RefineOptions
from moot.protocols.refine.passes import (
    State,
    adopt,
    begin_pass,
    criticise,
    end_pass,
    issue,
    no_challenger,
    outcome,
    pass_path,
    play_passes,
    rank,
    say,
)
from moot.protocols.shown import anonymous, nonce
from moot.types import ClaimAt, Outcome, Step

__all__ = ["run"]


def _quoted(s: Session, st: State, label: str, text: str, step: str) -> str:
    return quote(label, text, nonce=nonce(s, f"{step}/{label}"), limit=st.opts.max_quote_chars)


def _shown_a(s: Session, st: State, step: str) -> str:
    """The incumbent as the pass's participants see it: an agent's text scrubbed, the user's
    --input text as given."""
    if st.writer is None:
        return st.incumbent
    return anonymous(s, st.incumbent, f"{step}/A")


def _content(text: str) -> str:
    """An agent's text as others see it (scrubbed), less the neutral phrases the scrubbing put
    in: "an AI assistant" in both A and B is no content they agree on."""
    scrubbed, replaced = scrub_identity(text)
    for r in replaced:
        if r.replacement and r.replacement not in text:
            scrubbed = scrubbed.replace(r.replacement, " ")
    return scrubbed


def _wrote(st: State, alias: str, number: int, text: str | None, why: str) -> None:
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


async def _initial(s: Session, st: State) -> None:
    if st.opts.input is not None:
        st.incumbent, st.writer = st.opts.input, None
    else:
        author = sorted(a for a in s.aliases if a.startswith("agent_"))[0]
        step = Step.at(0, "author", author)
        prompt = prompts.AUTHOR.format(task=st.task)
        text, why = await say(s, author, prompt, step)
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


async def _pass(s: Session, st: State, number: int) -> dict[str, Any]:
    cast, record = begin_pass(s, st, number, "text", {})
    s.artifact(pass_path(number, "version_a.md"), st.incumbent)
    a = st.incumbent
    critique = await criticise(
        s,
        st,
        record,
        cast.critic,
        lambda step: prompts.CRITIC.format(
            task=st.task, a=_quoted(s, st, "Version A", _shown_a(s, st, step), step)
        ),
    )
    if critique is None:
        return no_challenger(s, st, record, "the critic gave no critique")
    step = Step.at(number, "revise", cast.author_b)
    prompt = prompts.AUTHOR_B.format(
        task=st.task,
        a=_quoted(s, st, "Version A", _shown_a(s, st, step), step),
        critique=_quoted(s, st, "Critique", anonymous(s, critique, f"{step}/critique"), step),
    )
    b, why = await say(s, cast.author_b, prompt, step)
    if b is not None:
        why = _substance(b, prompt, st.task)
    _wrote(st, cast.author_b, number, b, why)
    if b is None or why:
        issue(s, st, record, "author B", cast.author_b, why, step)
        what = "wrote no revision" if b is None else "wrote an invalid revision"
        return no_challenger(s, st, record, f"author B {what}")
    s.artifact(pass_path(number, "version_b.md"), b)
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
    ab, why = await say(s, cast.synthesizer, prompt, step)
    if ab is not None:
        why = _substance(ab, prompt, st.task)
    if ab is not None and not why:
        # the synthesis must keep what A and B agree on, as the synthesizer saw them
        basis = [a if st.writer is None else _content(a), _content(b)]
        why = _drops_agreed(ab, basis, st.task)
    _wrote(st, cast.synthesizer, number, ab, why)
    if ab is not None and not why:
        s.artifact(pass_path(number, "version_ab.md"), ab)
        texts["AB"] = ab
        record["writers"]["AB"] = cast.synthesizer
    else:
        issue(s, st, record, "synthesizer", cast.synthesizer, why, step)
        what = "wrote nothing" if ab is None else "wrote an invalid synthesis"
        record["problem"] = f"the synthesizer {what}: A and B only"
    judged = Step.at(number, "judges")  # the texts every judge of the pass is shown
    shown = {"A": _shown_a(s, st, judged)}
    shown.update({n: anonymous(s, t, f"{judged}/{n}") for n, t in texts.items() if n != "A"})
    winner = await rank(s, st, record, st.task, shown, cast.judges)
    if winner is not None and _same_text(texts[winner], a):
        # a challenger that only repeats the incumbent is the incumbent preferred again
        record["problem"] = f"{winner} repeats the incumbent: the incumbent stays"
        record["winner"] = "A"
        st.streak += 1 if record["quorum"] else 0
    elif winner is not None:
        adopt(st, record, winner, texts[winner])
    return end_pass(s, st, record)


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


async def run(s: Session, task: str, opts: RefineOptions) -> Outcome:
    st = State(task=task, opts=opts)
    await _initial(s, st)
    await play_passes(s, st, _pass)
    final = strip_markup(st.incumbent)  # the --input text too: no protocol markup in answers
    s.artifact("refine/final_output.md", final)
    return outcome(s, st, final)
