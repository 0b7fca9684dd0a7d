"""How a protocol replies for a scripted participant: `ProtocolDefinition.script`.

`moot bench --suite adversarial` (moot/bench/adversarial.py) plays personas (a stubborn agent,
a sycophant, a yes-man, an abstainer, junk; judges that never claim agreement, always do, or
contradict themselves) against every protocol that has a `Script`. The persona's behaviour is
the suite's (`Actor`); how that behaviour reads as a reply to one of the protocol's asks (its
phases, its JSON or tags) is the protocol's own knowledge, so it lives in the protocol's folder
(`protocols/<name>/scripting.py`) and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from msgspec import Struct

from moot import lazy
from moot.types import Request

if TYPE_CHECKING:
    from moot.deliberation import answers
else:  # every protocol builds its Script at start-up; only `moot bench` reads an answer
    (answers,) = lazy.modules("moot.deliberation", "answers")

__all__ = ["Actor", "JudgeKind", "Script", "final_writer", "no_options"]

# The judge persona of a case: never claims agreement; always claims it; claims it while its
# own fields say otherwise; scores everything 100; claims it exactly where the answers agree.
JudgeKind = Literal["strict", "always_consensus", "self_contradicting", "always_100", "fair"]


class Actor(Protocol):
    """One scripted participant (an agent, or a judge playing the case's judge persona)."""

    # its last answer (a protocol whose reply adopts another's answer sets it)
    held: str | None

    @property
    def judge(self) -> JudgeKind:
        """The case's judge persona, for the protocol's judge, arbiter or verifier asks."""

    @property
    def agree(self) -> bool:
        """The agents' final answers agree on this protocol (what a fair judge says)."""

    @property
    def first(self) -> str:
        """Its first answer (a junk agent's non-answer; "" for an abstainer)."""

    @property
    def confidence(self) -> float: ...

    @property
    def junk(self) -> bool:
        """Its answers are non-answers (a protocol may send them without its answer format)."""

    @property
    def abstention(self) -> str:
        """What it says when it holds no answer."""

    def answer(self, prompt: str) -> str | None:
        """Its answer now, having read `prompt` (a sycophant adopts the last correction it
        reads), held from now on; None: it abstains."""

    def critique(self, own: str | None) -> str:
        """Its critique of the others' answers, `own` being the answer it holds."""

    def vote(self, candidate: str, own: str | None) -> Literal["yes", "no", "abstain"]:
        """Whether it supports the answer `candidate`, `own` being the answer it holds."""


def no_options(judge: str) -> dict[str, Any]:
    return {}


# a block `anonymize.quote` fenced: its opener names the nonce its closer repeats
_QUOTED = lazy.pattern(r'<quoted\b[^>\n]*\bid="([^"\n]+)"[^>\n]*>\n(.*?)\n</quoted id="\1">', re.S)


def final_writer(actor: Actor, prompt: str) -> str:
    """The reply of a role that writes the final answer from the answers it is shown (a
    chairman, an aggregator), as the judge persona writes it: it takes the first answer shown
    and says the answers all agree (always-CONSENSUS, always-100, self-contradicting, and fair
    where they do) or that they differ (strict, and fair where they do not)."""
    shown = [answers.extract_answer(body) for _, body in _QUOTED.findall(prompt)]
    first = next((a.text for a in shown if a is not None), "no answer was shown")
    claims = actor.judge != "strict" and (actor.judge != "fair" or actor.agree)
    said = "All the answers agree." if claims else "The answers differ; the first is best."
    return f"{said}\nAnswer: {first}"


class Script(Struct, frozen=True):
    """A protocol's replies for scripted participants, and what the suite may assume of it."""

    # The reply to one ask of the protocol (the step id in `request.meta["step"]`).
    reply: Callable[[Actor, Request], str]
    # The protocol's options section for a scripted session whose judges, arbiter or other
    # separate roles are the model `judge` (a model spec); {}: its defaults.
    options: Callable[[str], dict[str, Any]] = no_options
    # Agents answer again after reading the others' critiques (a sycophant can be persuaded).
    revises: bool = False
    # An agent's "yes" to another's answer makes that answer its own (a yes-man adopts it).
    adopts_on_yes: bool = False
