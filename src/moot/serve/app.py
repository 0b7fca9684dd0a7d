"""The web app of `moot serve`: routes, the two event streams, and the runs it starts.

Runs are the MCP server's (`moot.mcp.runs.Runs`): each a task in this process, a normal
session on disk that the CLI sees and `moot resume` continues if this server is killed."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import anyio
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from moot import protocols
from moot.engine.inbox import accepts_notes, note_lines, post
from moot.engine.store import SessionFolder, find_session, list_sessions
from moot.errors import MootError
from moot.lifecycle.followup import followup_task, thread_of
from moot.lifecycle.stats import model_stats
from moot.mcp.runs import Runs
from moot.serve.access import TokenGate
from moot.serve.live import follow_rows, follow_view, view_now
from moot.serve.pages import SCRIPT, models_page, session_page, sessions_page
from moot.serve.rows import Filters, page_of

__all__ = ["create_app"]

STATUSES = (  # state.json's, as `moot list` shows them
    "running",
    "consensus",
    "no_consensus",
    "paused",
    "interrupted",
    "failed",
    "stopped unexpectedly",
)
STARTED_WITHIN = 30.0  # seconds a start or resume may take to create or lock its session


async def _quiet(progress: float, message: str) -> None:
    """The page follows the journal itself: the runs' phase reports go nowhere."""


def _number(form: dict[str, str], name: str, kind: Callable[[str], Any]) -> Any:
    text = form.get(name, "").strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        raise MootError(f"{name}: not a number: {text!r}") from None


def _models(form: dict[str, str]) -> list[str]:
    """The form's comma-separated model specs (none: the run's defaults)."""
    return [m.strip() for m in form.get("models", "").split(",") if m.strip()]


async def _form(request: Request) -> dict[str, str]:
    """A posted urlencoded form (read here: no multipart parser needed)."""
    body = (await request.body()).decode("utf-8", "replace")
    return {key: values[0] for key, values in parse_qs(body).items()}


class Server:
    """The app's state: the sessions folder and the runs under way."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self.runs = Runs(root)
        self.launched: set[asyncio.Task[Any]] = set()
        self._launching = anyio.Lock()

    def folder(self, session_id: str) -> SessionFolder:
        return find_session(session_id, self.root)

    async def launch(self, run: Awaitable[Any], known: str | None) -> str:
        """Start `run` on a task of its own; return its session's id once it has one (a new
        id in the runs' table, or `known`), or raise what stopped it before."""
        async with self._launching:  # one at a time: the new id is the one new in the table
            return await self._launch(run, known)

    async def _launch(self, run: Awaitable[Any], known: str | None) -> str:
        before = set(self.runs.running)
        task: asyncio.Task[Any] = asyncio.ensure_future(run)
        self.launched.add(task)
        task.add_done_callback(self._done)
        with anyio.fail_after(STARTED_WITHIN):
            while True:
                fresh = [sid for sid in self.runs.running if sid not in before]
                if fresh:
                    return fresh[0]
                if known is not None and known in self.runs.running:
                    return known
                if task.done():
                    task.result()  # raises what refused the run
                    return known or ""
                await asyncio.sleep(0.02)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self.launched.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a refusal was shown to the person who asked

    async def stop_all(self) -> None:
        """Stop every run of this server: each journals its interruption (resumable)."""
        for session_id in list(self.runs.running):
            with contextlib.suppress(MootError):
                await self.runs.stop(session_id)


def _notes(folder: SessionFolder) -> tuple[list[str], list[str]]:
    """The agents a note may go to (none once the session finished) and the notes waiting."""
    if not accepts_notes(folder):
        return [], []
    aliases = list((folder.meta() or {}).get("aliases") or {})
    return aliases, note_lines(folder, waiting=True)


