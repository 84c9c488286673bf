"""Writing a scheduler workspace (``create``) so that a failure leaves nothing behind.

Everything is rendered in memory before this runs; here the files go to a temporary
directory next to the target, which is then renamed into place (a rename within one
directory is atomic). With ``force`` the old directory is swapped out and removed only once
the new one is in place.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from kschedctl.errors import KschedError, NotFoundError


def write_workspace(target: Path, files: dict[str, str], *, force: bool = False) -> list[Path]:
    """Write ``files`` (relative name → content) as directory ``target``; return the paths."""
    parent = target.parent
    if not parent.is_dir():
        raise NotFoundError(
            f"{parent}: no such directory", hint=f"create it first: mkdir -p {parent}"
        )
    if target.exists() and not target.is_dir():
        raise KschedError(f"{target} exists and is not a directory")
    if target.exists() and not force:
        raise KschedError(
            f"{target} already exists",
            hint="pass --force to replace it, or render from it: "
            f"kschedctl render {target} --as deployment",
        )
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=parent))
    backup: Path | None = None
    try:
        for name, content in files.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        staging.chmod(0o755)  # mkdtemp makes it 0700
        if target.exists():
            backup = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=parent))
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
