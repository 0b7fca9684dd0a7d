"""`--json-logs`: one JSON object per event, with the fields of seed 002 section 11.1.

    {"ts": ISO-8601, "level": "info|warn|error", "sessionId", "round", "agentId", "event",
     "latencyMs", "tokenUsage", "retryCount", "error"}

Every object carries every one of those keys (null where it does not apply), plus `step` and
`phase`, and event-specific extras in camelCase. A new round is announced by a `round_start`
object derived from the step ids. The last object of a run is its `outcome` (`Face.outcome`):
the status and moot's finding, with each agent's claims, the changes of mind and the model
verdicts weighed, as in result.json."""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from moot.display.face import Face
from moot.types import Event, EventKind, Step, dump

if TYPE_CHECKING:
    from moot.engine.result import Result

__all__ = ["JsonLog", "json_records"]

_NAMES = {
    EventKind.OPENED: "session_open",
    EventKind.RUN_STARTED: "run_start",
    EventKind.ASK_STARTED: "model_call",
    EventKind.ASK: "model_response",
    EventKind.ATTEMPT: "model_retry",
    EventKind.SHELL_STARTED: "command_start",
    EventKind.SHELL: "command_result",
    EventKind.STOPPED: "session_stopped",
    EventKind.FAILED: "session_failed",
    EventKind.FINISHED: "session_end",
}


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JsonLog(Face):
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.session_id: str | None = None
        self.round: int | None = None

    def handle(self, event: Event) -> None:
        for record in self.records(event):
            print(json.dumps(record, ensure_ascii=False), file=self.stream, flush=True)

    def show_outcome(self, result: Result) -> None:
        print(json.dumps(self.outcome_record(result), ensure_ascii=False), file=self.stream)
        self.stream.flush()

    def outcome_record(self, result: Result) -> dict[str, Any]:
        """The last object of a run: its status and moot's finding, with each agent's claims,
        the changes of mind and the model verdicts weighed (as in result.json)."""
        event = Event(kind=EventKind.FINISHED, ts=time.time(), data={"status": result.status})
        record = self._base(event, "outcome", "info", None, None, None)
        record["status"] = result.status
        finding = result.finding
        record["finding"] = None if finding is None else dump(finding)
        record["claims"] = [dump(c) for c in result.claims]
        record["changes"] = [dump(c) for c in result.changes]
        record["verdicts"] = [dump(v) for v in result.verdicts]
        return record

    def records(self, event: Event) -> list[dict[str, Any]]:
        if event.kind == EventKind.CALL_STARTED:  # model_call already said it was asked
            return []
        if event.kind == EventKind.OPENED:
            self.session_id = str(event.data.get("session_id"))
        where = Step.parse(event.step)
        round_no, phase = where.round, where.phase
        out = []
        if round_no is not None and (self.round is None or round_no > self.round):
            self.round = round_no
            out.append(self._base(event, "round_start", "info", round_no, None, None))
        out.append(self._record(event, round_no, phase))
        return out

    def _base(
        self,
        event: Event,
        name: str,
        level: str,
        round_no: int | None,
        phase: str | None,
        agent: str | None,
    ) -> dict[str, Any]:
        return {
            "ts": _iso(event.ts),
            "level": level,
            "sessionId": self.session_id,
            "round": round_no,
            "agentId": agent,
            "event": name,
            "latencyMs": None,
            "tokenUsage": None,
            "retryCount": None,
            "error": None,
            "step": event.step,
            "phase": phase,
        }

    def _record(self, event: Event, round_no: int | None, phase: str | None) -> dict[str, Any]:
        data = event.data
        agent = data.get("agent")
        kind = event.kind
        record = self._base(
            event, _NAMES.get(kind, kind), "info", round_no, phase, str(agent) if agent else None
        )
        if kind == EventKind.OPENED:
            meta = data.get("meta") or {}
            record["protocol"] = meta.get("protocol")
            record["agents"] = sorted(meta.get("aliases") or {})
            record["resumedSteps"] = sum(
                1 for e in data.get("past") or () if e.kind in (EventKind.ASK, EventKind.SHELL)
            )
        elif kind == EventKind.ASK_STARTED:
            record["retryCount"] = 0
            record["estimatedPromptTokens"] = data.get("est_prompt_tokens")
        elif kind == EventKind.ASK:
            completion = data.get("completion") or {}
            usage = completion.get("usage") or {}
            prompt = int(usage.get("prompt_tokens", 0))
            produced = int(usage.get("completion_tokens", 0))
            record["latencyMs"] = round(float(completion.get("latency") or 0.0) * 1000)
            record["tokenUsage"] = {
                "prompt": prompt,
                "completion": produced,
                "total": prompt + produced,
                "estimated": bool(usage.get("estimated")),
            }
            record["retryCount"] = max(0, int(completion.get("attempts") or 1) - 1)
            record["costUsd"] = completion.get("cost")
            if data.get("cache"):
                record["cacheHit"] = True
            if completion.get("status") != "ok":
                failure = completion.get("failure") or {}
                record["level"] = "error"
                record["error"] = f"{failure.get('kind')}: {failure.get('message')}"
        elif kind == EventKind.ATTEMPT:
            failure = data.get("failure") or {}
            record["level"] = "warn"
            record["retryCount"] = int(data.get("attempt") or 1)
            record["error"] = f"{failure.get('kind')}: {failure.get('message')}"
            record["retryInMs"] = round(float(data.get("retry_in") or 0.0) * 1000)
        elif kind in (EventKind.SHELL_STARTED, EventKind.SHELL):
            record["command"] = data.get("command")
            result = data.get("result")
            if isinstance(result, dict):
                record["exitCode"] = result.get("exit_code")
                if result.get("exit_code") != 0 or result.get("timed_out"):
                    record["level"] = "warn"
        elif kind == EventKind.ROUND_RESULT:  # a RoundSummary: the fields that say something
            record["round"] = data.get("round", round_no)
            for key, value in data.items():
                if key in ("round", "scale") or value in (None, {}, "") or value == "round":
                    continue
                name = "convergenceScore" if key == "score" else _camel(key)
                record[name] = _whole(value)
        elif kind == EventKind.WARNING:
            record["level"] = "warn"
            record["error"] = data.get("message")
        elif kind == EventKind.LIMITS_CHANGED:
            record["limits"] = data.get("limits")
        elif kind in (EventKind.STOPPED, EventKind.FAILED):
            record["level"] = "warn" if kind == EventKind.STOPPED else "error"
            record["error"] = data.get("message")
            record["reason"] = data.get("reason")
        elif kind == EventKind.FINISHED:
            record["status"] = data.get("status")
        elif kind == EventKind.CONTEXT_FRESH:
            record["estimatedTokens"] = data.get("estimated_tokens")
            record["budget"] = data.get("budget")
        return record


def _whole(value: Any) -> Any:
    """6.0 -> 6: scores and thresholds read as whole numbers when they are."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def json_records(events: list[Event]) -> list[dict[str, Any]]:
    """The objects `--json-logs` prints for these events (tests and tools)."""
    log = JsonLog()
    return [record for event in events for record in log.records(event)]
