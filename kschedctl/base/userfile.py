"""Reading the files users hand us: regular files only, bounded, strict UTF-8.

Every spec, KubeSchedulerConfiguration, manifest, fallback policy, nodes file and ``--add-to``
config is read through :func:`read_user_file`, so a FIFO cannot block, ``/dev/zero`` cannot
fill memory and a huge file is refused at once instead of taking minutes to parse.
Writing one (a snapshot, a picture) goes through :func:`writing`: one error and one hint.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator

from kschedctl.base.errors import (
    SpecError,
    missing_file,
    os_error,
    printable,
    shown_path,
)

# A scheduler spec or config is kilobytes; 1 MiB is also what a ConfigMap (where a config
# lives in a cluster) can hold, and the most hostile 1 MiB of YAML loads in about a second.
MAX_FILE_BYTES = 1024 * 1024

_NOT_FOUND = (errno.ENOENT, errno.ENOTDIR)
_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def read_user_file(
    path: str | os.PathLike[str],
    max_bytes: int = MAX_FILE_BYTES,
    *,
    too_big_hint: str = "a scheduler spec or config is a few kilobytes: is this the right file?",
) -> str:
    """The text of the regular file ``path`` (a leading UTF-8 BOM dropped).

    Missing: NotFoundError (exit 5). Not a regular file, larger than ``max_bytes``, not UTF-8,
    or unreadable: SpecError (exit 3) naming the file. Never blocks: the file type is checked
    before reading, and it is opened non-blocking.
    """
    source = os.fspath(path)
    try:
        _require_regular(source, os.stat(source))
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as err:
        raise _open_error(source, err) from err
    except ValueError as err:  # a NUL byte in the path
        raise SpecError("", f"cannot read: {err}", source=source) from err
    try:
        info = os.fstat(fd)
        _require_regular(source, info)  # it may have been swapped since the stat
        if info.st_size > max_bytes:
            raise _too_big(source, info.st_size, max_bytes, too_big_hint)
        data = _read_at_most(fd, max_bytes + 1)
    except OSError as err:
        raise SpecError("", f"cannot read: {err.strerror or err}", source=source) from err
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew while we read
        raise _too_big(source, len(data), max_bytes, too_big_hint)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise SpecError(
            "",
            f"not UTF-8 text (invalid byte at offset {err.start})",
            hint="specs, configs and manifests are YAML files in UTF-8",
            source=source,
        ) from err


def path_kind(path: str | os.PathLike[str]) -> str | None:
    """ "file", "directory", another kind's name, or None if nothing is there (never raises)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return None
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def _require_regular(source: str, info: os.stat_result) -> None:
    if stat.S_ISREG(info.st_mode):
        return
    kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
    raise SpecError("", f"is {kind}, not a regular file", source=source)


def _too_big(source: str, size: int, cap: int, hint: str) -> SpecError:
    return SpecError(
        "",
        f"too large: {size:,} bytes, the limit is {cap:,} ({cap // (1024 * 1024)} MiB)",
        hint=hint,
        source=source,
    )


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _open_error(source: str, err: OSError) -> Exception:
    if err.errno in _NOT_FOUND:
        dangling = os.path.islink(source)
        what = "a symbolic link to a missing file" if dangling else "no such file"
        return missing_file(f"{printable(source)}: {what}")
    return SpecError("", f"cannot read: {err.strerror or err}", source=source)


# What to do when a file the user named cannot be written, by errno.
WRITE_HINTS = {
    errno.EACCES: "choose a directory you can write to",
    errno.EISDIR: "give a file name, not a directory",
}


@contextlib.contextmanager
def writing(what: str, target: str | os.PathLike[str]) -> Iterator[None]:
    """Around writing ``what`` to the file ``target`` the user named: an OSError becomes the
    documented error (:func:`os_error`: exit 5 for a missing directory, else 1 with a hint)."""
    try:
        yield
    except OSError as err:
        raise os_error(err, f"writing {what} to {shown_path(target)}", WRITE_HINTS) from err


def exists(path: str | os.PathLike[str]) -> bool:
    """Whether anything is at ``path`` (a path too long or with a NUL byte: no)."""
    return path_kind(path) is not None


__all__ = ["MAX_FILE_BYTES", "WRITE_HINTS", "exists", "path_kind", "read_user_file", "writing"]
