"""`moot serve` in a real headless Chromium: a real server (`moot serve` as a subprocess, on
loopback, with its token) and the browser of tests/report/test_report_browser.py. The sessions
page opens; a scripted run is started from its form; the session page shows replies as they are
journaled and the verdict at the end, without a reload, then a follow-up with its thread; the
hostile replies (script, event handler, remote images) run and load nothing. Screenshots go to
test-results/serve-*.png, and the verdict region's own screenshot is checked to be drawn.
Skipped without Chromium (failed under CI), as the report's browser test is."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

import pytest

from tests.report.test_report_browser import RESULTS, DevTools, browser
from tests.serve.conftest import Served

__all__ = ["browser"]  # the fixture, shared with the report's browser test

AGENTS = Path(__file__).with_name("agents.py")
BOUND = 90.0


def _until(browser: DevTools, expression: str, what: str) -> Any:
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        value = browser.evaluate(expression)
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"the page never showed {what}")


START = """(() => {
  const form = document.querySelector('form.start');
  form.querySelector('[name=task]').value = 'What is 6 times 7?';
  form.querySelector('[name=models]').value = %r;
  form.submit();
  return true;
})()"""

ASK = """(() => {
  const form = document.querySelector('form[action$="/ask"]');
  form.querySelector('[name=question]').value = 'And 6 times 8?';
  form.querySelector('[name=models]').value = %r;
  form.submit();
  return true;
})()"""

INERT = """(() => ({
  pwned: window.__pwned === undefined ? null : String(window.__pwned),
  scripts: [...document.scripts].map(s => s.getAttribute('src')),
  active: document.querySelectorAll('img, iframe, object, embed, link').length,
  handlers: [...document.querySelectorAll('*')].filter(
    e => [...e.attributes].some(a => a.name.toLowerCase().startsWith('on'))).length,
  shown: document.body.innerText.includes("<script>window.__pwned = 'script'</script>"),
}))()"""


def _shot(browser: DevTools, name: str, clip: dict[str, float] | None = None) -> bytes:
    params: dict[str, Any] = {"format": "png"}
    if clip is not None:
        params["clip"] = {**clip, "scale": 1}
    data = base64.b64decode(browser.call("Page.captureScreenshot", **params)["data"])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / name).write_bytes(data)
    return data


def test_a_run_started_in_the_browser_streams_to_its_verdict(
    browser: DevTools, served: Served
) -> None:
    url, sessions = served.url, served.sessions
    for domain in ("Page", "Runtime", "Network"):
        browser.call(f"{domain}.enable")
    browser.call("Emulation.setDeviceMetricsOverride", width=1200, height=900,
                 deviceScaleFactor=1, mobile=False)  # fmt: skip
    browser.call("Page.navigate", url=url)
    browser.wait_for("Page.loadEventFired")
    assert "Start a run" in browser.evaluate("document.body.innerText")
    _shot(browser, "serve-sessions.png")

    specs = ",".join(f"scripted:{AGENTS}#agent_{n}" for n in ("one", "two", "three"))
    browser.evaluate(START % specs)
    _until(browser, "location.pathname.startsWith('/session/')", "the session page")
    _until(browser, "document.readyState === 'complete'", "the session page loaded")
    browser.evaluate("window.__same_page = true")  # gone if the page ever reloads

    counts: list[int] = []
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        counts.append(int(browser.evaluate("document.querySelectorAll('#report details').length")))
        if browser.evaluate("!!document.querySelector('#report .verdict .trust')"):
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"no verdict with its trust statement; replies seen: {counts}")
    assert browser.evaluate("window.__same_page === true"), "the page reloaded"
    grown = sorted(set(counts))
    assert len(grown) >= 3, f"replies did not appear one batch at a time: {grown}"
    _until(browser, "document.getElementById('status').textContent === 'consensus'", "status")

    page = browser.evaluate(INERT)
    assert page["pwned"] is None and page["shown"]
    assert page["scripts"] == ["/app.js"] and page["active"] == 0 and page["handlers"] == 0
    requests = [
        e["params"]["request"]["url"]
        for e in browser.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    assert requests and all(r.startswith(url.split("/?")[0]) for r in requests), requests

    box = browser.evaluate(
        "(() => { const r = document.querySelector('#report .verdict').getBoundingClientRect();"
        " return {x: r.x, y: r.y + window.scrollY, width: r.width, height: r.height}; })()"
    )
    assert box["width"] > 300 and box["height"] > 60
    _shot(browser, "serve-session.png")
    verdict = _shot(browser, "serve-verdict.png", box)
    assert len(verdict) > 3000, "the verdict region's screenshot is blank"
    sid = browser.evaluate("location.pathname").rsplit("/", 1)[1]
    assert (sessions / sid / "result.json").is_file()  # a normal session, on disk

    browser.evaluate(ASK % specs)  # a follow-up, from the finished session's page
    _until(
        browser,
        f"location.pathname.startsWith('/session/') && !location.pathname.endsWith({sid!r})",
        "the follow-up's page",
    )
    _until(
        browser, "!!document.querySelector('#report .verdict .trust')", "the follow-up's verdict"
    )
    thread = browser.evaluate("document.querySelector('.thread').innerText")
    assert "What is 6 times 7?" in thread and "the answer is 42" in thread
    assert "And 6 times 8?" in browser.evaluate("document.getElementById('report').innerText")
    assert browser.evaluate(INERT)["active"] == 0
    _shot(browser, "serve-followup.png")
