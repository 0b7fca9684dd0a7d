"""`cursor:MODEL`: Cursor Cloud Agents, each a remote agent working on a GitHub repository.

    [[agents]]
    model = "cursor:claude-4-sonnet"            # cursor:auto lets Cursor choose
    timeout = 1800                              # an agent's turn takes minutes
    options = { repository = "https://github.com/org/repo", ref = "main" }

A first call launches an agent (POST /v0/agents) with the conversation as its prompt; a call
that continues a conversation this agent already holds sends a follow-up (POST
/v0/agents/{id}/followup) with just the new message. Then the status is polled until FINISHED
and the new assistant messages are read from the conversation.

The agent id is journaled (a `checkpoint` through the call context) the moment it is known, with
how many replies the conversation already had. A call retried after a failure, or a step run
again after a crash, finds that checkpoint and polls the same agent instead of launching a
second one; a follow-up is re-sent only if the conversation shows it never arrived.

Status and conversation reads are idempotent and are retried here with backoff on 429, 5xx and
dropped connections until the call's deadline; launches and follow-ups are not (the engine
retries those, and the checkpoints keep a retry from duplicating work).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from collections.abc import Sequence
from typing import Any

from moot.errors import ConfigError
from moot.models.base import Capabilities, ModelSettings, Spec, call_context
from moot.models.classify import (
    classify_exception,
    classify_status,
    failure,
    retry_after_seconds,
)
from moot.models.http import Api, HttpProvider, json_object
from moot.models.keys import redact
from moot.models.provider import ProviderError, Reply
from moot.models.transcript import render_transcript
from moot.types import Completion, FailureKind, Message, Request, Usage, estimate_tokens

__all__ = ["CursorModel"]

DEFAULT_BASE_URL = "https://api.cursor.com"
DEFAULT_TIMEOUT = 1800.0
_RUNNING = {"CREATING", "RUNNING", "PENDING", "QUEUED"}


def _thread(messages: Sequence[Message]) -> str:
    body = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:32]


class CursorModel(HttpProvider):
    """Enforces its own deadline (polls until it, then says the agent is still running), so
    the base's timeout guard is off; `classify` prefixes every failure with "cursor: "."""

    default_timeout = DEFAULT_TIMEOUT
    guards_timeout = False

    def api(self, spec: Spec, settings: ModelSettings) -> Api:
        options = settings.options
        self.repository = str(options.get("repository", ""))
        if not self.repository:
            raise ConfigError(
                f"{spec} needs options.repository, the GitHub URL the agent works on "
                '(for example options = { repository = "https://github.com/org/repo" })'
            )
        self.ref = str(options.get("ref", "main"))
        self.poll_interval = float(options.get("poll_interval", 10.0))
        self.retry_base = float(options.get("retry_base", 2.0))
        self.auto_create_pr = bool(options.get("auto_create_pr", False))
        self._threads: dict[str, str] = {}  # conversation hash -> the agent holding it
        return Api(
            "cursor",
            DEFAULT_BASE_URL,
            ("CURSOR_API_KEY",),
            Capabilities(json_schema=False, seed=False, temperature=False, context_window=200_000),
        )

    def connected(self) -> None:
        self._headers = {"Authorization": f"Bearer {self._key}", **self.settings.headers}

    def classify(self, exc: Exception) -> ProviderError:
        if isinstance(exc, ProviderError):
            return ProviderError(exc.kind, f"cursor: {exc.message}", exc.retry_after)
        return super().classify(exc)

    async def send(self, request: Request, timeout: float) -> Reply:
        text, prompt = await self._turn(request, time.monotonic() + timeout)
        usage = Usage(
            prompt_tokens=estimate_tokens(prompt),
            completion_tokens=estimate_tokens(text),
            estimated=True,  # the API reports no token counts
        )
        return Reply(text, usage)

    async def ping(self) -> Completion:
        """Check the key without launching anything (GET /v0/me)."""
        started = time.perf_counter()
        try:
            await self._get("/v0/me", time.monotonic() + 30)
        except Exception as exc:
            error = self.classify(exc)
            return failure(error.kind, error.message, model=self.spec)
        return Completion(
            text="ok", cost=0.0, latency=time.perf_counter() - started, model=self.spec
        )

    # -- one turn --------------------------------------------------------------------------
    async def _turn(self, request: Request, deadline: float) -> tuple[str, str]:
        context = call_context()
        for item in context.recorded if context else ():
            if "thread" in item and "cursor_agent" in item:
                self._threads[str(item["thread"])] = str(item["cursor_agent"])
        mine = [i for i in (context.for_step() if context else []) if "cursor_agent" in i]
        new_text = request.messages[-1].content if request.messages else ""
        prompt = render_transcript(request.messages)
        if mine:  # this step launched or followed up before a crash or a failed attempt
            last = mine[-1]
            agent_id, seen = str(last["cursor_agent"]), int(last.get("seen", 0))
            if last.get("action") == "followup":
                conversation = await self._conversation(agent_id, deadline)
                if _count(conversation, "user") <= int(last.get("users", 0)):
                    await self._post(
                        f"/v0/agents/{agent_id}/followup", {"prompt": {"text": new_text}}
                    )
        else:
            parent = self._continues(request.messages)
            if parent is not None:
                agent_id = parent
                conversation = await self._conversation(agent_id, deadline)
                seen = _count(conversation, "assistant")
                self._checkpoint(
                    agent_id, "followup", seen, request, users=_count(conversation, "user")
                )
                await self._post(f"/v0/agents/{agent_id}/followup", {"prompt": {"text": new_text}})
                prompt = new_text
            else:
                agent_id = await self._launch(prompt)
                seen = 0
                self._checkpoint(agent_id, "launch", seen, request)
        self._threads[_thread(request.messages)] = agent_id
        await self._wait(agent_id, deadline)
        conversation = await self._conversation(agent_id, deadline)
        replies = [_text(m) for m in conversation if _role(m) == "assistant"][seen:]
        if not any(r.strip() for r in replies):
            raise ProviderError(
                FailureKind.BAD_RESPONSE,
                f"agent {agent_id} finished without a new assistant message",
            )
        return "\n\n".join(r for r in replies if r.strip()), prompt

    def _continues(self, messages: Sequence[Message]) -> str | None:
        if len(messages) >= 3 and messages[-1].role == "user" and messages[-2].role == "assistant":
            return self._threads.get(_thread(messages[:-2]))
        return None

    def _checkpoint(
        self, agent_id: str, action: str, seen: int, request: Request, users: int = 0
    ) -> None:
        context = call_context()
        if context is not None:
            context.checkpoint(
                {
                    "cursor_agent": agent_id,
                    "action": action,
                    "seen": seen,
                    "users": users,
                    "thread": _thread(request.messages),
                }
            )

    async def _launch(self, prompt: str) -> str:
        body: dict[str, Any] = {
            "prompt": {"text": prompt},
            "source": {"repository": self.repository, "ref": self.ref},
        }
        if self.model.lower() not in ("auto", "default"):
            body["model"] = self.model
        if self.auto_create_pr:
            body["target"] = {"autoCreatePr": True}
        agent = await self._post("/v0/agents", body)
        agent_id = agent.get("id")
        if not isinstance(agent_id, str) or not agent_id:
            raise ProviderError(FailureKind.BAD_RESPONSE, "the launch reply holds no agent id")
        return agent_id

    async def _wait(self, agent_id: str, deadline: float) -> None:
        while True:
            info = await self._get(f"/v0/agents/{agent_id}", deadline)
            status = str(info.get("status", "")).upper()
            if status in ("FINISHED", "COMPLETED"):
                return
            if status not in _RUNNING:
                summary = info.get("summary") or info.get("error") or ""
                raise ProviderError(
                    FailureKind.UNKNOWN,
                    f"agent {agent_id} ended with status {status or '?'} {summary}",
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ProviderError(
                    FailureKind.TIMEOUT,
                    f"agent {agent_id} still {status} at the call's deadline; "
                    "a retry or a resume polls the same agent",
                )
            await asyncio.sleep(min(self.poll_interval, remaining))

    async def _conversation(self, agent_id: str, deadline: float) -> list[dict[str, Any]]:
        data = await self._get(f"/v0/agents/{agent_id}/conversation", deadline)
        messages = data.get("messages")
        if not isinstance(messages, list):
            raise ProviderError(
                FailureKind.BAD_RESPONSE, "the conversation reply holds no messages"
            )
        return [m for m in messages if isinstance(m, dict)]

    # -- the wire --------------------------------------------------------------------------
    async def _get(self, path: str, deadline: float) -> dict[str, Any]:
        """GET with backoff on transient failures until the deadline (reads are idempotent)."""
        import httpx2  # loaded by now: the shared client is httpx2's

        attempt = 0
        while True:
            try:
                return await self._send("GET", path, None)
            except ProviderError as failed:
                wait = failed.retry_after
                if wait is None:
                    wait = self.retry_base * 2**attempt * (0.5 + random.random() / 2)
                if not failed.kind.transient or time.monotonic() + wait >= deadline:
                    raise
            except (httpx2.TransportError, TimeoutError) as exc:
                kind, message, _ = classify_exception(exc)
                wait = self.retry_base * 2**attempt
                if time.monotonic() + wait >= deadline:
                    raise ProviderError(kind, message) from None
            attempt += 1
            await asyncio.sleep(wait)

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self._send("POST", path, body)

    async def _send(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        response = await self._endpoint.client().request(
            method, f"{self.base_url}{path}", json=body, headers=self._headers, timeout=60.0
        )
        if response.status_code >= 400:
            detail = redact(response.text[:500])
            kind = classify_status(response.status_code, detail)
            wait = retry_after_seconds(response.headers) if kind.transient else None
            raise ProviderError(
                kind, f"{method} {path}: HTTP {response.status_code}: {detail}", wait
            )
        return json_object(response, lambda problem: f"{method} {path}: the reply is {problem}")


def _role(message: dict[str, Any]) -> str:
    kind = str(message.get("type") or message.get("role") or "")
    return "assistant" if "assistant" in kind else "user" if "user" in kind else kind


def _text(message: dict[str, Any]) -> str:
    return str(message.get("text") or message.get("content") or "")


def _count(conversation: list[dict[str, Any]], role: str) -> int:
    return sum(1 for m in conversation if _role(m) == role)
