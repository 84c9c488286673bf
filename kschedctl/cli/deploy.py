"""`kschedctl deploy`: put a scheduler on the cluster (or on this host) and prove it serves."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kschedctl import errors, output
from kschedctl.cli.common import connect
from kschedctl.cli.options import Context, Kubeconfig
from kschedctl.errors import ClusterError, KschedError, UsageError

if TYPE_CHECKING:
    from kschedctl.k8s.client import Cluster
    from kschedctl.lab.cluster import Lab
    from kschedctl.spec import Spec

FORMS = ("pod", "deployment", "service", "static-pod")


class DryRun(str, Enum):
    none = "none"
    client = "client"
    server = "server"


def _form(as_pod: bool, as_deployment: bool, as_service: bool, as_static_pod: bool) -> str:
    chosen = [
        f
        for f, on in zip(FORMS, (as_pod, as_deployment, as_service, as_static_pod), strict=True)
        if on
    ]
    if len(chosen) != 1:
        raise UsageError(
            "choose exactly one form: --as-pod, --as-deployment, --as-service or --as-static-pod"
        )
    return chosen[0]


class Program(str, Enum):
    kube_scheduler = "kube-scheduler"
    builtin = "builtin"


def load_target(
    src: str, namespace: str | None, image: str | None, replicas: int | None,
    program: str | None = None,
) -> Spec:  # fmt: skip
    """The spec to deploy: a workspace, a spec file, or a bare name, with flag overrides."""
    from kschedctl.spec import apply_defaults, ensure_valid, spec_from_source, with_program

    spec = copy.deepcopy(spec_from_source(src))
    if program:
        spec = with_program(spec, program)
    if namespace and namespace != spec.namespace:
        if spec.leader_election.resource_namespace == spec.namespace:
            spec.leader_election.resource_namespace = namespace
        spec.namespace = namespace
    if image:
        spec.image = image
    if replicas is not None:
        spec.replicas = replicas
    return ensure_valid(apply_defaults(spec))


def is_bare_name(src: str) -> bool:
    return not Path(src).exists()


def server_version(cluster: Cluster) -> str:
    """``1.36.3`` from /version, distro suffixes (``-eks-…``, ``+k3s1``) dropped."""
    import re

    info = cluster.server_version()
    match = re.match(r"v?(\d+)\.(\d+)\.(\d+)", info.get("gitVersion", ""))
    if not match:
        raise ClusterError(f"cannot read the server version from /version: {info}")
    return ".".join(match.groups())


def check_skew(spec: Spec, server: str) -> None:
    """kube-scheduler may be as new as kube-apiserver and at most one minor older."""
    major, minor = (int(p) for p in server.split(".")[:2])
    ours = spec.version
    if (ours.major, ours.minor) > (major, minor) or ours.minor < minor - 1:
        raise KschedError(
            f"scheduler version {ours.tag} cannot run against this API server ({server}): "
            "kube-scheduler must not be newer than kube-apiserver and at most one minor older",
            hint=f"deploy with --kubernetes-version {major}.{minor} (or set "
            "spec.kubernetesVersion in scheduler.yaml)",
        )


def cluster_objects(spec: Spec, form: str) -> list[dict[str, Any]]:
    """The objects to apply, each marked with the form (``list`` tells forms apart by it)."""
    import yaml

    from kschedctl.observe import schedulers
    from kschedctl.render.forms import render

    text = render(spec, {"pod": "pod", "deployment": "deployment"}.get(form, "host-rbac"))
    objects = [doc for doc in yaml.safe_load_all(text) if isinstance(doc, dict)]
    le = spec.leader_election
    for obj in objects:
        annotations = obj["metadata"].setdefault("annotations", {})
        annotations[schedulers.FORM_ANNOTATION] = form
        if le.leader_elect:
            annotations[schedulers.LEASE_ANNOTATION] = f"{le.resource_namespace}/{le.resource_name}"
    return objects


@dataclass
class HostPlan:
    files: dict[Path, str]
    lab: Lab | None


def host_plan(
    spec: Spec, form: str, root: Path, manifests_dir: Path | None, lab: Lab | None
) -> HostPlan:
    from kschedctl.hosts import systemd as host

    if form == "service":
        return HostPlan(host.service_files(spec, root), lab)
    manifests = manifests_dir or host.under(root, host.MANIFESTS_DIR)
    return HostPlan(host.static_pod_files(spec, root, manifests), lab)


def lab_host_spec(spec: Spec, lab: Lab, form: str) -> tuple[Spec, Path]:
    """Host paths of the lab: files under <lab>/host; the service runs the lab's binary."""
    import shutil

    from kschedctl.lab import binaries
    from kschedctl.lab.cluster import free_port

    spec = copy.deepcopy(spec)
    root = lab.dir / "host"
    kubeconfig = root / spec.service.kubeconfig.lstrip("/")
    if (
        not kubeconfig.exists()
    ):  # the lab's system:kube-scheduler identity, as kubeadm's scheduler.conf
        kubeconfig.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(lab.dir / "scheduler.kubeconfig", kubeconfig)
    if form == "service":
        # A systemd unit reads host paths directly: point them into the lab.
        spec.service.binary = (
            _kschedctl_command()
            if spec.program == "builtin"
            else str(binaries.locate()["kube-scheduler"])
        )
        spec.service.config_dir = str(root / spec.service.config_dir.lstrip("/"))
        spec.service.kubeconfig = str(kubeconfig)
    # Several host-form schedulers share this host: give each a free port, kept across deploys.
    spec.service.secure_port = _deployed_port(lab, spec, form) or free_port()
    return spec, root


