"""The HTML of `moot serve`: the sessions page, a session's page and the one script they load.

A session is shown as its report: `report.html`'s own rendering (model text as untrusted
Markdown, sanitized against an allow-list), its `<main>` taken whole. Every page carries a
Content-Security-Policy that allows scripts only from this server (`/app.js`, no inline script
and no event handler attribute), images only as data: URLs and requests only to this server."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from html import escape
from typing import Any
from urllib.parse import urlencode

from moot.lifecycle.followup import Turn
from moot.lifecycle.stats import ModelStats
from moot.report.html import html_for, markdown_html
from moot.report.view import SessionView
from moot.serve.rows import Filters, Page
from moot.types import alias_label

__all__ = [
    "CSP",
    "SCRIPT",
    "models_page",
    "now_html",
    "report_main",
    "row_html",
    "session_page",
    "sessions_page",
]

CSP = (
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

_REPORT = re.compile(r"<style>(?P<style>.*?)</style>.*?<main>(?P<main>.*)</main>", re.DOTALL)

_STYLE = """
nav.top { display: flex; gap: 16px; align-items: baseline; padding: 10px 16px;
  background: #fff; border-bottom: 1px solid var(--line); }
nav.top a { color: #0969da; text-decoration: none; font-weight: 600; }
main.wide { max-width: 1280px; }
table.sessions { border-collapse: collapse; width: 100%; background: #fff; font-size: 13px; }
table.sessions th, table.sessions td { border-bottom: 1px solid var(--line); padding: 6px 8px;
  text-align: left; vertical-align: top; }
table.sessions td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.sessions td.trust { max-width: 320px; color: var(--muted); }
form.filters, form.controls, form.start .controls { display: flex; gap: 8px;
  flex-wrap: wrap; align-items: end; margin: 8px 0; }
form label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
form textarea { width: 100%; min-height: 70px; font: inherit; }
form.start { display: grid; gap: 8px; }
.pages a, .pages span { margin-right: 10px; }
div.controls { display: flex; gap: 8px; }
ul.now { list-style: none; padding: 0; display: flex; gap: 8px; flex-wrap: wrap; margin: 6px 0; }
ul.now li { border: 1px solid var(--line); border-radius: 6px; padding: 4px 8px; }
.error { color: #a40e26; font-weight: 600; }
"""

SCRIPT = """'use strict';
// moot serve: the live parts of a page. Every HTML fragment comes from the server, rendered
// and sanitized there; the page's CSP forbids inline scripts and handlers.
(function () {
  var stream = document.body.dataset.stream;
  if (!stream) { return; }
  var source = new EventSource(stream);
  source.addEventListener('view', function (event) {
    var report = document.getElementById('report');
    var open = [];
    report.querySelectorAll('details').forEach(function (d, i) { if (d.open) { open.push(i); } });
    report.innerHTML = event.data;
    var all = report.querySelectorAll('details');
    open.forEach(function (i) { if (all[i]) { all[i].open = true; } });
    document.body.dataset.events = String(Number(document.body.dataset.events || 0) + 1);
  });
  source.addEventListener('row', function (event) {
    var holder = document.createElement('tbody');
    holder.innerHTML = event.data;
    var row = holder.firstElementChild;
    if (!row) { return; }
    var old = document.getElementById(row.id);
    var rows = document.querySelector('table.sessions tbody');
    if (old) { old.replaceWith(row); } else if (rows) { rows.prepend(row); }
  });
  source.addEventListener('now', function (event) {
    var now = document.getElementById('now');
    if (now) { now.innerHTML = event.data; }
  });
  source.addEventListener('status', function (event) {
    document.body.dataset.status = event.data;
    var shown = document.getElementById('status');
    if (shown) { shown.textContent = event.data; }
  });
})();
"""


def report_main(view: SessionView) -> str:
    """The inside of the report's `<main>`: the same HTML `report.html` holds."""
    found = _REPORT.search(html_for(view))
    return found.group("main") if found else ""


@lru_cache(maxsize=1)
def _report_style() -> str:
    from moot.report.view import build_view

    found = _REPORT.search(html_for(build_view(None, [])))
    return found.group("style") if found else ""


def _page(title: str, body: str, *, stream: str = "", wide: bool = False) -> str:
    data = f' data-stream="{escape(stream)}"' if stream else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="referrer" content="same-origin">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_report_style()}{_STYLE}</style>"
        '<script src="/app.js" defer></script></head>'
        f'<body{data}><nav class="top"><a href="/">moot sessions</a><a href="/models">models</a>'
        "</nav>"
        f"<main{' class=wide' if wide else ''}>{body}</main></body></html>\n"
    )


def _money(cost: Any) -> str:
    return f"${cost:.4f}" if isinstance(cost, int | float) else "unknown"


def _duration(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return ""
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"


def row_html(row: Mapping[str, Any]) -> str:
    """One session as a table row, its id in the row's id (the live updates replace it)."""
    sid = str(row["session_id"])
    task = str(row.get("task", ""))
    status = str(row.get("status", "?"))
    tokens = row.get("tokens")
    tokens_cell = f"{tokens:,}" if isinstance(tokens, int) else ""
    return (
        f'<tr id="row-{escape(sid)}" data-status="{escape(status)}">'
        f'<td><a href="/session/{escape(sid)}">{escape(sid)}</a><br>'
        f"{escape(task[:120])}</td>"
        f"<td>{escape(str(row.get('protocol', '?')))}</td>"
        f'<td><span class="pill {escape(status.lower())}">{escape(status)}</span></td>'
        f"<td>{escape(str(row.get('label', '')).replace('_', ' '))}</td>"
        f'<td class="trust">{escape(str(row.get("trust", "")))}</td>'
        f"<td>{escape(', '.join(row.get('models') or []))}</td>"
        f'<td class="num">{tokens_cell}</td>'
        f'<td class="num">{_money(row.get("cost"))}</td>'
        f'<td class="num">{_duration(row.get("elapsed"))}</td></tr>'
    )


def _select(name: str, options: Sequence[str], chosen: str, blank: str) -> str:
    items = [f'<option value="">{escape(blank)}</option>'] + [
        f'<option value="{escape(o)}"{" selected" if o == chosen else ""}>{escape(o)}</option>'
        for o in options
    ]
    return f'<select name="{name}">{"".join(items)}</select>'


def _start_form(protocols: Sequence[str], error: str) -> str:
    shown = f'<p class="error">{escape(error)}</p>' if error else ""
    return (
        '<section class="card"><h2>Start a run</h2>'
        f'{shown}<form class="start" method="post" action="/runs">'
        '<label>Task<textarea name="task" required></textarea></label>'
        '<div class="controls">'
        f"<label>Protocol{_select('protocol', protocols, '', 'default')}</label>"
        '<label>Models (comma-separated; empty: your config)<input name="models" size="50">'
        "</label>"
        '<label>Rounds<input name="rounds" size="4"></label>'
        '<label>Max cost ($)<input name="max_cost" size="6"></label>'
        '<label>Max tokens<input name="max_tokens" size="8"></label>'
        '<label>Timeout (s)<input name="timeout" size="6"></label>'
        '<button type="submit">Start</button></div></form></section>'
    )


def sessions_page(
    page: Page, filters: Filters, protocols: Sequence[str], statuses: Sequence[str], error: str
) -> str:
    """Every session, one page of them, with the filters and the start form."""
    ids = ",".join(str(row["session_id"]) for row in page.rows)
    head = (
        "<tr><th>Session</th><th>Protocol</th><th>Status</th><th>Label</th><th>Trust</th>"
        "<th>Models</th><th>Tokens</th><th>Cost</th><th>Duration</th></tr>"
    )
    rows = "".join(row_html(row) for row in page.rows)
    links = []
    for number in sorted({1, page.number - 1, page.number, page.number + 1, page.pages}):
        if 1 <= number <= page.pages:
            href = "/?" + urlencode(filters.query(number))
            links.append(
                f"<span>{number}</span>"
                if number == page.number
                else f'<a href="{escape(href)}">{number}</a>'
            )
    body = (
        f"{_start_form(protocols, error)}"
        '<section class="card"><h2>Sessions</h2>'
        '<form class="filters" method="get" action="/">'
        f"<label>Protocol{_select('protocol', protocols, filters.protocol, 'any')}</label>"
        f"<label>Status{_select('status', statuses, filters.status, 'any')}</label>"
        f'<label>Model<input name="model" value="{escape(filters.model)}"></label>'
        f'<label>Text<input name="text" value="{escape(filters.text)}"></label>'
        '<button type="submit">Filter</button></form>'
        f'<p class="sub">{page.total} sessions · page {page.number} of {page.pages}</p>'
        f'<table class="sessions"><thead>{head}</thead><tbody>{rows}</tbody></table>'
        f'<p class="pages">{"".join(links)}</p></section>'
    )
    # The first page with no filter also gains the sessions created while it is open.
    fresh = page.number == 1 and not filters.any
    stream = "/sessions/events?" + urlencode({"ids": ids, "new": "1" if fresh else ""})
    return _page("moot sessions", body, stream=stream, wide=True)


def _thread(turns: Sequence[Turn]) -> str:
    """The sessions this one follows, as one conversation: each question and its answer
    (model text: rendered as untrusted)."""
    if len(turns) < 2:
        return ""
    items = "".join(
        f'<li><p><a href="/session/{escape(t.session_id)}">{escape(t.session_id)}</a> '
        f'<span class="pill {escape(t.status.lower())}">{escape(t.status)}</span></p>'
        f'<div class="md task">{markdown_html(t.question)}</div>'
        f'<div class="md answer">{markdown_html(t.answer or "(no answer yet)")}</div></li>'
        for t in turns[:-1]
    )
    return f'<section class="card thread"><h2>Thread</h2><ol>{items}</ol></section>'


def _ask_form(sid: str) -> str:
    return (
        f'<form class="start" method="post" action="/session/{sid}/ask">'
        '<label>Ask a follow-up<textarea name="question" required></textarea></label>'
        '<div class="controls"><label>Models (comma-separated; empty: your config)'
        '<input name="models" size="50"></label><button type="submit" id="ask">Ask</button>'
        "</div></form>"
    )


_BUSY = ("queued", "thinking", "retrying")


def now_html(state: Mapping[str, Any]) -> str:
    """Where a running session stands (state.json): its round and phase, and each agent's
    status and step, the busy ones first. Empty once it no longer runs."""
    if state.get("status") != "running":
        return ""
    agents = state.get("agents") or {}
    rows = sorted(
        (str(alias), str(a.get("status", "")), str(a.get("step") or ""))
        for alias, a in agents.items()
        if isinstance(a, Mapping)
    )
    rows.sort(key=lambda row: row[1] not in _BUSY)
    items = "".join(
        f'<li data-status="{escape(status)}"><strong>{escape(alias_label(alias))}</strong> '
        f"{escape(status)}{' · ' + escape(step) if step else ''}</li>"
        for alias, status, step in rows
    )
    where = " ".join(
        str(state.get(k)) for k in ("stage", "round", "phase") if state.get(k) is not None
    )
    return f'<p>Now: {escape(where)}</p><ul class="now">{items}</ul>'


def _say_form(sid: str, agents: Sequence[str], waiting: Sequence[str]) -> str:
    """A note to one agent while the run goes on (`moot say`); the notes not delivered yet."""
    if not agents:
        return ""
    options = "".join(
        f'<option value="{escape(a)}">{escape(alias_label(a))}</option>' for a in agents
    )
    pending = "".join(f"<li>{escape(line)}</li>" for line in waiting)
    return (
        f'<section class="card"><form class="start" method="post" action="/session/{sid}/say">'
        "<label>A note to one agent (it joins that agent's next prompt, marked as yours)"
        '<textarea name="text" required></textarea></label>'
        f'<div class="controls"><label>Agent<select name="agent">{options}</select></label>'
        '<button type="submit" id="say">Send</button></div></form>'
        + (f'<ul class="waiting">{pending}</ul>' if pending else "")
        + "</section>"
    )


def session_page(
    session_id: str,
    status: str,
    main: str,
    turns: Sequence[Turn] = (),
    error: str = "",
    agents: Sequence[str] = (),
    waiting: Sequence[str] = (),
) -> str:
    """A session's page: the thread it continues, its controls, its report (which the stream
    keeps current), the note form (`agents`: those a note may go to; `waiting`: the notes not
    delivered yet) and the follow-up form."""
    sid = escape(session_id)
    shown = f'<p class="error">{escape(error)}</p>' if error else ""
    controls = (
        f'<div class="controls"><form class="controls" method="post" action="/session/{sid}/stop">'
        '<button type="submit" id="stop">Stop</button></form>'
        f'<form class="controls" method="post" action="/session/{sid}/resume">'
        '<button type="submit" id="resume">Resume</button></form></div>'
    )
    body = (
        f"{_thread(turns)}"
        f'<section class="card"><p>Session <code>{sid}</code> · status '
        f'<strong id="status">{escape(status)}</strong></p>{shown}{controls}'
        '<div id="now"></div></section>'
        f'<div id="report">{main}</div>'
        f"{_say_form(sid, agents, waiting)}"
        f'<section class="card">{_ask_form(sid)}</section>'
    )
    return _page(f"moot session {session_id}", body, stream=f"/session/{sid}/events")


def models_page(rows: Sequence[ModelStats]) -> str:
    """Per model over every finished session (`moot stats`)."""
    head = (
        "<tr><th>Model</th><th>Sessions</th><th>Valid final answer</th><th>Agreed with the "
        "answer found</th><th>Its answer was the final one</th><th>Changed under critique</th>"
        "<th>Calls</th><th>Failures</th>"
        "<th>Tokens</th><th>Cost</th></tr>"
    )
    body = "".join(
        f'<tr><td><code>{escape(r.model)}</code></td><td class="num">{r.sessions}</td>'
        + "".join(
            f'<td class="num">{r.share(count) or ""}</td>'
            for count in (r.valid, r.agreed, r.picked, r.changed)
        )
        + f'<td class="num">{r.calls}</td>'
        f'<td class="num">{r.failures}</td><td class="num">{r.tokens:,}</td>'
        f'<td class="num">{_money(r.cost if r.cost_known else None)}</td></tr>'
        for r in rows
    )
    note = (
        '<p class="note">Each share is over the model\'s agent seats (one agent of one '
        "session). Sessions without a result yet are not counted.</p>"
    )
    table = f'<table class="sessions"><thead>{head}</thead><tbody>{body}</tbody></table>'
    return _page(
        "moot models",
        f'<section class="card"><h2>Models</h2>{note}{table}</section>',
        wide=True,
    )
