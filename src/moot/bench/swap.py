"""The judge swap audit: re-ask a sample of recorded pairwise judgements with the two candidates
swapped, and count the verdicts that still name the same candidate.

A pairwise judgement is found in a session's journal, whatever the protocol, as an ask whose
prompt quotes exactly two candidates as `<quoted from="A" ...>` and `<quoted from="B" ...>`
(moot's quoting, `deliberation.anonymize.quote`) and whose reply is a JSON object with
`"winner": "A"` or `"B"` (the tournament's arbiter). The swapped prompt exchanges the two quoted
bodies, and in any other quoted text (the debate transcript) the side letters of its
"Round N, A ..." lines, so the judge reads the same debate with the sides' places exchanged.
The re-ask goes to the same model with the same settings, as one user message (without the
original's JSON schema); its calls are not journaled in the session and are counted apart.
Protocols whose judges rank several candidates at once (court) have no pairwise judgement to
swap: the report says so.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable
from pathlib import Path

from msgspec import Struct

from moot.bench.statistics import SwapAudit, audit_sample, swap_audit
from moot.config import RunConfig
from moot.lifecycle.plan import participants, resolve
from moot.models.base import create_model
from moot.types import Message, Request

__all__ = ["Judgement", "audit_judgements", "pairwise_judgements", "swapped_prompt"]

_BLOCK = re.compile(
    r'<quoted from="(?P<side>[AB])" id="(?P<id>[0-9A-Za-z_-]+)">\n(?P<body>.*?)\n'
    r'</quoted id="(?P=id)">',
    re.DOTALL,
)
_ROUND_SIDE = re.compile(r"(Round \d+, )([AB])\b")
_OTHER = {"A": "B", "B": "A"}


class Judgement(Struct, frozen=True):
    folder: Path
    step: str
    alias: str
    prompt: str
    winner: str  # "A" or "B" as first asked
    candidates: dict[str, str]  # side letter -> quoted body


def winner_of(text: str) -> str | None:
    """The side letter a verdict names; None when the reply is not such a verdict."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    winner = data.get("winner") if isinstance(data, dict) else None
    return winner if winner in ("A", "B") else None


def _blocks(prompt: str) -> dict[str, re.Match[str]]:
    found: dict[str, list[re.Match[str]]] = {"A": [], "B": []}
    for match in _BLOCK.finditer(prompt):
        found[match.group("side")].append(match)
    return {k: v[0] for k, v in found.items() if len(v) == 1}


def pairwise_judgements(folder: Path) -> list[Judgement]:
    """The pairwise judgements recorded in a session's journal, in journal order."""
    events = folder / "events.jsonl"
    if not events.exists():
        return []
    found = []
    for line in events.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        data = event.get("data") or {}
        completion = data.get("completion") or {}
        if event.get("kind") != "ask" or completion.get("status") == "error":
            continue
        prompt, text = data.get("prompt"), completion.get("text")
        if not isinstance(prompt, str) or not isinstance(text, str):
            continue
        winner = winner_of(text)
        blocks = _blocks(prompt)
        if winner is None or len(blocks) != 2:
            continue
        candidates = {side: match.group("body") for side, match in blocks.items()}
        found.append(Judgement(folder, event["step"], data["agent"], prompt, winner, candidates))
    return found


def swapped_prompt(prompt: str) -> str:
    """The prompt with the A and B bodies exchanged and other quotes' side letters swapped."""
    blocks = _blocks(prompt)
    if len(blocks) != 2:
        raise ValueError("the prompt does not quote exactly one A and one B")
    spans = sorted((m.start("body"), m.end("body"), side) for side, m in blocks.items())
    out, at = [], 0
    for start, end, side in spans:
        out.append(_ROUND_SIDE.sub(lambda m: m.group(1) + _OTHER[m.group(2)], prompt[at:start]))
        out.append(blocks[_OTHER[side]].group("body"))
        at = end
    out.append(_ROUND_SIDE.sub(lambda m: m.group(1) + _OTHER[m.group(2)], prompt[at:]))
    return "".join(out)


async def _reask(judgement: Judgement) -> str | None:
    """The side the same judge picks with the sides swapped, as the candidate's own letter
    before the swap (so that a consistent judge gives back the original letter)."""
    meta = json.loads((judgement.folder / "session.json").read_text(encoding="utf-8"))
    plan = resolve(RunConfig.read(meta["config"]))
    agent = next(a for a in participants(plan, meta["seed"]) if a.alias == judgement.alias)
    model = create_model(agent.spec, agent.config.settings(plan.config.prices))
    request = Request(
        messages=(Message(role="user", content=swapped_prompt(judgement.prompt)),),
        temperature=agent.config.temperature,
        max_tokens=agent.config.max_tokens,
        meta={"step": judgement.step + "/swap-audit", "agent": judgement.alias},
    )
    try:
        completion = await model.complete(request)
    finally:
        await model.aclose()
    picked = winner_of(completion.text) if completion.ok else None
    return None if picked is None else _OTHER[picked]


def audit_judgements(judgements: Iterable[Judgement], share: float, seed: int) -> SwapAudit:
    """Re-ask `share` of the judgements (chosen by the seed) swapped; see the module doc."""
    listed = list(judgements)
    chosen = [listed[i] for i in audit_sample(len(listed), share, seed)]

    async def run() -> list[str | None]:
        return list(await asyncio.gather(*(_reask(j) for j in chosen)))

    again = asyncio.run(run()) if chosen else []
    return swap_audit(
        (j.candidates[j.winner], None if side is None else j.candidates[side])
        for j, side in zip(chosen, again, strict=True)
    )
