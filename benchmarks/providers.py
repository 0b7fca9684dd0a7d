"""Provider benchmarks: what each adapter adds above its wire, and what `moot --help` costs.

Run from the repository root:  python benchmarks/providers.py
No network and no keys: the HTTP adapters talk to an httpx2.MockTransport, the CLI adapter to a
fake tool (tests/fakes). Every figure is printed as `name: value (target ...)`; a missed target
is printed, never raised. Timings on a shared machine are noisy: medians and p90s over many
calls.

<adapter>_overhead_p50_ms / <adapter>_overhead_p90_ms   (openai, anthropic, google, cursor, cli)
    Milliseconds moot's own adapter code adds to one `Model.complete`, above its wire. A real
    model object talks to a MockTransport whose handler returns a prebuilt response in the
    API's real shape. openai, anthropic, google: wall time of `complete` minus the time spent
    inside the vendor SDK's call (which contains the wire), so what remains is ours: building
    the request, the timeout guard, reading the reply, schema check, usage, pricing. cursor
    (no SDK; 3 wire calls a turn: launch, one status poll, conversation): wall time minus the
    time inside httpx2's `request`, which stands where an SDK would. cli: wall time with the
    fake `claude` tool minus the process run's own duration (spawn to exit, pipes drained).
    30 warm-up calls, then 300 (60 for the CLI). Target p50 <= 1 ms.

<adapter>_sdk_p50_ms   (anthropic, google; openai and cursor: httpx2, they use no SDK)
    For scale: milliseconds the vendor SDK (or httpx2) itself spends per call above the wire
    (its call time minus the handler's time): its typed request transformation and response
    parsing. Report only; it is theirs, and small next to any real model's latency.

first_request_s / first_request_after_python_s
    Wall time from spawning `moot run` with three openai-compat agents on a loopback server
    (in this process) to that server receiving the first request, median of 5; and the same
    minus `python -c pass`. Target (issue 12): first_request_s <= 0.25 s.

help_cold_start_s
    Wall time of a fresh `moot --help` process minus that of `python -c pass` (the
    interpreter's own start), median of 7 each. Target <= 0.3 s.

help_imports_sdk
    Whether running `moot --help` imported any of openai, anthropic, google, httpx, httpx2 or
    llama_cpp (checked in a fresh interpreter's sys.modules). Target: no.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
HOME = Path(tempfile.mkdtemp(prefix="moot-bench-providers-"))
os.environ["MOOT_HOME"] = str(HOME)
for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "CURSOR_API_KEY"):
    os.environ[name] = "bench-key-0123456789abcdef"

import httpx2  # noqa: E402

from moot.models.base import ModelSettings, Spec, create_model  # noqa: E402
from moot.types import Message, Request  # noqa: E402

REQUEST = Request(
    messages=(
        Message(role="system", content="You are one expert among several."),
        Message(role="user", content="Review this change.\n" + "def f(x):\n    return x\n" * 80),
    ),
    timeout=30,
    seed=7,
)


def line(name: str, value: float | str, target: str, ok: bool) -> None:
    shown = f"{value:.3f}" if isinstance(value, float) else value
    print(f"{name}: {shown} (target {target}{'' if ok else ', MISSED'})", flush=True)


class TimedWire:
    """A MockTransport handler that returns canned responses and adds up its own time."""

    def __init__(self, route: Callable[[httpx2.Request], tuple[int, bytes]]) -> None:
        self.route = route
        self.spent = 0.0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        started = time.perf_counter()
        status, body = self.route(request)
        response = httpx2.Response(
            status, content=body, headers={"content-type": "application/json"}
        )
        self.spent += time.perf_counter() - started
        return response


def encoded(data: Any) -> bytes:
    return json.dumps(data).encode()


OPENAI = encoded(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-5.4-mini",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "Looks fine." * 20},
            }
        ],
        "usage": {
            "prompt_tokens": 900,
            "completion_tokens": 60,
            "total_tokens": 960,
            "prompt_tokens_details": {"cached_tokens": 0},
        },
    }
)
ANTHROPIC = encoded(
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "Looks fine." * 20}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 900,
            "output_tokens": 60,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        },
    }
)
GOOGLE = encoded(
    {
        "candidates": [
            {
                "content": {"parts": [{"text": "Looks fine." * 20}], "role": "model"},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 900,
            "candidatesTokenCount": 60,
            "totalTokenCount": 960,
        },
    }
)


def cursor_route() -> Callable[[httpx2.Request], tuple[int, bytes]]:
    launched = encoded({"id": "bc_1", "status": "CREATING"})
    finished = encoded({"id": "bc_1", "status": "FINISHED"})
    conversation = encoded(
        {
            "id": "bc_1",
            "messages": [
                {"id": "u1", "type": "user_message", "text": "Review this change."},
                {"id": "a1", "type": "assistant_message", "text": "Looks fine." * 20},
            ],
        }
    )

    def route(request: httpx2.Request) -> tuple[int, bytes]:
        if request.method == "POST":
            return 201, launched
        return 200, conversation if request.url.path.endswith("/conversation") else finished

    return route


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class SdkTimer:
    """Wraps the vendor SDK's call method on a live client and adds up the time inside it."""

    def __init__(self, owner: Any, name: str) -> None:
        self.spent = 0.0
        inner = getattr(owner, name)

        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await inner(*args, **kwargs)
            finally:
                self.spent += time.perf_counter() - started

        setattr(owner, name, timed)


