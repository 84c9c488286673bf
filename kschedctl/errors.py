"""Error types and the documented exit codes (README "Exit codes").

Core code raises these; the CLI prints ``error:`` / ``hint:`` to stderr and exits with
``exit_code``. Anything else that escapes is a bug and surfaces as a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a spec or config: ``FILE: field.path: message``."""

    path: str
    message: str
    source: str = ""

    def __str__(self) -> str:
        return ": ".join(p for p in (self.source, self.path, self.message) if p)


class SpecError(KschedError):
    """An invalid spec or KubeSchedulerConfiguration; ``path`` names the field.

    ``problems`` holds every problem found (validation collects them all, as kube-scheduler
    does); the message shows them one per line.
    """

    exit_code = EXIT_INVALID

    def __init__(
        self,
        path: str,
        message: str,
        hint: str | None = None,
        source: str = "",
        problems: Sequence[Problem] = (),
    ) -> None:
        self.path = path
        self.source = source
        self.problems: tuple[Problem, ...] = tuple(problems) or (Problem(path, message, source),)
        where = ": ".join(p for p in (source, path) if p)
        super().__init__(f"{where}: {message}" if where else message, hint)
        self.detail = message

    @classmethod
    def from_problems(cls, problems: Sequence[Problem], hint: str | None = None) -> SpecError:
        first = problems[0]
        if len(problems) == 1:
            return cls(first.path, first.message, hint, first.source, problems)
        listing = "\n".join(f"  {p}" for p in problems)
        where = first.source or "the spec"
        err = cls("", f"{where} has {len(problems)} problems:\n{listing}", hint, "", problems)
        err.path, err.source = first.path, first.source
        return err


class PolicyError(SpecError):
    """A fallback policy that cannot be used; every problem names its field (exit code 3)."""


class ClusterError(KschedError):
    """The cluster cannot be reached, or refuses what we asked (see :class:`ForbiddenError`)."""

    exit_code = EXIT_CLUSTER


class ForbiddenError(ClusterError):
    """The API server refused a request for lack of permission (HTTP 403)."""


class ApiError(KschedError):
    """A non-2xx answer the caller may want to inspect (status, reason)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class ConflictError(ApiError):
    """HTTP 409: the object exists already, or changed since it was read."""

    exit_code = EXIT_ERROR


class ApplyError(KschedError):
    """Applying stopped midway; ``outcomes`` (``k8s.apply.Outcome``) say what exists and what
    failed, and the exit code is the cause's (forbidden stays 4)."""

    def __init__(self, message: str, hint: str, outcomes: list[Any], exit_code: int) -> None:
        super().__init__(message, hint)
        self.outcomes = outcomes
        self.exit_code = exit_code


class WaitTimeout(KschedError):
    """A condition did not come true in time; the message names it."""


class LabError(KschedError):
    """The lab could not be started or is not in the state the command needs."""


class NotFoundError(KschedError):
    """The named object, file or scheduler does not exist."""

    exit_code = EXIT_NOT_FOUND
