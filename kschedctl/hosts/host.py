"""The host seam: what deploy, remove, logs and why need from the machine a host form runs on.

:class:`Host` is the interface, with the behaviour both hosts share (files, their removal, the
journal); :class:`SystemdHost` is a machine with systemd. The lab's implementation is
:class:`kschedctl.hosts.lab.LabHost`. ``kschedctl.hosts.for_target`` picks one, once.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from kschedctl.base.errors import KschedError, SpecError
from kschedctl.base.userfile import read_user_file
from kschedctl.hosts import journal, systemd
from kschedctl.observe.loglines import LogLine
from kschedctl.spec import CheckedSpec, Spec, ensure_valid

Say = Callable[[str], None]

# What `why` reads of a host scheduler's output: the last ten minutes, at most 300 lines.
RECENT_SECONDS = 600
RECENT_LINES = 300


class Host(ABC):
    """Where a scheduler's host forms live: its files, its service, the service's output."""

    # Its static pods' IPs are loopback ones (the lab's nodes), so a loopback --bind-address
    # still serves their metrics Service; a real node's IP is not.
    loopback_pod_ips = False

    def __init__(self, root: Path, manifests_dir: Path) -> None:
        self.root = root  # the spec's host paths are placed under it
        self.manifests_dir = manifests_dir  # kubelet's static-pod manifest directory

    def __repr__(self) -> str:
        return f"{type(self).__name__}(root={self.root!s}, manifests_dir={self.manifests_dir!s})"

    # -- deploy ---------------------------------------------------------------------------------
    def note(self) -> str | None:
        """What to tell the user before deploying here (None: nothing worth saying)."""
        return None

    def prepare(self, spec: Spec, form: str, *, dry_run: bool = False) -> CheckedSpec:
        """The spec as this host runs it (its host paths and port), checked; ``dry_run``:
        write nothing on the host while finding out."""
        return ensure_valid(spec)

    def files(self, spec: Spec, form: str) -> dict[Path, str]:
        """The host files of ``form`` (service or static-pod) and their text."""
        if form == "service":
            return systemd.service_files(spec, self.root)
        return systemd.static_pod_files(spec, self.root, self.manifests_dir)

    def annotations(self) -> dict[str, str]:
        """Annotations for the cluster objects, so that ``for_record`` finds this host again."""
        return {}

    def write_files(self, files: dict[Path, str]) -> bool:
        """Write ``files``, each one it replaces kept beside it (:func:`systemd.previous`);
        True if any of them changed."""
        changed = systemd.changed(files)
        systemd.write_files(
            {**systemd.previous_files(files), **files}, (self.root, self.manifests_dir)
        )
        return changed

    def prune_plugin_files(self, spec: Spec, files: dict[Path, str]) -> list[Path]:
        """Delete the plugin files kschedctl installed for ``spec``'s scheduler that ``files``
        (this deploy's) no longer hold: a plugin dropped from the spec leaves nothing behind."""
        directory = systemd.under(self.root, spec.host_plugin_dir)
        if not directory.is_dir():
            return []
        installed = (p for p in directory.iterdir() if systemd.is_plugin_file(p, spec.name))
        stale = sorted(p for p in installed if p not in files)
        for path in stale:
            path.unlink()
        return stale

    @abstractmethod
    def start_service(
        self, spec: Spec, files: dict[Path, str], changed: bool, info: Say, warn: Say
    ) -> bool:
        """Run the service form's unit (restarted if its files ``changed``); True if nothing
        changed and it already ran."""

    def liveness(self, spec: Spec, form: str) -> Callable[[], None] | None:
        """A check that raises once the scheduler cannot come up any more (None: no check)."""
        return None

    # -- remove ---------------------------------------------------------------------------------
    @abstractmethod
    def stop_service(self, name: str, files: list[Path], info: Say) -> None:
        """Stop scheduler ``name``'s unit, whose recorded host files are ``files``."""

    def remove_files(self, paths: list[Path], name: str) -> list[Path]:
        """Delete those of ``paths`` that are scheduler ``name``'s files; the ones deleted."""
        return systemd.remove_files(paths, name)

    # -- why ------------------------------------------------------------------------------------
    def installed_plugin_files(
        self, name: str, recorded: Iterable[str]
    ) -> tuple[dict[str, tuple[Path, str]], list[str]]:
        """The plugin files kschedctl installed here for scheduler ``name``, among the
        ``recorded`` host files of its deploy: file name -> (path, text, read as the
        scheduler reads it), and what could not be read."""
        found: dict[str, tuple[Path, str]] = {}
        problems: list[str] = []
        for text_path in sorted(recorded):
            path = Path(text_path)
            if path.parent.name != systemd.plugin_dir_name(name) or path.suffix != ".py":
                continue
            if not path.is_relative_to(self.root) or not systemd.is_plugin_file(path, name):
                continue  # absent here, or not the file kschedctl installed
            try:
                found[path.name] = (path, read_user_file(path))
            except KschedError as err:
                problems.append(f"{path}: {err.detail if isinstance(err, SpecError) else err}")
        return found, problems

    # -- logs -----------------------------------------------------------------------------------
    def log_file(self, name: str, form: str) -> Path | None:
        """The file this host writes the scheduler's output to, if there is one."""
        return None

    def log_lines(
        self, name: str, form: str, *, follow: bool, since_seconds: int | None, tail: int | None
    ) -> Iterator[LogLine] | None:
        """The scheduler's output (``form`` service or process): the host's log file, else the
        service's journal; None when neither is readable from here."""
        path = self.log_file(name, form)
        if path is not None:
            return _file_lines(path, name, follow, since_seconds, tail)
        if form == "service" and journal.journal_available():
            argv = journal.journal_argv(name, follow=follow, since_seconds=since_seconds, tail=tail)
            return journal.journal_lines(argv, name)
        return None

    def recent_log_lines(self, name: str, form: str) -> list[str]:
        """The last ten minutes of the scheduler's output (for `why`); a journalctl that takes
        longer than ten seconds is cut short."""
        lines = self.log_lines(
            name, form, follow=False, since_seconds=RECENT_SECONDS, tail=RECENT_LINES
        )
        if lines is None:
            return []
        started = time.monotonic()
        texts = []
        for line in lines:
            texts.append(line.text)
            if time.monotonic() - started > 10:
                break
        return texts


def _file_lines(
    path: Path, name: str, follow: bool, since_seconds: int | None, tail: int | None
) -> Iterator[LogLine]:
    lines, offset = journal.read_file(path, name, since_seconds=since_seconds, tail=tail)
    yield from lines
    if follow:
        stop = threading.Event()
        try:
            yield from journal.follow_file(path, name, stop, offset)
        finally:
            stop.set()


class SystemdHost(Host):
    """This machine: files under ``root``, the unit run by systemctl, output in the journal."""

    def __init__(self, root: Path = Path("/"), manifests_dir: Path | None = None) -> None:
        # Resolved and checked when the files are made (static_pod_files), not here.
        super().__init__(root, manifests_dir or root / systemd.MANIFESTS_DIR.lstrip("/"))

    def start_service(
        self, spec: Spec, files: dict[Path, str], changed: bool, info: Say, warn: Say
    ) -> bool:
        unit = systemd.unit_name(spec)
        if systemd.systemd_running(self.root):
            systemd.systemctl("daemon-reload")
            systemd.systemctl("enable", "--now", unit)
            if changed:  # enable --now does not restart a unit that already runs
                systemd.systemctl("restart", unit)
            return not changed
        warn(
            "systemd is not running here (or --root is not /); run on the host:\n  "
            + "\n  ".join(f"sudo {c}" for c in systemd.service_commands(spec))
        )
        return not changed

    def stop_service(self, name: str, files: list[Path], info: Say) -> None:
        unit = systemd.unit_name_for(name)
        if any(p.name == unit for p in files) and systemd.systemd_running(self.root):
            systemd.systemctl("disable", "--now", unit)
