"""Directories and files only the lab's own user can read: keys, tokens, Secrets, kubeconfigs.

Modes are set explicitly (never left to the umask), and a file is written to a temporary file
created ``0600`` and renamed into place, so no reader ever sees it half-written or, even for a
moment, with a wider mode than the one asked for.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path, *, tighten: bool = True) -> Path:
    """``path`` as a directory of mode 0700, each missing parent created 0700 as well.

    An existing ``path`` is set to 0700 too (``tighten``), unless it is a symbolic link: the
    mode of whatever it points to is not the lab's to change.
    """
    missing: list[Path] = []
    current = path
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another thread made it meanwhile
            directory.mkdir(mode=DIR_MODE)
        os.chmod(directory, DIR_MODE)  # the umask may have cut 0700
    if not missing and tighten and not path.is_symlink():
        os.chmod(path, DIR_MODE)
    return path


def write_private(path: Path, data: bytes | str, mode: int = FILE_MODE) -> Path:
    """Write ``data`` to ``path`` atomically with exactly ``mode`` (0600 by default)."""
    raw = data.encode() if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()  # left by a crashed writer that had this pid
    fd = os.open(tmp, flags, FILE_MODE)
    try:
        try:
            os.fchmod(fd, FILE_MODE)  # created under a umask: make sure, then write
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return path


def owner_mode(mode: int) -> int:
    """A Kubernetes volume file mode as the lab applies it.

    The lab runs every pod's processes as its own user, the files' owner: the owner gets every
    permission any class was given (so a file stays readable), group and others get none.
    """
    bits = ((mode >> 6) | (mode >> 3) | mode) & 0o7
    return bits << 6
