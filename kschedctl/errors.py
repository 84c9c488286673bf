"""Error types and the documented exit codes (README "Exit codes").

Core code raises these; the CLI prints ``error:`` / ``hint:`` to stderr and exits with
``exit_code``. Anything else that escapes is a bug and surfaces as a traceback.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INVALID = 3
EXIT_CLUSTER = 4
EXIT_NOT_FOUND = 5
EXIT_FINDINGS = 6
EXIT_INTERRUPTED = 130


class KschedError(Exception):
    """A failure the user can act on."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(KschedError):
    """Arguments that do not make sense together."""

    exit_code = EXIT_USAGE


class SpecError(KschedError):
    """An invalid spec or KubeSchedulerConfiguration; ``path`` names the field."""

    exit_code = EXIT_INVALID

    def __init__(self, path: str, message: str, hint: str | None = None, source: str = "") -> None:
        self.path = path
        self.source = source
        where = ": ".join(p for p in (source, path) if p)
        super().__init__(f"{where}: {message}" if where else message, hint)
        self.detail = message


class ClusterError(KschedError):
    """The cluster cannot be reached, or refuses what we asked (forbidden)."""

    exit_code = EXIT_CLUSTER


class NotFoundError(KschedError):
    """The named object, file or scheduler does not exist."""

    exit_code = EXIT_NOT_FOUND
