"""Whether a participant's reply is an answer at all, for every protocol: moot's substance
check (deliberation/substance.py), run once per session. The verdict is journaled with the
answer (`Session.checked`), so a resume or replay reads it back instead of checking again,
and acts on the verdict the run acted on (issue 23).

`answer_problem` is the whole test an answer is held to where the finding will read it (the
arena's solutions, the court's positions): the substance check, then what moot's finding
would hold of its claim, then its explicit final answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from moot import lazy
from moot.deliberation import echo
from moot.deliberation.substance import check_substance
from moot.engine.session import Session

# the finding's reading of a claim, needed once answers are in (moot/lazy.py)
if TYPE_CHECKING:
    from moot.deliberation import claims, finding
else:
    claims, finding = lazy.modules("moot.deliberation", "claims", "finding")

__all__ = ["answer_problem", "copied_fence", "no_answer"]

_NO_TASK = "\x00"  # stands for "no task given" in a verdict's key; no task text is a NUL


def no_answer(
    s: Session, rule: str, text: str, asked: Sequence[str], task: str | None
) -> str | None:
    """Why `text` is no answer to the task it was `asked` for, or None; `rule` names the
    check in the journal (a protocol's name for what it checks, say "court_position")."""

    def check() -> str | None:
        problem = check_substance(text, asked, task=task)
        return None if problem is None else str(problem)

    return s.checked(rule, [text, _NO_TASK if task is None else task, *asked], check)


def copied_fence(reply: str, prompts: Sequence[str], task: str | None) -> str | None:
    """Why `reply` is no answer of its author's own where it copies moot's quote markup back:
    the id of a fence `prompts` wrapped another participant's text in (a nonce no model saw
    before its prompt, so a reply that holds one copies the fence, and most likely the quoted
    text inside it); None where it holds no such id. The substance check takes a copied fence
    tag out before it looks for ids (the tag is markup, the text inside it stays), so what a
    tiny model copies whole, `<quoted from="..." id="...">` and the answer under it, would pass
    as its own answer."""
    ids = echo.read_prompts(tuple(prompts), task).fences.ids
    copied = sorted(ids.intersection(echo.WORD.findall(echo.fold(reply)))) if ids else []
    if not copied:
        return None
    return (
        f"it copies moot's quote markup (the fence id {copied[0]} around another answer) "
        "instead of giving an answer of its own"
    )


def answer_problem(
    text: str, asked: Sequence[str], task: str, part: str | None = None
) -> str | None:
    """Why `text` is no answer to `task` (it was `asked` for), or None: the text as a whole
    (not empty, not an echo of the prompt, not a refusal); then `part`, the piece of it that
    answers where a protocol's format splits one off (the arena's CHANGES must not carry junk);
    then what moot's finding would hold of its claim (it only repeats the question, "2 + 3 =",
    or is a bare number to a yes/no question); then its explicit final answer ("Final answer:
    what the capital of France?" repeats the task). A text that copies a quote fence of its
    prompts back is none of its own (`copied_fence`)."""
    copied = copied_fence(text, asked, task)
    if copied is not None:
        return copied
    problem = check_substance(text, asked, task=task)
    if problem is not None:
        return str(problem)
    part = text if part is None else part
    if part != text:
        problem = check_substance(part, asked, task=task)
        if problem is not None:
            return f"its answer is no answer: {problem}"
    claim = claims.extract_claim(part, task)
    held = finding.claim_problem(claim, task)
    if held is not None:
        return held
    # (a claim's text is the answer flattened and cut, unless it names its final answer)
    final = claim.text
    if final and final != " ".join(part.split())[: len(final)]:
        problem = check_substance(final, asked, task=task)
        if problem is not None:
            return f"its final answer is no answer: {problem}"
    return None
