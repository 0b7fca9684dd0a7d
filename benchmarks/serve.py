"""`moot serve`: how soon a journaled event reaches an open session page, and how fast the
sessions page is with 1,000 sessions.

Run from the repository root:  python benchmarks/serve.py [--events 200] [--sessions 1000]
No network beyond loopback, no model; everything is written under a temporary folder removed at
the end. A real uvicorn serves `moot.serve` on a free loopback port (in a thread of this
process). Printed:

event_to_sse_ms       median and p95 from appending one line to a session's journal to the
                      `view` message that carries it arriving on the page's SSE stream
                      (a raw socket reads it; the follower checks the file every 25 ms)
sessions_page_ms      median and p95 of GET / (the first page of 50 rows) over N sessions
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

TOKEN = "bench-token"


def fake_session(root: Path, n: int) -> Path:
    """A session folder as the sessions page reads it: session.json and a begin line."""
    folder = root / f"2026-01-01-{n:05d}"
    folder.mkdir(parents=True)
    meta = {
        "session_id": folder.name,
        "protocol": "arena",
        "task": f"benchmark task {n}",
        "aliases": {"agent_a": "openai:gpt-x", "agent_b": "anthropic:claude-y"},
        "created": 1_700_000_000 + n,
    }
    (folder / "session.json").write_text(json.dumps(meta))
    (folder / "events.jsonl").write_text(json.dumps({"kind": "begin", "data": meta}) + "\n")
    return folder


def serve(root: Path) -> tuple[int, threading.Thread]:
    import uvicorn

    from moot.serve import create_app
    from moot.serve.server import bind

    sock = bind("127.0.0.1", 0, TOKEN)
    config = uvicorn.Config(create_app(root, TOKEN), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    return sock.getsockname()[1], thread


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.95) - 1)]


def event_latency(port: int, folder: Path, count: int) -> list[float]:
    """Milliseconds from each journal append to its `view` message on the stream."""
    conn = socket.create_connection(("127.0.0.1", port))
    conn.sendall(
        f"GET /session/{folder.name}/events?token={TOKEN} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Accept: text/event-stream\r\n\r\n".encode()
    )
    buffer = b""

    def next_view() -> None:
        nonlocal buffer
        while b"event: view" not in buffer:
            buffer += conn.recv(65536)
        buffer = buffer.split(b"event: view", 1)[1]

    next_view()  # the journal as it stood when the page opened
    samples = []
    with (folder / "events.jsonl").open("a") as journal:
        for n in range(count):
            line = {"kind": "warning", "step": f"r{n}/solve/agent_a", "data": {"message": "m"}}
            began = time.perf_counter()
            journal.write(json.dumps(line) + "\n")
            journal.flush()
            next_view()
            samples.append((time.perf_counter() - began) * 1000)
            time.sleep(0.005)
    conn.close()
    return samples


def page_latency(port: int, count: int) -> list[float]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    url = f"http://127.0.0.1:{port}/?token={TOKEN}"
    samples = []
    for _ in range(count):
        began = time.perf_counter()
        with opener.open(url, timeout=60) as response:
            body = response.read()
        samples.append((time.perf_counter() - began) * 1000)
        assert body.count(b'<tr id="row-') == 50
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="moot-serve-bench-") as tmp:
        root = Path(tmp) / "sessions"
        for n in range(args.sessions):
            fake_session(root, n)
        port, _ = serve(root)
        watched = root / f"2026-01-01-{args.sessions - 1:05d}"
        median, p95 = percentiles(event_latency(port, watched, args.events))
        print(f"event_to_sse_ms       median {median:.1f}  p95 {p95:.1f}  ({args.events} events)")
        median, p95 = percentiles(page_latency(port, args.pages))
        print(
            f"sessions_page_ms      median {median:.1f}  p95 {p95:.1f}  "
            f"({args.sessions} sessions, {args.pages} loads)"
        )


if __name__ == "__main__":
    main()