def _kschedctl_command() -> str:
    """This installation's ``kschedctl`` script (it runs with the lab's interpreter)."""
    import shutil
    import sys

    beside = Path(sys.executable).parent / "kschedctl"
    found = str(beside) if beside.is_file() else shutil.which("kschedctl")
    if not found:
        raise KschedError("cannot find the kschedctl command to run as the lab's service")
    return found


def _deployed_port(lab: Lab, spec: Spec, form: str) -> int | None:
    import re

    from kschedctl.hosts import systemd as host

    root = lab.dir / "host"
    path = (
        host.under(root, f"{host.UNIT_DIR}/{host.unit_name(spec)}")
        if form == "service"
        else lab.dir / "manifests" / f"{spec.name}.yaml"
    )
    match = re.search(r"--secure-port=(\d+)", path.read_text()) if path.is_file() else None
    return int(match.group(1)) if match else None


def deploy(
    src: Annotated[
        str,
        typer.Argument(help="Workspace directory, spec file, or a scheduler name (all defaults)."),
    ],
    as_pod: Annotated[
        bool, typer.Option("--as-pod", help="A bare Pod (plus its ConfigMap and RBAC).")
    ] = False,
    as_deployment: Annotated[
        bool,
        typer.Option("--as-deployment", help="ServiceAccount, RBAC, ConfigMap and a Deployment."),
    ] = False,
    as_service: Annotated[
        bool, typer.Option("--as-service", help="A systemd unit on this host (plus Lease RBAC).")
    ] = False,
    as_static_pod: Annotated[
        bool, typer.Option("--as-static-pod", help="A kubeadm static pod manifest on this host.")
    ] = False,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    namespace: Annotated[
        str | None,
        typer.Option(
            "-n",
            "--namespace",
            help="Namespace of the scheduler (default: the spec's, kube-system).",
        ),
    ] = None,
    kubernetes_version: Annotated[
        str | None,
        typer.Option(
            "--kubernetes-version",
            help="Target version (default: the spec's; for a bare name the server's).",
        ),
    ] = None,
    image: Annotated[
        str | None,
        typer.Option(
            "--image",
            help="Scheduler image (default: registry.k8s.io/kube-scheduler:<version>; for "
            "--program builtin the repository's Dockerfile image, kschedctl:<version>).",
        ),
    ] = None,
    program: Annotated[
        Program | None,
        typer.Option(
            "--program",
            help="kube-scheduler, or builtin: kschedctl's own scheduler (default: the spec's).",
        ),
    ] = None,
    replicas: Annotated[
        int | None, typer.Option("--replicas", min=1, help="Replicas of the deployment form.")
    ] = None,
    dry_run: Annotated[
        DryRun,
        typer.Option(
            "--dry-run", help="client: print what would be applied; server: check it on the server."
        ),
    ] = DryRun.none,
    wait: Annotated[
        bool, typer.Option("--wait/--no-wait", help="Wait until the scheduler serves.")
    ] = True,
    verify: Annotated[
        bool,
        typer.Option("--verify/--no-verify", help="Prove it with a canary pod it must schedule."),
    ] = True,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait.")] = 180.0,
    canary_namespace: Annotated[
        str, typer.Option("--canary-namespace", help="Namespace of the canary pod.")
    ] = "default",
    root: Annotated[
        Path, typer.Option("--root", help="Host forms: install files under this root.")
    ] = Path("/"),
    manifests_dir: Annotated[
        Path | None,
        typer.Option(
            "--manifests-dir",
            help="Static-pod form: kubelet's manifest directory (default ROOT/etc/kubernetes/manifests).",
        ),
    ] = None,
) -> None:
    """Deploy a scheduler and wait until it serves (Ready pods, its Lease held, a canary bound).

    Objects are applied with server-side apply (field manager kschedctl); host forms write the
    unit or manifest under --root.
    """
    form = _form(as_pod, as_deployment, as_service, as_static_pod)
    from kschedctl.spec import with_version

    spec = load_target(src, namespace, image, replicas, program.value if program else None)
    if kubernetes_version:
        spec = with_version(spec, kubernetes_version)
    if spec.name == "default-scheduler":
        raise UsageError("refusing to deploy an additional scheduler named default-scheduler",
                         hint="pick another name; the cluster's own scheduler already has it")  # fmt: skip
    if dry_run is DryRun.client:
        _print_client_dry_run(spec, form, root, manifests_dir)
        return

    from kschedctl.hosts.lab import lab_for_kubeconfig

    cluster = connect(kubeconfig, context)
    try:
        server = server_version(cluster)
        if not kubernetes_version and is_bare_name(src):
            spec = with_version(spec, server)
        check_skew(spec, server)
        lab = lab_for_kubeconfig(kubeconfig) if form in ("service", "static-pod") else None
        if lab is not None:
            output.info(
                f"deploying into the lab at {lab.dir} (host files under {lab.dir / 'host'})"
            )
            spec, root = lab_host_spec(spec, lab, form)
            if manifests_dir is None and form == "static-pod":
                manifests_dir = lab.dir / "manifests"
        _deploy(cluster, spec, form, dry_run is DryRun.server, wait, verify, timeout,
                canary_namespace, root, manifests_dir, lab)  # fmt: skip
    finally:
        cluster.close()


