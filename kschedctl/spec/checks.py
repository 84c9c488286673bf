"""Validation: the spec's own rules, then the config rules on the config it renders to.

Collects every problem instead of stopping at the first; :func:`check_spec` is the one check
behind loading, ``validate``, ``render``, ``create`` and ``deploy``.
"""

from __future__ import annotations

import typing
from typing import Any

from kschedctl.base.errors import Problem, SpecError, errors_in
from kschedctl.model.config import shapes, versions
from kschedctl.model.config import validation as validate
from kschedctl.model.config.defaults import LEASE_NAMESPACE
from kschedctl.model.config.rbac import BUILTIN_ROLES, RBAC_MODES
from kschedctl.model.config.schema import (
    join,
    type_name,
    type_ok,
)
from kschedctl.spec.model import (
    PROGRAMS,
    BuiltinSettings,
    CheckedSpec,
    CustomSettings,
    MetricsSettings,
    PodSettings,
    Spec,
    camel,
    expected_type,
    part_type,
    yaml_fields,
)
from kschedctl.spec.programs import check_builtin, check_custom
from kschedctl.spec.routing import check_routing


def check_spec(spec: Spec) -> list[Problem]:
    """Every problem of ``spec``: the one check behind loading, ``validate``, ``render``,
    ``create`` and ``deploy`` (:func:`spec_from_dict` and :func:`ensure_valid` both end here)."""
    structural = _structure_problems(spec)
    if structural:
        return structural  # the rules below read typed, printable values only
    out: list[Problem] = []
    name_problem = shapes.dns_label_problem(spec.name)
    if name_problem:
        out.append(Problem("metadata.name", f"scheduler name {name_problem}"))
    elif spec.name == versions.DEFAULT_SCHEDULER_NAME and not spec.replaces_default:
        out.append(
            Problem(
                "metadata.name",
                "'default-scheduler' is the cluster's own scheduler: pick another name for an "
                "additional scheduler (or set spec.replacesDefault to replace it)",
            )
        )
    out.extend(_check_replacement(spec))
    version: versions.KubeVersion | None = None
    version_problem = shapes.kubernetes_version_problem(spec.kubernetes_version)
    if version_problem:
        out.append(Problem("spec.kubernetesVersion", version_problem))
    else:
        try:
            version = spec.version
        except ValueError as err:
            out.append(Problem("spec.kubernetesVersion", str(err)))
    out.extend(_shaped("spec.namespace", shapes.dns_label_problem(spec.namespace), "namespace"))
    if spec.program not in PROGRAMS:
        out.append(
            Problem(
                "spec.program",
                f"{shapes.shown(spec.program)}: must be one of {', '.join(PROGRAMS)}",
            )
        )
    out.extend(_check_rbac(spec))
    if spec.image:
        image_problem = shapes.image_problem(spec.image)
        if image_problem:
            out.append(Problem("spec.image", image_problem))
        elif version is not None:
            out.extend(_check_image(spec, version))
    elif version is not None:
        out.extend(_check_image(spec, version))
    if spec.replicas < 1:
        out.append(Problem("spec.replicas", f"{spec.replicas}: must be at least 1"))
    elif spec.replicas > shapes.INT32_MAX:
        out.append(Problem("spec.replicas", str(shapes.int_range_problem(spec.replicas, 1))))
    elif spec.replicas > 1 and not spec.leader_election.leader_elect:
        out.append(
            Problem(
                "spec.replicas",
                f"{spec.replicas} replicas need leader election: without it every replica "
                "schedules and they double-book nodes (set spec.leaderElection.leaderElect: true)",
            )
        )
    le = spec.leader_election
    if le.leader_elect and not (name_problem and le.resource_name == spec.name):
        path = "spec.leaderElection"
        name, namespace = le.resource_name, le.resource_namespace
        out += _shaped(f"{path}.resourceName", shapes.dns_subdomain_problem(name), "Lease name")
        out += _shaped(
            f"{path}.resourceNamespace", shapes.dns_label_problem(namespace), "namespace"
        )
    names = spec.scheduler_names
    if names and spec.name and spec.name not in names:
        out.append(
            Problem(
                "spec.profiles",
                f"no profile is named {spec.name!r} (metadata.name): kschedctl finds a scheduler "
                "by its name, so one profile must serve it",
            )
        )
    if "kubeconfig" in spec.client_connection:
        out.append(
            Problem(
                "spec.clientConnection.kubeconfig",
                "set spec.service.kubeconfig instead: host forms use it, in-cluster forms use "
                "the ServiceAccount",
            )
        )
    if spec.program == "builtin":
        # kschedctl's own flags: the same shape (--name[=value]), none of kube-scheduler's rules.
        out.extend(
            Problem(f"spec.extraArgs[{i}]", problem)
            for i, arg in enumerate(spec.extra_args)
            if (problem := shapes.flag_problem(arg))
        )
        out.extend(check_builtin(spec))
    else:
        out.extend(validate.check_extra_args(spec.extra_args, "spec.extraArgs"))
        if spec.builtin != BuiltinSettings():
            out.append(Problem("spec.builtin", "applies to program builtin only"))
    if spec.program == "custom":
        out.extend(check_custom(spec, version))
    elif spec.custom != CustomSettings():
        out.append(Problem("spec.custom", "applies to program custom only"))
    out.extend(_check_service(spec))
    out.extend(_check_pod(spec.pod))
    out.extend(_check_metrics(spec.metrics))
    out.extend(check_routing(spec, version))
    if version is not None:
        out.extend(
            validate.check_config(
                spec.scheduler_config(),
                version,
                replaces_default=spec.replaces_default,
                prefix="spec.",
                type_meta=False,
                extra_plugins=spec.extra_plugins(),
            )
        )
    return out


