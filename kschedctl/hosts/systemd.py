"""The host forms (systemd service, static pod): which files go where, and systemd itself.

Paths are the spec's host paths placed under ``root`` (``/`` on a real host; a directory of
the lab, or a staging directory, otherwise), resolved (``..`` and the symlinks of the parts
that exist) and refused if they end outside it: whatever the spec loader let through, nothing
is written outside the root (:func:`under`, :func:`confined`). Writing is all-or-nothing (every
file to a temp file first, then renamed) and remembers nothing: ``remove`` recomputes the same
paths from the same inputs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

from kschedctl.base.errors import KschedError, SpecError, UsageError, os_error, shown_path
from kschedctl.render.builtin import host_plugin_files_to_install, host_plugin_trailer
from kschedctl.render.escape import exec_start_argv
from kschedctl.render.forms import render
from kschedctl.spec import Spec, ensure_valid

UNIT_DIR = "/etc/systemd/system"
MANIFESTS_DIR = "/etc/kubernetes/manifests"

# The spec fields the host paths come from, as validation names them.
CONFIG_DIR_FIELD = "spec.service.configDir"
KUBECONFIG_FIELD = "spec.service.kubeconfig"
NAME_FIELD = "metadata.name"


def resolve(path: Path, field: str) -> Path:
    """``path`` made absolute, ``..`` and the symlinks of its existing parts resolved."""
    try:
        return Path(os.path.realpath(os.path.abspath(path)))
    except (OSError, ValueError) as err:  # ELOOP, ENAMETOOLONG, a NUL byte
        raise SpecError(field, f"cannot resolve host path {shown_path(path)!r}: {err}") from err


def confined(root: Path, path: Path, field: str) -> Path:
    """``path`` resolved, if it is ``root`` (resolved) or inside it; else SpecError naming
    ``field`` and where it would really go. Nothing is created."""
    base = resolve(root, field)
    real = resolve(path, field)
    if not real.is_relative_to(base):
        raise SpecError(
            field,
            f"host path {shown_path(path)!r} resolves to {shown_path(real)!r}, outside the "
            f"host root {shown_path(base)!r}: refusing to write there",
            hint="host paths are absolute paths without '..' and must not lead out of --root "
            "through a symlink",
        )
    if len(real.name.encode()) > 255 or len(str(real).encode()) >= 4096:
        raise SpecError(field, f"host path {shown_path(real)!r} is too long")
    return real


def under(root: Path, path: str, field: str = CONFIG_DIR_FIELD) -> Path:
    """``path`` (a spec's host path) on the host rooted at ``root``, resolved; SpecError naming
    ``field`` if it ends outside ``root`` (a path already inside ``root`` is taken as is)."""
    placed = Path(path)
    if root != Path("/"):
        for prefix in (root, resolve(root, "--root")):
            if placed.is_relative_to(prefix):
                return confined(root, placed, field)
    return confined(root, root / path.lstrip("/"), field)


def manifests_directory(path: Path) -> Path:
    """``--manifests-dir`` resolved: a directory, or a path where one can be made."""
    real = resolve(path, "--manifests-dir")
    if real.exists() and not real.is_dir():
        raise UsageError(
            f"--manifests-dir {shown_path(path)!r} is not a directory ({shown_path(real)!r})",
            hint="give kubelet's static-pod manifest directory, e.g. /etc/kubernetes/manifests",
        )
    return real


def unit_name_for(name: str) -> str:
    return f"{name}.service"


def unit_name(spec: Spec) -> str:
    return unit_name_for(spec.name)


def unit_path(spec: Spec, root: Path) -> Path:
    return under(root, f"{UNIT_DIR}/{unit_name(spec)}", NAME_FIELD)


def plugin_files_under(spec: Spec, root: Path) -> dict[Path, str]:
    """``spec.builtin.plugins`` as the host forms install them, beside the config."""
    return {under(root, path): text for path, text in host_plugin_files_to_install(spec).items()}


def service_files(spec: Spec, root: Path) -> dict[Path, str]:
    """The systemd form's files (``spec`` checked after its config path is, unless it is a
    CheckedSpec already)."""
    config = under(root, spec.host_config_path)
    checked = ensure_valid(spec)
    return {
        config: render(checked, "host-config"),
        **plugin_files_under(checked, root),
        unit_path(checked, root): render(checked, "service"),
    }


def static_pod_files(spec: Spec, root: Path, manifests_dir: Path) -> dict[Path, str]:
    """The static-pod form's files (``spec`` checked as in :func:`service_files`)."""
    manifests = manifests_directory(manifests_dir)
    if root != Path("/") and manifests_dir.is_relative_to(root):  # the default ROOT/etc/…
        confined(root, manifests, "--manifests-dir")
    config = under(root, spec.host_config_path)
    checked = ensure_valid(spec)
    return {
        config: render(checked, "host-config"),
        **plugin_files_under(checked, root),
        confined(manifests, manifests / f"{spec.name}.yaml", "--manifests-dir"): render(
            checked, "static-pod"
        ),
    }


def changed(files: dict[Path, str]) -> bool:
    try:
        return any(not p.is_file() or p.read_text() != text for p, text in files.items())
    except (OSError, UnicodeDecodeError):
        return True  # unreadable: write it (writing says why if it cannot)


def previous(path: Path) -> Path:
    """Where a host file deploy replaced is kept: a hidden name beside it, which the kubelet
    ignores in its manifests directory (it skips files whose names start with a dot)."""
    return path.with_name(f".{path.name}.previous")


