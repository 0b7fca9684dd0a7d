"""Scripted debates for protocol tests: agents and judges whose behaviour a test sets."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from moot import api as runner
from moot.config import RunConfig
from moot.models.scripted import ScriptedFailure, register_script
from moot.types import FailureKind, Request


def solution(text: str, disagreements: str = "None.") -> str:
    return (
        f"<solution>\n## PLAN\n1. {text}\n## CHANGES\n{text}\n</solution>\n"
        f"<analysis>\n## RISKS\nnone\n## DISAGREEMENTS\n{disagreements}\n</analysis>"
    )


def verdict(decision: str, score: int, base: str = "Agent A", mods: str = "none") -> str:
    return (
        "AGREEMENT POINTS: most.\n<verdict>\n"
        f"decision: {decision}\nconvergence_score: {score}\nremaining_disagreements: "
        f"{0 if decision == 'CONSENSUS' else 2}\nbase_solution: {base}\nmodifications: {mods}\n"
        "</verdict>"
    )


class Debate:
    """One reply function for all agents, keyed on the step id the engine passes in `meta`.

    `verdicts` are given in order, one per verify ask (re-asks included); `answer(alias, step)`
    computes solutions; `fail` names specs whose every call fails."""

    def __init__(
        self,
        verdicts: list[str] | None = None,
        answer: Callable[[str, str], str] | None = None,
        critique: str = "Strengths: clear. Weaknesses: none. Errors: none.",
        fail: set[str] | None = None,
        fail_kind: FailureKind = FailureKind.SERVER,
    ) -> None:
        self.verdicts = list(verdicts or [verdict("CONSENSUS", 9)])
        self.answer = answer or (lambda alias, step: solution(f"the answer is 42 ({alias})"))
        self.critique = critique
        self.fail = fail or set()
        self.fail_kind = fail_kind
        self.requests: list[Request] = []
        self.steps: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._verdict_index = 0

    def script(self, name: str) -> Callable[[Request], str]:
        def reply(request: Request) -> str:
            step = request.meta["step"]
            with self._lock:
                self.requests.append(request)
                self.steps[step] += 1
            if name in self.fail:
                raise ScriptedFailure(self.fail_kind, "this agent always fails")
            if "/verify/" in step:
                with self._lock:
                    index = min(self._verdict_index, len(self.verdicts) - 1)
                    self._verdict_index += 1
                return self.verdicts[index]
            if "/evaluate/" in step:
                return self.critique
            return self.answer(request.meta["agent"], step)

        return reply

    def specs(self, names: tuple[str, ...] = ("one", "two", "three")) -> list[str]:
        specs = []
        for name in names:
            register_script(name, self.script(name))
            specs.append(f"scripted:@{name}")
        return specs

    def run_args(self, task: str = "What is 6 times 7?", seed: str = "3") -> list[str]:
        """`moot run` arguments for this debate's three scripted agents."""
        args = ["run", task, "--seed", seed]
        for spec in self.specs():
            args += ["--models", spec]
        return args

    def config(self, names: tuple[str, ...] = ("one", "two", "three"), **extra: Any) -> RunConfig:
        data: dict[str, Any] = {"agents": [{"model": s} for s in self.specs(names)], "seed": 7}
        for key, value in extra.items():
            data[key] = value
        return RunConfig.read(data)

    def prompts(self) -> list[str]:
        return [m.content for r in self.requests for m in r.messages]


async def no_sleep(_: float) -> None:
    await asyncio.sleep(0)


def start(task: str, config: RunConfig, **kwargs: Any) -> runner.RunResult:
    return runner.start(task, config, sleep=no_sleep, **kwargs)


def events(folder: Path) -> list[dict[str, Any]]:
    import json

    return [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
