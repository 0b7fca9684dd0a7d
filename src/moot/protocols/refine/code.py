"""The refine protocol on a code task: the seed's implementation tournament (`--preset impl`).

Each candidate is a change in its own git worktree, from the session's baseline: `a` (the
first diff: the user's --input, or the author's), and per pass `b<n>` (author B's redo, guided
by the critique of A) and `ab<n>` (the synthesizer's merge of A and B). The critic, author B,
the synthesizer and the judges see a change as its diff plus its verification results, quoted
as untrusted text.

    a = --input diff applied in worktree a,           # verified; a diff that does not apply,
        or the author's change in worktree a          # or changes nothing, aborts the run
    for pass n in 1..max_passes:
        critique = critic(A's diff + verification)    # problems only
        B = author_b's redo in worktree b<n>          # from the baseline, with A and critique
        AB = synthesizer's merge in worktree ab<n>    # from the baseline, with A and B
        among = the ones of A, B, AB that fare best on the verify commands  # moot's evidence
        winner = Borda(judges' rankings of A, B, AB, among `among` alone)   # ties to A
        prune the losers' worktrees; the winner's stays (it is the next A)
        stop when the incumbent has won k passes in a row   # a failing A's win never counts

The verify results are moot's own evidence and come before the judges (as in the arena and the
tournament): a change that fails them never wins over one that passes them, so the judges'
Borda count decides among the changes that pass as well as the best of them do
(`codework.best_verified`); an incumbent that fails them never converges (the run ends not
converged, exit 2); the trust statement says how each change fared and where the verify results
overruled the judges' Borda winner. The winner is what `moot apply` applies; every candidate's
`.patch` stays in the session folder. The agents' own worktrees hold no candidate: a CLI agent
works there when it is the critic or a judge (a sandbox at the baseline it may read); they are
pruned at the end.
"""

from __future__ import annotations

from typing import Any

from msgspec import field
from msgspec.structs import replace

from moot.deliberation.anonymize import quote
from moot.engine.session import Session
from moot.errors import ProtocolAborted
from moot.protocols import codework
from moot.protocols.codework import Work
from moot.protocols.refine import passes
from moot.protocols.refine.options import RefineOptions
from moot.protocols.shown import anonymous, nonce
from moot.text import one_line
from moot.types import Outcome, Step

__all__ = ["run_code"]

_CRITIC = """You are the critic. Below are a task and a change made for it in a git repository
(version A): its diff and the results of the project's verify commands. List everything that is
wrong with version A: bugs, failing checks, gaps, risks, unclear or unjustified parts. List
problems only: do not propose fixes and do not write code.

TASK:
{task}

{a}"""

_REDO = """{task}

An earlier attempt (version A) and a critique of it follow. You start from the ORIGINAL state
of the repository, without version A's change. Make your own complete change for the task: fix
what the critique rightly points out and keep what is good in version A.

{a}

CRITIQUE:
{critique}"""

_SYNTHESIZE = """{task}

Two changes were made for this task, X and Y: their diffs and verification results follow.
You start from the ORIGINAL state of the repository, without either change. Make one complete
change that merges the strongest parts of both.

{x}

{y}"""

_JUDGED = """{task}

(Each response is a change to a git repository: its diff, then the results of the project's
verify commands run on it. Passing verification weighs heavily.)"""


class _CodeState(passes.State):
    work: Work | None = None  # the incumbent's change
    works: dict[str, Work] = field(default_factory=dict)  # every candidate, by worktree


def _shown(s: Session, st: _CodeState, label: str, item: Work, step: str) -> str:
    return codework.evidence(
        s, label, item, nonce_step=f"{step}/{label}", limit=st.opts.max_quote_chars
    )


async def _candidate(
    s: Session, st: _CodeState, alias: str, tree: str, prompt: str, step: str
) -> Work:
    """A change by `alias` in a new worktree `tree` at the baseline."""
    await s.add_worktree(tree, step=Step.at(0, "worktree", tree))
    item = await codework.work(s, alias, prompt, step=step, tree=tree)
    st.works[tree] = item
    s.artifact(f"refine/{tree}.patch", item.patch)
    return item


