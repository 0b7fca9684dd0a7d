"""`cli:TOOL`: coding agents' command-line tools in print mode, and any command.

What each built-in tool is started with (CWD: where it runs; MODEL from `cli:TOOL#MODEL`):

    cli:claude        claude [--model M] -p --output-format json MODE         prompt on stdin
        code task:    --permission-mode acceptEdits   (file edits in CWD; no shell, no web)
        text task:    --permission-mode dontAsk       (read-only: whatever would ask is denied)
    cli:codex         codex exec [--model M] --json --skip-git-repo-check MODE -   prompt on stdin
        code task:    --sandbox workspace-write --cd CWD
                      -c sandbox_workspace_write.network_access=false
                      -c sandbox_workspace_write.exclude_slash_tmp=true
                      -c sandbox_workspace_write.exclude_tmpdir_env_var=true
        text task:    --sandbox read-only --cd CWD
    cli:gemini        gemini [--model M] --output-format json MODE            prompt on stdin
        code task:    --approval-mode auto_edit --skip-trust
        text task:    --approval-mode default --skip-trust   (headless: tools that ask are off)
        (headless gemini refuses to start in a folder it does not trust: --skip-trust trusts
        the worktree or the empty folder for this one run)
    cli:qwen          qwen [--model M] --output-format json MODE              prompt on stdin
        code task:    --approval-mode default --allowed-tools 'edit(./**)'
                      (auto-edit would approve edits anywhere: the rule allows CWD only)
        text task:    --approval-mode default
    cli:cursor-agent  cursor-agent [--model M] -p --output-format json MODE PROMPT
        code task:    --workspace CWD --trust         (edits; no --force: no shell commands)
        text task:    --mode ask --workspace CWD --trust
    cli:NAME  with options.command = "/abs/path" and options.args = [...]   any command
    cli:/abs/path/to/tool     the same, the path in the spec

A code task's agent runs in its own worktree with the edit arguments; every other call runs
with the read-only ones: a code task's judge or arbiter in the session's sandbox folder, a
text task in `options.cwd` if set, else in an empty temporary folder removed afterwards; never
in moot's working directory (often the user's repository).
`options.args` replaces a tool's whole argument list (for both kinds of task);
`options.extra_args` adds arguments before the prompt. Args may hold {{PROMPT}},
{{MAX_TOKENS}}, {{TEMPERATURE}}, {{MODEL}} and {{CWD}}; without {{PROMPT}} the prompt goes to
stdin. Output may be any of the tools' JSON shapes or plain text (`options.output = "text"`
forces text). `options.chat_template` (plain, chatml, llama3, gemma) shapes the conversation
into one prompt.

Each built-in tool's `--version` is journaled once per session as a checkpoint, so a report can
say which build answered; the probe runs in an empty temporary folder with stdin closed. A
custom command is never started for a probe: its path and the sha256 of its file are journaled
instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

from msgspec import Struct

from moot.errors import ConfigError
from moot.models.base import Capabilities, ModelSettings, Spec, call_context
from moot.models.classify import classify_message
from moot.models.cli_process import MAX_STDIN, file_sha256, run_process, tool_version
from moot.models.durations import seconds_text
from moot.models.pricing import Pricer
from moot.models.provider import Provider, ProviderError, Reply
from moot.models.transcript import render_transcript
from moot.types import FailureKind, Request, Usage, estimate_tokens

__all__ = ["TOOLS", "CliModel", "CliReply", "Tool", "parse_output"]

MAX_ARG_PROMPT = 100_000  # bytes; Linux refuses a single argument over 128 KiB
DEFAULT_TIMEOUT = 600.0
_TOKEN = re.compile(r"\{\{[A-Z_]+\}\}")


class Tool(Struct, frozen=True):
    """A built-in coding CLI: `command [subcommand] [--model M] args MODE [extra_args] tail`,
    MODE being `edit` in a code task's worktree and `read_only` everywhere else."""

    command: str
    args: tuple[str, ...]
    edit: tuple[str, ...]  # edit files in CWD (its worktree) without asking; nothing more
    read_only: tuple[str, ...]  # read, never write, never run commands that change anything
    tail: tuple[str, ...] = ()
    subcommand: tuple[str, ...] = ()
    vendor: str = ""  # whose price table prices a named model
    install: str = ""

    def argv(self, model: str, *, code: bool, extra: tuple[str, ...] = ()) -> list[str]:
        """Everything after the executable, with the {{...}} tokens still in."""
        mode = self.edit if code else self.read_only
        named = ["--model", model] if model else []
        return [*self.subcommand, *named, *self.args, *mode, *extra, *self.tail]


