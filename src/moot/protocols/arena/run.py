"""The arena (seed 000): solve, then rounds of evaluate, revise and verify until the agents'
answers agree or the rounds run out.

Round 0 is the solve; round N is the Nth evaluate -> revise -> verify cycle. Agents keep their
own conversation across phases; once a prompt's estimated size passes the context budget, the
remaining asks start fresh conversations that carry the task and the agent's current solution.

The label is moot's finding over every agent's answer after every round (deliberation/finding):

    after the solve and after each revision: every remaining agent's answer agrees -> done
    verify: a judge's CONSENSUS (score >= threshold) is evidence; it ends the debate only where
            moot's check bears it out (a judge may confirm answers whose wording cannot tell,
            never answers that contradict); otherwise the debate goes on
    evaluate: a solution that more than half of its reviewers mark as not answering the
            question is invalid
    rounds run out -> the finding over the final answers (no consensus, a tie, or agreement)

The phases are here; what the protocol knows between them is state.py's, and the outcome the
finding labels is assembled in outcome.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from moot import lazy
from moot.engine.session import Session
from moot.engine.structured import Parsed, ask_parsed
from moot.errors import FormatError, ProtocolAborted
from moot.protocols.arena import prompts
from moot.protocols.arena.options import ArenaOptions
from moot.protocols.arena.state import State, label
from moot.types import Message, ModelVerdict, Outcome, RoundSummary, Step, estimate_tokens

# What runs only once replies are in is loaded while the first asks are in flight (moot/lazy.py).
# The first asks need neither the replies' parsing (their JSON schemas are in prompts.py) nor
# the quoting of other agents' answers.
if TYPE_CHECKING:
    from moot.deliberation import anonymize, markup, parsing, trust
    from moot.protocols import codework, shown, substantive
    from moot.protocols.arena import outcome, weigh
else:
    anonymize, markup, parsing, trust = lazy.modules(
        "moot.deliberation", "anonymize", "markup", "parsing", "trust"
    )
    codework, shown, substantive = lazy.modules(
        "moot.protocols", "codework", "shown", "substantive"
    )
    outcome, weigh = lazy.modules("moot.protocols.arena", "outcome", "weigh")

__all__ = ["describe_round", "run"]


def _user(text: str) -> Message:
    return Message(role="user", content=text)


def _messages(s: Session, st: State, alias: str, prompt: str, step: str) -> list[Message]:
    """Follow-up in the agent's conversation, or a fresh one once the budget is passed."""
    follow_up = [*st.conversations[alias], _user(prompt)]
    if st.fresh_from is None:
        size = sum(estimate_tokens(m.content) for m in follow_up)
        if size <= st.budget:
            return follow_up
        st.fresh_from = step
        s.signal("context_fresh", step, estimated_tokens=size, budget=st.budget)
    own = st.solutions.get(alias)
    context = prompts.FRESH_CONTEXT.format(
        task=st.task,
        own=anonymize.quote(
            label(alias), own, nonce=shown.nonce(s, step + "/own"), limit=st.quote_limit
        )
        if own
        else "(none yet)",
    )
    return [st.system, _user(context + prompt)]


def _quoted(s: Session, st: State, texts: dict[str, str], order: list[str], step: str) -> str:
    return "\n\n".join(
        anonymize.quote(
            label(a),
            shown.anonymous(s, texts[a], f"{step}/{a}"),
            nonce=shown.nonce(s, f"{step}/{a}"),
            limit=st.quote_limit,
        )
        for a in order
        if a in texts
    )


def _schema(s: Session, alias: str, schema: dict[str, object]) -> dict[str, Any] | None:
    """Where the model enforces a JSON schema (constrained decoding, as the embedded model
    does), the answer is asked as that JSON: even a tiny model then answers in the format
    on its first try. Others keep the tag format their prompts describe."""
    return dict(schema) if s.enforces_schema(alias) else None


def _parser(s: Session, st: State, messages: list[Message]) -> Callable[[str], tuple[str, str]]:
    """The solve/revise parser: the format, then substance (not empty, not an echo of the
    prompt or its template, not a refusal); a problem is a format error, so it gets a re-ask."""
    asked = [m.content for m in messages if m.role != "assistant"][-2:]

    def parse(text: str) -> tuple[str, str]:
        solution, analysis = parsing.parse_solution_any(text)
        solution = markup.strip_markup(solution)
        problem = _no_answer(s, solution, asked, st.task)
        if problem is not None:
            raise FormatError(f"its solution is not an answer to the task: {problem}")
        return solution, markup.strip_markup(analysis)

    return parse


