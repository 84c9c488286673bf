"""`kschedctl snapshot -o FILE`: a portable, read-only copy of what scheduling needs."""

# No "from __future__ import annotations": typer would re-evaluate every annotation string
# at each start-up; evaluated once at import they cost less (benchmarks/startup.py).

import sys
from typing import Annotated

import typer

from kschedctl.base.errors import shown_path
from kschedctl.cli import completers, output, registers
from kschedctl.cli.common import connect
from kschedctl.cli.options import DEFAULT_KUBE, Kube, kube_flags


@kube_flags
def snapshot(
    target: Annotated[
        str,
        typer.Option(
            "-o",
            "--output",
            help="The file to write: FILE.json as JSON (faster to read back at 20,000 pods), "
            "any other name as YAML; - for YAML on stdout.",
            metavar="FILE",
            show_default=False,
        ),
    ],
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

    with connect(kube) as cluster:
        taken = take_snapshot(
            cluster, pending_namespace=namespace, images=images, anonymized=anonymize
        )
    text = write_snapshot(taken.snapshot, target)
    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    snap = taken.snapshot
    where = "stdout" if target == "-" else shown_path(target)
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
    "the pending pods in the same form, PodDisruptionBudgets, PriorityClasses and Namespaces' "
    "labels. Terminal pods are dropped, DaemonSet and static pods kept; metadata.omitted says "
    "what was left out and why. Format: apiVersion kschedctl.io/v1alpha1, kind Snapshot "
    "(`kschedctl schema snapshot`). Nodes and pods are required (refused: exit 4); the rest "
    "is optional. The file is created readable by you only."
)


register = registers("snapshot", snapshot, help=HELP, no_args_is_help=True)