TOOLS: dict[str, Tool] = {
    "claude": Tool(
        "claude",
        ("-p", "--output-format", "json"),
        edit=("--permission-mode", "acceptEdits"),
        read_only=("--permission-mode", "dontAsk"),
        vendor="anthropic",
        install="Claude Code",
    ),
    "codex": Tool(
        "codex",
        ("--json", "--skip-git-repo-check"),
        edit=(
            "--sandbox",
            "workspace-write",
            "--cd",
            "{{CWD}}",
            "-c",
            "sandbox_workspace_write.network_access=false",
            "-c",  # by default /tmp and $TMPDIR are writable too: only the worktree is
            "sandbox_workspace_write.exclude_slash_tmp=true",
            "-c",
            "sandbox_workspace_write.exclude_tmpdir_env_var=true",
        ),
        read_only=("--sandbox", "read-only", "--cd", "{{CWD}}"),
        tail=("-",),  # the prompt from stdin
        subcommand=("exec",),
        vendor="openai",
        install="the Codex CLI",
    ),
    "gemini": Tool(
        "gemini",
        ("--output-format", "json"),
        edit=("--approval-mode", "auto_edit", "--skip-trust"),
        read_only=("--approval-mode", "default", "--skip-trust"),
        vendor="google",
        install="Gemini CLI",
    ),
    "cursor-agent": Tool(
        "cursor-agent",
        ("-p", "--output-format", "json"),
        edit=("--workspace", "{{CWD}}", "--trust"),
        read_only=("--mode", "ask", "--workspace", "{{CWD}}", "--trust"),
        tail=("{{PROMPT}}",),
        install="the Cursor CLI",
    ),
    "qwen": Tool(
        "qwen",
        ("--output-format", "json"),
        edit=("--approval-mode", "default", "--allowed-tools", "edit(./**)"),
        read_only=("--approval-mode", "default"),
        install="Qwen Code",
    ),
}


class CliReply(Struct):
    """What a tool's output says: the answer, usage and cost when given, or its error."""

    text: str = ""
    error: str | None = None
    usage: Usage | None = None
    cost: float | None = None
    found: bool = False  # a known JSON shape was recognised