async def http_overheads(
    make: Callable[[httpx2.MockTransport], Any],
    wire: TimedWire,
    sdk: Callable[[Any], SdkTimer] | None,
    calls: int = 300,
) -> tuple[list[float], list[float]]:
    model = make(httpx2.MockTransport(wire))
    assert (await model.complete(REQUEST)).ok  # SDK clients and pools are built on first use
    timer = sdk(model) if sdk else None
    ours, theirs = [], []
    for index in range(30 + calls):
        wire.spent = 0.0
        if timer:
            timer.spent = 0.0
        started = time.perf_counter()
        completion = await model.complete(REQUEST)
        elapsed = time.perf_counter() - started
        assert completion.ok, completion.failure
        if index >= 30:
            inside = timer.spent if timer else wire.spent
            ours.append((elapsed - inside) * 1000)
            if timer:
                theirs.append((timer.spent - wire.spent) * 1000)
    await model.aclose()
    return ours, theirs


async def cli_overheads(calls: int = 60) -> list[float]:
    from moot.models import cli_agents
    from tests.fakes.fake_agent import install

    bin_dir = install(HOME / "bin", ("claude",))
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    model = create_model("cli:claude")
    real_run = cli_agents.run_process
    durations: list[float] = []

    async def timed(*args: Any, **kwargs: Any) -> Any:
        result = await real_run(*args, **kwargs)
        durations.append(time.perf_counter() - started_run[0])
        return result

    started_run = [0.0]

    async def run_and_mark(*args: Any, **kwargs: Any) -> Any:
        started_run[0] = time.perf_counter()
        return await timed(*args, **kwargs)

    cli_agents.run_process = run_and_mark  # type: ignore[assignment]
    samples = []
    try:
        for index in range(10 + calls):
            durations.clear()
            started = time.perf_counter()
            completion = await model.complete(REQUEST)
            elapsed = time.perf_counter() - started
            assert completion.ok, completion.failure
            if index >= 10:
                samples.append((elapsed - durations[0]) * 1000)
    finally:
        cli_agents.run_process = real_run
    return samples


