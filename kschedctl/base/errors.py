"""Error types and the documented exit codes (README "Exit codes").

Core code raises these; the CLI prints ``error:`` / ``hint:`` to stderr and exits with
``exit_code``. Anything else that escapes is a bug and surfaces as a traceback.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kschedctl.base import terminal

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INVALID = 3
EXIT_CLUSTER = 4
EXIT_NOT_FOUND = 5
EXIT_FINDINGS = 6
EXIT_WORSE = 7  # simulate --fail-if-worse: a candidate leaves more pods unschedulable
# `diff`: an error that exits 1 elsewhere (1 means "differences" there, as in kubectl diff)
EXIT_DIFF_ERROR = 8
EXIT_INTERRUPTED = 130


class KschedError(Exception):
    """A failure the user can act on."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class WorseError(KschedError):
    """``simulate --fail-if-worse``: a later candidate leaves more pods unschedulable than the
    first (the report is printed before)."""

    exit_code = EXIT_WORSE


class UsageError(KschedError):
    """Arguments that do not make sense together."""

    exit_code = EXIT_USAGE


# The program name in the commands that messages, hints and next steps suggest: written
# `kschedctl CMD` everywhere, spelled as the user called us when printed (``kubectl sched CMD``
# as a kubectl plugin, which says so once through :func:`called_as`).
PROGRAM = "kschedctl"
_program = PROGRAM
_suggested: re.Pattern[str] | None = None  # `kschedctl CMD`, CMD one of the commands


def called_as(name: str, commands: Iterable[str]) -> None:
    """Spell the suggested ``kschedctl CMD`` (CMD one of ``commands``) as ``name CMD``."""
    global _program, _suggested
    words = "|".join(sorted(map(re.escape, commands), key=len, reverse=True))
    _program = name
    _suggested = re.compile(rf"(?<![\w./-]){PROGRAM} (?=(?:{words})\b)") if words else None


def program() -> str:
    """The program name to suggest commands with."""
    return _program


def as_called(text: str) -> str:
    """``text`` with each command it suggests (``kschedctl deploy …``) spelled as the user
    called kschedctl; words such as "kschedctl's" or "by kschedctl from" stay."""
    if _suggested is None or _program == PROGRAM:
        return text
    return _suggested.sub(f"{_program} ", text)


QUOTE_LIMIT = 80  # characters of a user value a message shows
_LINE_LIMIT = 2000  # characters of one part (file, field path, message) of a printed problem


def printable(text: str, limit: int = _LINE_LIMIT) -> str:
    """``text`` on one line with nothing a terminal interprets, at most ~``limit`` characters.

    Line breaks (``\\n``, ``\\r``, U+2028/U+2029, ``\\x85``), ESC and every other control or
    format character are escaped (:func:`kschedctl.base.terminal.escape`), so user text can neither
    start a new ``FILE: path: message`` line nor send terminal escape sequences.
    """
    if len(text) > limit:
        text = text[:limit] + "…"
    return terminal.escape(text)


def quote(value: object, limit: int = QUOTE_LIMIT) -> str:
    """A user value as messages show it: a bounded, escaped, single-line repr.

    Strings are quoted like ``repr`` (control characters escaped) and cut after ``limit``
    characters with ``…``; containers show their first items only; no value, however large
    or deep, makes a long message.
    """
    if isinstance(value, str):
        shown = repr(value[:limit])
        return shown[:-1] + "…" + shown[-1] if len(value) > limit else shown
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() > 64:
            return f"<an integer of {value.bit_length()} bits>"
        return repr(value)
    import reprlib  # only on errors

    short = reprlib.Repr()
    short.maxlevel, short.maxstring, short.maxother = 3, limit, limit
    short.maxdict = short.maxlist = short.maxtuple = short.maxset = 6
    try:
        shown = short.repr(value)
    except (ValueError, RecursionError):  # e.g. a huge int inside a container
        shown = f"<{type(value).__name__}>"
    return printable(shown, 2 * limit)