def create_app(root: Path | None = None, token: str | None = None) -> TokenGate:
    """The app over the sessions under `root` (None: moot's home), every request checked
    for `token` (None: no token asked; only for loopback)."""
    server = Server(root)

    async def sessions(request: Request, error: str = "") -> Response:
        query = request.query_params
        try:
            number = int(query.get("page", "1"))
        except ValueError:
            number = 1
        filters = Filters(
            protocol=query.get("protocol", ""),
            status=query.get("status", ""),
            model=query.get("model", ""),
            text=query.get("text", ""),
            page=number,
        )
        page = await anyio.to_thread.run_sync(page_of, root, filters)
        html = sessions_page(page, filters, protocols.names(), STATUSES, error)
        return HTMLResponse(html, status_code=400 if error else 200)

    async def models(request: Request) -> Response:
        rows = await anyio.to_thread.run_sync(lambda: model_stats(list_sessions(root)))
        return HTMLResponse(models_page(rows))

    async def script(request: Request) -> Response:
        return Response(SCRIPT, media_type="text/javascript")

    async def rows_stream(request: Request) -> Response:
        ids = [i for i in request.query_params.get("ids", "").split(",") if i]
        fresh = request.query_params.get("new") == "1"
        return EventSourceResponse(follow_rows(root, ids, new=fresh))

    def in_session(
        handler: Callable[[Request, SessionFolder], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        """The route of `handler` given the session its path names; a session not found is a 404."""

        async def found(request: Request) -> Response:
            try:
                folder = server.folder(request.path_params["sid"])
            except MootError as exc:
                return HTMLResponse(f"not found: {exc}", status_code=404)
            return await handler(request, folder)

        return found

    @in_session
    async def session(request: Request, folder: SessionFolder) -> Response:
        return await _session_page(folder)

    async def _session_page(folder: SessionFolder, error: str = "") -> Response:
        status, main = await anyio.to_thread.run_sync(view_now, folder)
        turns = await anyio.to_thread.run_sync(thread_of, folder)
        agents, waiting = await anyio.to_thread.run_sync(_notes, folder)
        page = session_page(folder.id, status, main, turns, error, agents, waiting)
        return HTMLResponse(page, status_code=400 if error else 200)

    @in_session
    async def say(request: Request, folder: SessionFolder) -> Response:
        form = await _form(request)
        try:
            await anyio.to_thread.run_sync(
                post, folder, form.get("agent", ""), form.get("text", "")
            )
        except MootError as exc:
            return await _session_page(folder, str(exc))
        return RedirectResponse(f"/session/{folder.id}", status_code=303)

    @in_session
    async def ask(request: Request, folder: SessionFolder) -> Response:
        form = await _form(request)
        try:
            task = await anyio.to_thread.run_sync(followup_task, folder, form.get("question", ""))
            run = server.runs.start(task, _quiet, models=_models(form))
            session_id = await server.launch(run, None)
        except MootError as exc:
            return await _session_page(folder, str(exc))
        return RedirectResponse(f"/session/{session_id}", status_code=303)

    @in_session
    async def view_stream(request: Request, folder: SessionFolder) -> Response:
        return EventSourceResponse(follow_view(folder))

    async def start(request: Request) -> Response:
        form = await _form(request)
        try:
            run = server.runs.start(
                form.get("task", ""),
                _quiet,
                protocol=form.get("protocol") or None,
                models=_models(form),
                rounds=_number(form, "rounds", int),
                max_cost=_number(form, "max_cost", float),
                max_tokens=_number(form, "max_tokens", int),
                timeout=_number(form, "timeout", float),
            )
            session_id = await server.launch(run, None)
        except MootError as exc:
            return await sessions(request, error=str(exc))
        except TimeoutError:
            slow = f"the run had no session after {STARTED_WITHIN:.0f}s; it goes on (see below)"
            return await sessions(request, error=slow)
        return RedirectResponse(f"/session/{session_id}", status_code=303)

    async def stop(request: Request) -> Response:
        sid = request.path_params["sid"]
        try:
            await server.runs.stop(sid)
        except MootError as exc:
            return HTMLResponse(f"cannot stop: {exc}", status_code=400)
        return RedirectResponse(f"/session/{sid}", status_code=303)

    async def resume(request: Request) -> Response:
        sid = request.path_params["sid"]
        try:
            await server.launch(server.runs.resume(sid, _quiet), sid)
        except MootError as exc:
            return HTMLResponse(f"cannot resume: {exc}", status_code=400)
        return RedirectResponse(f"/session/{sid}", status_code=303)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                await server.stop_all()

    app = Starlette(
        routes=[
            Route("/", sessions),
            Route("/models", models),
            Route("/app.js", script),
            Route("/sessions/events", rows_stream),
            Route("/runs", start, methods=["POST"]),
            Route("/session/{sid}", session),
            Route("/session/{sid}/events", view_stream),
            Route("/session/{sid}/stop", stop, methods=["POST"]),
            Route("/session/{sid}/ask", ask, methods=["POST"]),
            Route("/session/{sid}/resume", resume, methods=["POST"]),
            Route("/session/{sid}/say", say, methods=["POST"]),
        ],
        lifespan=lifespan,
    )
    return TokenGate(app, token)
