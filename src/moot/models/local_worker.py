"""The process that runs a local model: `python -m moot.models.local_worker BACKEND MODEL`.

moot never loads a model runtime into its own process. A native runtime can die of a
segmentation fault, an abort or the out-of-memory killer; in a worker that costs the asks in
flight, which `moot.models.local` turns into error completions and retries on a fresh worker,
while the deliberation goes on.

The protocol is JSON lines. The worker writes `{"ready": ...}` once its model is loaded (or
`{"fatal": ...}` and exits 1). Each line on stdin is an ask, `{"id", "messages", "max_tokens",
"temperature", "seed", "json_schema", "repeat_penalty", "timeout"}`, or `{"cancel": id}`. Each
ask gets exactly one reply line: `{"id", "ok": true, "text", "prompt_tokens",
"completion_tokens", "hit_max_tokens"}` or `{"id", "ok": false, "kind", "message"}`, with
`kind` a FailureKind value. Asks run concurrently, each in its own thread: llama.cpp's server
loop (the xllamacpp backend) decodes them in one batch.
The worker exits when stdin closes, so it never outlives moot.

Tests make the runtime die for real with MOOT_LOCAL_TEST_CRASH="abort:MARKER" (or
"segv:MARKER"): an ask whose last message contains MARKER aborts the worker, or dereferences a null
pointer. With MOOT_LOCAL_TEST_CRASH_ONCE=PATH it does so only while PATH exists, removing it
first, so the retry on a fresh worker succeeds.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from msgspec import Struct

from moot.models.durations import seconds_text

__all__ = ["GRAMMAR_BOUND_LIMIT", "grammar_safe", "main"]

# llama-cpp-python's GBNF converter spells a length bound out as nested optional rules: a bound
# in the thousands makes a grammar it cannot parse, and it then crashes. For that backend longer
# bounds are dropped from the grammar; the reply is still validated against the full schema on
# our side. The xllamacpp backend compiles schemas with llguidance, which handles long bounds,
# and gets them whole.
GRAMMAR_BOUND_LIMIT = 64
_BOUND_KEYS = ("maxLength", "minLength", "maxItems", "minItems")


def grammar_safe(schema: Any) -> Any:
    """A copy of `schema` without the length bounds llama.cpp cannot turn into a grammar."""
    if isinstance(schema, dict):
        return {
            key: grammar_safe(value)
            for key, value in schema.items()
            if not (key in _BOUND_KEYS and isinstance(value, int) and value > GRAMMAR_BOUND_LIMIT)
        }
    if isinstance(schema, list):
        return [grammar_safe(item) for item in schema]
    return schema


class _Ask:
    """One ask in flight: its payload and the flag its cancel line sets."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload
        self.cancelled = threading.Event()
        timeout = payload.get("timeout")
        self.deadline = time.monotonic() + float(timeout) if timeout else None

    def stopped(self) -> bool:
        return self.cancelled.is_set() or (
            self.deadline is not None and time.monotonic() > self.deadline
        )


