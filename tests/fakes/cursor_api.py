"""A fake of the Cursor Cloud Agents API (v0) for httpx2.MockTransport, in the real wire shape."""

from __future__ import annotations

import json
from typing import Any

import httpx2


class SimulatedCrash(BaseException):
    """Raised from the wire to stop a run dead, as a kill would (nothing catches it)."""


class CursorApi:
    """A fake of the Cursor Cloud Agents API (v0): agents run for `runs` polls, then finish
    with a reply appended to their conversation."""

    def __init__(self, runs: int = 2, flaky: list[httpx2.Response] | None = None) -> None:
        self.agents: dict[str, dict[str, Any]] = {}
        self.runs = runs
        self.flaky = list(flaky or [])  # answers to the next status polls, before the real ones
        self.launches = 0
        self.followups = 0
        self.polls = 0
        self.crash_at_poll: int | None = None  # raise SimulatedCrash on this status poll
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        path = request.url.path
        body = json.loads(request.content) if request.content else {}
        if request.method == "POST" and path == "/v0/agents":
            self.launches += 1
            agent_id = f"bc_{self.launches:04d}"
            self.agents[agent_id] = {
                "polls": 0,
                "messages": [{"id": "u1", "type": "user_message", "text": body["prompt"]["text"]}],
            }
            return httpx2.Response(
                201,
                json={
                    "id": agent_id,
                    "name": "Solve the task",
                    "status": "CREATING",
                    "source": body["source"],
                    "createdAt": "2026-11-20T10:30:00Z",
                    "target": {
                        "branchName": f"cursor/{agent_id}",
                        "autoCreatePr": False,
                        "url": f"https://cursor.com/agents?id={agent_id}",
                    },
                },
            )
        agent_id = path.split("/")[3]
        agent = self.agents[agent_id]
        if path.endswith("/followup"):
            self.followups += 1
            agent["polls"] = 0
            agent["messages"].append(
                {
                    "id": f"u{len(agent['messages'])}",
                    "type": "user_message",
                    "text": body["prompt"]["text"],
                }
            )
            return httpx2.Response(200, json={"id": agent_id})
        if path.endswith("/conversation"):
            return httpx2.Response(200, json={"id": agent_id, "messages": agent["messages"]})
        self.polls += 1
        if self.polls == self.crash_at_poll:
            raise SimulatedCrash(f"killed while polling {agent_id}")
        if self.flaky:
            return self.flaky.pop(0)
        agent["polls"] += 1
        if agent["polls"] < self.runs:
            return httpx2.Response(200, json={"id": agent_id, "status": "RUNNING"})
        replies = sum(1 for m in agent["messages"] if m["type"] == "assistant_message")
        users = sum(1 for m in agent["messages"] if m["type"] == "user_message")
        if replies < users:
            agent["messages"].append(
                {
                    "id": f"a{users}",
                    "type": "assistant_message",
                    "text": f"<solution>answer {users}</solution>",
                }
            )
        return httpx2.Response(200, json={"id": agent_id, "status": "FINISHED", "summary": "Done"})
