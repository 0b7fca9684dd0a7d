"""Small fakes of the four vendors' model APIs that the coding CLIs speak, on loopback, for
tests/models/test_real_cli.py: Anthropic's Messages API (claude), OpenAI's Responses API (codex),
OpenAI's Chat Completions (qwen) and Gemini's generateContent (gemini), streaming or not.

Each one plays the same small coding agent: first, when given an `escape` path, try to write
that file (outside the worktree: the CLI must refuse), then read calc.py (where the CLI wants
a file read before it is edited), change `a - b` into `a + b` with the CLI's own edit tool,
then say it is done. Which step comes next is read from the conversation (how many tool
results it holds), so the fake keeps no state between requests. The worktree's path is read
from the request (the CLIs tell their model where they work). A request that names no
worktree is a text task: given a `text_write` path (in the folder the CLI runs in), the fake
first tries to write that file (the CLI, read-only there, must refuse), then answers ANSWER.
Every request is logged as one JSON line to `log`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["ANSWER", "DONE", "NEW", "OLD", "VendorServer", "serving"]

OLD = "    return a - b"
NEW = "    return a + b"
DONE = "I fixed add() in calc.py: it returns the sum now."
ANSWER = "The answer is 42."
PATCH = (
    f"*** Begin Patch\n*** Update File: calc.py\n@@\n def add(a, b):\n-{OLD}\n+{NEW}\n"
    "*** End Patch\n"
)
_TREE = re.compile(r"(/[^\s\"'\\<>`]*?/worktrees/agent_[a-z]+)")


def _tree(body: dict[str, Any]) -> str | None:
    """The agent's worktree, named in the request; None outside a code task (answer only)."""
    found = _TREE.search(json.dumps(body))
    return found.group(1) if found else None


