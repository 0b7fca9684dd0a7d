"""A loopback OpenAI-compatible chat server whose agents play a whole arena, and its log.

Each agent is its own model name (`openai-compat:URL#m0`, `#m1`, ...). The agents differ in
their first answers (their numbers contradict) and their revisions do not agree by wording, so
the debate runs every round; the judge says CONTINUE until round `rounds`, then CONSENSUS, which
moot's check can confirm (nothing in the revisions contradicts). Every request sleeps `latency`
seconds, then answers; the server logs when it arrived, when its answer was sent, and the arena
phase its prompt belongs to. Used by the process tests and by benchmarks/process.py.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Call", "ChatServer", "critical_path", "in_flight", "waves"]

SOLUTION = (
    "<solution>\n## PLAN\n1. {text}\n## CHANGES\n{text}\n</solution>\n"
    "<analysis>\n## RISKS\nnone\n## OPEN QUESTIONS\nnone\n## DISAGREEMENTS\n{dis}\n</analysis>"
)
VERDICT = (
    "AGREEMENT POINTS: most.\n<verdict>\ndecision: {decision}\nconvergence_score: {score}\n"
    "remaining_disagreements: {left}\nbase_solution: Agent A\nmodifications: none\n</verdict>"
)
# Distinct answers per agent, far enough apart that no agreement check merges them.
APPROACHES = (
    "count the pairs with a hash map keyed by value",
    "sort the list first, then walk it with two pointers",
    "binary search every complement in the sorted list",
    "use a bitset over the bounded range of values",
    "divide and conquer over halves of the input",
    "a brute-force double loop, simple and obviously right",
    "stream the input once through a counting dictionary",
    "build a balanced tree and query each complement",
    "bucket the values by their remainder modulo the target",
    "precompute prefix counts, then look each value up",
    "a trie over the binary digits of every value",
    "randomised hashing with a fallback exact check",
)


def phase_of(body: dict[str, Any]) -> tuple[int, str]:
    """The arena phase a request belongs to (round, name), read from its prompts."""
    users = [str(m.get("content", "")) for m in body["messages"] if m.get("role") == "user"]
    last = users[-1] if users else ""
    rounds = sum("Critique each of them" in text for text in users)
    if "consensus judge" in last:
        return rounds, "verify"
    if "Critique each of them" in last:
        return rounds, "evaluate"
    if "REVISED solution" in last:
        return rounds, "revise"
    return 0, "solve"


def answer(body: dict[str, Any], rounds: int) -> str:
    """The reply of agent `body["model"]` (m0, m1, ...) in the arena's format."""
    index = int(str(body.get("model", "m0")).lstrip("m") or 0)
    approach = APPROACHES[index % len(APPROACHES)] + f" (variant {index})"
    r, phase = phase_of(body)
    if phase == "solve":
        return SOLUTION.format(text=f"I would {approach}.", dis="None.")
    if phase == "evaluate":
        return "Strengths: clear. Weaknesses: a different approach from mine. Errors: none."
    if phase == "revise":
        # without the variant's number: revisions that neither agree nor contradict by their
        # wording, so the judge's CONSENSUS can confirm them (a number that differs could not)
        plain = APPROACHES[index % len(APPROACHES)]
        return SOLUTION.format(
            text=f"Still: {plain}, revised in round {r}.",
            dis=f"I still prefer to {plain}.",
        )
    if r >= rounds:
        return VERDICT.format(decision="CONSENSUS", score=9, left=0)
    return VERDICT.format(decision="CONTINUE", score=5, left=1)


@dataclass
class Call:
    arrived: float
    answered: float
    phase: tuple[int, str]
    peer: int  # the client's port: one per connection


class ChatServer(ThreadingHTTPServer):
    """A loopback OpenAI-compatible chat server that sleeps `latency` per request and logs each
    request's lifetime and phase."""

    daemon_threads = True
    # As real servers: socketserver's backlog of 5 drops the SYNs of a 12-agent phase, which
    # the clients' kernels retry a second later.
    request_queue_size = 128

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.latency = 0.0
        self.rounds = 1
        self.calls: list[Call] = []
        self.lock = threading.Lock()
        # model name -> how many of its requests to refuse first with 429 and this Retry-After
        self.rate_limited: dict[str, int] = {}
        self.retry_after = "5"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers
    # As real servers do: without it, the body's write waits for the client's delayed ACK of
    # the headers' (Nagle), 40 ms per call that no model would cost.
    disable_nagle_algorithm = True
    server: ChatServer

    def do_POST(self) -> None:
        arrived = time.perf_counter()
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        if self.server.latency:
            time.sleep(self.server.latency)
        with self.server.lock:
            refused = self.server.rate_limited.get(str(body.get("model")), 0) > 0
            if refused:
                self.server.rate_limited[str(body.get("model"))] -= 1
        if refused:
            self._rate_limited()
            return
        text = answer(body, self.server.rounds)
        data = json.dumps(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion",
                "created": 1,
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": text},
                    }
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": 40, "total_tokens": 140},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        with self.server.lock:
            self.server.calls.append(
                Call(arrived, time.perf_counter(), phase_of(body), self.client_address[1])
            )

    def _rate_limited(self) -> None:
        error = {"error": {"message": "Rate limit reached", "type": "requests", "code": None}}
        data = json.dumps(error).encode()
        self.send_response(429)
        self.send_header("content-type", "application/json")
        self.send_header("retry-after", self.server.retry_after)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def waves(calls: list[Call]) -> int:
    """Waves of requests in flight together (see the module docstring)."""
    ordered = sorted(calls, key=lambda c: c.arrived)
    count, index = 0, 0
    while index < len(ordered):
        count += 1
        ends = ordered[index].answered
        index += 1
        while index < len(ordered) and ordered[index].arrived < ends:
            index += 1
    return count


def critical_path(calls: list[Call]) -> float:
    longest: dict[tuple[int, str], float] = {}
    for call in calls:
        longest[call.phase] = max(longest.get(call.phase, 0.0), call.answered - call.arrived)
    return sum(longest.values())


def in_flight(calls: list[Call]) -> int:
    """The most requests the server was answering at once."""
    edges = sorted([(c.arrived, 1) for c in calls] + [(c.answered, -1) for c in calls])
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most
