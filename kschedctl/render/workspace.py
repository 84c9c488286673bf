"""Writing a scheduler workspace (``create``) so that a failure leaves nothing behind.

Everything is rendered in memory before this runs; here the files go to a temporary
directory next to the target, which is then renamed into place (a rename within one
directory is atomic). With ``force`` the old directory is swapped out and removed only once
the new one is in place, and only if it is a kschedctl workspace (its ``scheduler.yaml`` a
kschedctl spec) or empty: ``--force`` never deletes a directory kschedctl did not write.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path

from kschedctl.base.errors import KschedError, NotFoundError, UsageError, os_error, shown_path
from kschedctl.spec import API_VERSION as SPEC_API_VERSION
from kschedctl.spec import KIND as SPEC_KIND
from kschedctl.spec import SPEC_FILE

# A scheduler.yaml is a few kilobytes; this is plenty, and bounds what --force reads.
SPEC_READ_LIMIT = 64 * 1024


def write_workspace(target: Path, files: dict[str, str], *, force: bool = False) -> list[Path]:
    """Write ``files`` (relative name → content) as directory ``target``; return the paths."""
    try:
        return _write(target, files, force)
    except OSError as err:
        raise path_error(err, f"writing the workspace {shown_path(target)}") from err


def _write(target: Path, files: dict[str, str], force: bool) -> list[Path]:
    parent = target.parent
    if not parent.is_dir():
        if parent.exists() or parent.is_symlink():
            raise UsageError(
                f"{shown_path(parent)} is not a directory", hint="--dir takes a directory"
            )
        raise NotFoundError(
            f"{shown_path(parent)}: no such directory",
            hint=f"create it first: mkdir -p {shown_path(parent)}",
        )
    found = _lstat(target)
    if found is not None:
        refusal = replaceable(target, found)
        if refusal:
            raise KschedError(
                f"{shown_path(target)} {refusal}",
                hint="pick another name or --dir; --force replaces only a kschedctl workspace "
                "(or an empty directory)",
            )
        if not force:
            raise KschedError(
                f"{shown_path(target)} already exists",
                hint="pass --force to replace it, or render from it: "
                f"kschedctl render {shown_path(target)} --as deployment",
            )
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name[:32]}.new-", dir=parent))
    backup: Path | None = None
    try:
        for name, content in files.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        staging.chmod(0o755)  # mkdtemp makes it 0700
        if found is not None:
            backup = Path(tempfile.mkdtemp(prefix=f".{target.name[:32]}.old-", dir=parent))
            backup.rmdir()
            target.rename(backup)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if backup is not None and backup.exists() and not target.exists():
            backup.rename(target)
        raise
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True)
    return [target / name for name in files]


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except (FileNotFoundError, NotADirectoryError):  # absent, or a file holds a parent's name
        return None


def replaceable(target: Path, found: os.stat_result) -> str:
    """Why ``create --force`` must not replace ``target`` ("" if it may): it must be a real
    directory (not a symlink) that is empty or a kschedctl workspace."""
    if stat.S_ISLNK(found.st_mode):
        return f"is a symlink (to {shown_path(Path(os.readlink(target)))}), not a workspace"
    if not stat.S_ISDIR(found.st_mode):
        return "exists and is not a directory"
    entries = sorted(os.listdir(target))
    if not entries:
        return ""
    if ".git" in entries:
        return "holds a .git directory: it is a repository, not a kschedctl workspace"
    if SPEC_FILE not in entries:
        listed = ", ".join(e[:40] for e in entries[:5]) + (", …" if len(entries) > 5 else "")
        return f"is not a kschedctl workspace: no {SPEC_FILE} (it holds {listed})"
    problem = spec_file_problem(target / SPEC_FILE)
    return f"is not a kschedctl workspace: its {SPEC_FILE} {problem}" if problem else ""


def spec_file_problem(path: Path) -> str:
    """Why ``path`` is not a kschedctl spec ("" if it is one): a regular file of at most
    :data:`SPEC_READ_LIMIT` bytes whose ``apiVersion`` and ``kind`` are kschedctl's. Read
    without following a symlink or blocking on a FIFO, and parsed without aliases."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "is not a regular file"
        data = b""
        while len(data) <= SPEC_READ_LIMIT and (chunk := os.read(fd, SPEC_READ_LIMIT + 1)):
            data += chunk
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    finally:
        os.close(fd)
    if len(data) > SPEC_READ_LIMIT:
        return f"is larger than {SPEC_READ_LIMIT // 1024} KiB"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "is not UTF-8 text"
    head = _top_level_scalars(text)
    if head.get("apiVersion") != SPEC_API_VERSION or head.get("kind") != SPEC_KIND:
        return f"is not a kschedctl spec (apiVersion {SPEC_API_VERSION}, kind {SPEC_KIND})"
    return ""


def _top_level_scalars(text: str) -> dict[str, str]:
    """The plain ``key: value`` lines at column 0 of a YAML document: enough to recognise a
    spec kschedctl wrote, with no YAML parser (so no alias bomb, no deep nesting)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line[0] in " \t#-" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        value = value.split(" #", 1)[0].strip().strip("\"'")
        found.setdefault(key.strip().strip("\"'"), value)
    return found


# What to do about a file-system error while writing a workspace, by errno.
_HINTS = {
    errno.EACCES: "you may not write there: pick another --dir",
    errno.EPERM: "you may not write there: pick another --dir",
    errno.EROFS: "the file system is read-only: pick another --dir",
    errno.ENOSPC: "the disk is full: free some space and try again",
    errno.ENAMETOOLONG: "use a shorter path",
    errno.ELOOP: "a symlink in the path points to itself",
}


def path_error(err: OSError, doing: str) -> KschedError:
    """A file-system error as a kschedctl error: exit 5 when a file or directory is missing,
    1 otherwise (permission, read-only, full disk, name too long, symlink loop)."""
    return os_error(err, doing, _HINTS)


def write_export(target: Path, files: dict[str, str]) -> list[Path]:
    """Write a directory form (``render --as helm-chart|kustomize DIR``) as ``target``: a new
    or empty directory only, all of it or nothing (as :func:`write_workspace`). Missing parent
    directories are made (``./charts/NAME`` in a fresh repository), and removed again if the
    export fails."""
    found = _lstat(target)
    if found is not None:
        empty_dir = stat.S_ISDIR(found.st_mode) and not os.listdir(target)
        if stat.S_ISLNK(found.st_mode) or not empty_dir:
            raise KschedError(
                f"{shown_path(target)} already exists and is not an empty directory",
                hint="pick a new DIR, or remove the old export first: render writes a whole "
                "directory and never mixes its files with others",
            )
    made = _make_parents(target)
    try:
        return write_workspace(target, files, force=found is not None)
    except BaseException:
        for directory in reversed(made):  # the deepest first; only those still empty
            try:
                directory.rmdir()
            except OSError:
                break
        raise


def _make_parents(target: Path) -> list[Path]:
    """Make the missing directories above ``target``, top down; return them."""
    missing: list[Path] = []
    parent = target.parent
    while _lstat(parent) is None and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(
            f"{shown_path(parent)} is not a directory",
            hint=f"DIR must be a path of directories: {shown_path(target)} cannot be made there",
        )
    made: list[Path] = []
    try:
        for directory in reversed(missing):
            directory.mkdir()
            made.append(directory)
    except OSError as err:
        for directory in reversed(made):
            directory.rmdir()
        raise path_error(err, f"making the directory {shown_path(directory)}") from err
    return made
