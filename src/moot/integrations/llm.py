"""The `llm` plugin: `llm -m moot "question"` runs a deliberation and prints its answer, then
moot's label and trust statement.

llm finds this module through moot's `llm` entry point (the `llm` extra) and imports it as it
starts, for every command: so this module imports `llm` and of moot only its exception tree;
the library (`moot.api.run`, whose plan builder is `lifecycle.plan.load_run`) is imported when
a prompt runs. Each prompt is a new moot session, kept like any other (`moot list`, `moot
show ID`, `moot resume ID`). Options (`-o NAME VALUE`): protocol, models (llm's option syntax
takes one value per name, so several specs are one comma list), config (a config file), rounds,
seed, max_cost, max_tokens, timeout. Without models, the user's configured models run, as with
`moot run` (with none configured, the embedded model). A system prompt (`-s`) comes first in
the task. A moot session answers one task, so `llm chat` and `llm -c` are refused: each prompt
is asked afresh. moot's errors (a bad protocol, an unknown provider) reach llm as
`llm.ModelError`, which llm prints as `Error: ...`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterator
from typing import TYPE_CHECKING, Any

import llm
from pydantic import Field

from moot.errors import MootError

if TYPE_CHECKING:
    from moot.engine.result import Result

__all__ = ["MootAsyncModel", "MootModel", "MootOptions", "register_models"]

MODEL_ID = "moot"


class MootOptions(llm.Model.Options):
    """`-o NAME VALUE` for `llm -m moot`; unset ones take moot's defaults."""

    protocol: str | None = Field(None, description="the deliberation protocol (default: arena)")
    models: str | None = Field(
        None, description="model specs, comma-separated (default: your configured models)"
    )
    config: str | None = Field(None, description="a moot config file (TOML, JSON or YAML)")
    rounds: int | None = Field(None, description="at most this many rounds")
    seed: int | None = Field(None, description="the session's seed")
    max_cost: float | None = Field(None, description="stop at this cost, in USD (resumable)")
    max_tokens: int | None = Field(None, description="stop at this many tokens (resumable)")
    timeout: float | None = Field(None, description="seconds each model call may take")


def _specs(models: str | None) -> list[str]:
    return [spec.strip() for spec in (models or "").split(",") if spec.strip()]


def _arguments(prompt: llm.Prompt) -> tuple[str, dict[str, Any]]:
    """The task and moot.run's keywords for one prompt."""
    task = prompt.prompt
    if prompt.system:  # the system prompt's instructions come first in the task
        task = f"{prompt.system}\n\n{task}"
    given = prompt.options.model_dump()
    keywords = {key: value for key, value in given.items() if value is not None}
    keywords["models"] = _specs(keywords.pop("models", None))
    return task, keywords


def _text(result: Result) -> str:
    """The answer first, then moot's finding: the outcome line and how far to trust it."""
    lines = [result.final_answer.strip(), ""] if result.final_answer.strip() else []
    lines.append(f"Session {result.session_id}: {result.status_words}: {result.how}")
    if result.trust:
        lines.append(f"How far to trust it: {result.trust}")
    if result.status in ("paused", "interrupted"):
        if result.stop_message and result.stop_message != result.how:
            lines.append(result.stop_message)
        resume = f"moot resume {result.session_id}"
        if resume not in "\n".join(lines):
            lines.append(f"{resume} continues it")
    return "\n".join(lines)


def _record(response: llm.Response | llm.AsyncResponse, result: Result) -> None:
    """What llm logs of the run: its tokens and the session it made."""
    prompt_tokens = sum(agent.prompt_tokens for agent in result.agents.values())
    completion_tokens = sum(agent.completion_tokens for agent in result.agents.values())
    response.set_usage(input=prompt_tokens, output=completion_tokens)
    response.response_json = {
        "session_id": result.session_id,
        "protocol": result.protocol,
        "status": result.status,
        "how": result.how,
        "trust": result.trust,
        "cost": result.cost,
    }


class _Moot:
    """What moot's sync and async models share: their id and options, and no streaming."""

    model_id = MODEL_ID
    can_stream = False
    # a moot session answers one task: llm refuses `llm chat` and `-c` (continue) up front
    supports_conversation = False

    class Options(MootOptions):
        pass


class MootModel(_Moot, llm.Model):
    """Several models deliberate on the prompt; the reply is moot's answer and finding."""

    def execute(
        self,
        prompt: llm.Prompt,
        stream: bool,
        response: llm.Response,
        conversation: llm.Conversation | None,
    ) -> Iterator[str]:
        task, keywords = _arguments(prompt)
        from moot.api import run

        try:
            result = run(task, **keywords)
        except MootError as exc:  # its message is the whole story: llm prints "Error: ..."
            raise llm.ModelError(str(exc)) from None
        _record(response, result)
        yield _text(result)


class MootAsyncModel(_Moot, llm.AsyncModel):
    """The same for llm's async API (`llm.get_async_model("moot")`, `llm --async`)."""

    async def execute(
        self,
        prompt: llm.Prompt,
        stream: bool,
        response: llm.AsyncResponse,
        conversation: llm.AsyncConversation | None,
    ) -> AsyncGenerator[str, None]:
        task, keywords = _arguments(prompt)
        from moot.api import arun

        try:
            result = await arun(task, **keywords)
        except MootError as exc:
            raise llm.ModelError(str(exc)) from None
        _record(response, result)
        yield _text(result)


@llm.hookimpl
def register_models(register: Callable[..., None]) -> None:
    register(MootModel(), MootAsyncModel())