def cold_start() -> tuple[float, bool]:
    moot = Path(sys.executable).parent / "moot"
    command = [str(moot), "--help"] if moot.exists() else [sys.executable, "-m", "moot.cli"]

    def median_run(argv: list[str]) -> float:
        times = []
        for _ in range(7):
            started = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=False)
            times.append(time.perf_counter() - started)
        return statistics.median(times)

    base = median_run([sys.executable, "-c", "pass"])
    helped = median_run(command)
    probe = (
        "import sys\nfrom moot.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
        "    pass\nprint(sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'anthropic',"
        " 'google', 'httpx', 'httpx2', 'llama_cpp'}))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout
    return helped - base, out.strip().splitlines()[-1] != "[]"


class FirstRequest(ThreadingHTTPServer):
    """A loopback OpenAI-compatible server that notes when its first request arrives."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ChatHandler)
        self.first: float | None = None


class _ChatHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FirstRequest

    def do_POST(self) -> None:
        if self.server.first is None:
            self.server.first = time.perf_counter()
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = encoded(
            {
                "id": "c",
                "object": "chat.completion",
                "created": 1,
                "model": "tiny",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "<solution>42</solution>"},
                    }
                ],
            }
        )
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def first_request() -> tuple[float, float]:
    server = FirstRequest()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    spec = f"openai-compat:http://127.0.0.1:{server.server_address[1]}/v1#tiny"
    moot = Path(sys.executable).parent / "moot"
    command = [str(moot)] if moot.exists() else [sys.executable, "-m", "moot.cli"]
    argv = [*command, "run", "What is 6 x 7?", "--rounds", "1", "-q", "--seed", "1"]
    for _ in range(3):
        argv += ["--models", spec]
    waits, pythons = [], []
    try:
        for _ in range(5):
            server.first = None
            started = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=False, timeout=120)
            waits.append((server.first or float("inf")) - started)
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=False)
            pythons.append(time.perf_counter() - started)
    finally:
        server.shutdown()
        server.server_close()
    return statistics.median(waits), statistics.median(waits) - statistics.median(pythons)


def main() -> None:
    from moot.models.anthropic_messages import AnthropicModel
    from moot.models.cursor_cloud import CursorModel
    from moot.models.google_genai import GoogleModel
    from moot.models.openai_chat import OpenAIChatModel

    cursor_settings = ModelSettings(
        options={
            "repository": "https://github.com/a/b",
            "poll_interval": 0,
            "price": {"input": 0, "output": 0},  # Cursor publishes no per-token price
        }
    )
    adapters: list[
        tuple[
            str, Callable[[httpx2.MockTransport], Any], TimedWire, Callable[[Any], SdkTimer] | None
        ]
    ] = [
        (
            "openai",
            lambda t: OpenAIChatModel(Spec("openai", "gpt-5.4-mini"), ModelSettings(), transport=t),
            TimedWire(lambda r: (200, OPENAI)),
            lambda m: SdkTimer(m._endpoint.client(), "post"),  # httpx2: no SDK
        ),
        (
            "anthropic",
            lambda t: AnthropicModel(
                Spec("anthropic", "claude-sonnet-4-6"), ModelSettings(), transport=t
            ),
            TimedWire(lambda r: (200, ANTHROPIC)),
            lambda m: SdkTimer(m.client().messages, "create"),
        ),
        (
            "google",
            lambda t: GoogleModel(Spec("google", "gemini-2.5-flash"), ModelSettings(), transport=t),
            TimedWire(lambda r: (200, GOOGLE)),
            lambda m: SdkTimer(m.client().aio.models, "generate_content"),
        ),
        (
            "cursor",
            lambda t: CursorModel(Spec("cursor", "auto"), cursor_settings, transport=t),
            TimedWire(cursor_route()),
            lambda m: SdkTimer(m._endpoint.client(), "request"),  # httpx2, where an SDK would be
        ),
    ]
    for name, make, wire, sdk in adapters:
        samples, sdk_samples = asyncio.run(http_overheads(make, wire, sdk))
        p50, p90 = statistics.median(samples), percentile(samples, 0.9)
        line(f"{name}_overhead_p50_ms", p50, "<= 1 ms", p50 <= 1.0)
        line(f"{name}_overhead_p90_ms", p90, "report only", True)
        if sdk_samples:
            line(f"{name}_sdk_p50_ms", statistics.median(sdk_samples), "report only", True)
    samples = asyncio.run(cli_overheads())
    p50 = statistics.median(samples)
    line("cli_overhead_p50_ms", p50, "<= 1 ms", p50 <= 1.0)
    line("cli_overhead_p90_ms", percentile(samples, 0.9), "report only", True)
    first, after_python = first_request()
    line("first_request_s", first, "<= 0.25 s", first <= 0.25)
    line("first_request_after_python_s", after_python, "report only", True)
    seconds, imported = cold_start()
    line("help_cold_start_s", seconds, "<= 0.3 s", seconds <= 0.3)
    line("help_imports_sdk", "yes" if imported else "no", "no", not imported)


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(HOME, ignore_errors=True)
