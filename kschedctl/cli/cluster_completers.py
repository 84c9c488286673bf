"""Completion candidates for the cluster-facing commands' arguments: scheduler names (the
discovery ``kschedctl list`` uses), Pending pods, deploy sources. Looked up within the
completion budget like every cluster-backed candidate (see :mod:`kschedctl.cli.completers`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import typer

from kschedctl.cli.completers import from_cluster, matching, names_of, param

if TYPE_CHECKING:
    from kschedctl.kubeclient.client import Cluster


def schedulers(ctx: typer.Context, incomplete: str) -> list[str]:
    """Scheduler names, from the discovery ``kschedctl list`` uses."""

    def lookup(cluster: Cluster) -> list[str]:
        # the use case (and the cluster layer) only when a name is completed
        from kschedctl.ops.list import scheduler_list

        return sorted({s.name for s in scheduler_list(cluster).schedulers})

    return matching(from_cluster(ctx, lookup), incomplete)


def pending_pods(ctx: typer.Context, incomplete: str) -> list[str]:
    """Pending pods of -n NAMESPACE (default: the context's), for ``why``."""

    def lookup(cluster: Cluster) -> list[str]:
        namespace = param(ctx, "namespace") or cluster.namespace
        pods = cluster.list(
            f"/api/v1/namespaces/{namespace}/pods",
            fieldSelector="status.phase=Pending",
            timeoutSeconds=5,
        )
        return names_of(pods)

    # `why pod/NAME` is accepted too: complete the prefix the user started with
    prefix = incomplete.partition("/")[0] + "/" if "/" in incomplete else ""
    return [prefix + n for n in matching(from_cluster(ctx, lookup), incomplete[len(prefix) :])]


def deploy_sources(ctx: typer.Context, incomplete: str) -> list[str]:
    """``deploy SRC``: local workspaces and spec files, then the cluster's scheduler names."""
    directory, _, start = incomplete.rpartition("/")
    local: list[str] = []
    try:
        for entry in sorted(os.scandir(directory or "."), key=lambda e: e.name):
            if entry.name.startswith(start) and not entry.name.startswith("."):
                is_dir = entry.is_dir()
                if is_dir or entry.name.endswith((".yaml", ".yml")):
                    shown = f"{directory}/{entry.name}" if directory else entry.name
                    local.append(shown + ("/" if is_dir else ""))
    except OSError:
        pass
    if directory:  # a path: the cluster has nothing to add
        return local
    return matching([*local, *schedulers(ctx, incomplete)], incomplete)
