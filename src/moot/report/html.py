"""`report.html`: one self-contained page (no script, no network) with the task, the verdict, a
chart of scores or votes per round, every round as a timeline, and the alias-to-model table.

Model text is untrusted. It is rendered from Markdown with raw HTML turned off (so `<script>`
shows as text), then sanitized against an allow-list of tags and attributes (nh3), and the page
carries a Content-Security-Policy that forbids scripts and every external load, in case either
layer ever lets something through."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from html import escape

import nh3
from markdown_it import MarkdownIt

from moot.report.chart import score_chart, tally_chart
from moot.report.code import code_html
from moot.report.view import Round, SessionView, Turn, label
from moot.text import (
    ClaimsTable,
    change_line,
    claims_table,
    finding_line,
    round_title,
    rounds_words,
    verdict_line,
)
from moot.text.rounds import round_result
from moot.version import __version__

__all__ = ["CSP", "html_for", "markdown_html"]

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)

_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "s", "code",
    "pre", "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
_SECTIONS = {"solution", "analysis", "verdict", "critique", "evidence", "reasoning", "position"}
_SECTION_LINE = re.compile(r"^[ \t]*<(/?)([A-Za-z][\w-]*)[ \t]*>[ \t]*$", re.MULTILINE)


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": False})
    # Images would be loads from wherever the model pointed; they render as their link.
    return md.enable(["table", "strikethrough"]).disable("image")


def _section_tag(match: re.Match[str]) -> str:
    """A model's section tag shown as the tag it wrote (`<verdict>` in code), never as a label
    of moot's: a forged `<verdict>` in an answer must not look like the report's verdict."""
    closing, name = match.group(1), match.group(2)
    if name.lower() not in _SECTIONS:
        return match.group(0)
    return f"`<{closing}{name}>`"


# The page's own headings go down to h4; a heading in model text goes below them (h1 -> h5,
# every other level -> h6). Raw HTML is off, so every <hN> here came from Markdown.
_HEADING_TAG = re.compile(r"<(/?)h([1-6])>")


def _demoted(match: re.Match[str]) -> str:
    return f"<{match.group(1)}h{min(6, int(match.group(2)) + 4)}>"


def markdown_html(text: str) -> str:
    """Untrusted Markdown to safe HTML: raw HTML shown as text, headings demoted below the
    page's own, section tags shown as written, then an allow-list."""
    rendered = _markdown().render(_SECTION_LINE.sub(_section_tag, text))
    rendered = _HEADING_TAG.sub(_demoted, rendered)
    return nh3.clean(
        rendered,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


def _cost(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


def _pill(status: str, text: str) -> str:
    return f'<span class="pill {escape(status.lower())}">{escape(text)}</span>'


def _li(html: str, cls: str = "") -> str:
    return f'<li class="{cls}">{html}</li>' if cls else f"<li>{html}</li>"


def _listed(title: str, items: list[str], note: str = "") -> str:
    """A card's titled list (nothing when `items` is empty): `items` are `<li>` elements,
    `note` HTML between title and list."""
    return f"<h3>{title}</h3>{note}<ul>{''.join(items)}</ul>" if items else ""


def _verdict(view: SessionView) -> str:
    parts = [
        '<section class="card verdict"><h2>Verdict</h2>',
        f'<p class="status">{_pill(view.status, view.status_text)} {escape(view.how)}</p>',
    ]
    if view.trust:
        parts.append(
            f'<p class="trust"><strong>How far to trust it:</strong> {escape(view.trust)}</p>'
        )
    if view.final_answer and view.code:  # a patch: shown verbatim
        parts.append(f"<h3>Final answer</h3><pre><code>{escape(view.final_answer)}</code></pre>")
    elif view.final_answer:
        parts.append(
            f'<h3>Final answer</h3><div class="md answer">{markdown_html(view.final_answer)}</div>'
        )
    disagreements = [_li(markdown_html(d), "md") for d in view.disagreements]
    parts.append(_listed("Remaining disagreements", disagreements))
    unanswered = [(label(c.agent), c.round, ClaimsTable.cell(c, 300)) for c in view.without_answer]
    items = [
        _li(f"{escape(who)} ({round_title('round', n).lower()}): {escape(claim)}")
        for who, n, claim in unanswered
    ]
    parts.append(_listed("Agents without a valid final answer", items))
    if view.stop_message:
        parts.append(f'<p class="note">{escape(view.stop_message)}</p>')
    parts.append("</section>")
    return "".join(parts)


def _finding(view: SessionView) -> str:
    """moot's finding: its label and reason, the claims table (agent x round), changes of
    mind and the model verdicts weighed as evidence. Every cell is model text: escaped."""
    finding = view.finding
    if finding is None:
        return ""
    parts = [
        '<section class="card finding"><h2>moot\'s finding</h2>',
        f'<p class="status">{_pill(finding.label, finding.label.replace("_", " "))} '
        f"{escape(finding_line(finding))}</p>",
    ]
    if finding.label == "consensus" and finding.independent is not None:  # persuasion says it
        parts.append(
            f"<p>{finding.independent} of the {finding.started} agents held this answer in "
            "their first, independent answer.</p>"
        )
    table = claims_table(view.claims)
    if table.rows:
        moved = {(c.agent, c.round) for c in view.changes}
        head = "".join(f"<th>{round_title('round', r)}</th>" for r in table.rounds)
        rows = []
        for agent, cells in table.rows:
            tds = []
            for r, claim in zip(table.rounds, cells, strict=True):
                classes = [
                    *(["invalid"] if claim is not None and not claim.valid else []),
                    *(["changed"] if (agent, r) in moved else []),
                ]
                mark = ' <span class="mark">changed</span>' if (agent, r) in moved else ""
                cls = f' class="{" ".join(classes)}"' if classes else ""
                tds.append(f"<td{cls}>{escape(table.cell(claim))}{mark}</td>")
            rows.append(f"<tr><th>{escape(label(agent))}</th>{''.join(tds)}</tr>")
        parts.append(
            '<h3>Claims by round</h3><table class="claims"><thead><tr><th>Agent</th>'
            f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
    parts.append(_listed("Changes of mind", [_li(escape(change_line(c))) for c in view.changes]))
    verdicts = [
        _li(escape(verdict_line(v)), "upheld" if v.valid and v.upheld else "not-upheld")
        for v in view.verdicts
    ]
    note = '<p class="note">Weighed as evidence; moot\'s check decides.</p>'
    parts.append(_listed("Model verdicts", verdicts, note))
    parts.append("</section>")
    return "".join(parts)


def _chart(view: SessionView) -> str:
    results = view.chart_results
    if view.chart_kind == "score":
        svg, title = score_chart(results), "Convergence score per round"
    elif view.chart_kind == "tally":
        svg, title = tally_chart(results), "Votes per round"
    else:
        return ""
    return f'<section class="card"><h2>{title}</h2><div class="chart-box">{svg}</div></section>'


def _turn(turn: Turn) -> str:
    meta = []
    if turn.kind == "answer" and turn.ok:
        meta.append(f"{turn.tokens:,} tokens")
    if turn.latency >= 0.05:
        meta.append(f"{turn.latency:.1f}s")
    if turn.attempts > 1:
        meta.append(f"{turn.attempts} attempts")
    if turn.cut:
        meta.append(turn.cut)
    state = "ok" if turn.ok else "failed"
    if turn.kind == "command":
        body = f"<pre><code>{escape(turn.text)}</code></pre>"
    elif not turn.ok:
        body = f'<p class="note">{escape(turn.failure or "failed")}</p>'
    else:
        body = f'<div class="md">{markdown_html(turn.text or "(empty)")}</div>'
    return (
        f'<details class="turn {state}"><summary><span class="who">{escape(turn.who)}</span>'
        f'<span class="meta">{escape(" · ".join(meta))}</span>'
        f'<span class="gist">{escape(turn.summary)}</span></summary>{body}</details>'
    )


def _round(round_: Round, titles: Mapping[str, str]) -> str:
    head = f"<h3>{escape(round_.title)}</h3>"
    if round_.result is not None:
        decision = round_.result.decision or ("tally" if round_.result.votes else "none")
        head += _pill(decision, round_result(round_.result))
    parts = [f'<li class="round"><div class="round-head">{head}</div>']
    for phase in round_.phases:
        title = titles.get(phase.name, phase.name.replace("_", " ").capitalize())
        parts.append(f'<div class="phase"><h4>{escape(title)}</h4>')
        parts += [_turn(t) for t in phase.turns]
        parts.append("</div>")
    parts.append("</li>")
    return "".join(parts)


def _sections(view: SessionView) -> str:
    """The protocol's own sections: Markdown that may quote models, so rendered as untrusted."""
    return "".join(
        f'<section class="card"><h2>{escape(title)}</h2><div class="md">{markdown_html(text)}'
        "</div></section>"
        for title, text in view.sections
    )


def _positions(view: SessionView) -> str:
    if not view.positions:
        return ""
    parts = ['<section class="card"><h2>Final solutions</h2>']
    for alias, text in view.positions.items():
        parts.append(
            f'<details class="turn position" open><summary><span class="who">'
            f"{escape(label(alias))}</span></summary>"
            f'<div class="md">{markdown_html(text)}</div></details>'
        )
    parts.append("</section>")
    return "".join(parts)


def _agents(view: SessionView) -> str:
    rows = "".join(
        f"<tr><td>{escape(a.label)}</td><td><code>{escape(a.model)}</code></td>"
        f'<td class="num">{a.calls}</td><td class="num">{a.failures}</td>'
        f'<td class="num">{"~" if a.tokens_estimated else ""}{a.tokens:,}</td>'
        f'<td class="num">{_cost(a.cost)}</td></tr>'
        for a in view.agents
    )
    return (
        '<section class="card"><h2>Agents</h2><table class="agents"><thead><tr><th>Alias</th>'
        "<th>Model</th><th>Calls</th><th>Failures</th><th>Tokens</th><th>Cost</th></tr></thead>"
        f"<tbody>{rows}</tbody><tfoot><tr><td>Total</td><td></td><td></td><td></td>"
        f'<td class="num">{view.tokens:,}</td><td class="num">{_cost(view.cost)}</td></tr>'
        "</tfoot></table></section>"
    )


_STYLE = """
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; }
main { max-width: 980px; margin: 0 auto; padding: 24px 16px 48px; }
header h1 { margin: 0 0 4px; font-size: 26px; }
header .sub { color: var(--muted); font-size: 13px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 16px 20px;
  margin: 16px 0; }
.card h2 { margin: 0 0 12px; font-size: 18px; }
h3 { font-size: 16px; margin: 16px 0 8px; }
h4 { font-size: 13px; margin: 12px 0 6px; color: var(--muted); text-transform: uppercase;
  letter-spacing: .04em; }
.pill { display: inline-block; padding: 2px 10px; border-radius: 999px; font-size: 12px;
  font-weight: 600; background: #eaeef2; color: #424a53; margin-right: 6px; }
.pill.consensus { background: #dafbe1; color: #116329; }
.pill.continue, .pill.no_consensus, .pill.tie, .pill.persuasion { background: #fff1c2;
  color: #7d4e00; }
table.claims { border-collapse: collapse; margin: 8px 0; }
table.claims th, table.claims td { border: 1px solid var(--line); padding: 4px 10px;
  text-align: left; }
table.claims td.invalid { color: #a40e26; font-style: italic; }
table.claims td.changed { background: #fff8e1; }
table.claims .mark { color: var(--muted); font-size: 12px; }
li.not-upheld { color: #a40e26; }
.pill.failed { background: #ffebe9; color: #a40e26; }
.pill.paused, .pill.interrupted, .pill.incomplete,
.pill.running { background: #ddf4ff; color: #0550ae; }
.status { font-size: 15px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 12px 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; white-space: pre-wrap; }
.note { color: var(--muted); font-style: italic; }
.chart-box { overflow-x: auto; }
svg.chart { width: 100%; max-width: 760px; height: auto; display: block; }
ol.timeline { list-style: none; margin: 0; padding: 0 0 0 22px;
  border-left: 3px solid var(--line); }
ol.timeline > li.round { position: relative; margin: 0 0 20px; }
ol.timeline > li.round::before { content: ""; position: absolute; left: -31px; top: 4px;
  width: 15px; height: 15px; border-radius: 50%; background: #fff; border: 3px solid #0969da; }
.round-head { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; }
.round-head h3 { margin: 0; }
details.turn { border: 1px solid var(--line); border-radius: 8px; margin: 6px 0; background: #fff; }
details.turn > summary { cursor: pointer; padding: 8px 12px; display: grid;
  grid-template-columns: 120px 150px 1fr; gap: 8px; align-items: baseline; }
details.turn.position > summary, .verdict details.turn > summary { display: block; }
details.turn[open] > summary { border-bottom: 1px solid var(--line); }
details.turn.failed { border-color: #ff8182; }
.who { font-weight: 600; } .meta { color: var(--muted); font-size: 12px; }
.gist { color: #424a53; font-size: 13px; overflow: hidden; text-overflow: ellipsis;
  white-space: nowrap; }
details.turn > .md, details.turn > pre, details.turn > p { padding: 4px 14px 10px; margin: 0; }
.md pre, pre { background: #f6f8fa; padding: 10px; border-radius: 6px; overflow-x: auto; }
.md code, code { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.md h5, .md h6 { font-size: 14px; margin: 12px 0 4px; }
.md.answer { padding-left: 12px; border-left: 3px solid var(--line); }
.md blockquote { margin: 0; padding-left: 12px; border-left: 3px solid var(--line);
  color: var(--muted); }
.md table, table.agents { border-collapse: collapse; }
.md th, .md td, table.agents th, table.agents td { border: 1px solid var(--line);
  padding: 4px 10px; text-align: left; }
table.agents { width: 100%; } table.agents thead { background: #f6f8fa; }
table.agents td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.agents tfoot td { font-weight: 600; }
.task { white-space: normal; }
footer { color: var(--muted); font-size: 12px; text-align: center; margin-top: 24px; }
"""


def html_for(view: SessionView) -> str:
    title = f"{view.protocol.capitalize()} report: {view.task[:80]}"
    rounds = "".join(_round(r, view.phase_titles) for r in view.rounds)
    timeline = (
        f'<section class="card"><h2>Rounds</h2><ol class="timeline">{rounds}</ol></section>'
        if rounds
        else ""
    )
    warnings = ""
    if view.warnings:
        items = "".join(f"<li>{escape(w)}</li>" for w in view.warnings)
        warnings = f'<section class="card"><h2>Warnings</h2><ul>{items}</ul></section>'
    notes = ""  # a person's notes to agents (moot say)
    if view.human_notes:
        items = "".join(f"<li>{escape(n)}</li>" for n in view.human_notes)
        notes = f'<section class="card"><h2>Notes from you</h2><ul>{items}</ul></section>'
    rounds_text = rounds_words(view.rounds_done, view.max_rounds)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body><main>"
        f"<header><h1>{escape(view.protocol.capitalize())} report</h1>"
        f'<div class="sub">Session {escape(view.session_id)} · {escape(rounds_text)} · '
        f"{view.tokens:,} tokens · cost {_cost(view.cost)}</div></header>"
        f'<section class="card"><h2>Task</h2><div class="md task">{markdown_html(view.task)}'
        "</div></section>"
        f"{_verdict(view)}{_finding(view)}{code_html(view.code, view.session_id)}"
        f"{_sections(view)}"
        f"{_chart(view)}{timeline}"
        f"{_positions(view)}{_agents(view)}{notes}{warnings}"
        f"<footer>Written by moot {escape(__version__)}. Model text is shown as untrusted "
        "content: sanitized, with no script and no external load."
        + (f" Computed from the journal: {escape(view.journal_head)}." if view.journal_head else "")
        + "</footer>"
        "</main></body></html>\n"
    )