async def _initial(s: Session, st: _CodeState) -> None:
    if st.opts.input is not None:
        first, author = await _given(s, st, st.opts.input), None
    else:
        author = sorted(a for a in s.aliases if a.startswith("agent_"))[0]
        first = await _candidate(s, st, author, "a", st.task, Step.at(0, "author", author))
        if not first.ok:
            raise ProtocolAborted(
                f"the author ({author}) made no usable first change: {first.problem}; start again"
            )
    st.work, st.writer = first, author
    st.incumbent = codework.solution_text(first)


_USER = ""  # the alias of the user's change: no agent wrote it, so none is journaled or credited
_FIX = "give a diff made against the repository's current state"


async def _given(s: Session, st: _CodeState, diff: str) -> Work:
    """The user's change (--input, a unified diff) as candidate A: applied in worktree a at the
    baseline, then measured and verified like any candidate. One that does not apply, or
    changes nothing, aborts the run: there is no A to refine."""
    step = Step.at(0, "input", "a")
    await s.add_worktree("a", step=Step.at(0, "worktree", "a"))
    applied = await s.apply_diff(_USER, diff, step=f"{step}/apply", tree="a")
    if not applied.applied:
        raise ProtocolAborted(
            f"the --input diff does not apply to the repository ({one_line(applied.error)}); "
            + _FIX
        )
    change = await s.change(_USER, step=f"{step}/change", tree="a")
    if change.empty:
        raise ProtocolAborted(f"the --input diff changes nothing in the repository; {_FIX}")
    checks = tuple(await s.verify(_USER, step=f"{step}/verify", tree="a"))
    item = Work(_USER, True, change, checks, (), tree="a")
    st.works["a"] = item
    s.artifact("refine/a.patch", item.patch)
    return item


async def _pass(s: Session, st: _CodeState, number: int) -> dict[str, Any]:
    assert st.work is not None
    a = st.work
    cast, record = passes.begin_pass(s, st, number, "change", {"worktrees": {"A": a.where}})
    critique = await passes.criticise(
        s,
        st,
        record,
        cast.critic,
        lambda step: _CRITIC.format(task=st.task, a=_shown(s, st, "Version A", a, step)),
    )
    if critique is None:
        return await _hold(s, st, record, "the critic gave no critique", [])
    step = Step.at(number, "revise", cast.author_b)
    fence = nonce(s, step)
    critique = anonymous(s, critique, f"{step}/critique")
    quoted = quote("Critique", critique, nonce=fence, limit=st.opts.max_quote_chars)
    redo = _REDO.format(task=st.task, a=_shown(s, st, "Version A", a, step), critique=quoted)
    b = await _candidate(s, st, cast.author_b, f"b{number}", redo, step)
    if not b.ok:
        passes.issue(s, st, record, "author B", cast.author_b, f"failed: {b.problem}", step)
        return await _hold(s, st, record, f"author B made no usable change ({b.problem})", [b])
    record["writers"]["B"] = cast.author_b
    record["worktrees"]["B"] = b.where
    candidates = {"A": a, "B": b}
    step = Step.at(number, "synthesize", cast.synthesizer)
    x, y = s.shuffle(["A", "B"], step=f"{step}/labels")
    record["synthesis_labels"] = {"X": x, "Y": y}
    merge = _SYNTHESIZE.format(
        task=st.task,
        x=_shown(s, st, "Change X", candidates[x], step),
        y=_shown(s, st, "Change Y", candidates[y], step),
    )
    ab = await _candidate(s, st, cast.synthesizer, f"ab{number}", merge, step)
    if ab.ok:
        candidates["AB"] = ab
        record["writers"]["AB"] = cast.synthesizer
        record["worktrees"]["AB"] = ab.where
    else:
        passes.issue(s, st, record, "synthesizer", cast.synthesizer, f"failed: {ab.problem}", step)
        record["problem"] = f"the synthesizer made no usable change ({ab.problem}): A and B only"
    texts = {name: codework.solution_text(item) for name, item in candidates.items()}
    judged = Step.at(number, "judges")  # the changes every judge of the pass is shown
    shown = {name: anonymous(s, text, f"{judged}/{name}") for name, text in texts.items()}
    # moot's own evidence first: the judges' Borda count decides among the changes that fare
    # best on the verify commands, and a failing incumbent's win never counts toward convergence
    among = codework.best_verified(candidates, list(candidates))
    won = await passes.rank(
        s,
        st,
        record,
        _JUDGED.format(task=st.task),
        shown,
        cast.judges,
        among=among,
        counts=not codework.fails(a),
    )
    winner = "A"
    if won is not None:
        winner = won
        st.work = candidates[winner]
        passes.adopt(st, record, winner, texts[winner])
    losers = [item for name, item in candidates.items() if name != winner]
    if not ab.ok:
        losers.append(ab)
    await _prune(s, number, losers)
    return passes.end_pass(s, st, record)