class CliModel(Provider):
    """Runs its command under `run_process`, which enforces the timeout by killing the whole
    process tree, so the base's timeout guard is off. Failures name the tool themselves."""

    default_timeout = DEFAULT_TIMEOUT
    guards_timeout = False

    def __init__(self, spec: Spec, settings: ModelSettings) -> None:
        options = settings.options
        name, _, model = spec.name.partition("#")
        tool = TOOLS.get(name)
        extra = options.get("extra_args", [])
        if not isinstance(extra, list):
            raise ConfigError(f"{spec}: options.extra_args must be a list of strings")
        self.extra = tuple(map(str, extra))
        self.builtin: Tool | None = None  # set for a built-in tool with moot's arguments
        if tool is not None and "command" not in options:
            executable = shutil.which(tool.command)
            if executable is None:
                raise ConfigError(
                    f"{spec} needs the `{tool.command}` command on PATH: install {tool.install}"
                )
        else:
            command = str(options.get("command") or name)
            if not os.path.isabs(command):
                raise ConfigError(
                    f"{spec}: a custom CLI model needs an absolute path, as cli:/path/to/tool or "
                    f"options.command; built-in tools are {', '.join(TOOLS)}"
                )
            if not (os.path.isfile(command) and os.access(command, os.X_OK)):
                raise ConfigError(f"{spec}: {command} is not an executable file")
            executable = command
        self.custom = tool is None or "command" in options  # never started for a probe
        raw = options.get("args")
        if raw is not None:  # the user's own argument list, for both kinds of task
            if not isinstance(raw, list) or not all(isinstance(a, str) for a in raw):
                raise ConfigError(f"{spec}: options.args must be a list of strings")
            self.own_args: list[str] | None = [*raw, *self.extra]
        elif tool is not None and "command" not in options:
            self.own_args = None
            self.builtin = tool
        else:
            self.own_args = list(self.extra)
        self.tool = name
        self.model = model
        self.executable = executable
        self.args = self.arguments(code=False)
        self.template = str(options.get("chat_template", "plain"))
        self.output = str(options.get("output", "auto"))
        self.cwd = options.get("cwd")
        vendor = tool.vendor if tool else ""
        keys = [f"cli:{name}"] + ([f"{vendor}:{model}"] if vendor and model else [])
        super().__init__(
            str(spec),
            settings,
            Capabilities(
                json_schema=False,
                seed=False,
                temperature=any("{{TEMPERATURE}}" in a for a in self.args),
                context_window=int(options.get("context_window", 128_000)),
            ),
            label="cli",
            endpoint=executable,
            pricer=Pricer(str(spec), keys, settings),
        )

    def arguments(self, *, code: bool) -> list[str]:
        """The arguments after the executable, {{...}} tokens unfilled: in a code task's
        worktree (`code`) or anywhere else."""
        if self.builtin is not None:
            return self.builtin.argv(self.model, code=code, extra=self.extra)
        return list(self.own_args or [])

    def command_line(self, *, code: bool) -> str:
        """What `moot doctor` shows: the whole command as a shell would read it, the prompt
        and the folder left as {{PROMPT}} and {{CWD}}."""
        argv = [self.executable, *self.arguments(code=code)]
        line = " ".join(a if _TOKEN.fullmatch(a) else shlex.quote(a) for a in argv)
        return line if any("{{PROMPT}}" in a for a in argv) else f"{line} < {{{{PROMPT}}}}"

    async def send(self, request: Request, timeout: float) -> Reply:
        await self._record_version()
        prompt = render_transcript(request.messages, self.template)
        context = call_context()  # a code task runs the agent in its own worktree
        tree = context.cwd if context is not None and context.cwd else None
        edits = tree is not None and context is not None and not context.read_only
        with _workdir(tree or self.cwd) as cwd:
            argv, stdin = self._argv(request, prompt, cwd=cwd, code=edits)
            try:
                result = await run_process(argv, stdin=stdin, timeout=timeout, cwd=cwd)
            except OSError as exc:
                raise ProviderError(
                    FailureKind.CONNECTION, f"cannot run {self.executable}: {exc}"
                ) from None
        if result.timed_out:
            raise ProviderError(
                FailureKind.TIMEOUT,
                f"{self.tool}: no answer within {seconds_text(timeout)}; "
                "its process tree was killed",
            )
        if result.overflow:
            raise ProviderError(
                FailureKind.BAD_RESPONSE,
                f"{self.tool}: printed more than {len(result.stdout):,} bytes; stopped",
            )
        stdout = result.stdout.decode("utf-8", "replace")
        reply = CliReply(text=stdout.strip()) if self.output == "text" else parse_output(stdout)
        if result.exit_code != 0 or reply.error is not None:
            raise self._failed(reply, result.exit_code, result.stderr)
        if not reply.text.strip():
            raise ProviderError(
                FailureKind.BAD_RESPONSE, f"{self.tool}: printed no answer" + _tail(result.stderr)
            )
        usage = reply.usage or Usage(
            prompt_tokens=estimate_tokens(prompt),
            completion_tokens=estimate_tokens(reply.text),
            estimated=True,
        )
        return Reply(reply.text, usage, reply.cost)

    def _argv(
        self, request: Request, prompt: str, *, cwd: str, code: bool
    ) -> tuple[list[str], bytes | None]:
        encoded = prompt.encode("utf-8")
        temperature = request.temperature
        if temperature is None:
            temperature = self.settings.temperature
        values = {
            "{{PROMPT}}": prompt,
            "{{MAX_TOKENS}}": str(request.max_tokens or self.settings.max_tokens or 2048),
            "{{TEMPERATURE}}": f"{0.7 if temperature is None else temperature:g}",
            "{{MODEL}}": self.model,
            "{{CWD}}": cwd,
        }
        args = self.arguments(code=code)
        in_args = any("{{PROMPT}}" in a for a in args)
        limit, where = (
            (MAX_ARG_PROMPT, "a command-line argument") if in_args else (MAX_STDIN, "stdin")
        )
        if len(encoded) > limit:
            raise ProviderError(
                FailureKind.CONTEXT_LENGTH,
                f"{self.tool}: the prompt ({len(encoded):,} bytes) is over the "
                f"{limit:,}-byte limit for {where}",
            )
        argv = [self.executable]
        for arg in args:
            for token, value in values.items():
                arg = arg.replace(token, value)
            argv.append(arg)
        return argv, None if in_args else encoded

    def _failed(self, reply: CliReply, exit_code: int | None, stderr: str) -> ProviderError:
        message = reply.error or reply.text or stderr.strip() or "no output"
        kind = classify_message(f"{message}\n{stderr}")
        if kind is None:
            # gemini and qwen: 42 is an input error, 53 a turn limit
            kind = {42: FailureKind.BAD_REQUEST, 53: FailureKind.BAD_RESPONSE}.get(
                exit_code or 0, FailureKind.UNKNOWN
            )
        code = f"exit code {exit_code}" if exit_code else "an error"
        return ProviderError(kind, f"{self.tool} ended with {code}: {message[-1500:]}")

    async def _record_version(self) -> None:
        context = call_context()
        if context is None:
            return
        if self.custom:  # never started for a probe: it may do its whole job on any argument
            data = {"cli": self.tool, "executable": self.executable}
            data["sha256"] = await asyncio.to_thread(file_sha256, self.executable)
            key = "sha256"
        else:
            version = await tool_version(self.executable)
            data = {"cli": self.tool, "executable": self.executable, "cli_version": version}
            key = "cli_version"
        if not any(
            item.get(key) == data[key] and item.get("executable") == self.executable
            for item in context.recorded
        ):
            context.checkpoint(data)


