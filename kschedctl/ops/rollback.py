"""Roll a scheduler back to a recorded revision, like ``helm rollback``.

A revision is as trusted as the Secrets of its namespace, so nothing stored is applied as it
is: its spec is loaded as a user's file would be (bounded, strict, checked), must name the
same scheduler and namespace, and is rendered again through deploy's own path (the rendered
allow-list); a recorded hash that differs from that rendering refuses the rollback when the
same kschedctl version wrote it (tampered or corrupt). Then it is deployed as deploy does (the
same wait) in the revision's form, which records a new revision "rollback to N".
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from kschedctl import __version__
from kschedctl.base.errors import KschedError, Problem, SpecError, errors_in
from kschedctl.base.userfile import MAX_FILE_BYTES
from kschedctl.hosts import Host
from kschedctl.kubeclient.client import Cluster
from kschedctl.model.config.shapes import plugin_path_problem
from kschedctl.observe.revisions import Revision, rollback_target
from kschedctl.ops import history
from kschedctl.ops.deploy import DeployRequest, DeployResult, deploy
from kschedctl.ops.reporter import QUIET, Reporter
from kschedctl.spec import CheckedSpec, spec_problems
from kschedctl.spec.checks import proven


@dataclass(frozen=True)
class RollbackRequest:
    name: str
    namespace: str | None = None  # None: where its revisions are
    revision: int | None = None  # None: the newest that differs from what runs now
    server_dry_run: bool = False
    wait: bool = True
    verify: bool = True
    timeout: float = 180.0
    canary_namespace: str = "default"


@dataclass(frozen=True)
class Plan:
    """The revision chosen and the deploy that restores it."""

    revision: Revision
    request: DeployRequest


def revision_spec(revision: Revision) -> CheckedSpec:
    """The revision's spec, loaded and checked exactly as a user's ``scheduler.yaml`` (the
    same bound, the strict loader, the checks; its plugin files read from a private
    workspace holding only them); SpecError naming the revision."""
    where = f"revision {revision.number} ({revision.secret_name})"
    if len(revision.spec.encode()) > MAX_FILE_BYTES:
        raise SpecError("spec", f"{where}: its spec is larger than {MAX_FILE_BYTES} bytes")
    with tempfile.TemporaryDirectory(prefix="kschedctl-revision-") as tmp:
        base = Path(tmp)
        for rel, text in revision.files.items():
            problem = plugin_path_problem(rel)
            if problem is not None:
                raise SpecError("files", f"{where}: plugin file {rel!r}: {problem}")
            path = base / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        loaded, problems = spec_problems(revision.spec, where, base)
    problems = errors_in(problems)
    if problems or loaded is None:
        raise SpecError.from_problems(
            problems or [Problem("", "not a spec", where)],
            hint="roll back to another revision (`kschedctl history NAME`)",
        )
    spec = proven(loaded)  # spec_problems checked it, as load_spec does
    if (spec.name, spec.namespace) != (revision.name, revision.namespace):
        raise SpecError(
            "", f"{where} records scheduler {spec.name!r} in namespace {spec.namespace!r}, not "
            f"{revision.name!r} in {revision.namespace!r}: refusing it",
            hint="its Secret was edited by hand: delete it, or roll back to another revision",
        )  # fmt: skip
    return spec


def check_digest(revision: Revision, spec: CheckedSpec, report: Reporter) -> None:
    """Refuse a revision whose spec renders other objects than it recorded (same kschedctl
    version); another version may render differently: say so and go on."""
    if history.rendered_digest(spec, revision.form) == revision.objects_hash:
        return
    if revision.version == __version__:
        raise SpecError(
            "", f"revision {revision.number} ({revision.secret_name}) does not render the "
            "objects it recorded: its Secret was tampered with or is corrupt; refusing it",
            hint="roll back to another revision (`kschedctl history NAME`), or delete that Secret",
        )  # fmt: skip
    report.warn(
        f"revision {revision.number} was recorded by kschedctl {revision.version}; this is "
        f"{__version__}, which renders its spec differently: deploying this version's rendering"
    )


def plan(cluster: Cluster, request: RollbackRequest, report: Reporter = QUIET) -> Plan:
    namespace = request.namespace or history.namespace_of(cluster, request.name)
    found = history.require_history(cluster, request.name, namespace)
    for problem in found.unreadable:
        report.warn(f"left out of the history: {problem}")
    revision = rollback_target(found.revisions, request.revision)
    if revision.name != request.name:  # read_history keeps only its own; never another's
        raise KschedError(f"revision {revision.number} is not {request.name}'s")
    spec = revision_spec(revision)
    check_digest(revision, spec, report)
    deploy_request = DeployRequest(
        spec, revision.form, server_dry_run=request.server_dry_run, wait=request.wait,
        verify=request.verify, timeout=request.timeout, canary_namespace=request.canary_namespace,
        overrides=revision.overrides, description=f"rollback to {revision.number}",
    )  # fmt: skip
    return Plan(revision, deploy_request)


def rollback(
    cluster: Cluster, host: Host, request: RollbackRequest, report: Reporter = QUIET
) -> tuple[Revision, DeployResult]:
    chosen = plan(cluster, request, report)
    report.info(
        f"rolling {request.name} back to revision {chosen.revision.number} "
        f"({chosen.revision.form}, {chosen.revision.at})"
    )
    return chosen.revision, deploy(cluster, host, chosen.request, report)
