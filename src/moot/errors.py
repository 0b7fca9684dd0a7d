"""The exceptions moot raises, as one tree.

    MootError                      anything moot reports to a user (exit code 1 unless noted)
    ├── ConfigError                bad configuration, arguments or model spec
    ├── ProviderMissing            a provider's optional SDK is not installed (names the extra)
    ├── SessionNotFound            no session with that id under the sessions folder
    ├── JournalError               the journal cannot be trusted
    │   └── JournalLocked          another process is writing this session
    ├── ProtocolAborted            a protocol gave up (for instance every agent failed)
    ├── ReplayIncomplete           replay needed a step that the journal does not hold
    ├── WorkspaceError             a code task's repository, worktree or diff cannot be used
    ├── StorageError               a session folder cannot be written (read-only, full disk)
    └── Stopped                    the run stopped early but is resumable
        ├── LimitReached           a token, cost or time limit (exit code 3)
        ├── Waiting                the run waits for the user: a plan to approve (exit code 3)
        └── Interrupted            Ctrl-C or SIGTERM (exit code 130)

`FormatError` is internal and not a MootError: a parser raises it when a model's reply does not
fit the expected format, and the structured-output ladder turns it into a re-ask.

Model failures are not exceptions: a call that fails after its retries returns an error
`Completion` (see `moot.types.ModelFailure`), and the protocol decides what to do with it.
"""

from __future__ import annotations

__all__ = [
    "CacheError",
    "ConfigError",
    "FormatError",
    "Interrupted",
    "JournalError",
    "JournalLocked",
    "LimitReached",
    "MootError",
    "ProtocolAborted",
    "ProviderMissing",
    "ReplayIncomplete",
    "SessionNotFound",
    "Stopped",
    "StorageError",
    "Waiting",
    "WorkspaceError",
]


class MootError(Exception):
    """An error with a message meant for the user."""

    exit_code = 1


class ConfigError(MootError):
    """Configuration, arguments or a model spec are wrong; the message says how to fix them."""


class ProviderMissing(ConfigError):
    """A provider's optional dependency is missing."""


class SessionNotFound(MootError):
    """No session matches the given id."""


class JournalError(MootError):
    """The journal is damaged or was tampered with."""


class JournalLocked(JournalError):
    """Another process holds the session's writer lock."""


class ProtocolAborted(MootError):
    """The protocol cannot go on (for instance every agent failed)."""


class ReplayIncomplete(MootError):
    """Replay reached a step that was never journaled. `step` names it and `effect` says what
    it is ("an ask", "a re-ask", "a shell command", "a code effect", "a choice"): the message
    names both, for example "replaying it needs r1/verify/agent_a/reask (a re-ask the journal
    never recorded)"."""

    def __init__(self, step: str, effect: str, message: str | None = None) -> None:
        super().__init__(
            message or f"replaying it needs {step} ({effect} the journal never recorded)"
        )
        self.step = step
        self.effect = effect


class CacheError(MootError):
    """The cache store cannot be used (unreachable server, unreadable file)."""


class WorkspaceError(MootError):
    """A repository, worktree or diff cannot be used; the message names the problem and the fix."""


class StorageError(MootError):
    """A session's folder cannot be created or written (a read-only or full disk, a file where a
    folder should be); the message names the path and the fix. Raised mid-run, it ends the run
    with the journal intact up to its last complete line, so `moot resume` continues it."""


class Stopped(MootError):
    """The run stopped before the end; `moot resume` continues it."""


class LimitReached(Stopped):
    """A configured limit was reached before a new model call."""

    exit_code = 3


class Waiting(Stopped):
    """The run waits for the user (an approved plan to read and edit before it is executed, a
    blocked task whose cause the user fixes); the message says what to do, then `moot resume`
    (or the command it names) continues it."""

    exit_code = 3


class Interrupted(Stopped):
    """The user interrupted the run."""

    exit_code = 130


class FormatError(ValueError):
    """A model's reply does not fit the expected format; the message says what is wrong."""
