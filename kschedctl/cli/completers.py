"""Shell-completion candidates that come from the kubeconfig or the cluster.

Static candidates (commands, flags, forms, ``-o`` values) are click's and cost no import here.
Kubeconfig ones (contexts, clusters, users) read the kubeconfig files only. Cluster ones
(namespaces, scheduler names, Pending pods) ask the API server within ``budget()`` seconds in
total, client import included: a slow or unreachable cluster gives no candidates, never a
hang, and no error ever reaches the shell (a completion has nowhere to report it).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import typer

from kschedctl.cli.kube import Kube, kube_from

# cheap (yaml is imported when a file is read): every command imports this module
from kschedctl.kubeclient.kubeconfig import (
    kubeconfig_paths,
    merge_kubeconfigs,
    read_kubeconfigs,
    section_names,
    select,
)

if TYPE_CHECKING:
    from kschedctl.kubeclient.client import Cluster
    from kschedctl.kubeclient.kubeconfig import Overrides

BUDGET_ENV = "KSCHEDCTL_COMPLETION_TIMEOUT"
DEFAULT_BUDGET = 1.0  # seconds per TAB for a cluster lookup, connecting included


def budget() -> float:
    try:
        return max(0.0, float(os.environ.get(BUDGET_ENV, DEFAULT_BUDGET)))
    except ValueError:
        return DEFAULT_BUDGET


def matching(values: Iterable[str], incomplete: str) -> list[str]:
    seen: list[str] = []
    for value in values:
        if value.startswith(incomplete) and value not in seen:
            seen.append(value)
    return seen


def choices(values: tuple[str, ...]) -> Callable[[str], list[str]]:
    """Complete one of ``values`` (the tuple an option also validates against)."""

    def complete(incomplete: str) -> list[str]:
        return matching(values, incomplete)

    # read by completion_scripts.completion_table: the values go in the table that
    # kschedctl/quick_complete.py answers from without loading typer
    complete.choices = values  # type: ignore[attr-defined]
    return complete


def param(ctx: typer.Context, name: str) -> Any:
    # the values parsed so far on this command line, e.g. --kubeconfig before --context
    value = ctx.params.get(name)
    return value if isinstance(value, str) and value else None


def _kubeconfig_names(ctx: typer.Context, section: str) -> list[str]:
    explicit = param(ctx, "kubeconfig")
    try:
        files = read_kubeconfigs(kubeconfig_paths(explicit), explicit=explicit is not None)
        return section_names(merge_kubeconfigs(files), section)
    except Exception:  # nowhere to report it: no candidates
        return []


def contexts(ctx: typer.Context, incomplete: str) -> list[str]:
    return matching(_kubeconfig_names(ctx, "contexts"), incomplete)


def clusters(ctx: typer.Context, incomplete: str) -> list[str]:
    return matching(_kubeconfig_names(ctx, "clusters"), incomplete)


def users(ctx: typer.Context, incomplete: str) -> list[str]:
    return matching(_kubeconfig_names(ctx, "users"), incomplete)


def from_cluster(ctx: typer.Context, lookup: Callable[[Cluster], Iterable[str]]) -> list[str]:
    """``lookup(cluster)`` run within the completion budget; nothing on timeout or error.

    A daemon thread, abandoned on timeout: a socket stuck on a dead server cannot keep the
    shell waiting, and the process ends as soon as the candidates are printed.
    """
    try:
        overrides = _overrides(ctx)
    except Exception:  # a bad --request-timeout, a missing CA: nowhere to report it
        return []
    if overrides.server is None and not _kubeconfig_usable(ctx):
        return []  # no kubeconfig or no such context: no need to load the client and wait
    found: list[str] = []

    def run() -> None:
        try:
            # the cluster layer (and the kubernetes client) only when the cluster is asked
            from kschedctl.kubeclient.client import Cluster

            with Cluster.connect(
                param(ctx, "kubeconfig"),
                param(ctx, "context"),
                cluster=param(ctx, "cluster_name"),
                user=param(ctx, "user"),
                overrides=overrides,
            ) as cluster:
                found.extend(lookup(cluster))
        except BaseException:  # nowhere to report it: no candidates
            found.clear()

    worker = threading.Thread(target=run, name="completion", daemon=True)
    worker.start()
    worker.join(budget())
    return [] if worker.is_alive() else list(found)


def _overrides(ctx: typer.Context) -> Overrides:
    """kubectl's connection flags given so far (--server, --token, --as, …): a TAB asks the
    cluster as the command itself would."""
    return kube_from(
        **{k: v for k in Kube._fields if (v := ctx.params.get(k)) is not None}
    ).overrides()


def _kubeconfig_usable(ctx: typer.Context) -> bool:
    """True if the kubeconfig names a cluster to ask (in-cluster: the service account's)."""
    explicit = param(ctx, "kubeconfig")
    try:
        files = read_kubeconfigs(kubeconfig_paths(explicit), explicit=explicit is not None)
        if not files:
            return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and explicit is None
        select(
            merge_kubeconfigs(files),
            context=param(ctx, "context"),
            cluster=param(ctx, "cluster_name"),
            user=param(ctx, "user"),
        )
    except Exception:  # nowhere to report it: no candidates
        return False
    return True


def names_of(items: Iterable[dict[str, Any]]) -> list[str]:
    return sorted(str((i.get("metadata") or {}).get("name") or "") for i in items if i)


def namespaces(ctx: typer.Context, incomplete: str) -> list[str]:
    def lookup(cluster: Cluster) -> list[str]:
        return names_of(cluster.list("/api/v1/namespaces", timeoutSeconds=5))

    return matching(from_cluster(ctx, lookup), incomplete)