def _check_replacement(spec: Spec) -> list[Problem]:
    """``replacesDefault``: serve what the default scheduler serves, where it lives.

    Pods that name no scheduler get ``default-scheduler`` (the API server's defaulting), and
    kube-scheduler's Lease is kube-system/kube-scheduler (kubeadm's defaults): a replacement
    holding another Lease would bind alongside kube-scheduler instead of taking over.
    """
    if not spec.replaces_default:
        return []
    out: list[Problem] = []
    if versions.DEFAULT_SCHEDULER_NAME not in spec.scheduler_names:
        out.append(
            Problem(
                "spec.replacesDefault",
                f"no profile serves {versions.DEFAULT_SCHEDULER_NAME!r}: a replacement of the "
                "default scheduler must serve the pods that name no scheduler (name it "
                f"{versions.DEFAULT_SCHEDULER_NAME}: kschedctl create "
                f"{versions.DEFAULT_SCHEDULER_NAME} --replaces-default)",
            )
        )
    if spec.namespace != LEASE_NAMESPACE:
        out.append(
            Problem(
                "spec.namespace",
                f"a replacement of the default scheduler runs in {LEASE_NAMESPACE}, beside the "
                "default scheduler's Lease",
            )
        )
    le = spec.leader_election
    lease = (le.resource_namespace, le.resource_name)
    if le.leader_elect and lease != (LEASE_NAMESPACE, versions.DEFAULT_LEASE_NAME):
        out.append(
            Problem(
                "spec.leaderElection",
                f"a replacement of the default scheduler holds the Lease {LEASE_NAMESPACE}/"
                f"{versions.DEFAULT_LEASE_NAME}, not {'/'.join(lease)}: with a Lease of its "
                "own it binds alongside kube-scheduler instead of taking over from it",
            )
        )
    return out


def _check_rbac(spec: Spec) -> list[Problem]:
    if spec.rbac not in RBAC_MODES:  # the value itself is not echoed: it may be anything
        return [
            Problem(
                "spec.rbac",
                f"must be one of {', '.join(RBAC_MODES)}: least privilege (the default), or "
                "the cluster's system:kube-scheduler and system:volume-scheduler roles",
            )
        ]
    if spec.rbac == BUILTIN_ROLES and spec.program == "builtin":
        return [
            Problem(
                "spec.rbac",
                f"{BUILTIN_ROLES} applies to program kube-scheduler only: program builtin "
                "always gets its own ClusterRole of exactly what it uses",
            )
        ]
    return []


def _structure_problems(spec: Spec) -> list[Problem]:
    """Wrong types and unrenderable values anywhere in ``spec`` (also one built in code)."""
    out: list[Problem] = []
    if not isinstance(spec.name, str):
        out.append(Problem("metadata.name", f"must be a string, not {shapes.shown(spec.name)}"))
    else:
        out.extend(shapes.hostile_problems(spec.name, "metadata.name"))
    _typed_fields(spec, "spec", out)
    return out


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _typed_fields(obj: Any, path: str, out: list[Problem]) -> None:
    hints = _hints(type(obj))
    for key, f in yaml_fields(type(obj)).items():
        value, hint, fpath = getattr(obj, f.name), hints[f.name], join(path, key)
        part = part_type(hint)
        if part is not None and (value is not None or part is hint):
            if type(value) is not part:
                out.append(Problem(fpath, f"must be a mapping, not {shapes.shown(value)}"))
            else:
                _typed_fields(value, fpath, out)
            continue
        if value is None and type(None) in typing.get_args(hint):
            continue
        expected = expected_type(hint)
        if value is None or not type_ok(value, expected):
            out.append(Problem(fpath, f"must be {type_name(expected)}, not {shapes.shown(value)}"))
            continue
        out.extend(shapes.hostile_problems(value, fpath))