def _no_answer(s: Session, solution: str, asked: Sequence[str], task: str) -> str | None:
    """Why a solution is no answer to the task, or None (checked once per session)."""
    return s.checked("arena_answer", [solution, *asked, task], lambda: _why(solution, asked, task))


def _why(solution: str, asked: Sequence[str], task: str) -> str | None:
    """Why a solution is no answer (`substantive.answer_problem`): a plan line must not carry
    junk in its CHANGES either, the part that answers (`weigh.answer_part`)."""
    return substantive.answer_problem(solution, asked, task, part=weigh.answer_part(solution))


def _keep(st: State, alias: str, parsed: Parsed[tuple[str, str]], r: int, s: Session) -> None:
    """Take a solve/revise answer into the state. An answer still unstructured after the re-ask
    is used whole if it is substantive; junk (empty, an echo, a refusal) is invalid: a first
    answer leaves the debate, a revision keeps the agent's earlier solution. A model that
    enforces the schema is not re-asked for a revision: its format cannot be what failed, a
    tiny model's second try is as likely junk, and the earlier solution stands anyway."""
    if not parsed.completion.ok:
        if alias not in st.solutions:
            st.failed[alias] = parsed.problem or "failed"
        else:
            st.kept[(alias, r)] = f"its revision failed: {parsed.problem or 'the call failed'}"
        return
    st.conversations[alias] = list(parsed.messages)
    if parsed.value is not None:
        solution, analysis = parsed.value
    else:
        solution, analysis = _unparsed(parsed.completion.text)
        asked = [m.content for m in parsed.messages if m.role != "assistant"][-2:]
        problem = _no_answer(s, solution, asked, st.task)
        if problem is not None:
            if alias not in st.solutions:
                st.invalid[alias] = str(problem)
            else:
                st.kept[(alias, r)] = f"its revision was no answer: {problem}"
            return
    st.solutions[alias] = solution
    st.analyses[alias] = analysis
    letter = alias.rsplit("_", 1)[-1]
    s.archive(f"round{r}/{letter}_solution", solution)
    s.archive(f"round{r}/{letter}_analysis", analysis)


def _unparsed(text: str) -> tuple[str, str]:
    """What a reply the parser refused still offers: its solution section when it has the
    format (then that section's substance is what failed, and the whole reply, analysis and
    JSON braces included, must not pass for it), else the whole text."""
    try:
        solution, analysis = parsing.parse_solution_any(text)
    except FormatError:
        return ("", "") if _schema_shaped(text) else (markup.strip_markup(text).strip(), "")
    return markup.strip_markup(solution).strip(), markup.strip_markup(analysis)


def _schema_shaped(text: str) -> bool:
    """The JSON of SOLUTION_SCHEMA, with a solution too empty to parse: nothing to keep."""
    if not text.lstrip().startswith("{"):
        return False
    try:
        return "solution" in parsing.extract_json(text)
    except FormatError:
        return False


def _keep_work(s: Session, st: State, item: codework.Work, name: str) -> None:
    """A code task's turn: the solution is the diff plus its verification results."""
    alias = item.alias
    st.conversations[alias] = list(item.messages)
    if not item.ok and alias not in st.solutions:
        # a failed call is a failure (resume asks it again); an answer that made no change
        # is no answer, as an invalid answer to a question is
        kept = st.failed if item.call_failed else st.invalid
        kept[alias] = item.problem or "failed"
        return
    if item.ok:
        st.works[alias] = item
        st.solutions[alias] = codework.solution_text(item)
        st.analyses[alias] = item.summary
        s.archive(f"{name}/{alias.rsplit('_', 1)[-1]}_solution", st.solutions[alias])


async def _solve(s: Session, st: State) -> None:
    if s.code_task:
        aliases = list(st.conversations)
        steps = [Step.at(0, "solve", a) for a in aliases]
        works = await s.gather(
            *(
                codework.work(s, a, st.task, step=step, system=st.system)
                for a, step in zip(aliases, steps, strict=True)
            )
        )
        for item in works:
            _keep_work(s, st, item, "round0")
        return
    prompt = prompts.SOLVE.format(task=st.task, format=prompts.FORMAT)
    aliases = list(st.conversations)
    messages = {a: _messages(s, st, a, prompt, Step.at(0, "solve", a)) for a in aliases}
    answers = await s.gather(
        *(
            ask_parsed(
                s,
                a,
                messages[a],
                _parser(s, st, messages[a]),
                step=Step.at(0, "solve", a),
                reminder=prompts.FORMAT,
                reask=st.opts.reask_on_bad_format,
                json_schema=_schema(s, a, prompts.SOLUTION_SCHEMA),
            )
            for a in aliases
        )
    )
    for alias, parsed in zip(aliases, answers, strict=True):
        _keep(st, alias, parsed, 0, s)


