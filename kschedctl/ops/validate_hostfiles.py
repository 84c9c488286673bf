"""The files a KubeSchedulerConfiguration makes kube-scheduler read, looked for on this machine.

kube-scheduler reads an extender's ``caFile``/``certFile``/``keyFile`` when it builds the
extenders (``scheduler.New``, before the profiles) and refuses to start without them:
``couldn't build extenders: open PATH: no such file or directory``. The path is read on the
scheduler's host, which is this machine only when validate runs there; the finding says so.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Any

from kschedctl.base import userfile
from kschedctl.base.errors import KschedError, Problem
from kschedctl.model.config.validation_settings import ca_pem_problem, extender_tls_files

__all__ = ["extender_file_problems"]

_HOST = (
    " (looked for on this machine; kube-scheduler reads the path on its own host and refuses "
    "to start without the file: create it there, or give it inline as caData/certData/keyData)"
)


def extender_file_problems(doc: Any, prefix: str = "", source: str = "") -> list[Problem]:
    """kube-scheduler's refusal for each extender TLS file it would not read here."""
    out: list[Problem] = []
    for field, path in extender_tls_files(doc, prefix):
        refusal = _go_read_error(path)
        if refusal:
            out.append(Problem(field, f"couldn't build extenders: {refusal}{_HOST}", source))
        elif field.endswith(".caFile"):
            data = _read(path)
            problem = ca_pem_problem(data) if data is not None else ""
            if problem:
                out.append(Problem(field, f"{path} {problem}", source))
    return out


def _go_read_error(path: str) -> str:
    """Go's os.ReadFile error for ``path`` ("" if it reads), in Go's words."""
    try:
        info = os.stat(path)
    except OSError as err:
        return f"open {path}: {_go_errno(err.errno)}"
    except ValueError:  # a NUL byte: Go's open refuses it the same way
        return f"open {path}: {_go_errno(errno.EINVAL)}"
    if stat.S_ISDIR(info.st_mode):
        return f"read {path}: {_go_errno(errno.EISDIR)}"  # Go opens a directory, reading fails
    if not os.access(path, os.R_OK):
        return f"open {path}: {_go_errno(errno.EACCES)}"
    return ""


def _go_errno(code: int | None) -> str:
    # Go's syscall.Errno strings are libc's, lower-cased ("no such file or directory").
    text = os.strerror(code or 0)
    return text[:1].lower() + text[1:]


def _read(path: str) -> bytes | None:
    """The file's bytes; None (not judged) for a FIFO, a device, binary or oversized data."""
    try:
        return userfile.read_user_file(path).encode("utf-8")
    except KschedError:
        return None
