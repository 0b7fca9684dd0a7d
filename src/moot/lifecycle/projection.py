"""What a run may cost before it starts (`moot run --dry-run`, and the `--max-cost` check):
the protocol's record says how many calls each participant may get (`Conduct.project`),
this module adds tokens and prices.

Per call: the participant's largest prompt (the record's estimate plus the task) and its
completion cap: its `max_tokens`, else its model's own (`caps`: what `Capabilities.max_tokens`
says, such as the embedded model's 320 tokens; `moot run --dry-run` makes the models to learn
them), else `record.ASSUMED_MAX_TOKENS`. The caps are filled into every participant the config
and the protocol's options name before the protocol projects, so the answers its later prompts
quote are counted at them too. The low end of the cost range is the fewest calls, the high end
the most. Prices come from the price table (`models/pricing.py`); models on this machine are
free, as in runs (`runs_free`: the embedded and scripted models, a server at a loopback
address); a model with no known price is counted at the fallback rate that cost limits use,
and named.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec
from msgspec import Struct
from msgspec.structs import replace

from moot.config import AgentConfig
from moot.lifecycle.plan import Plan, asks_synthesis
from moot.models.base import runs_free
from moot.models.pricing import UNPRICED_USD_PER_TOKEN, Price, lookup_price
from moot.protocols import synthesis
from moot.protocols.definition import Projected, completion_cap
from moot.types import Usage, estimate_tokens, parse_spec

__all__ = ["Estimate", "Line", "estimate", "render", "within_windows"]

T = TypeVar("T")


class Line(Struct, frozen=True):
    role: str
    model: str
    fewest: int
    most: int
    tokens_per_call: int
    low: float
    high: float
    priced: bool


class Estimate(Struct, frozen=True):
    protocol: str
    lines: tuple[Line, ...]

    @property
    def calls(self) -> tuple[int, int]:
        return sum(x.fewest for x in self.lines), sum(x.most for x in self.lines)

    @property
    def tokens(self) -> tuple[int, int]:
        low = sum(x.fewest * x.tokens_per_call for x in self.lines)
        return low, sum(x.most * x.tokens_per_call for x in self.lines)

    @property
    def cost(self) -> tuple[float, float]:
        return sum(x.low for x in self.lines), sum(x.high for x in self.lines)

    @property
    def unpriced(self) -> list[str]:
        return sorted({x.model for x in self.lines if not x.priced})


def _price(member: AgentConfig, prices: dict[str, dict[str, float]]) -> Price | None:
    """What a call of `member` costs per token, as its run would count it: its own price,
    nothing on this machine (`runs_free`), else the price table's; None when unknown."""
    own = member.options.get("price")
    if isinstance(own, dict):
        return Price.parse(own, f"options.price of {member.model}")
    parsed = parse_spec(member.model)
    if runs_free(parsed, member.base_url):
        return Price(0.0, 0.0)
    return lookup_price([str(parsed), parsed.name], prices)


def _synthesis(plan: Plan) -> list[Projected]:
    """The chairman's one call of a synthesis after the outcome (`--synthesize`), shown the
    picked answer and what the others said (each at most its completion cap). The default
    chairman is the picked agent's model, unknown before the run: counted at the agent model
    whose answers may be longest."""
    if not asks_synthesis(plan):
        return []
    caps = [completion_cap(a) for a in plan.config.agents]
    settings = plan.config.synthesis
    if settings is not None and settings.chairman is not None:
        member, role = settings.chairman, "Chairman (synthesis)"
    else:
        member = plan.config.agents[caps.index(max(caps))]
        role = "Chairman (synthesis; the picked agent's model, counted at the largest)"
    tokens = synthesis.PROMPT_TOKENS + sum(caps)
    return [Projected(member, role, fewest=1, most=1, prompt_tokens=tokens)]


def estimate(plan: Plan, task: str, caps: Mapping[str, int] | None = None) -> Estimate | None:
    """The projection of `plan` on `task`; None when its protocol gives none. `caps`: model
    spec -> the tokens its calls write when nothing else caps them (the module docstring)."""
    project = plan.record.conduct.project
    if project is None:
        return None
    if caps:
        plan = msgspec.structs.replace(
            plan, config=_capped(plan.config, caps), options=_capped(plan.options, caps)
        )
    task_tokens = estimate_tokens(task)
    lines = []
    for item in [*project(plan.config, plan.options), *_synthesis(plan)]:
        cap = completion_cap(item.member)
        prompt = item.prompt_tokens + task_tokens
        price = _price(item.member, plan.config.prices)
        if price is not None:
            per_call = price.cost(Usage(prompt_tokens=prompt, completion_tokens=cap))
        else:
            per_call = (prompt + cap) * UNPRICED_USD_PER_TOKEN
        lines.append(
            Line(
                role=item.role,
                model=item.member.model,
                fewest=item.fewest,
                most=item.most,
                tokens_per_call=prompt + cap,
                low=item.fewest * per_call,
                high=item.most * per_call,
                priced=price is not None,
            )
        )
    return Estimate(plan.record.name, tuple(lines))