async def _evaluate(s: Session, st: State, r: int) -> dict[str, str]:
    """Every agent critiques the others' solutions and says, per solution, whether it answers
    the question; a solution more than half of its reviewers say does not is invalid, and its
    agent leaves the debate."""
    active = st.active
    asks = []
    for a in active:
        step = Step.at(r, "evaluate", a)
        order = s.shuffle([b for b in active if b != a], step=step + "/order")
        prompt = prompts.EVALUATE.format(solutions=_quoted(s, st, st.solutions, order, step))
        asks.append((a, _messages(s, st, a, prompt, step), step))
    replies = await s.gather(*(s.ask(a, msgs, step=step) for a, msgs, step in asks))
    critiques: dict[str, str] = {}
    marks: dict[str, dict[str, bool]] = {}
    for (alias, msgs, _), reply in zip(asks, replies, strict=True):
        if reply.ok and reply.text.strip():
            critiques[alias] = reply.text.strip()
            marks[alias] = weigh.read_marks(critiques[alias], [b for b in active if b != alias])
            st.conversations[alias] = [*msgs, Message(role="assistant", content=reply.text)]
            s.archive(f"round{r}/{alias.rsplit('_', 1)[-1]}_critique", critiques[alias])
    reviewers = {b: [a for a in active if a != b] for b in active}
    for alias, why in weigh.not_answering(marks, reviewers, r).items():
        st.invalid[alias] = why
        st.history[-1][alias] = None  # the answer they reviewed
    return critiques


async def _revise(s: Session, st: State, r: int, critiques: dict[str, str]) -> None:
    active = st.active
    asks = []
    for a in active:
        step = Step.at(r, "revise", a)
        order = s.shuffle(sorted(critiques), step=step + "/order")
        st.critics[(a, r)] = tuple(c for c in s.aliases if c in critiques and c != a)
        prompt = prompts.REVISE.format(
            critiques=_quoted(s, st, critiques, order, step) or "(no critiques were written)",
            format=codework.revise_format(s, a) if s.code_task else prompts.REVISED_FORMAT,
        )
        asks.append((a, _messages(s, st, a, prompt, step), step))
    if s.code_task:
        replies = await s.gather(*(s.ask(a, msgs, step=step) for a, msgs, step in asks))
        works = await s.gather(
            *(
                codework.realize(s, a, msgs, reply, step=step, optional=True)
                for (a, msgs, step), reply in zip(asks, replies, strict=True)
            )
        )
        for item in works:
            _keep_work(s, st, item, f"round{r}")
        return
    answers = await s.gather(
        *(
            ask_parsed(
                s,
                a,
                msgs,
                _parser(s, st, msgs),
                step=step,
                reminder=prompts.REVISED_FORMAT,
                reask=st.opts.reask_on_bad_format and not s.enforces_schema(a),
                json_schema=_schema(s, a, prompts.SOLUTION_SCHEMA),
            )
            for a, msgs, step in asks
        )
    )
    for (alias, _, _), parsed in zip(asks, answers, strict=True):
        _keep(st, alias, parsed, r, s)


async def _evidence(s: Session, st: State, r: int) -> str:
    if not st.opts.verify_commands:
        return ""
    lines = []
    passed = 0
    for index, command in enumerate(st.opts.verify_commands):
        result = await s.shell(command, step=Step.at(r, "check", str(index)))
        passed += result.exit_code == 0 and not result.timed_out
        status = "timed out" if result.timed_out else f"exit code {result.exit_code}"
        output = (result.stdout + ("\n" + result.stderr if result.stderr else "")).strip()
        lines.append(
            anonymize.quote(
                f"command: {command} ({status})",
                output or "(no output)",
                nonce=shown.nonce(s, Step.at(r, "check", str(index))),
                limit=st.quote_limit,
            )
        )
    st.checks = trust.Checks(passed, len(st.opts.verify_commands))
    return prompts.EVIDENCE.format(results="\n\n".join(lines))


def rotating_judge(s: Session, st: State, r: int) -> str:
    """The rotating judge: round r's verifier is drawn (a journaled choice) from the active
    agents that have not judged yet, and from all of them once every one has."""
    available = [a for a in st.active if a not in st.judges] or st.active
    judge = s.choice(sorted(available), step=Step.at(r, "judge"))
    st.judges.append(judge)
    return judge