class _Handler(BaseHTTPRequestHandler):
    server: VendorServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return None

    # -- plumbing ------------------------------------------------------------------------
    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def _json(self, payload: Any, status: int = 200) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str | None, Any]]) -> None:
        chunks = []
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            chunks.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
        payload = "".join(chunks).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self.server.note({"method": "GET", "path": self.path})
        if self.path.rstrip("/").endswith("/models"):
            return self._json({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
        self._json({"error": {"message": f"no route {self.path}"}}, 404)

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        body = self._body()
        path = self.path.split("?", 1)[0]
        entry: dict[str, Any] = {"method": "POST", "path": self.path}
        try:
            if path.endswith("/messages/count_tokens"):
                entry["answer"] = "count"
                return self._json({"input_tokens": 10})
            if path.endswith("/messages"):
                return self._anthropic(body, entry)
            if path.endswith("/responses"):
                return self._responses(body, entry)
            if path.endswith("/chat/completions"):
                return self._chat(body, entry)
            if ":streamGenerateContent" in path or ":generateContent" in path:
                return self._gemini(body, entry, stream=":stream" in path)
            if ":countTokens" in path:
                return self._json({"totalTokens": 10})
            entry["answer"] = "404"
            self._json({"error": {"message": f"no route {self.path}"}}, 404)
        finally:
            self.server.note(entry)

    # -- Anthropic Messages (claude) -----------------------------------------------------
    def _anthropic(self, body: dict[str, Any], entry: dict[str, Any]) -> None:
        tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        results = sum(
            1
            for m in body.get("messages") or []
            if isinstance(m.get("content"), list)
            for part in m["content"]
            if isinstance(part, dict) and part.get("type") == "tool_result"
        )
        entry.update(tools=sorted(str(t) for t in tools), turn=results)
        tree = _tree(body)
        block: dict[str, Any]
        step = results - self.server.escapes
        if tree is None and "Write" in tools and self.server.text_write and results == 0:
            block = {"type": "tool_use", "id": "toolu_write", "name": "Write"}
            block["input"] = {"file_path": self.server.text_write, "content": "written\n"}
        elif tree is None:
            block = {"type": "text", "text": ANSWER}
        elif "Write" in tools and step < 0:
            block = {"type": "tool_use", "id": "toolu_escape", "name": "Write"}
            block["input"] = {"file_path": self.server.escape, "content": "escaped\n"}
        elif "Edit" in tools and step == 0:
            block = {"type": "tool_use", "id": "toolu_read", "name": "Read"}
            block["input"] = {"file_path": f"{tree}/calc.py"}
        elif "Edit" in tools and step == 1:
            block = {"type": "tool_use", "id": "toolu_edit", "name": "Edit"}
            block["input"] = {
                "file_path": f"{tree}/calc.py",
                "old_string": OLD,
                "new_string": NEW,
            }
        else:
            block = {"type": "text", "text": DONE}
        entry["answer"] = block.get("name", "text")
        stop = "tool_use" if block["type"] == "tool_use" else "end_turn"
        usage = {"input_tokens": 20, "output_tokens": 10}
        message = {
            "id": f"msg_{results}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake-model"),
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            return self._json(message)
        start = dict(block, input={}) if block["type"] == "tool_use" else dict(block, text="")
        delta = (
            {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            if block["type"] == "tool_use"
            else {"type": "text_delta", "text": block["text"]}
        )
        opened = dict(message, content=[], stop_reason=None)
        self._sse(
            [
                ("message_start", {"type": "message_start", "message": opened}),
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": 0, "content_block": start},
                ),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": 0, "delta": delta},
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": {"output_tokens": 10},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
        )

    # -- OpenAI Responses (codex) --------------------------------------------------------
    def _responses(self, body: dict[str, Any], entry: dict[str, Any]) -> None:
        tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
        names = {str(t.get("name") or t.get("type")): t for t in tools}
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        results = sum(1 for i in items if str(i.get("type", "")).endswith("_call_output"))
        entry.update(tools=sorted(names), turn=results)
        tree = _tree(body)
        item: dict[str, Any] = {}
        step = results - self.server.escapes
        if tree is None and self.server.text_write and results == 0:
            item = _patch_call(names, _add_patch(self.server.text_write))
        elif tree is not None and step < 0:
            item = _patch_call(names, _add_patch(self.server.escape))
        elif tree is not None and step == 0:
            item = _patch_call(names, PATCH)
        if not item:
            item = {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{results}",
                "status": "completed",
                "content": [{"type": "output_text", "text": DONE if tree else ANSWER}],
            }
        entry["answer"] = item.get("name", "text")
        usage = {
            "input_tokens": 20,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 30,
        }
        response = {"id": f"resp_{results}", "object": "response", "status": "completed"}
        self._sse(
            [
                ("response.created", {"type": "response.created", "response": response}),
                (
                    "response.output_item.added",
                    {"type": "response.output_item.added", "output_index": 0, "item": item},
                ),
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": 0, "item": item},
                ),
                (
                    "response.completed",
                    {
                        "type": "response.completed",
                        "response": dict(response, output=[item], usage=usage),
                    },
                ),
            ]
        )

    # -- OpenAI Chat Completions (qwen) --------------------------------------------------
    def _chat(self, body: dict[str, Any], entry: dict[str, Any]) -> None:
        tools = {
            str(t.get("function", {}).get("name"))
            for t in body.get("tools") or []
            if isinstance(t, dict)
        }
        results = sum(1 for m in body.get("messages") or [] if m.get("role") == "tool")
        entry.update(tools=sorted(tools), turn=results)
        tree = _tree(body)
        call: dict[str, Any] | None = None
        step = results - self.server.escapes
        system = str((body.get("messages") or [{}])[0].get("content"))
        if "memory extraction" in system:  # qwen's background memory agent: not ours
            pass
        elif tree is None and self.server.text_write and results == 0:
            call = _write_call(tools, self.server.text_write) or None
        elif tree is None:
            pass
        elif "write_file" in tools and step < 0:
            args = {"file_path": self.server.escape, "content": "escaped\n"}
            call = {"name": "write_file", "arguments": args}
        elif "edit" in tools and step < 0:  # an empty old_string creates the file
            args = {"file_path": self.server.escape, "old_string": "", "new_string": "escaped\n"}
            call = {"name": "edit", "arguments": args}
        elif "edit" in tools and step == 0:
            call = {
                "name": "read_file",
                "arguments": {"absolute_path": f"{tree}/calc.py", "file_path": f"{tree}/calc.py"},
            }
        elif "edit" in tools and step == 1:
            call = {
                "name": "edit",
                "arguments": {"file_path": f"{tree}/calc.py", "old_string": OLD, "new_string": NEW},
            }
        entry["answer"] = call["name"] if call else "text"
        usage = {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}
        head = {"id": f"chatcmpl-{results}", "created": 0, "model": body.get("model", "fake")}
        if call is not None:
            tool_call = {
                "index": 0,
                "id": f"call_{results}",
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [tool_call],
            }
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": DONE if tree else ANSWER}
            finish = "stop"
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return self._json(dict(head, object="chat.completion", choices=[choice], usage=usage))
        chunk = dict(head, object="chat.completion.chunk")
        self._sse(
            [
                (
                    None,
                    dict(chunk, choices=[{"index": 0, "delta": message, "finish_reason": None}]),
                ),
                (
                    None,
                    dict(
                        chunk,
                        choices=[{"index": 0, "delta": {}, "finish_reason": finish}],
                        usage=usage,
                    ),
                ),
                (None, "[DONE]"),
            ]
        )

    # -- Gemini generateContent (gemini) -------------------------------------------------
    def _gemini(self, body: dict[str, Any], entry: dict[str, Any], *, stream: bool) -> None:
        tools = {
            str(d.get("name"))
            for t in body.get("tools") or []
            if isinstance(t, dict)
            for d in t.get("functionDeclarations") or []
        }
        results = sum(
            1
            for c in body.get("contents") or []
            for part in c.get("parts") or []
            if isinstance(part, dict) and "functionResponse" in part
        )
        entry.update(tools=sorted(tools), turn=results)
        tree = _tree(body)
        config = body.get("generationConfig") or {}
        part: dict[str, Any]
        edit = "replace" if "replace" in tools else "edit"
        step = results - self.server.escapes
        wants_json = config.get("responseMimeType") == "application/json" or any(
            key in config for key in ("responseJsonSchema", "responseSchema")
        )
        if wants_json:  # the CLI's own side questions (routing, who speaks next)
            side = {"reasoning": "simple", "model_choice": "flash", "next_speaker": "user"}
            part = {"text": json.dumps(side)}
        elif tree is None and self.server.text_write and results == 0:
            found = _write_call(tools, self.server.text_write)
            part = {"text": ANSWER}
            if found:
                part = {"functionCall": {"name": found["name"], "args": found["arguments"]}}
        elif tree is None:
            part = {"text": ANSWER}
        elif "write_file" in tools and step < 0:
            args = {"file_path": self.server.escape, "content": "escaped\n"}
            part = {"functionCall": {"name": "write_file", "args": args}}
        elif edit in tools and step == 0:
            path = f"{tree}/calc.py"
            part = {"functionCall": {"name": "read_file", "args": {"file_path": path}}}
        elif edit in tools and step == 1:
            args = {"file_path": f"{tree}/calc.py", "old_string": OLD, "new_string": NEW}
            part = {"functionCall": {"name": edit, "args": {**args, "instruction": "Fix add()."}}}
        else:
            part = {"text": DONE}
        entry["answer"] = part.get("functionCall", {}).get("name", "text")
        answer = {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 20,
                "candidatesTokenCount": 10,
                "totalTokenCount": 30,
            },
            "modelVersion": "fake-model",
        }
        if stream:
            return self._sse([(None, answer)])
        self._json(answer)


def _write_call(tools: set[str], path: str) -> dict[str, Any]:
    """gemini's and qwen's call that creates `path`, with whichever tool is offered."""
    if "write_file" in tools:
        return {"name": "write_file", "arguments": {"file_path": path, "content": "written\n"}}
    if "edit" in tools:  # an empty old_string creates the file
        args = {"file_path": path, "old_string": "", "new_string": "written\n"}
        return {"name": "edit", "arguments": args}
    return {}


def _add_patch(path: str) -> str:
    return f"*** Begin Patch\n*** Add File: {path}\n+escaped\n*** End Patch\n"


def _patch_call(tools: dict[str, dict[str, Any]], patch: str) -> dict[str, Any]:
    """codex's `patch`, through whichever tool this codex offers for it (none: empty)."""
    if "apply_patch" in tools:
        if tools["apply_patch"].get("type") == "custom":
            item = {"type": "custom_tool_call", "name": "apply_patch", "input": patch}
        else:
            item = {"type": "function_call", "name": "apply_patch"}
            item["arguments"] = json.dumps({"input": patch})
    elif "shell" in tools:
        item = {"type": "function_call", "name": "shell"}
        item["arguments"] = json.dumps({"command": ["apply_patch", patch]})
    elif "exec_command" in tools:
        item = {"type": "function_call", "name": "exec_command"}
        item["arguments"] = json.dumps({"cmd": f"apply_patch <<'EOF'\n{patch}EOF"})
    else:
        return {}
    return {**item, "call_id": "call_patch", "id": "fc_1", "status": "completed"}


class VendorServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, log: Path, escape: str = "", text_write: str = "") -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.log = log
        self.lock = threading.Lock()
        self.escape = escape  # first try to write this file, outside the worktree
        self.escapes = 1 if escape else 0
        self.text_write = text_write  # in a text task, first try to write this file

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def note(self, entry: dict[str, Any]) -> None:
        entry["at"] = round(time.time(), 2)
        with self.lock, self.log.open("a") as handle:
            handle.write(json.dumps(entry) + "\n")


@contextmanager
def serving(log: Path, escape: str = "", text_write: str = "") -> Iterator[VendorServer]:
    server = VendorServer(log, escape, text_write)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