def _print_client_dry_run(spec: Spec, form: str, root: Path, manifests_dir: Path | None) -> None:
    import yaml

    if form in ("pod", "deployment"):
        docs = cluster_objects(spec, form)
        typer.echo("---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs), nl=False)
        return
    plan = host_plan(spec, form, root, manifests_dir, None)
    for path, text in plan.files.items():
        typer.echo(f"# file: {path}\n{text}", nl=False)
    if spec.leader_election.leader_elect:
        typer.echo(
            "---\n"
            + "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in cluster_objects(spec, form)),
            nl=False,
        )


def _deploy(
    cluster: Cluster, spec: Spec, form: str, server_dry_run: bool, wait: bool, verify: bool,
    timeout: float, canary_namespace: str, root: Path, manifests_dir: Path | None, lab: Lab | None,
) -> None:  # fmt: skip
    from kschedctl.k8s import apply
    from kschedctl.k8s.inventory import snapshot
    from kschedctl.observe.schedulers import discover
    from kschedctl.ops import rollout

    started = time.monotonic()
    until = started + timeout
    objects = (
        cluster_objects(spec, form)
        if (form in ("pod", "deployment") or spec.leader_election.leader_elect)
        else []
    )
    if form in ("service", "static-pod"):
        import json

        from kschedctl.observe import schedulers

        files = sorted(str(p) for p in host_plan(spec, form, root, manifests_dir, lab).files)
        for obj in objects:
            annotations = obj["metadata"]["annotations"]
            annotations[schedulers.HOST_FILES_ANNOTATION] = json.dumps(files)
            if lab is not None:
                annotations[schedulers.LAB_ANNOTATION] = str(lab.dir)
    try:
        _refuse_taken_name(discover(snapshot(cluster)), spec, form)
    except ClusterError as err:  # a user who may deploy need not be allowed to list everything
        output.warn(f"cannot check that no other scheduler serves {spec.name!r}: {err.message}")
    foreign = apply.foreign_objects(cluster, objects, spec.name)
    if foreign:
        raise KschedError(
            f"refusing to overwrite objects kschedctl did not create: {', '.join(foreign)}",
            hint="pick another scheduler name, or delete those objects yourself if they are stale",
        )
    if form == "pod" and not server_dry_run:
        _replace_changed_pod(cluster, objects, until)
    suffix = " (server dry run)" if server_dry_run else ""
    try:
        outcomes = apply.apply_objects(cluster, objects, dry_run=server_dry_run)
    except errors.ApplyError as err:  # say what exists now, then fail
        for outcome in err.outcomes:
            typer.echo(f"{outcome.ref} {outcome.action}{suffix}")
        raise
    for outcome in outcomes:
        typer.echo(f"{outcome.ref} {outcome.action}{suffix}")
    if server_dry_run:
        output.info(f"server dry run: the API server accepts all {len(outcomes)} object(s)")
        return
    unchanged = all(o.action == "unchanged" for o in outcomes)
    if form in ("service", "static-pod"):
        unchanged = _install_host(spec, form, root, manifests_dir, lab) and unchanged
    if unchanged:
        output.info(f"{spec.name}: unchanged")
    if not wait:
        return
    alive = None
    if lab is not None and form == "service":
        alive = lambda: _check_lab_service(lab, spec)  # noqa: E731
    holders = _wait_serving(cluster, spec, form, until, alive)
    if verify:
        node = rollout.canary(cluster, spec.name, canary_namespace, until, output.info)
        output.info(f"canary pod was scheduled by {spec.name} onto {node} and removed")
    output.info(f"{spec.name} is serving ({form}{', leader ' + holders if holders else ''}) "
                f"after {time.monotonic() - started:.1f}s")  # fmt: skip


def _refuse_taken_name(schedulers: list[Any], spec: Spec, form: str) -> None:
    for s in schedulers:
        if s.name not in spec.scheduler_names or not s.served:
            continue
        ours = (
            s.managed
            and (s.instance or "").endswith(f"/{spec.name}")
            or (s.managed and s.form in ("service", "static-pod"))
        )
        if not ours:
            raise KschedError(
                f"scheduler name {s.name!r} is already served by {s.instance or s.form} "
                f"({', '.join(s.sources)}); names must be unique in a cluster",
                hint="pick another name, or remove the scheduler that serves it",
            )
        if s.form != form:
            raise KschedError(
                f"{spec.name} is already deployed as {s.form}; one scheduler runs in one form",
                hint=f"remove it first: kschedctl remove {spec.name}",
            )


def _replace_changed_pod(cluster: Cluster, objects: list[dict[str, Any]], until: float) -> None:
    """A bare Pod cannot change its spec: delete it when its config or image changed."""
    from kschedctl.k8s import apply
    from kschedctl.ops import rollout

    for obj in objects:
        if obj["kind"] != "Pod":
            continue
        live = apply.current(cluster, obj)
        if live is None:
            continue
        want = obj["metadata"].get("annotations", {}).get("kschedctl.io/config-hash")
        have = (live["metadata"].get("annotations") or {}).get("kschedctl.io/config-hash")
        if want != have or _images(obj) != _images(live):
            output.info(f"pod {obj['metadata']['name']}: config changed, replacing it")
            apply.delete_object(cluster, obj)
            rollout.poll(
                lambda pod=obj: apply.current(cluster, pod) is None, until,
                f"the old pod {obj['metadata']['name']} to go", hint="",
            )  # fmt: skip


def _images(pod: dict[str, Any]) -> list[str]:
    return [c.get("image", "") for c in pod["spec"]["containers"]]


def _install_host(
    spec: Spec, form: str, root: Path, manifests_dir: Path | None, lab: Lab | None
) -> bool:
    """Write the host files and start the unit; True if nothing changed and it already runs."""
    from kschedctl.hosts import lab as services
    from kschedctl.hosts import systemd as host

    plan = host_plan(spec, form, root, manifests_dir, lab)
    changed = host.changed(plan.files)
    host.write_files(plan.files)
    for path in plan.files:
        typer.echo(f"file {path} {'written' if changed else 'unchanged'}")
    if form == "static-pod":
        return not changed
    unit = host.unit_name(spec)
    if lab is not None:
        if changed or not services.running(lab, unit):
            argv = host.exec_start(plan.files[host.under(root, f"{host.UNIT_DIR}/{unit}")])
            pid = services.start(lab, unit, argv)
            output.info(f"lab: started {unit}'s ExecStart as pid {pid}")
            return False
        return True
    if host.systemd_running(root):
        host.systemctl("daemon-reload")
        host.systemctl("enable", "--now", unit)
        if changed:  # enable --now does not restart a unit that already runs
            host.systemctl("restart", unit)
        return not changed
    output.warn("systemd is not running here (or --root is not /); run on the host:\n  "
                + "\n  ".join(f"sudo {c}" for c in host.service_commands(spec)))  # fmt: skip
    return not changed


def _check_lab_service(lab: Lab, spec: Spec) -> None:
    from kschedctl.hosts import lab as services
    from kschedctl.hosts import systemd as host
    from kschedctl.lab import processes

    unit = host.unit_name(spec)
    if services.running(lab, unit) is None:
        log = lab.dir / "logs" / f"service_{unit}.log"
        raise KschedError(
            f"{unit} exited; the end of {log}:\n{processes.log_tail(log, 5)}",
            hint=f"fix the cause, then `kschedctl deploy {spec.name} --as-service` again",
        )


def _wait_serving(cluster: Cluster, spec: Spec, form: str, until: float, alive: Any = None) -> str:
    from kschedctl.ops import rollout

    le = spec.leader_election
    holders: list[str] | None = None
    if form in ("pod", "deployment"):
        want = spec.replicas if form == "deployment" else 1
        config_hash = _config_hash(spec)
        output.info(f"waiting for {want} Ready pod(s) of {spec.name} in {spec.namespace}")
        pods = rollout.wait_ready(cluster, spec.namespace, spec.name, want, config_hash, until)
        holders = [p["metadata"]["name"] for p in pods]
    elif form == "static-pod":
        output.info(f"waiting for the mirror pod of static pod {spec.name} in {spec.namespace}")
        pods = rollout.wait_ready(cluster, spec.namespace, spec.name, 1, None, until)
        holders = None  # static pods hold leases under the node's hostname
    if not le.leader_elect:
        return ""
    output.info(f"waiting for Lease {le.resource_namespace}/{le.resource_name} to be held")
    return rollout.wait_lease(
        cluster, le.resource_namespace, le.resource_name, holders, until, alive=alive
    )


def _config_hash(spec: Spec) -> str:
    import hashlib

    from kschedctl.render.forms import render

    return hashlib.sha256(render(spec, "config").encode()).hexdigest()


def register(app: typer.Typer) -> None:
    app.command("deploy")(deploy)