def previous_files(files: dict[Path, str]) -> dict[Path, str]:
    """The current text of each of ``files`` that exists and is about to change, at its
    :func:`previous` path (what an operator restores by hand; rollback re-renders instead)."""
    kept = {}
    for path, text in files.items():
        if path.suffix == ".py":
            continue  # plugin files: the spec names them, the config that loads them is kept
        try:
            old = path.read_text()
        except (OSError, UnicodeDecodeError):
            continue  # absent (a first deploy) or unreadable: nothing to keep
        if old != text:
            kept[previous(path)] = old
    return kept


def write_files(files: dict[Path, str], roots: Iterable[Path], mode: int = 0o644) -> None:
    """Write ``files``, each of which must resolve inside one of ``roots`` (checked again
    here, after its directories are made): every file goes to a temp file beside it first and
    is renamed into place only once all are written, so a failure changes nothing."""
    bases = [resolve(root, "host root") for root in roots]
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in files.items():
            _check_inside(path, bases)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except FileExistsError as err:
                raise KschedError(
                    f"cannot make {shown_path(path.parent)}: a part of it is not a directory"
                ) from err
            _check_inside(path, bases)  # a directory made above may be a symlink by now
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".kschedctl-tmp",
                                       dir=path.parent)  # fmt: skip
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(tmp, mode)
        for tmp, path in staged:
            os.replace(tmp, path)
        staged = []
    except OSError as err:
        raise host_os_error(err, "writing the host files") from err
    finally:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _check_inside(path: Path, bases: list[Path]) -> None:
    real = resolve(path, "host path")
    if not any(real.is_relative_to(base) for base in bases):
        raise SpecError(
            "",
            f"refusing to write {shown_path(path)}: it resolves to {shown_path(real)}, "
            f"outside {', '.join(shown_path(b) for b in bases)}",
        )


# What to do about a file-system error on the host, by errno.
_HOST_HINTS = {
    errno.EACCES: "run as a user who may write there (root on a real host), or use --root",
    errno.EPERM: "run as a user who may write there (root on a real host), or use --root",
    errno.EROFS: "the file system is read-only: use --root to stage the files elsewhere",
    errno.ENOSPC: "the disk is full: free some space and deploy again",
}


def host_os_error(err: OSError, doing: str) -> KschedError:
    """A file-system error on the host as a kschedctl error (exit 5 for a missing file)."""
    return os_error(err, doing, _HOST_HINTS)


# What `remove` may delete is recognised by what the file says of itself: the paths come from
# the annotations of cluster objects, and whoever can annotate one must not steer a root
# `kschedctl remove` into deleting other files.
_HEAD_BYTES = 4096


def is_scheduler_file(path: Path, name: str, *, kept: bool = False) -> bool:
    """``path`` is a regular file (not a symlink) kschedctl rendered for scheduler ``name``:
    named ``NAME.yaml`` or ``NAME.service``, its first line naming the scheduler, and
    ``kschedctl`` in its head (the rendered headers and labels say both); or a plugin file it
    installed (:func:`is_plugin_file`). ``kept``: a :func:`previous` copy of such a file."""
    if path.parent.name == plugin_dir_name(name):
        return not kept and is_plugin_file(path, name)
    stands_for = path.name.removeprefix(".").removesuffix(".previous") if kept else path.name
    if stands_for not in (f"{name}.yaml", f"{name}.service"):
        return False
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return False
        with path.open("rb") as handle:
            head = handle.read(_HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return False
    first = head.split("\n", 1)[0]
    names_it = re.match(
        rf"# ({re.escape(name)}\.service:|.* scheduler {re.escape(name)}[ ,(])", first
    )
    return names_it is not None and "kschedctl" in head


def plugin_dir_name(name: str) -> str:
    """The name of the directory of scheduler ``name``'s plugin files (Spec.host_plugin_dir)."""
    return f"{name}-plugins"


def is_plugin_file(path: Path, name: str) -> bool:
    """``path`` is a regular ``.py`` file in scheduler ``name``'s plugin directory whose last
    line is the one kschedctl wrote when it installed it there."""
    if path.suffix != ".py" or path.parent.name != plugin_dir_name(name):
        return False
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return False
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - _HEAD_BYTES))
            tail = handle.read().decode("utf-8", "replace")
    except OSError:
        return False
    return tail.endswith(f"\n{host_plugin_trailer(name, path.name)}\n")


def remove_files(paths: list[Path], name: str) -> list[Path]:
    """Delete those of ``paths`` that are scheduler ``name``'s files; the ones deleted (and
    its plugin directory, once empty)."""
    removed = []
    for path in paths:
        for candidate, kept in ((path, False), (previous(path), True)):
            if is_scheduler_file(candidate, name, kept=kept):
                candidate.unlink()
                removed.append(candidate)
    for directory in {p.parent for p in removed if p.parent.name == plugin_dir_name(name)}:
        with contextlib.suppress(OSError):  # not empty: files that are not kschedctl's stay
            directory.rmdir()
    return removed


def systemd_running(root: Path) -> bool:
    """systemctl works here: a real root and a booted systemd (not a container's stub)."""
    return (
        root == Path("/")
        and shutil.which("systemctl") is not None
        and Path("/run/systemd/system").is_dir()
    )


def systemctl(*args: str) -> None:
    proc = subprocess.run(["systemctl", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise KschedError(
            f"systemctl {' '.join(args)} failed: {proc.stderr.strip() or proc.stdout.strip()}",
            hint="run it yourself to see why (needs root), then deploy again",
        )


def service_commands(spec: Spec) -> list[str]:
    return ["systemctl daemon-reload", f"systemctl enable --now {unit_name(spec)}"]


def exec_start(unit_text: str) -> list[str]:
    """The unit's ExecStart as argv, systemd's quoting undone (kschedctl.render.escape)."""
    return exec_start_argv(unit_text)
