"""A scheduler's revisions in the cluster: recorded by deploy, read by ``history``, ``rollback``
and ``status`` (the Secrets' format: :mod:`kschedctl.observe.revisions`).

Only this module writes revision Secrets, and only under their own names
(``kschedctl.NAME.vN``): deploy's allow-list of rendered objects is not involved.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from kschedctl import __version__
from kschedctl.base.errors import ConflictError, KschedError, NotFoundError, UsageError
from kschedctl.base.yamltext import to_yaml
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.revisions import (
    HISTORY_MAX,
    REVISION_LABEL,
    SECRET_TYPE,
    STATUS_LABEL,
    Revision,
    from_secret,
    number_of,
    secret_name,
    to_prune,
    to_secret,
)
from kschedctl.observe.schedulers import SCHEDULER_LABEL, owner
from kschedctl.ops.reporter import QUIET, Reporter
from kschedctl.render.context import labels
from kschedctl.render.forms import render
from kschedctl.render.kinds import SECRET
from kschedctl.spec import CheckedSpec


def rendered_digest(spec: CheckedSpec, form: str) -> str:
    """The hash a revision records of what ``spec`` renders as ``form`` (its config
    included): host-independent, so a rollback re-renders and compares it anywhere."""
    digest = hashlib.sha256()
    for part in (form, render(spec, form), render(spec, "config")):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _secrets(cluster: Cluster, name: str, namespace: str) -> list[dict[str, Any]]:
    found = cluster.list(
        SECRET.collection(namespace),
        labelSelector=f"{SCHEDULER_LABEL}={name},{REVISION_LABEL}",
        fieldSelector=f"type={SECRET_TYPE}",
    )
    return [s for s in found if owner(s) == name and number_of(s) is not None]


@dataclass(frozen=True)
class History:
    revisions: list[Revision]  # oldest first
    unreadable: list[str]  # why each Secret that is no valid revision was left out


def read_history(cluster: Cluster, name: str, namespace: str) -> History:
    """The revisions of scheduler ``name`` in ``namespace``, oldest first."""
    revisions, unreadable = [], []
    for secret in _secrets(cluster, name, namespace):
        try:
            revision = from_secret(secret)
        except KschedError as err:
            unreadable.append(err.message)
            continue
        if revision.name == name:
            revisions.append(revision)
        else:
            unreadable.append(f"secret {secret['metadata']['name']} records {revision.name!r}")
    return History(sorted(revisions, key=lambda r: r.number), unreadable)


def namespace_of(cluster: Cluster, name: str) -> str:
    """Where ``name``'s revisions are, when -n is not given: the one namespace holding them
    (kube-system, the spec's default, when none or when listing every namespace is denied)."""
    try:
        found = cluster.list(
            SECRET.collection(),
            labelSelector=f"{SCHEDULER_LABEL}={name},{REVISION_LABEL}",
            fieldSelector=f"type={SECRET_TYPE}",
        )
    except KschedError:
        return "kube-system"
    namespaces = sorted({s["metadata"]["namespace"] for s in found if owner(s) == name})
    if len(namespaces) > 1:
        raise UsageError(
            f"{name} has revisions in several namespaces: {', '.join(namespaces)}",
            hint="choose one with -n NAMESPACE",
        )
    return namespaces[0] if namespaces else "kube-system"


def require_history(cluster: Cluster, name: str, namespace: str) -> History:
    found = read_history(cluster, name, namespace)
    if not found.revisions:
        raise NotFoundError(
            f"no revisions of {name!r} in namespace {namespace!r}",
            hint="each `kschedctl deploy` records one; pass -n with the scheduler's namespace",
        )
    return found


def caller(cluster: Cluster) -> str:
    """Who deploys: the username a SelfSubjectReview gives, "unknown" when it is not allowed."""
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    try:
        answer = cluster.create("/apis/authentication.k8s.io/v1/selfsubjectreviews", body)
    except KschedError:
        return "unknown"
    name = ((answer.get("status") or {}).get("userInfo") or {}).get("username")
    return name if isinstance(name, str) and name else "unknown"


@dataclass(frozen=True)
class Record:
    """What a deploy asks to record beside its spec and form."""

    objects_hash: str
    overrides: dict[str, Any]
    description: str = ""
    status: str = "deployed"
    history_max: int = HISTORY_MAX


def record(
    cluster: Cluster, spec: CheckedSpec, form: str, what: Record, report: Reporter = QUIET
) -> Revision | None:
    """Record a revision of ``spec`` deployed as ``form``; mark the ones that ran before
    superseded; keep the last ``history_max``. None (and a warning) when it cannot: the
    deploy itself happened, a missing record must not undo it."""
    try:
        revision = _claim_next(cluster, spec, form, what)
        number = revision.number
        # Read again: a concurrent deploy may have recorded one between our read and create.
        secrets = _secrets(cluster, spec.name, spec.namespace)
        numbers = [n for s in secrets if (n := number_of(s)) is not None]
        if what.status == "deployed":
            for secret in secrets:
                status = (secret["metadata"].get("labels") or {}).get(STATUS_LABEL)
                if status == "deployed" and (number_of(secret) or 0) < number:
                    cluster.patch(
                        SECRET.item(secret["metadata"]["name"], spec.namespace),
                        {"metadata": {"labels": {STATUS_LABEL: "superseded"}}},
                    )
        for old in to_prune(numbers, what.history_max):
            cluster.delete(SECRET.item(secret_name(spec.name, old), spec.namespace))
    except KschedError as err:
        report.warn(f"{spec.name}: could not record a revision: {err.message}")
        return None
    report.info(f"{spec.name}: revision {number} recorded ({revision.status})")
    return revision


CLAIM_ATTEMPTS = 8  # concurrent deploys of one scheduler: each retry reads the numbers afresh


def _claim_next(cluster: Cluster, spec: CheckedSpec, form: str, what: Record) -> Revision:
    """Create the next revision's Secret. Its name carries the number, so the API server's
    AlreadyExists (409) is the lock: two concurrent deploys never share a number; the loser
    reads again and takes the next one."""
    by, attempt = caller(cluster), 0
    while True:
        attempt += 1
        numbers = [n for s in _secrets(cluster, spec.name, spec.namespace)
                   if (n := number_of(s)) is not None]  # fmt: skip
        number = max(numbers, default=0) + 1
        revision = Revision(
            name=spec.name, namespace=spec.namespace, number=number, form=form,
            spec=to_yaml(spec.to_dict(), document=True), objects_hash=what.objects_hash,
            version=__version__, by=by,
            at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            description=what.description or ("install" if number == 1 else "upgrade"),
            overrides=what.overrides, files=dict(spec.builtin.plugin_sources),
            status=what.status,
        )  # fmt: skip
        try:
            cluster.create(
                SECRET.collection(spec.namespace), to_secret(revision, labels(spec, "revision"))
            )
            return revision
        except ConflictError:
            if attempt == CLAIM_ATTEMPTS:
                raise
