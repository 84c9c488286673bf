"""`kschedctl snapshot [-f FILE] [-o json|yaml]`: a portable, read-only copy of what
scheduling needs."""

# No "from __future__ import annotations": typer would re-evaluate every annotation string
# at each start-up; evaluated once at import they cost less (benchmarks/startup.py).

import os
import sys
from typing import Annotated, NamedTuple

import typer

from kschedctl.base.errors import UsageError, quote, shown_path
from kschedctl.cli import completers, output, registers
from kschedctl.cli.common import connect
from kschedctl.cli.kube import DEFAULT_KUBE, Kube
from kschedctl.cli.kubeflags import kube_flags
from kschedctl.printers import formats

SNAPSHOT_FORMATS = (formats.YAML, formats.JSON)
STDOUT = "-"


class Target(NamedTuple):
    """Where the snapshot goes (a path, or ``-`` for stdout), in which format, and the
    deprecation warning for the old ``-o FILE`` spelling (or None)."""

    path: str
    as_json: bool
    deprecated: str | None = None


def snapshot_target(out: str | None, output_file: str | None) -> Target:
    """-o (the format) and -f (the file) resolved. ``-o FILE``, the spelling before -o
    meant a format everywhere, keeps working for a value that looks like a path (a ``/``,
    a ``.``, ``-``) or names an existing file, with a warning."""
    if out is not None and out not in SNAPSHOT_FORMATS:
        looks_like_a_path = out == STDOUT or any(c in out for c in "/.") or os.path.exists(out)
        if output_file is None and looks_like_a_path:
            instead = "leave out -o (YAML on stdout)" if out == STDOUT else f"-f {out}"
            return Target(
                out,
                out.lower().endswith(".json"),
                f"-o FILE is deprecated, -o is the format (json or yaml): use {instead}",
            )
        raise UsageError(
            f"-o {quote(out)}: not a format of snapshot (yaml, json)",
            hint="-o yaml or -o json; the file goes with -f FILE",
        )
    path = output_file or STDOUT
    if out is None:
        return Target(path, path.lower().endswith(".json"))
    return Target(path, out == formats.JSON)


@kube_flags
def snapshot(
    out: Annotated[
        str | None,
        typer.Option(
            "-o",
            "--output",
            help="Output format: yaml or json (default: json for -f FILE.json, else yaml). "
            "-o FILE, the old spelling, still writes FILE, with a warning.",
            metavar="FORMAT",
            show_default=False,
            autocompletion=completers.choices(SNAPSHOT_FORMATS),
        ),
    ] = None,
    output_file: Annotated[
        str | None,
        typer.Option(
            "-f",
            "--output-file",
            help="The file to write (created readable by you only); - or none: stdout. JSON "
            "is faster to read back at 20,000 pods.",
            metavar="FILE",
            show_default=False,
        ),
    ] = None,
    anonymize: Annotated[
        bool,
        typer.Option(
            "--anonymize",
            help="Replace node, pod, namespace and PDB names, label, taint and toleration "
            "values and images by keyed hashes, the same everywhere in the file, so "
            "selectors, affinity and spread constraints still match what they matched.",
        ),
    ] = False,
    images: Annotated[
        bool,
        typer.Option(
            "--images",
            help="Also keep each node's images (status.images, what ImageLocality scores): "
            "large in big clusters.",
        ),
    ] = False,
    namespace: Annotated[
        str | None,
        typer.Option(
            "-n",
            "--namespace",
            help="Keep only this namespace's pending pods (default: every namespace's); bound "
            "pods of every namespace are always kept, they take room on their nodes.",
            autocompletion=completers.namespaces,
            show_default=False,
        ),
    ] = None,
    kube: Kube = DEFAULT_KUBE,
) -> None:
    """Read the cluster (nothing is written to it) and write a snapshot (see HELP)."""
    # Imported here: --help and the offline commands must not pay for the cluster layers.
    from kschedctl.ops.snapshot import take_snapshot, write_snapshot

    target = snapshot_target(out, output_file)
    if target.deprecated:
        output.warn(target.deprecated)
    with connect(kube) as cluster:
        taken = take_snapshot(
            cluster, pending_namespace=namespace, images=images, anonymized=anonymize
        )
    text = write_snapshot(taken.snapshot, target.path, as_json=target.as_json)
    if target.path == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
    snap = taken.snapshot
    where = "stdout" if target.path == STDOUT else shown_path(target.path)
    output.info(
        f"wrote {where}: {len(snap.nodes)} nodes, {len(snap.pods)} bound pods "
        f"({taken.daemonset_pods} of DaemonSets), {len(snap.pending_pods)} pending pods "
        f"({taken.gated_pods} gated), {len(snap.pod_disruption_budgets)} PodDisruptionBudgets, "
        f"{len(snap.priority_classes)} PriorityClasses" + (", anonymized" if anonymize else "")
    )
    for what in taken.refused:
        output.info(f"left out {what}: forbidden or not served (see metadata.omitted)")


HELP = (
    "Read a cluster with your kubeconfig (read-only: get and list only) and write a portable "
    "snapshot for `kschedctl simulate`: the nodes (capacity, allocatable, labels, taints, "
    "unschedulable), the pods bound to them reduced to what scheduling reads (requests and "
    "limits of every container, init container and overhead, labels, nodeSelector, affinity, "
    "tolerations, topology spread constraints, host ports, priority, owner kind, claim names), "
    "the pending pods in the same form, PodDisruptionBudgets, PriorityClasses, Namespaces' "
    "labels, the DRA objects (DeviceClasses, ResourceSlices, ResourceClaims and their "
    "templates) and the storage objects the volume filters read (PersistentVolumeClaims, "
    "PersistentVolumes, StorageClasses, CSIDrivers, CSINodes, CSIStorageCapacities: no "
    "parameters, secret references or volume attributes). Terminal pods are dropped, DaemonSet and static pods kept; metadata.omitted says "
    "what was left out and why. Format: apiVersion kschedctl.io/v1alpha1, kind Snapshot "
    "(`kschedctl schema snapshot`). Nodes and pods are required (refused: exit 4); the rest "
    "is optional. The file is created readable by you only."
)


register = registers("snapshot", snapshot, help=HELP)