async def _hold(
    s: Session, st: _CodeState, record: dict[str, Any], why: str, failed: list[Work]
) -> dict[str, Any]:
    """No challenger this pass: the incumbent stays (as in the text protocol); a failed
    candidate's worktree goes."""
    await _prune(s, int(record["round"]), failed)
    return passes.no_challenger(s, st, record, why)


async def _prune(s: Session, number: int, losers: list[Work]) -> None:
    for item in losers:
        if item.tree:
            await s.prune_worktree(item.tree, step=Step.at(number, "prune", item.tree))


async def run_code(s: Session, task: str, opts: RefineOptions) -> Outcome:
    """The implementation tournament (see the module's docstring)."""
    st = _CodeState(task=task, opts=opts)
    await _initial(s, st)
    await passes.play_passes(s, st, _pass)
    assert st.work is not None
    for alias in sorted(a for a in s.aliases if a.startswith("agent_")):
        await s.prune_worktree(alias, step=Step.at(0, "prune", alias))  # only the winner's stays
    s.artifact("refine/final.patch", st.work.patch)
    done = passes.outcome(s, st, st.work.patch)
    details = dict(done.details)
    details["code"] = codework.rows(list(st.works.values()))
    details["winner"] = st.work.where
    refine = details["refine"]
    assert isinstance(refine, dict)
    details["refine"] = {**refine, "worktree": st.work.where}
    checks = st.work.checks
    verified = (
        f"The final change's verify commands passed {st.work.passing} of {len(checks)}."
        if checks
        else "The final change was not verified (no verify commands)."
    )
    note = codework.verify_note(list(st.works.values()), _worktree)
    sentences = [done.trust, _FIRST if checks else "", verified, *_overruled(st), note]
    update: dict[str, Any] = {"details": details, "trust": " ".join(x for x in sentences if x)}
    if codework.fails(st.work) and done.finding is not None:  # never converged (see _pass)
        failing = "the final change fails its verify commands"
        update["how"] = f"{done.how}; {failing}"
        reason = f"{done.finding.reason}; {failing}"
        update["finding"] = replace(done.finding, reason=reason)
    return replace(done, **update)


_FIRST = (
    "The verify results, moot's own evidence, came before the judges: each pass the Borda "
    "count decided among the changes that passed the verify commands as well as the best of "
    "them did, and an incumbent that failed them could not converge."
)


def _worktree(tree: str) -> str:
    return f"Worktree {tree}"


def _overruled(st: _CodeState) -> list[str]:
    """A sentence for each pass whose winner is not the judges' Borda winner: the verify
    results, moot's own evidence, came first."""
    out = []
    for record in st.rounds:
        picked, winner = (record.get("borda") or {}).get("winner"), record.get("winner")
        trees = record.get("worktrees") or {}
        if "verified" not in record or picked == winner or picked not in trees:
            continue
        them, us = st.works[trees[picked]], st.works[trees[winner]]
        us_at = f"{winner} ({_worktree(trees[winner])})"
        fared = (
            f"fails the verify commands {us_at} passes"
            if codework.fails(them) and not codework.fails(us)
            else f"passes fewer of the verify commands than {us_at}"
        )
        them_at = f"{picked} ({_worktree(trees[picked])})"
        lead = (
            f"no judge ranked validly, and {them_at}"
            if record["borda"].get("no_valid_ranking")
            else f"the judges' Borda count put {them_at} first, but it"
        )
        out.append(
            f"In pass {record['round']} {lead} {fared}, so {winner} "
            f"{'held' if winner == 'A' else 'won'}."
        )
    return out