def _check_image(spec: Spec, version: versions.KubeVersion) -> list[Problem]:
    image = spec.image
    if not image:
        if spec.program not in PROGRAMS:
            return []  # reported on spec.program
        return [Problem("spec.image", "is required when spec.program is not kube-scheduler")]
    if image.startswith("k8s.gcr.io/"):
        return [Problem("spec.image", "k8s.gcr.io is frozen since April 2023: use registry.k8s.io")]
    repo, _, tag = image.rpartition(":")
    if repo != versions.IMAGE_REPOSITORY:
        return []
    release = versions.RELEASE_TAG.fullmatch(tag)
    if release is None:
        return [
            Problem(
                "spec.image",
                f"tag {tag!r} is not a kube-scheduler release: registry.k8s.io tags them "
                f"vX.Y.Z, with the v and the patch (e.g. {version.tag}); remove spec.image "
                "to follow kubernetesVersion",
            )
        ]
    try:
        image_version = versions.parse_version(".".join(release.group(1, 2, 3)))
    except ValueError as err:
        return [Problem("spec.image", f"tag {tag!r}: {err}")]
    if image_version.minor > version.minor or image_version.minor < version.minor - 1:
        return [
            Problem(
                "spec.image",
                f"kube-scheduler {tag} does not fit kubernetesVersion {spec.kubernetes_version}: "
                "the scheduler may be at most one minor older than the API server, never newer "
                "(remove spec.image to follow kubernetesVersion)",
            )
        ]
    return []


def _check_service(spec: Spec) -> list[Problem]:
    out: list[Problem] = []
    svc, path = spec.service, "spec.service"
    for key in ("binary", "config_dir", "kubeconfig"):
        out += _shaped(f"{path}.{camel(key)}", shapes.absolute_path_problem(getattr(svc, key)))
    out += _shaped(f"{path}.bindAddress", shapes.ip_address_problem(svc.bind_address))
    port = svc.secure_port
    if not 1 <= port <= 65535:
        out.append(Problem(f"{path}.securePort", f"{port} is not a port number"))
    elif port == versions.INSECURE_PORT:
        out.append(Problem(f"{path}.securePort", "10251 was the insecure port, gone since 1.23"))
    elif port == versions.DEFAULT_SECURE_PORT and not spec.replaces_default:
        out.append(
            Problem(
                f"{path}.securePort",
                "10259 is the default scheduler's port on a control-plane host: two schedulers "
                "cannot both bind it (use another, e.g. 10260)",
            )
        )
    if not 0 <= svc.verbosity <= 10:
        out.append(Problem(f"{path}.verbosity", f"{svc.verbosity}: must be 0–10"))
    out += _shaped(f"{path}.user", shapes.user_name_problem(svc.user))
    return out


def _check_pod(pod: PodSettings) -> list[Problem]:
    out: list[Problem] = []
    path = "spec.pod"
    for key, value in pod.node_selector.items():
        if not isinstance(value, str):
            out.append(
                Problem(
                    f"{path}.nodeSelector.{key}", f"must be a string, not {shapes.shown(value)}"
                )
            )
    for i, toleration in enumerate(pod.tolerations):
        if not isinstance(toleration, dict):
            out.append(Problem(f"{path}.tolerations[{i}]", "must be a mapping"))
    if not 0 <= pod.verbosity <= 10:
        out.append(Problem(f"{path}.verbosity", f"{pod.verbosity}: must be 0–10"))
    if pod.priority_class_name:
        problem = shapes.dns_subdomain_problem(pod.priority_class_name)
        out += _shaped(f"{path}.priorityClassName", problem, "PriorityClass name")
    return out


def _check_metrics(metrics: MetricsSettings) -> list[Problem]:
    out: list[Problem] = []
    path = "spec.metrics"
    if metrics.service_monitor and not metrics.service:
        out.append(
            Problem(
                f"{path}.serviceMonitor",
                "a ServiceMonitor scrapes through the metrics Service: set "
                "spec.metrics.service: true too",
            )
        )
    scraper = metrics.scraper
    problem = shapes.dns_label_problem(scraper.namespace)
    out += _shaped(f"{path}.scraper.namespace", problem, "namespace")
    if scraper.service_account:
        problem = shapes.dns_subdomain_problem(scraper.service_account)
        out += _shaped(f"{path}.scraper.serviceAccount", problem, "ServiceAccount name")
    return out


def _shaped(path: str, problem: str | None, what: str = "") -> list[Problem]:
    """The problem a ``shapes`` check found at ``path`` (none: []); ``what`` names the value
    in the message (``namespace …``)."""
    if not problem:
        return []
    return [Problem(path, f"{what} {problem}" if what else problem)]


def ensure_valid(spec: Spec, source: str = "") -> CheckedSpec:
    """``spec``, checked once: SpecError listing every error. A checked spec is returned as it
    is (it cannot have changed since its check); another is checked and comes back as a
    read-only copy."""
    if isinstance(spec, CheckedSpec):
        return spec
    # Warnings (kube-scheduler runs it, probably not as meant) never refuse a spec.
    problems = errors_in([p.moved(source=source) for p in check_spec(spec)])
    if problems:
        raise SpecError.from_problems(problems)
    return proven(spec)


def proven(spec: Spec) -> CheckedSpec:
    """``spec``, which :func:`check_spec` found no error in (loading checks it on its way), as
    the read-only copy render and deploy take."""
    return CheckedSpec._of(spec)
