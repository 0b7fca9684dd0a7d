"""A small OpenAI-compatible chat server on loopback, answering with a moot model (by default
the embedded one), for tests of the `openai-compat` provider against a real server process.

    python tests/openai_server.py --port 8080 [--model local:smollm2]

It speaks the part of the wire format moot uses: GET /v1/models, and POST /v1/chat/completions
with messages, max_tokens or max_completion_tokens, temperature, seed and a response_format of
type json_schema (OpenAI's form) or json_object with a schema (llama.cpp's form); answers carry
real usage. Failures come back as OpenAI-style error bodies with a fitting status. It serves
until stdin closes or it is terminated.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from moot.models.base import Model, create_model
from moot.types import FailureKind, Message, Request

_STATUS = {
    FailureKind.BAD_REQUEST: 400,
    FailureKind.CONTEXT_LENGTH: 400,
    FailureKind.TIMEOUT: 504,
}


def _request(body: dict[str, Any]) -> Request:
    messages = tuple(
        Message(role=m["role"], content=str(m.get("content") or "")) for m in body["messages"]
    )
    schema = None
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        schema = response_format["json_schema"]["schema"]
    elif response_format.get("type") == "json_object" and "schema" in response_format:
        schema = response_format["schema"]
    return Request(
        messages=messages,
        max_tokens=body.get("max_completion_tokens") or body.get("max_tokens"),
        temperature=body.get("temperature"),
        seed=body.get("seed"),
        json_schema=schema,
    )


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read the replies
        return None

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        kind = "invalid_request_error" if status == 400 else "server_error"
        self._send(status, {"error": {"message": message, "type": kind, "code": None}})

    def do_GET(self) -> None:
        if self.path.rstrip("/") != "/v1/models":
            return self._error(404, f"no route {self.path}")
        model = {"id": self.server.name, "object": "model", "owned_by": "moot", "created": 0}
        self._send(200, {"object": "list", "data": [model]})

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self._error(404, f"no route {self.path}")
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            request = _request(body)
        except (ValueError, KeyError, TypeError) as exc:
            return self._error(400, f"bad request body: {exc}")
        if body.get("stream"):
            return self._error(400, "stream is not supported by this server")
        completion = self.server.complete(request)
        if completion.failure is not None:
            status = _STATUS.get(completion.failure.kind, 500)
            return self._error(status, completion.failure.message)
        usage = completion.usage
        self._send(
            200,
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model") or self.server.name,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": completion.text},
                        "finish_reason": "length" if completion.hit_max_tokens else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": usage.prompt_tokens,
                    "completion_tokens": usage.completion_tokens,
                    "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                },
            },
        )


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, spec: str) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.name = spec.split(":", 1)[-1]
        self.model: Model = create_model(spec)
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def complete(self, request: Request) -> Any:
        return asyncio.run_coroutine_threadsafe(self.model.complete(request), self.loop).result()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default="local:smollm2")
    args = parser.parse_args()
    server = _Server(args.port, args.model)
    # Load the model before the first client can connect: a test's first call then measures
    # an answer, not a model load.
    warm = server.complete(Request(messages=(Message(role="user", content="Hi."),), max_tokens=1))
    if warm.failure is not None:
        sys.exit(f"the model does not answer: {warm.failure.message}")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # serve until the test closes our stdin (or terminates us)
    server.shutdown()
    asyncio.run_coroutine_threadsafe(server.model.aclose(), server.loop).result(30)


if __name__ == "__main__":
    main()
