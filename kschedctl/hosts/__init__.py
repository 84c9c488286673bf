"""Where the host forms (systemd service, static pod) live: a machine with systemd, or the lab.

One seam, chosen once per command: :func:`for_target` picks the lab whose admin kubeconfig is
in use, else this machine under ``--root``; :func:`for_record` picks the host a deployed
scheduler recorded on its objects (``kschedctl.io/lab``), which is what ``remove`` undoes.
deploy, remove, logs and why then talk to the :class:`Host` they were given, never to systemd
or the lab directly.
"""

from __future__ import annotations

from pathlib import Path

from kschedctl.hosts.host import Host, SystemdHost
from kschedctl.hosts.lab import LabHost, lab_for_kubeconfig
from kschedctl.lab.cluster import Lab

__all__ = ["Host", "LabHost", "SystemdHost", "for_record", "for_target"]


def for_target(
    kubeconfig: str | None, root: Path = Path("/"), manifests_dir: Path | None = None
) -> Host:
    """The lab whose admin kubeconfig ``kubeconfig`` is (``$KUBECONFIG`` when None; ``root`` is
    then ignored: its files go under ``<lab>/host``), else this machine under ``root``."""
    lab = lab_for_kubeconfig(kubeconfig)
    if lab is not None:
        return LabHost(lab, manifests_dir)
    return SystemdHost(root, manifests_dir)


def for_record(lab_dir: str | None) -> Host:
    """The host a deployed scheduler's objects name: the lab at ``lab_dir``, else this machine
    (its recorded host file paths are absolute)."""
    if lab_dir:
        return LabHost(Lab(Path(lab_dir)))
    return SystemdHost(Path("/"))
