"""Deploy a scheduler: apply its objects, install its host files, then prove that it serves.

Objects go to the API server with server-side apply (field manager ``kschedctl``); the host
forms (service, static-pod) also write files on a :class:`~kschedctl.hosts.Host`. Serving means
Ready pods running the current config, the leader Lease held, and a canary pod bound by it.
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from kschedctl.base import userfile
from kschedctl.base.errors import ApplyError, ClusterError, KschedError, SpecError, UsageError
from kschedctl.hosts import Host
from kschedctl.k8s import apply
from kschedctl.k8s.apply import Outcome
from kschedctl.k8s.inventory import snapshot
from kschedctl.k8s.resources import describe
from kschedctl.kubeclient.client import Cluster
from kschedctl.model.config.versions import DEFAULT_SCHEDULER_NAME, parse_git_version
from kschedctl.observe.appliers import GITOPS_TOOLS, appliers, helm_command, helm_releases
from kschedctl.observe.discovery import discover
from kschedctl.observe.rollout import same_containers
from kschedctl.observe.schedulers import (
    FORM_ANNOTATION,
    HOST_FILES_ANNOTATION,
    LEASE_ANNOTATION,
    Scheduler,
)
from kschedctl.ops import history, rollout
from kschedctl.ops import routing as routing_ops
from kschedctl.ops.reporter import QUIET, Reporter
from kschedctl.render.context import config_hash
from kschedctl.render.forms import DEPLOY_FORMS, HOST_FORMS, applied, render
from kschedctl.render.objects import (
    ObjectKey,
    check_objects,
    describe_key,
    expected_objects,
    for_form,
    host_rbac,
    not_for_form,
    object_key,
    stale_rbac,
)
from kschedctl.spec import (
    CheckedSpec,
    Spec,
    apply_defaults,
    ensure_valid,
    spec_from_source,
    thawed,
    with_program,
    with_version,
)


@dataclass(frozen=True)
class DeployRequest:
    """What to deploy and how; checked when made (a :class:`UsageError` if it makes no sense)."""

    spec: Spec
    form: str  # one of DEPLOY_FORMS
    server_dry_run: bool = False  # the API server checks everything, nothing is kept
    wait: bool = True  # until its pods are Ready and its Lease is held
    verify: bool = True  # and a canary pod it must schedule was bound
    timeout: float = 180.0  # seconds, for the whole deploy
    canary_namespace: str = "default"
    # A bare name given no --kubernetes-version runs the API server's minor version.
    follow_server_version: bool = False
    # What the revision records (ops.history): the command line's overrides, why, how many.
    overrides: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    history_max: int = history.HISTORY_MAX

    def __post_init__(self) -> None:
        if self.form not in DEPLOY_FORMS:
            raise UsageError(
                f"unknown form {self.form!r}", hint=f"one of {', '.join(DEPLOY_FORMS)}"
            )
        # A replacement (spec.replacesDefault, checked with the spec) takes the name on purpose.
        if self.spec.name == "default-scheduler" and not self.spec.replaces_default:
            raise UsageError(
                "refusing to deploy an additional scheduler named default-scheduler",
                hint="pick another name; the cluster's own scheduler already has it (or "
                "create it with --replaces-default to replace it)",
            )


@dataclass(frozen=True)
class DeployResult:
    spec: Spec  # as deployed (in the lab: with the lab's host paths and port)
    form: str
    applied: tuple[Outcome, ...]  # the cluster objects, in apply order
    files: tuple[Path, ...] = ()  # the host files (host forms)
    files_changed: bool = False
    server_dry_run: bool = False
    unchanged: bool = False  # nothing changed, and the service form's unit already ran
    waited: bool = False  # the wait proved Ready pods (when it has pods) and the Lease held
    leader: str = ""  # the Lease holder identity ("" without leader election or wait)
    canary_node: str | None = None  # where the canary pod was bound (verify)
    seconds: float = 0.0
    pruned: tuple[str, ...] = ()  # RBAC objects of this form the spec no longer renders
    revision: int | None = None  # the revision recorded (None: a dry run, or not recorded)


def load_target(
    src: str,
    *,
    namespace: str | None = None,
    image: str | None = None,
    replicas: int | None = None,
    program: str | None = None,
    kubernetes_version: str | None = None,
) -> Spec:
    """The spec to deploy: a workspace, a spec file, or a bare name, with flag overrides (a spec
    the flags change is checked in its turn; one they leave as loaded is not checked again)."""
    loaded = spec_from_source(src)
    spec = thawed(loaded)
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
    spec = apply_defaults(spec)
    spec = loaded if spec == loaded else ensure_valid(spec)
    return with_version(spec, kubernetes_version) if kubernetes_version else spec


def is_bare_name(src: str) -> bool:
    return not userfile.exists(src)


def cluster_objects(spec: CheckedSpec, form: str) -> list[dict[str, Any]]:
    """The objects to apply, each marked with the form (``list`` tells forms apart by it).

    Only what kschedctl renders for this spec and form (the ``objects`` of its FORMS row): any
    other document, a second copy of one, or a binding to another role or subject is refused
    (SpecError, exit 3) here, before anything is sent.
    """
    row = applied(form)
    try:
        docs = list(yaml.safe_load_all(render(spec, row.name)))
    except yaml.YAMLError as err:
        raise SpecError(
            "", f"the rendered {row.name} form of {spec.name} is not valid YAML: {err}"
        ) from err
    # A shared form's objects that another of its forms alone applies (the static pods' metrics
    # Service in host-rbac, for the systemd form) are dropped by their table row, not refused.
    others = not_for_form(spec, row.objects, form)
    docs = [d for d in docs if not (isinstance(d, dict) and object_key(d) in others)]
    objects = check_objects(spec, row.name, for_form(row.objects, form), docs)
    le = spec.leader_election
    for obj in objects:
        annotations = obj["metadata"].setdefault("annotations", {})
        annotations[FORM_ANNOTATION] = form
        if le.leader_elect:
            annotations[LEASE_ANNOTATION] = f"{le.resource_namespace}/{le.resource_name}"
    return objects


def not_applied(spec: Spec, form: str) -> list[str]:
    """One line per object the shared form ``form`` applies holds but ``form`` does not apply
    (a systemd service's host-rbac: the static pods' metrics Service), saying why."""
    notes = []
    for key, row in not_for_form(spec, applied(form).objects, form).items():
        only = " or ".join(f"--as-{name}" for name in row.forms)
        notes.append(f"{describe_key(key)} not applied: only deploy {only} has pods it selects")
    return notes


def allowed_keys(spec: Spec, form: str) -> frozenset[ObjectKey]:
    """What ``deploy --as-FORM`` of ``spec`` may send to the API server."""
    return frozenset(expected_objects(spec, for_form(applied(form).objects, form)))


def client_dry_run(request: DeployRequest, host: Host) -> str:
    """What a client dry run prints: the objects, or the host files (plus Lease RBAC)."""
    spec, form = ensure_valid(request.spec), request.form
    if form not in HOST_FORMS:
        return _yaml_stream(cluster_objects(spec, form))
    text = "".join(f"# file: {path}\n{body}" for path, body in host.files(spec, form).items())
    if host_rbac(spec):
        notes = "".join(f"# {note}\n" for note in not_applied(spec, form))
        text += "---\n" + notes + _yaml_stream(cluster_objects(spec, form))
    return text


def _yaml_stream(docs: list[dict[str, Any]]) -> str:
    return "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)


def server_version(cluster: Cluster) -> str:
    """``1.36.3`` from /version, distro suffixes (``-eks-…``, ``+k3s1``) dropped."""
    info = cluster.server_version()
    parsed = parse_git_version(str(info.get("gitVersion", "")))
    if parsed is None or len(parsed) < 3:
        raise ClusterError(f"cannot read the server version from /version: {info}")
    return ".".join(map(str, parsed))


def check_skew(spec: Spec, server: str) -> None:
    """kube-scheduler may be as new as kube-apiserver and at most one minor older
    (https://kubernetes.io/releases/version-skew-policy/)."""
    major, minor = (int(p) for p in server.split(".")[:2])
    ours = spec.version
    if (ours.major, ours.minor) > (major, minor) or ours.minor < minor - 1:
        raise KschedError(
            f"scheduler version {ours.tag} cannot run against this API server ({server}): "
            "kube-scheduler must not be newer than kube-apiserver and at most one minor older",
            hint=f"deploy with --kubernetes-version {major}.{minor} (or set "
            "spec.kubernetesVersion in scheduler.yaml)",
        )


@dataclass(frozen=True)
class Plan:
    """What deploying a request comes to: the spec as its host runs it (checked), the objects
    to apply (marked with the form), and the host files (host forms) with their text."""

    spec: CheckedSpec
    form: str
    objects: list[dict[str, Any]]
    files: dict[Path, str]
    given: CheckedSpec  # as given: what a revision records (a host adds its paths to ``spec``)


def plan(
    cluster: Cluster, host: Host, request: DeployRequest, report: Reporter = QUIET,
    *, dry_run: bool = False,
) -> Plan:  # fmt: skip
    """The one computation of what ``deploy`` would apply and write (``diff`` shows it).
    ``dry_run``: the host writes nothing while preparing (the lab's scheduler kubeconfig)."""
    target, form = request.spec, request.form
    on_host = form in HOST_FORMS
    server = server_version(cluster)
    if request.follow_server_version:
        target = with_version(target, server)
    check_skew(target, server)
    if on_host:
        if note := host.note():
            report.info(note)
    # The one check of what is deployed: everything below takes the checked spec.
    spec = host.prepare(target, form, dry_run=dry_run) if on_host else ensure_valid(target)
    objects = cluster_objects(spec, form) if not on_host or host_rbac(spec) else []
    for note in not_applied(spec, form):
        report.info(note)
    if on_host and not host.loopback_pod_ips and any(o["kind"] == "Service" for o in objects):
        _warn_loopback_metrics(spec, report)
    files = host.files(spec, form) if on_host else {}
    if on_host:
        recorded = {HOST_FILES_ANNOTATION: json.dumps(sorted(str(p) for p in files))}
        for obj in objects:
            obj["metadata"]["annotations"].update({**recorded, **host.annotations()})
    given = ensure_valid(target) if on_host else spec
    return Plan(spec, form, objects, files, given)


def deploy(
    cluster: Cluster, host: Host, request: DeployRequest, report: Reporter = QUIET,
    planned: Plan | None = None,
) -> DeployResult:  # fmt: skip
    """Deploy ``request.spec`` as ``request.form`` and (by default) wait until it serves;
    ``planned``: its :func:`plan` already made (``deploy --diff`` shows the one it applies).

    Raises :class:`~kschedctl.base.errors.KschedError` subclasses: ApplyError (with what was applied
    before the failure), WaitTimeout, ForbiddenError, …
    """
    planned = planned or plan(cluster, host, request, report)
    spec, form, objects, files = planned.spec, planned.form, planned.objects, planned.files
    on_host = form in HOST_FORMS
    started = time.monotonic()
    until = started + request.timeout
    try:
        _refuse_taken_name(discover(snapshot(cluster)), spec, form)
    except ClusterError as err:  # a user who may deploy need not be allowed to list everything
        report.warn(f"cannot check that no other scheduler serves {spec.name!r}: {err.message}")
    live = apply.live_objects(cluster, objects)
    foreign = [describe(obj) for obj, now in live if not apply.owned_by(now, spec.name)]
    if foreign:
        raise KschedError(
            f"refusing to overwrite objects kschedctl did not create: {', '.join(foreign)}",
            hint="pick another scheduler name, or delete those objects yourself if they are stale",
        )
    refuse_tool_managed(spec.name, [now for _, now in live])
    apply.require_served(cluster, objects)
    routing_ops.refuse_overlap(cluster, spec.name, objects)
    dry_run = request.server_dry_run
    # The routing goes last, once the scheduler serves: a pod routed to a scheduler that does
    # not run yet would wait for nothing (and first, when the spec dropped it: pruned below).
    routes = [o for o in objects if routing_ops.is_routing(o)]
    objects = [o for o in objects if not routing_ops.is_routing(o)]
    if form == "pod" and not dry_run:
        _replace_changed_pod(cluster, objects, until, report)
    allowed = allowed_keys(spec, form)
    pruned_first = (
        () if dry_run else _prune_stale_rbac(cluster, spec, form, report, routing_only=True)
    )
    outcomes = tuple(_apply(cluster, objects, allowed, dry_run, report))
    result = DeployResult(spec, form, outcomes, tuple(files), server_dry_run=dry_run)
    if dry_run:
        return replace(
            result, applied=outcomes + tuple(_apply(cluster, routes, allowed, True, report))
        )
    pruned = pruned_first + _prune_stale_rbac(cluster, spec, form, report)
    result = replace(result, pruned=pruned)
    unchanged = all(o.action == "unchanged" for o in outcomes) and not pruned
    changed = False
    if on_host:
        changed, host_unchanged = _install_host(host, spec, form, files, report)
        unchanged = host_unchanged and unchanged
    if unchanged:
        report.info(f"{spec.name}: unchanged")
    result = replace(result, files_changed=changed, unchanged=unchanged)
    deployed = planned.given
    # --no-wait with routing still waits for Ready pods and the Lease held: the least that
    # makes routing pods to it safe (docs/guides/routing.md).
    if not request.wait and not routes:
        revision = _record(cluster, deployed, request, report)
        return replace(result, seconds=time.monotonic() - started, revision=revision)
    try:
        alive = host.liveness(spec, form) if on_host else None
        rendered = _static_pod(files) if form == "static-pod" else objects
        leader = _wait_serving(cluster, spec, form, rendered, (started, until), report, alive)
        node = None
        if request.verify and request.wait:
            node = rollout.canary(cluster, spec.name, request.canary_namespace, until, report.info)
        if routes:
            routed = tuple(_apply(cluster, routes, allowed, False, report))
            routing_ops.wait_routing(
                cluster, routing_ops.routes_in(routes), until, report, applies=True
            )
            outcomes += routed
            unchanged = unchanged and all(o.action == "unchanged" for o in routed)
    except KschedError as err:  # applied but not serving: helm records a failed release too
        _record(cluster, deployed, request, report, failure=err.message)
        raise
    revision = _record(cluster, deployed, request, report)
    return replace(
        result, applied=outcomes, unchanged=unchanged, waited=True, leader=leader,
        canary_node=node, seconds=time.monotonic() - started, revision=revision,
    )  # fmt: skip


def _record(
    cluster: Cluster, spec: CheckedSpec, request: DeployRequest, report: Reporter,
    failure: str = "",
) -> int | None:  # fmt: skip
    what = history.Record(
        history.rendered_digest(spec, request.form), request.overrides,
        f"{request.description or 'deploy'} failed: {failure.splitlines()[0][:200]}"
        if failure else request.description,
        status="failed" if failure else "deployed", history_max=request.history_max,
    )  # fmt: skip
    revision = history.record(cluster, spec, request.form, what, report)
    return revision.number if revision else None


def _warn_loopback_metrics(spec: Spec, report: Reporter) -> None:
    """The static pods' metrics Service reaches them at the nodes' IPs (host network): a
    loopback ``--bind-address`` (kubeadm's default for kube-scheduler too) serves no scraper."""
    try:
        loopback = ipaddress.ip_address(spec.service.bind_address).is_loopback
    except ValueError:
        return  # spec validation names a bad address
    if loopback:
        report.warn(
            f"{spec.name} binds {spec.service.bind_address}: its metrics Service's endpoints "
            "are the nodes' IPs, where it does not listen; set spec.service.bindAddress: "
            "0.0.0.0 (or the node's IP) for a scraper to reach it"
        )


def stale_rbac_objects(
    cluster: Cluster, spec: Spec, form: str, report: Reporter
) -> list[dict[str, Any]]:
    """The RBAC objects of ``form``'s table that kschedctl created for this scheduler but that
    ``spec`` no longer renders: what deploy prunes; never anything outside the table or
    unlabelled."""
    # Rights a spec stops granting go too: the built-in roles include the default Lease.
    stale = stale_rbac(spec, applied(form).objects, form)
    if not stale:
        return []
    try:
        managed = apply.managed_objects(cluster, spec.name)
    except ClusterError as err:
        report.warn(f"cannot look for RBAC objects {spec.name} no longer needs: {err.message}")
        return []
    return [
        obj
        for obj in managed
        if (obj["kind"], obj["metadata"].get("namespace") or "", obj["metadata"]["name"]) in stale
    ]


def _prune_stale_rbac(
    cluster: Cluster, spec: Spec, form: str, report: Reporter, *, routing_only: bool = False
) -> tuple[str, ...]:
    """Delete :func:`stale_rbac_objects`: the routing's alone (``routing_only``, before anything
    is applied, so no new pod goes to a scheduler whose spec stopped routing), or the rest."""
    pruned = []
    for obj in stale_rbac_objects(cluster, spec, form, report):
        if routing_ops.is_routing(obj) != routing_only:
            continue
        if apply.delete_object(cluster, obj):
            pruned.append(describe(obj))
            report.done(f"{describe(obj)} deleted (no longer rendered)")
    return tuple(pruned)


def _install_host(
    host: Host, spec: Spec, form: str, files: dict[Path, str], report: Reporter
) -> tuple[bool, bool]:
    """Write the host files and run the unit: (files changed, nothing changed and it already
    ran)."""
    changed = host.write_files(files)
    for path in files:
        report.done(f"file {path} {'written' if changed else 'unchanged'}")
    for path in host.prune_plugin_files(spec, files):
        report.done(f"file {path} deleted (no longer in spec.builtin.plugins)")
        changed = True
    if form == "static-pod":  # the kubelet (the lab's runner) picks the manifest up itself
        return changed, not changed
    return changed, host.start_service(spec, files, changed, report.info, report.warn)


def _apply(
    cluster: Cluster, objects: list[dict[str, Any]], allowed: frozenset[ObjectKey],
    dry_run: bool, report: Reporter,
) -> list[Outcome]:  # fmt: skip
    suffix = " (server dry run)" if dry_run else ""
    try:
        outcomes = apply.apply_objects(cluster, objects, allowed=allowed, dry_run=dry_run)
    except ApplyError as err:  # say what exists now, then fail
        for outcome in err.outcomes:
            report.done(f"{outcome.ref} {outcome.action}{suffix}")
        raise
    for outcome in outcomes:
        report.done(f"{outcome.ref} {outcome.action}{suffix}")
    return outcomes


def refuse_tool_managed(name: str, live: list[dict[str, Any]]) -> None:
    """Refuse to deploy over a scheduler that Helm or a GitOps tool applied: each would take
    its objects back from the other at its next sync or upgrade (a silent tug of war)."""
    tools = [tool for tool in appliers(live) if tool in GITOPS_TOOLS]
    if not tools:
        return
    releases = helm_releases(live)
    if releases:
        release = releases[0]
        where = f" in namespace {release[1]}" if release[1] else ""
        raise KschedError(
            f"scheduler {name} is installed by Helm release {release[0]}{where}: deploying "
            "over it would take its objects from Helm, and Helm would take them back at its "
            "next upgrade",
            hint=f"change it through Helm (`kschedctl render {name} --as helm-chart DIR`, then "
            f"`{helm_command('upgrade', release)} DIR`), or `{helm_command('uninstall', release)}`"
            " first to hand it over to `kschedctl deploy`",
        )
    raise KschedError(
        f"scheduler {name} is applied by {' and '.join(tools)}: it would put back what deploy "
        "changes at its next sync",
        hint=f"change the files it applies (`kschedctl render {name} --as kustomize DIR` or "
        "`--as helm-chart DIR`), or remove the scheduler from its repository and run "
        f"`kschedctl remove {name}` first to hand it over to `kschedctl deploy`",
    )


def _refuse_taken_name(schedulers: list[Scheduler], spec: Spec, form: str) -> None:
    for s in schedulers:
        if s.name not in spec.scheduler_names or not s.served:
            continue
        if spec.replaces_default and s.name == DEFAULT_SCHEDULER_NAME and not s.managed:
            # What a replacement replaces: it takes over the default scheduler's Lease (the
            # spec makes sure), so the two never bind at once; one still running waits.
            continue
        ours = (
            s.managed
            and (s.instance or "").endswith(f"/{spec.name}")
            or (s.managed and s.form in HOST_FORMS)
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


def _replace_changed_pod(
    cluster: Cluster, objects: list[dict[str, Any]], until: float, report: Reporter
) -> None:
    """A bare Pod cannot change its spec: delete it when its config or image changed."""
    for obj in objects:
        if obj["kind"] != "Pod":
            continue
        live = apply.current(cluster, obj)
        if live is None:
            continue
        if pod_replaced(obj, live):
            report.info(f"pod {obj['metadata']['name']}: config changed, replacing it")
            apply.delete_object(cluster, obj)
            rollout.poll(
                partial(_gone, cluster, obj), until,
                f"the old pod {obj['metadata']['name']} to go", hint="",
            )  # fmt: skip


def _static_pod(files: dict[Path, str]) -> list[dict[str, Any]]:
    """The static pod's manifest among the host files (the one that is a Pod)."""
    for body in files.values():
        try:
            docs = list(yaml.safe_load_all(body))
        except yaml.YAMLError:
            continue  # a config file of another shape
        pods = [d for d in docs if isinstance(d, dict) and d.get("kind") == "Pod"]
        if pods:
            return pods
    return []


def pod_replaced(rendered: dict[str, Any], live: dict[str, Any]) -> bool:
    """A bare Pod cannot change its spec: deploy replaces it when its containers (images,
    commands, flags) or its config changed."""
    return not same_containers(live, rendered)


def _gone(cluster: Cluster, obj: dict[str, Any]) -> bool:
    return apply.current(cluster, obj) is None


def _wait_serving(
    cluster: Cluster, spec: CheckedSpec, form: str, rendered: list[dict[str, Any]],
    times: tuple[float, float], report: Reporter, alive: Callable[[], None] | None,
) -> str:  # fmt: skip
    """Wait until the new pods are rolled out and Ready (pod, deployment, static-pod forms) and
    the Lease is held by one of them (by anyone, for the service form); returns its holder
    identity ("" without leader election). ``rendered``: the objects applied, or the static
    pod's manifest; ``times``: (started, until)."""
    le = spec.leader_election
    lease = f"{le.resource_namespace}/{le.resource_name}" if le.leader_elect else ""
    started, until = times
    if form in ("pod", "deployment", "static-pod"):
        kind = "Deployment" if form == "deployment" else "Pod"
        template = next(o for o in rendered if o.get("kind") == kind)
        target = rollout.Rollout(form, spec.name, template, config_hash(spec), lease)
        report.info(f"waiting for {target.what} to roll out")
        return rollout.wait_rolled_out(cluster, target, started, until, report.progress, alive)
    if not lease:
        return ""
    report.info(f"waiting for Lease {lease} to be held")
    return rollout.wait_lease(
        cluster, le.resource_namespace, le.resource_name, None, until, alive=alive
    )