def _capped(value: T, caps: Mapping[str, int]) -> T:
    """`value` with every AgentConfig in it (fields of models, items of lists and tuples: the
    agents, a court's judges, a council's chairman) that sets no `max_tokens` given its
    model's cap from `caps`; what holds none is returned as it is."""
    found: Any = value
    if isinstance(value, AgentConfig):
        cap = caps.get(value.model)
        if value.max_tokens is None and cap:
            found = replace(value, max_tokens=cap)
    elif isinstance(value, Struct):
        changed = {}
        for name in value.__struct_fields__:
            old = getattr(value, name)
            new = _capped(old, caps)
            if new is not old:
                changed[name] = new
        if changed:
            found = replace(value, **changed)
    elif isinstance(value, list | tuple):
        items = [_capped(item, caps) for item in value]
        if any(new is not old for new, old in zip(items, value, strict=True)):
            found = type(value)(items)
    return found  # type: ignore[no-any-return]


def render(est: Estimate, *, before_run: bool = False) -> str:
    """The projection as the lines `moot run --dry-run` prints (`before_run`: as printed
    before a run that goes ahead)."""
    said = "before it runs" if before_run else "nothing was run"
    rows = [f"Projected worst case for the {est.protocol} protocol ({said}):"]
    for x in est.lines:
        calls = str(x.most) if x.fewest == x.most else f"{x.fewest}-{x.most}"
        rows.append(
            f"  {x.role}: {x.model}: {calls} {'call' if x.most == 1 else 'calls'}, "
            f"up to {x.tokens_per_call:,} tokens each, {_dollars(x.low, x.high)}"
        )
    (fewest, most), (low_t, high_t), (low, high) = est.calls, est.tokens, est.cost
    rows.append(f"Calls: {fewest}-{most}" if fewest != most else f"Calls: {most}")
    rows.append(f"Tokens: {low_t:,}-{high_t:,}" if low_t != high_t else f"Tokens: up to {high_t:,}")
    rows.append(f"Cost: {_dollars(low, high)}")
    if est.unpriced:
        rows.append(
            f"No price known for {', '.join(est.unpriced)}: counted at the fallback rate of "
            f"${UNPRICED_USD_PER_TOKEN * 1_000_000:g} per million tokens"
        )
    return "\n".join(rows)


def _dollars(low: float, high: float) -> str:
    """A cost range, or one amount where both ends print the same."""
    low_text, high_text = f"${low:.4f}", f"${high:.4f}"
    return high_text if low_text == high_text else f"{low_text}-{high_text}"


def within_windows(
    plan: Plan, est: Estimate, windows: dict[str, int]
) -> tuple[Estimate, list[str]]:
    """The projection with no call above its model's context window (`windows`: spec ->
    tokens), and a note per model whose lines were cut to it: whether the protocol cuts what
    it shows to fit, or the model refuses such a call. The costs stay the projection's (an
    upper bound still)."""
    project = plan.record.conduct.project  # there is one: `est` was made of it
    items = project(plan.config, plan.options) if project is not None else []
    cut = {(item.role, item.member.model): item.cut_to_window for item in items}
    lines = []
    over: dict[tuple[str, int, bool | None], list[Line]] = {}
    for line in est.lines:
        window = windows.get(line.model)
        if window is None or line.tokens_per_call <= window:
            lines.append(line)
            continue
        lines.append(msgspec.structs.replace(line, tokens_per_call=window))
        fits = cut.get((line.role, line.model))
        over.setdefault((line.model, window, fits), []).append(line)
    notes = []
    for (model, window, fits), cut_lines in over.items():
        who = "; ".join(x.role.split(" (")[0] for x in cut_lines)
        largest = max(x.tokens_per_call for x in cut_lines)
        head = (
            f"{model} holds {window:,} tokens a call (its context window), fewer than the "
            f"about {largest:,} a prompt and its answer may take ({who})"
        )
        fix = (
            "lower max_tokens or the quoted texts' size, or give the model a larger context "
            "window (a local model's options.n_ctx)"
        )
        if fits:
            notes.append(f"{head}: the {est.protocol} protocol cuts what it shows to fit.")
        elif fits is None:
            notes.append(f"{head}: a call fits only as far as what it is shown is cut; {fix}.")
        else:
            notes.append(
                f"{head}: such a prompt is sent as it is, and the model refuses it (the call "
                f"fails); {fix}."
            )
    return msgspec.structs.replace(est, lines=tuple(lines)), notes
