"""The lab's start order: etcd → kube-apiserver → kube-controller-manager → kube-scheduler →
kwok → the runner, each with its flags, then the simulated nodes.

``Lab.up`` calls :func:`start_all` with a :class:`Startup` once the directory, its marker and
``lab.json`` exist; every process is started and recorded through :mod:`kschedctl.lab.components`.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kschedctl.lab import etcdload, pki, processes
from kschedctl.lab.components import Progress, advertise_address, free_port, start_component, wait
from kschedctl.lab.images import kwok_admitted_expression, kwok_selector_key
from kschedctl.lab.state import LabDir, LabState
from kschedctl.lab.stored import NODE_IP, NODE_LEASE_SECONDS, POD_CIDR

if TYPE_CHECKING:
    from kschedctl.kubeclient.client import Cluster

KWOK_STAGES = Path(__file__).parent / "kwok-stages.yaml"
KWOK_LOGS_CRD = Path(__file__).parent / "kwok-logs-crd.yaml"
KWOK_PORT_FORWARD_CRD = Path(__file__).parent / "kwok-portforward-crd.yaml"
SERVICE_CIDR = "10.96.0.0/16"
KWOK_WORKERS = 16  # kwok's node stages and node Leases processed in parallel (its default: 4)


@dataclass(frozen=True)
class Startup:
    """One start-up of the lab: what each of its steps starts and waits with."""

    lab: LabDir
    state: LabState  # lab.json: each component started is recorded in it
    bins: dict[str, Path]  # component name -> its binary
    progress: Progress
    timeout: float  # seconds each wait may take (a health check, the CRDs, the nodes)
    env: dict[str, str] = field(default_factory=processes.proxy_free_environment)

    def start(
        self, name: str, port: int, args: list[str], env: dict[str, str] | None = None
    ) -> None:
        start_component(self.lab, self.state, name, self.bins, port, env or self.env, args)

    def wait(self, name: str, url: str) -> None:
        wait(self.lab, self.state, name, url, self.timeout, self.progress)


def start_all(run: Startup, nodes: list[dict[str, Any]]) -> None:
    lab, state = run.lab, run.state
    advertise = advertise_address()
    run.progress("generating certificates")
    pki.generate(lab.pki, advertise)
    lab._write_kubeconfigs(state.api_port)

    etcd_port, peer_port = free_port(), free_port()
    run.start("etcd", etcd_port, _etcd_args(lab, etcd_port, peer_port))
    run.wait("etcd", f"https://127.0.0.1:{etcd_port}/health")

    p = lab.pki
    run.start("kube-apiserver", state.api_port, [
        f"--etcd-servers=https://127.0.0.1:{etcd_port}",
        f"--etcd-cafile={pki.etcd_file(p, 'ca', 'crt')}",
        f"--etcd-certfile={pki.etcd_file(p, pki.ETCD_APISERVER_CLIENT, 'crt')}",
        f"--etcd-keyfile={pki.etcd_file(p, pki.ETCD_APISERVER_CLIENT, 'key')}",
        "--bind-address=127.0.0.1", f"--secure-port={state.api_port}",
        f"--advertise-address={advertise}",
        f"--tls-cert-file={p / 'apiserver.crt'}",
        f"--tls-private-key-file={p / 'apiserver.key'}",
        f"--client-ca-file={p / 'ca.crt'}",
        # Published in kube-system/extension-apiserver-authentication, as on kubeadm; a
        # scheduler's delegated authentication logs errors every second without it.
        f"--requestheader-client-ca-file={p / 'ca.crt'}",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={p / 'sa.pub'}",
        f"--service-account-signing-key-file={p / 'sa.key'}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        "--authorization-mode=Node,RBAC", "--allow-privileged=true",
        "--kubelet-preferred-address-types=InternalIP,Hostname",
        "--profiling=false",
        # JSON in etcd, so the seed's bulk loader (lab/etcdload.py) writes what the API
        # server itself would; clients see no difference.
        "--storage-media-type=application/json",
    ])  # fmt: skip
    run.wait("kube-apiserver", f"https://127.0.0.1:{state.api_port}/readyz")

    # lab.api loads the kubernetes client: only once the API server runs
    from kschedctl.kubeclient.client import Cluster  # needed from here on only

    with Cluster.connect(str(lab.kubeconfig)) as cluster:
        _start_rest(run, nodes, cluster)


def _etcd_args(lab: LabDir, client_port: int, peer_port: int) -> list[str]:
    """One member on loopback, TLS on both of its listeners, client certificates required;
    no other listener (metrics are served on the client port, behind the same TLS)."""
    server = [
        f"--cert-file={pki.etcd_file(lab.pki, pki.ETCD_SERVER, 'crt')}",
        f"--key-file={pki.etcd_file(lab.pki, pki.ETCD_SERVER, 'key')}",
        f"--trusted-ca-file={pki.etcd_file(lab.pki, 'ca', 'crt')}",
        "--client-cert-auth=true",
    ]
    peer = [
        f"--peer-cert-file={pki.etcd_file(lab.pki, pki.ETCD_SERVER, 'crt')}",
        f"--peer-key-file={pki.etcd_file(lab.pki, pki.ETCD_SERVER, 'key')}",
        f"--peer-trusted-ca-file={pki.etcd_file(lab.pki, 'ca', 'crt')}",
        "--peer-client-cert-auth=true",
    ]
    return [
        "--name=lab", f"--data-dir={lab.dir / 'etcd'}",
        f"--listen-client-urls=https://127.0.0.1:{client_port}",
        f"--advertise-client-urls=https://127.0.0.1:{client_port}",
        f"--listen-peer-urls=https://127.0.0.1:{peer_port}",
        f"--initial-advertise-peer-urls=https://127.0.0.1:{peer_port}",
        f"--initial-cluster=lab=https://127.0.0.1:{peer_port}",
        *server, *peer,
        "--unsafe-no-fsync=true", "--log-level=warn", "--quota-backend-bytes=8589934592",
    ]  # fmt: skip


def _start_rest(run: Startup, nodes: list[dict[str, Any]], cluster: Cluster) -> None:
    # lab.api loads the kubernetes client: only once the API server runs
    from kschedctl.lab import api

    lab, progress, timeout = run.lab, run.progress, run.timeout
    p = lab.pki
    kcm_port = free_port()
    run.start("kube-controller-manager", kcm_port, [
        f"--kubeconfig={lab.dir / 'controller-manager.kubeconfig'}",
        "--leader-elect=false", "--bind-address=127.0.0.1", f"--secure-port={kcm_port}",
        f"--service-account-private-key-file={p / 'sa.key'}",
        f"--root-ca-file={p / 'ca.crt'}", "--use-service-account-credentials=true",
        f"--cluster-signing-cert-file={p / 'ca.crt'}",
        f"--cluster-signing-key-file={p / 'ca.key'}",
        "--profiling=false",
        # The node lifecycle controller lifts each new node's not-ready taint once kwok
        # reports it Ready, one PATCH per node: at client-go's default 20 requests/s that
        # took 2 minutes for 500 nodes. Unthrottled, as kwokctl's --disable-qps-limits does.
        "--kube-api-qps=5000", "--kube-api-burst=10000",
    ])  # fmt: skip

    sched_port = free_port()
    sched_config = lab.dir / "default-scheduler.yaml"
    sched_config.write_text(yaml.safe_dump(_default_scheduler_config(lab), sort_keys=False))
    run.start("kube-scheduler", sched_port, [
        f"--config={sched_config}", "--bind-address=127.0.0.1",
        f"--secure-port={sched_port}",
    ])  # fmt: skip

    # kwok watches Logs and PortForward objects only if their CRDs exist; it does not
    # install them.
    progress("installing kwok's Logs and PortForward CustomResourceDefinitions")
    api.install_crds(cluster, KWOK_LOGS_CRD, timeout)
    api.install_crds(cluster, KWOK_PORT_FORWARD_CRD, timeout)
    kwok_port = free_port()
    kwok_env = {"HOME": str(lab.dir / "kwok-home")}
    (lab.dir / "kwok-home").mkdir(exist_ok=True)
    run.start("kwok", kwok_port, [
        f"--kubeconfig={lab.kubeconfig}", f"--config={_kwok_stages(lab)}",
        f"--config={_kwok_options(lab)}",
        "--manage-all-nodes=false",
        "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
        f"--node-ip={NODE_IP}", "--node-name=localhost", f"--node-port={kwok_port}",
        f"--server-address=127.0.0.1:{kwok_port}",
        f"--node-lease-duration-seconds={NODE_LEASE_SECONDS}", f"--cidr={POD_CIDR}",
        "--enable-crds=Logs", "--enable-crds=PortForward",
    ], kwok_env)  # fmt: skip
    runner_port = start_runner(lab, run.state, run.env)  # its start-up overlaps the waits below
    run.wait("kube-controller-manager", f"https://127.0.0.1:{kcm_port}/healthz")
    run.wait("kube-scheduler", f"https://127.0.0.1:{sched_port}/healthz")
    run.wait("kwok", f"http://127.0.0.1:{kwok_port}/healthz")

    if nodes:
        progress(f"loading {len(nodes)} simulated node(s) into etcd")
        api.create_nodes(cluster, etcdload.EtcdLoader(lab), nodes)
        api.wait_nodes_ready(cluster, [n["metadata"]["name"] for n in nodes], timeout)
    progress("waiting for the default ServiceAccount")
    api.wait_default_service_account(cluster, "default", timeout)
    run.wait("runner", f"http://127.0.0.1:{runner_port}/healthz")


def start_runner(lab: LabDir, state: LabState, env: dict[str, str]) -> int:
    """Start the runner (scheduler pods as processes) with this interpreter; its port."""
    port = free_port()
    python = os.path.realpath(sys.executable)  # what /proc/<pid>/exe shows
    start_component(lab, state, "runner", {}, port, env, [
        "-m", "kschedctl", "lab", "runner", f"--dir={lab.dir}", f"--health-port={port}",
    ], exe=python, argv0=sys.executable)  # fmt: skip
    return port


def _kwok_stages(lab: LabDir) -> Path:
    """kwok's default stages, except that pod-ready leaves the runner's pods alone and waits
    for the runner's admission of every pod.

    kwok would mark them Running and Ready the moment they are bound, before their process
    even started; the runner reports their status itself, as a kubelet would. And kwok
    would run a pod the node has no room for; the runner rejects it as a kubelet does.
    """
    stages = list(yaml.safe_load_all(KWOK_STAGES.read_text()))
    for stage in stages:
        if stage and stage["metadata"]["name"] == "pod-ready":
            stage["spec"]["selector"]["matchExpressions"] += [
                {"key": kwok_selector_key(), "operator": "DoesNotExist"},
                kwok_admitted_expression(),  # the runner's kubelet admission said yes
            ]
    path = lab.dir / "kwok-stages.yaml"
    path.write_text(yaml.dump_all(stages, Dumper=_BlockDumper, sort_keys=False))
    return path


def _kwok_options(lab: LabDir) -> Path:
    """kwok's options: nodes initialized (marked Ready) and their Leases kept by more workers
    than its default 4, which made 2,000 new nodes wait their turn for half a minute.

    kwok defaults none of the options of a configuration file it is given: the others are
    written out with kwok v0.8's defaults (its flags, given too, still win)."""
    options = {
        "podPlayStageParallelism": 4, "podsOnNodeSyncParallelism": 1,
        "enablePodsOnNodeSyncListPager": True, "enablePodsOnNodeSyncStreamWatch": False,
        "enableDebuggingHandlers": True, "enableContentionProfiling": False,
        "enableProfilingHandler": True,
        "nodePlayStageParallelism": KWOK_WORKERS, "nodeLeaseParallelism": KWOK_WORKERS,
    }  # fmt: skip
    config = {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokConfiguration",
        "options": options,
    }
    path = lab.dir / "kwok.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _default_scheduler_config(lab: LabDir) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(lab.dir / "scheduler.kubeconfig")},
        # The defaults of a kubeadm cluster: Lease kube-system/kube-scheduler.
        "leaderElection": {"leaderElect": True},
        "profiles": [{"schedulerName": "default-scheduler"}],
    }


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (kwok's templates) as readable ``|`` blocks."""


_BlockDumper.add_representer(
    str,
    lambda dumper, text: dumper.represent_scalar(
        "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None
    ),
)