class _Reply(Exception):
    """An ask that ends as a failure of the given kind."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Generated(Struct, frozen=True):
    """One ask's reply: its text, the prompt's and the reply's tokens, and whether the reply
    stopped at max_tokens (its finish reason "length")."""

    text: str
    prompt_tokens: int
    tokens: int
    hit_max_tokens: bool


Generate = Callable[[_Ask], Generated]


def _xllamacpp(model: str, n_ctx: int, slots: int) -> Generate:
    import llguidance
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    # One slot per ask in flight: llama.cpp's server loop decodes every busy slot in one batch,
    # whatever each sequence's length. Each slot has the whole context window of its own.
    params.n_parallel = slots
    params.n_ctx = n_ctx * slots
    params.kv_unified = False  # a shared cache that fills up fails every ask on it at once
    # An 8-bit cache (it needs flash attention): 534 MB instead of 872 MB for 4 slots of 8k
    # tokens, at the same speed (measured with SmolLM2-135M on 2 cores).
    params.cache_type_k = params.cache_type_v = xllamacpp.ggml_type.GGML_TYPE_Q8_0
    params.flash_attn_type = xllamacpp.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_ENABLED
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = _threads()
    params.verbosity = 1  # errors only: the runtime's progress lines would fill stderr
    # The library also answers HTTP on a loopback port it picks; with a key nobody knows, no
    # other process can use this worker's model.
    params.api_keys = [secrets.token_hex(16)]
    server = xllamacpp.Server(params)

    def generate(ask: _Ask) -> Generated:
        p = ask.payload
        body: dict[str, Any] = {
            "messages": p["messages"],
            "max_tokens": p["max_tokens"],
            "temperature": p.get("temperature") if p.get("temperature") is not None else 0.8,
            "repeat_penalty": p.get("repeat_penalty") or 1.0,
            "stream": True,  # so that a cancel or the deadline stops the sequence mid-way
            "stream_options": {"include_usage": True},
        }
        if p.get("seed") is not None:
            body["seed"] = p["seed"]
        if p.get("json_schema") is not None:
            body["grammar"] = _json_grammar(p["json_schema"], xllamacpp, llguidance)
        parts: list[str] = []
        usage: dict[str, Any] = {}
        failure: dict[str, Any] = {}
        finish: list[str] = []

        def on_chunk(chunk: dict[str, Any]) -> bool:
            if "error" in chunk:
                failure.update(chunk["error"] if isinstance(chunk["error"], dict) else {})
                return True
            usage.update(chunk.get("usage") or {})
            for choice in chunk.get("choices") or ():
                content = (choice.get("delta") or {}).get("content")
                if content:
                    parts.append(content)
                if choice.get("finish_reason"):
                    finish.append(str(choice["finish_reason"]))
            return ask.stopped()  # True ends the sequence

        try:
            server.handle_chat_completions(body, on_chunk)
        except ValueError as exc:
            problem = _first_line(exc)
            raise _Reply("bad_request", f"the runtime rejected the ask: {problem}") from exc
        if failure:
            message = str(failure.get("message") or failure)
            if "context" in str(failure.get("type", "")):
                raise _Reply("context_length", f"{message} (the model's options.n_ctx: {n_ctx})")
            raise _Reply("bad_request", message)
        # The last chunk carries the usage; a stream stopped early has none.
        tokens = int(usage.get("completion_tokens") or len(parts))
        at_limit = finish[-1:] == ["length"]
        return Generated("".join(parts), int(usage.get("prompt_tokens") or 0), tokens, at_limit)

    return generate


def _json_grammar(schema: Any, xllamacpp: Any, llguidance: Any) -> str:
    """The llguidance grammar for `schema`, checked first: llama.cpp would only log a grammar it
    cannot compile and then decode without it, so a schema it rejects is refused here."""
    # Compact JSON: with free whitespace allowed, a small model can spend its whole token
    # budget on blanks inside the object and never close it.
    grammar = str(
        xllamacpp.json_schema_to_grammar({"x-guidance": {"whitespace_flexible": False}, **schema})
    )
    problem = llguidance.LLMatcher.validate_grammar(grammar)
    if problem:
        message = problem.strip().splitlines()[0].split(": ", 1)[-1]
        raise _Reply("bad_request", f"the runtime rejected the JSON schema: {message}")
    return grammar


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else repr(exc)


def _llama(model: str, n_ctx: int, slots: int) -> Generate:
    from llama_cpp import Llama, LogitsProcessorList

    llama = Llama(model_path=model, n_ctx=n_ctx, n_threads=_threads(), verbose=False)
    lock = threading.Lock()  # one llama.cpp context: one ask at a time

    def generate(ask: _Ask) -> Generated:
        p = ask.payload

        def stop_when_due(_tokens: Any, scores: Any) -> Any:
            # llama.cpp has no cancel: once stopped we force end-of-sequence at the next step.
            if ask.stopped():
                eos = llama.token_eos()
                kept = scores[eos]
                scores[:] = -float("inf")
                scores[eos] = kept if kept > -float("inf") else 0.0
            return scores

        kwargs: dict[str, Any] = {
            "messages": p["messages"],
            "max_tokens": p["max_tokens"],
            "repeat_penalty": p.get("repeat_penalty") or 1.0,
            "logits_processor": LogitsProcessorList([stop_when_due]),
        }
        if p.get("temperature") is not None:
            kwargs["temperature"] = p["temperature"]
        if p.get("seed") is not None:
            kwargs["seed"] = p["seed"]
        if p.get("json_schema") is not None:
            kwargs["response_format"] = {
                "type": "json_object",
                "schema": grammar_safe(p["json_schema"]),
            }
        with lock:
            try:
                reply: Any = llama.create_chat_completion(**kwargs)
            except ValueError as exc:
                kind = "context_length" if "context" in str(exc) else "bad_request"
                raise _Reply(kind, str(exc)) from exc
        usage = reply.get("usage") or {}
        choice = reply["choices"][0]
        return Generated(
            choice["message"].get("content") or "",
            int(usage.get("prompt_tokens", 0)),
            int(usage.get("completion_tokens", 0)),
            choice.get("finish_reason") == "length",
        )

    return generate


def _threads() -> int:
    return int(os.environ.get("MOOT_LOCAL_THREADS") or 1)


def _maybe_crash(payload: dict[str, Any]) -> None:
    """The test hook (see the module docstring): die the way native code dies."""
    setting = os.environ.get("MOOT_LOCAL_TEST_CRASH", "")
    how, _, marker = setting.partition(":")
    last = payload["messages"][-1]["content"] if payload["messages"] else ""
    if not marker or marker not in last:
        return
    once = os.environ.get("MOOT_LOCAL_TEST_CRASH_ONCE")
    if once:
        try:
            os.unlink(once)
        except FileNotFoundError:
            return
    if how == "segv":
        ctypes.string_at(0)  # a real segmentation fault: reads address zero
    os.abort()


class _Server:
    def __init__(self, generate: Generate, out: IO[str]) -> None:
        self.generate = generate
        self.out = out
        self.write_lock = threading.Lock()
        self.asks: dict[int, _Ask] = {}

    def send(self, line: dict[str, Any]) -> None:
        with self.write_lock:
            self.out.write(json.dumps(line) + "\n")
            self.out.flush()

    def run_ask(self, ask: _Ask) -> None:
        ask_id = ask.payload["id"]
        try:
            _maybe_crash(ask.payload)
            made = self.generate(ask)
            if ask.cancelled.is_set():
                reply: dict[str, Any] = {"ok": False, "kind": "unknown", "message": "cancelled"}
            elif ask.deadline is not None and time.monotonic() > ask.deadline:
                timeout = ask.payload["timeout"]
                message = f"no answer within {seconds_text(timeout)}"
                reply = {"ok": False, "kind": "timeout", "message": message}
            else:
                reply = {
                    "ok": True,
                    "text": made.text,
                    "prompt_tokens": made.prompt_tokens,
                    "completion_tokens": made.tokens,
                    "hit_max_tokens": made.hit_max_tokens,
                }
        except _Reply as exc:
            reply = {"ok": False, "kind": exc.kind, "message": str(exc)}
        except Exception as exc:  # a runtime error is this ask's failure, not the worker's
            reply = {"ok": False, "kind": "unknown", "message": f"{type(exc).__name__}: {exc}"}
        self.asks.pop(ask_id, None)
        self.send({"id": ask_id, **reply})

    def serve(self, lines: IO[str]) -> None:
        for raw in lines:
            if not raw.strip():
                continue
            message = json.loads(raw)
            if "cancel" in message:
                found = self.asks.get(message["cancel"])
                if found is not None:
                    found.cancelled.set()
                continue
            ask = _Ask(message)
            self.asks[message["id"]] = ask
            threading.Thread(target=self.run_ask, args=(ask,), daemon=True).start()


_BACKENDS: dict[str, Callable[[str, int, int], Generate]] = {
    "xllamacpp": _xllamacpp,
    "llama": _llama,
}


def main(argv: list[str] | None = None) -> int:
    """Load the model, then answer asks until stdin closes."""
    parser = argparse.ArgumentParser(prog="python -m moot.models.local_worker")
    parser.add_argument("backend", choices=sorted(_BACKENDS))
    parser.add_argument("model")
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--slots", type=int, default=4, help="asks decoded together at most")
    args = parser.parse_args(argv)
    # The protocol owns the real stdout; anything a native library prints goes to stderr.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    started = time.perf_counter()
    try:
        generate = _BACKENDS[args.backend](args.model, args.n_ctx, args.slots)
    except Exception as exc:
        out.write(json.dumps({"fatal": f"{type(exc).__name__}: {exc}"}) + "\n")
        out.flush()
        return 1
    server = _Server(generate, out)
    server.send({"ready": True, "backend": args.backend, "load_s": time.perf_counter() - started})
    server.serve(sys.stdin)
    return 0


if __name__ == "__main__":
    sys.exit(main())