ERROR = "error"
WARNING = "warning"
SEVERITIES = (ERROR, WARNING)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a spec or config: ``FILE: field.path: message``.

    ``severity`` is ``error`` (kube-scheduler would refuse it, or it is a multi-scheduler
    trap) or ``warning`` (it runs, but probably not as meant: printed as
    ``FILE: field.path: warning: message``). Only errors make a spec or config invalid.
    Printed, each part is :func:`printable`: one problem is always exactly one line.
    """

    path: str
    message: str
    source: str = ""
    severity: str = ERROR

    @property
    def is_error(self) -> bool:
        return self.severity != WARNING

    def moved(self, path: str | None = None, source: str | None = None) -> Problem:
        """The same finding (severity kept) at another field path or in another file."""
        return Problem(
            self.path if path is None else path,
            self.message,
            self.source if source is None else source,
            self.severity,
        )

    def __str__(self) -> str:
        tag = "warning" if self.severity == WARNING else ""
        return ": ".join(printable(p) for p in (self.source, self.path, tag, self.message) if p)


def errors_in(problems: Sequence[Problem]) -> list[Problem]:
    """The problems that refuse a spec or config (warnings left out)."""
    return [p for p in problems if p.is_error]


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
        where = ": ".join(printable(p) for p in (source, path) if p)
        super().__init__(f"{where}: {printable(message)}" if where else printable(message), hint)
        self.detail = message

    @classmethod
    def from_problems(cls, problems: Sequence[Problem], hint: str | None = None) -> SpecError:
        first = problems[0]
        if len(problems) == 1:
            return cls(first.path, first.message, hint, first.source, problems)
        err = cls("", "", hint, "", problems)
        listing = "\n".join(f"  {p}" for p in problems)  # one line per problem (printable)
        where = printable(first.source) if first.source else "the spec"
        err.message = err.detail = f"{where} has {len(problems)} problems:\n{listing}"
        err.args = (err.message,)
        err.path, err.source = first.path, first.source
        return err


class PolicyError(SpecError):
    """A fallback policy that cannot be used; every problem names its field (exit code 3)."""


class PluginError(SpecError):
    """A scheduling plugin that cannot be loaded (import error, no filter or score, a bad
    WEIGHT or NAME); ``source`` names the file or module (exit code 3)."""


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


class RolloutFailed(KschedError):
    """A deploy's new pods cannot run (CrashLoopBackOff, ImagePullBackOff, a missing ConfigMap,
    …): seen while waiting, so the wait stops there instead of at its timeout; the message is
    ``status``' diagnosis."""


class LabError(KschedError):
    """The lab could not be started or is not in the state the command needs."""


class NotFoundError(KschedError):
    """The named object, file or scheduler does not exist."""

    exit_code = EXIT_NOT_FOUND


MISSING_FILE_HINT = "check the path (a relative one starts in the current directory)"


def missing_file(message: str, hint: str = MISSING_FILE_HINT) -> NotFoundError:
    """A file the user named does not exist: exit 5 in every command, with what to do."""
    return NotFoundError(message, hint=hint)


PATH_SHOWN = 200  # characters of a path shown in a message


def shown_path(path: object) -> str:
    """A path for a message: bounded, on one line, control characters escaped."""
    return printable(str(path), PATH_SHOWN)


def os_error(err: OSError, doing: str, hints: Mapping[int, str]) -> KschedError:
    """A file-system error with the documented exit code: NotFoundError (5) when a file or
    directory is missing, else KschedError (1) with the OS's reason and the errno's hint."""
    where = f" ({shown_path(err.filename)})" if err.filename else ""
    message = f"{doing} failed: {err.strerror or err}{where}"
    if err.errno in (errno.ENOENT, errno.ENOTDIR):
        return NotFoundError(message, hint=hints.get(err.errno) or "create the directory first")
    return KschedError(message, hint=hints.get(err.errno or 0))
