"""report.html in a real headless Chromium, driven over the DevTools protocol: it loads with
no console error and no network request, hostile model text runs nothing, and the chart is
drawn. A screenshot goes to test-results/report.png.

Chromium comes from Debian (`apt-get install chromium`, done by .ci/run). Without it the test
is skipped, except under CI (env CI set), where it fails."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.scripts import Debate, solution, start, verdict

RESULTS = Path(__file__).resolve().parents[2] / "test-results"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "--window-size=1200,900",
]
HOSTILE = (
    "<script>window.__pwned = 'script'</script>\n"
    '<img src="x" onerror="window.__pwned = \'img\'">\n'
    '<link rel="stylesheet" href="http://198.51.100.7/evil.css">\n'
    '<style>@import url("http://198.51.100.7/import.css"); body { display: none }</style>\n'
    '<iframe src="http://198.51.100.7/frame"></iframe>\n'
    "![pixel](http://198.51.100.7/pixel.png)\n"
    "[click me](javascript:window.__pwned='link')\n"
)


def _need(what: str, why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing under CI: {why}")
    pytest.skip(f"{what} is not installed: {why}")


class DevTools:
    """A minimal DevTools protocol client over one page's websocket."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        ident = self.next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=30))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {method} within {timeout}s")
            self.events.append(json.loads(self.ws.recv(timeout=remaining)))

    def settle(self, quiet: float = 0.5) -> None:
        """Collect events until none has come for `quiet` seconds."""
        while True:
            try:
                self.events.append(json.loads(self.ws.recv(timeout=quiet)))
            except TimeoutError:
                return

    def evaluate(self, expression: str) -> Any:
        reply = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in reply:
            raise RuntimeError(reply["exceptionDetails"])
        return reply["result"].get("value")


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[DevTools]:
    chromium = next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p),
        None,
    )
    if chromium is None:
        _need("Chromium", "apt-get install chromium (the HTML report's browser test needs it)")
    try:
        import websockets.sync.client  # noqa: F401
    except ImportError:
        _need("websockets", "pip install -e '.[dev]'")
    assert chromium is not None
    profile = tmp_path / "chromium-profile"
    log = (tmp_path / "chromium.log").open("wb")
    process = subprocess.Popen(
        [chromium, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its renderer and helpers share our group id; all end below
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"Chromium did not start: {(tmp_path / 'chromium.log').read_text()}")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            targets = json.load(response)
        page = next(t for t in targets if t["type"] == "page")
        from websockets.sync.client import connect

        # proxy=None: the browser is on loopback; an http_proxy setting must not reroute it
        with connect(page["webSocketDebuggerUrl"], proxy=None, max_size=None) as ws:
            yield DevTools(ws)
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


PLANS = {
    "agent_a": "multiply six by seven directly, giving forty-two",
    "agent_b": "add seven to itself six times and check each partial sum",
    "agent_c": "read the product from a printed times table, row six column seven",
}


def hostile_session() -> Path:
    debate = Debate(
        verdicts=[verdict("CONTINUE", 5) + "\n" + HOSTILE, verdict("CONSENSUS", 9, base="B")],
        # the agents' plans differ (their final answers neither agree nor contradict by
        # moot's check), so the debate runs its rounds instead of stopping on matching first
        # answers, and the judge's CONSENSUS may confirm them
        answer=lambda alias, step: solution(
            f"Use **{alias}**'s plan:\n\n- {PLANS[alias]}\n\n"
            + HOSTILE
            + f"\nFinal answer: {PLANS[alias]}"
        ),
        critique="Strengths: clear.\n\n" + HOSTILE,
    )
    run = start("What is 6 times 7? <script>window.__pwned = 'task'</script>", debate.config())
    assert run.exit_code == 0 and run.result.rounds == 2
    return run.folder / "report.html"


PAGE_CHECK = """(() => {
  const bars = [...document.querySelectorAll('svg.chart rect.bar')].map(r => {
    const box = r.getBoundingClientRect();
    return [box.width, box.height];
  });
  const withHandlers = [...document.querySelectorAll('*')].filter(
    e => [...e.attributes].some(a => a.name.toLowerCase().startsWith('on'))).length;
  return {
    pwned: window.__pwned === undefined ? null : String(window.__pwned),
    active: document.querySelectorAll('script, img, link, iframe, object, embed').length,
    styleSheets: document.styleSheets.length,
    withHandlers,
    bars,
    threshold: document.querySelectorAll('svg.chart line.threshold').length,
    bodyShown: getComputedStyle(document.body).display !== 'none',
    text: document.body.innerText,
    height: document.documentElement.scrollHeight,
  };
})()"""


def test_report_html_in_chromium(browser: DevTools) -> None:
    report = hostile_session()
    url = report.as_uri()
    for domain in ("Page", "Runtime", "Network", "Log"):
        browser.call(f"{domain}.enable")
    browser.call("Page.navigate", url=url)
    browser.wait_for("Page.loadEventFired")
    browser.settle()

    requests = [
        e["params"]["request"]["url"]
        for e in browser.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    assert [r for r in requests if r != url] == [], "the page loaded something"
    errors = [
        e["params"]
        for e in browser.events
        if (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
        or e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")
    ]
    assert errors == [], errors

    page = browser.evaluate(PAGE_CHECK)
    assert page["pwned"] is None
    assert page["active"] == 0 and page["withHandlers"] == 0
    assert page["styleSheets"] == 1 and page["bodyShown"]  # ours only
    assert len(page["bars"]) == 2 and all(w > 10 and h > 10 for w, h in page["bars"])
    assert page["threshold"] == 1
    text = page["text"]
    assert "Consensus reached" in text and "Convergence score per round" in text
    assert "<script>window.__pwned = 'script'</script>" in text  # shown, as text

    RESULTS.mkdir(exist_ok=True)

    def screenshot(name: str, height: int) -> None:
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            width=1200,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        shot = browser.call("Page.captureScreenshot", format="png")
        (RESULTS / name).write_bytes(base64.b64decode(shot["data"]))

    screenshot("report.png", min(int(page["height"]), 6000))
    # and once with every answer unfolded, to see the rendered Markdown
    browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    screenshot(
        "report-unfolded.png",
        min(int(browser.evaluate("document.documentElement.scrollHeight")), 16000),
    )
    browser.settle(0.2)
    late = [e for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert len(late) == len(requests), "unfolding the answers loaded something"