async def _verify(s: Session, st: State, r: int) -> tuple[str, Parsed[parsing.JudgeVerdict]]:
    active = st.active
    judge = rotating_judge(s, st, r)
    step = Step.at(r, "verify", judge)
    order = s.shuffle(active, step=step + "/order")
    prompt = prompts.VERIFY.format(
        task=st.task,
        solutions=_quoted(s, st, st.solutions, order, step + "/solutions"),
        analyses=_quoted(s, st, st.analyses, order, step + "/analyses"),
        evidence=await _evidence(s, st, r),
        example=label(order[0]),
    )
    parsed = await ask_parsed(
        s,
        judge,
        _messages(s, st, judge, prompt, step),
        parsing.parse_verdict_any,
        step=step,
        reminder=prompts.VERDICT_REMINDER,
        reask=st.opts.reask_on_bad_format,
        json_schema=_schema(s, judge, prompts.VERDICT_SCHEMA),
    )
    if parsed.completion.ok:
        st.conversations[judge] = list(parsed.messages)
    s.archive(f"round{r}/verify_{judge.rsplit('_', 1)[-1]}", parsed.completion.text)
    return judge, parsed


def describe_round(entry: Mapping[str, Any], options: ArenaOptions) -> RoundSummary | None:
    number = entry.get("round")
    if not isinstance(number, int):
        return None
    score = entry.get("convergence_score")
    return RoundSummary(
        round=number,
        judge=entry.get("judge") or None,
        decision=entry.get("decision") or None,
        score=float(score) if isinstance(score, int | float) else None,
        scale=10,
        threshold=float(options.consensus_score),
        problem=entry.get("problem") or None,
    )


async def run(s: Session, task: str, opts: ArenaOptions) -> Outcome:
    aliases = s.aliases
    smallest_window = min(s.context_window(a) for a in aliases)
    st = State(
        task=task,
        opts=opts,
        budget=min(opts.context_budget_tokens, smallest_window * 3 // 4),
        # about a third of the smallest window, in characters, shared by up to 3 quotes a prompt
        quote_limit=max(200, min(opts.max_quote_chars, smallest_window * 4 // (3 * len(aliases)))),
        system=Message(role="system", content=prompts.SYSTEM.format(n=len(aliases))),
    )
    st.conversations = {a: [st.system] for a in aliases}

    await _solve(s, st)
    st.history.append(outcome.answers(s, st))
    active = st.active
    if not active and st.failed:  # a call that failed is the cause to fix (and resume)
        reasons = "; ".join(f"{label(a)}: {why}" for a, why in {**st.failed, **st.invalid}.items())
        raise ProtocolAborted(f"every agent failed to answer the task ({reasons})")
    if len(active) <= 1:  # answers every one of which is no answer: a finding, not a failure
        judgement = outcome.find(s, st, ())
        how = f"only {label(active[0])} answered; nobody to deliberate with" if active else ""
        # (a session whose live check was journaled before it read claims as the finding does)
        if not active or active[0] in judgement.no_answer():
            how = "no agent gave a valid answer"
        return outcome.conclude(s, st, judgement, how, None, None, 0)
    settled = outcome.settled(s, st, 0)
    if settled is not None:
        return settled

    verdict: parsing.JudgeVerdict | None = None
    judge: str | None = None
    last: ModelVerdict | None = None  # the verdict over the answers as they are now
    rounds = 0
    for r in range(1, opts.max_rounds + 1):
        critiques = await _evaluate(s, st, r)
        if len(st.active) < 2:  # the others marked the answers as no answers
            last = None
            break
        await _revise(s, st, r, critiques)
        st.history.append(outcome.answers(s, st))
        rounds = r
        settled = outcome.settled(s, st, r)
        if settled is not None:
            return settled
        judge, parsed = await _verify(s, st, r)
        verdict = parsed.value
        last = weigh.model_verdict(
            verdict,
            parsed.problem,
            judge=judge,
            round=r,
            active=st.active,
            threshold=opts.consensus_score,
        )
        judgement = outcome.find(s, st, [last])
        st.verdicts.append(judgement.verdicts[0])
        entry: dict[str, object] = {
            "round": r,
            "judge": judge,
            "decision": verdict.decision if verdict else None,
            "convergence_score": verdict.score if verdict else None,
            "problem": parsed.problem or last.problem or None,
        }
        st.rounds.append(entry)
        s.round_done(Step.at(r, "verify", judge), describe_round(entry, opts))
        if verdict and last.valid and last.claims_agreement and judgement.consensus:
            # the judge's CONSENSUS, borne out by moot's check; one it does not bear out is
            # evidence against the judge, not the end: the debate goes on while rounds remain
            how = (
                f"{label(judge)} judged consensus in round {r} (score {verdict.score}/10); "
                f"{judgement.finding.reason}"
            )
            judgement = replace(judgement, verdicts=tuple(st.verdicts))
            scored = trust.JudgeScore(label(judge), verdict.score)
            return outcome.conclude(s, st, judgement, how, verdict, judge, r, scored)
    return outcome.ran_out(s, st, verdict, judge, last, rounds)