@contextlib.contextmanager
def _workdir(folder: str | None) -> Iterator[str]:
    """`folder`, or an empty temporary folder removed afterwards: a CLI agent never runs in
    moot's own working directory, which is often the user's repository."""
    if folder:
        yield str(folder)
        return
    with tempfile.TemporaryDirectory(prefix="moot-cli-", ignore_cleanup_errors=True) as empty:
        yield empty


def _tail(stderr: str) -> str:
    text = stderr.strip()
    return f" (stderr: {text[-500:]})" if text else ""


# -- output shapes -----------------------------------------------------------------------------
def parse_output(stdout: str) -> CliReply:
    """Read any of the tools' JSON shapes (one object, an array of messages, JSON lines);
    anything else is the answer as plain text."""
    text = stdout.strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        events = [_json_line(line) for line in text.splitlines()]
        objects = [e for e in events if isinstance(e, dict)]
        if objects and len(objects) * 2 >= len([line for line in text.splitlines() if line]):
            return _from_events(objects)
        return CliReply(text=text)
    if isinstance(data, list):
        return _from_events([item for item in data if isinstance(item, dict)])
    if isinstance(data, dict):
        return _from_object(data)
    return CliReply(text=text)


def _json_line(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _from_object(data: dict[str, Any]) -> CliReply:
    if data.get("type") == "result" or "result" in data:  # claude, cursor-agent, qwen
        reply = CliReply(text=str(data.get("result") or ""), found=True)
        if data.get("is_error") or str(data.get("subtype", "success")).startswith("error"):
            reply.error = reply.text or str(data.get("subtype"))
        reply.usage = _usage(data.get("usage"))
        cost = data.get("total_cost_usd", data.get("cost_usd"))
        reply.cost = float(cost) if isinstance(cost, int | float) else None
        return reply
    if "response" in data or "stats" in data:  # gemini
        reply = CliReply(text=str(data.get("response") or ""), found=True)
        reply.usage = _gemini_usage(data.get("stats"))
    else:
        field_ = next((k for k in ("text", "content", "output", "answer") if k in data), None)
        reply = CliReply(text=str(data[field_]) if field_ else json.dumps(data), found=bool(field_))
    error = data.get("error")
    if error:
        reply.error = str(error.get("message", error) if isinstance(error, dict) else error)
    return reply


def _from_events(events: list[dict[str, Any]]) -> CliReply:
    results = [e for e in events if e.get("type") == "result"]
    if results:  # claude/qwen stream shapes end with a result like the single-object form
        return _from_object(results[-1])
    reply = CliReply(found=True)
    for event in events:  # codex exec --json
        kind = event.get("type")
        raw_item = event.get("item")
        item: dict[str, Any] = raw_item if isinstance(raw_item, dict) else {}
        if kind == "item.completed" and item.get("type") in ("agent_message", "assistant_message"):
            reply.text = str(item.get("text", ""))
        elif kind == "turn.completed":
            reply.usage = _usage(event.get("usage"), openai_style=True)
        elif kind in ("turn.failed", "error"):
            error = event.get("error", event)
            reply.error = str(error.get("message", error) if isinstance(error, dict) else error)
        elif kind == "assistant" and isinstance(event.get("message"), dict):
            reply.text = "".join(_texts(event["message"].get("content")))
    return reply


def _texts(content: Any) -> Iterable[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                yield str(part.get("text", ""))


def _int(data: dict[str, Any], *names: str) -> int:
    for name in names:
        value = data.get(name)
        if isinstance(value, int | float):
            return int(value)
    return 0


def _usage(raw: Any, *, openai_style: bool = False) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    prompt = _int(raw, "input_tokens", "prompt_tokens")
    output = _int(raw, "output_tokens", "completion_tokens")
    read = _int(raw, "cache_read_input_tokens", "cached_input_tokens", "cached_tokens")
    write = _int(raw, "cache_creation_input_tokens")
    if not (prompt or output):
        return None
    if not openai_style:  # Anthropic-style counts leave cache reads and writes out of input
        prompt += read + write
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=output,
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def _gemini_usage(stats: Any) -> Usage | None:
    if not isinstance(stats, dict):
        return None
    models = stats.get("models")
    if isinstance(models, dict) and models:
        prompt = output = cached = 0
        for entry in models.values():
            tokens = entry.get("tokens", {}) if isinstance(entry, dict) else {}
            prompt += _int(tokens, "prompt", "input")
            output += _int(tokens, "candidates", "output") + _int(tokens, "thoughts")
            cached += _int(tokens, "cached")
        return Usage(prompt_tokens=prompt, completion_tokens=output, cache_read_tokens=cached)
    prompt, output = _int(stats, "inputTokens"), _int(stats, "outputTokens")
    return Usage(prompt_tokens=prompt, completion_tokens=output) if prompt or output else None
