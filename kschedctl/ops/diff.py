"""Preview a deploy: what it would change, object by object and file by file; change nothing.

The objects are exactly deploy's (:func:`kschedctl.ops.deploy.plan`, its allow-list checked);
each goes through a server-side dry-run apply (field manager kschedctl, as deploy applies it)
and is compared with the live object, both without the server's own bookkeeping and with
Secrets' values masked (:mod:`kschedctl.observe.changes`). RBAC objects deploy would prune
diff to nothing; a bare Pod whose config changed is replaced by deploy, and said so. The host
forms' files are compared with what is on the host.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kschedctl.base.errors import KschedError, NotFoundError, SpecError
from kschedctl.base.userfile import read_user_file
from kschedctl.base.yamltext import to_yaml
from kschedctl.hosts import Host
from kschedctl.k8s import apply
from kschedctl.k8s.resources import describe
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.changes import masked, normalised, object_name, projected
from kschedctl.ops.deploy import (
    DeployRequest,
    Plan,
    allowed_keys,
    plan,
    pod_replaced,
    refuse_tool_managed,
    stale_rbac_objects,
)
from kschedctl.ops.reporter import QUIET, Reporter
from kschedctl.printers.unified import unified


@dataclass(frozen=True)
class Change:
    """One object or file deploy would touch, and how (``lines``: empty when unchanged)."""

    ref: str  # deployment/NAME -n NS, or file PATH
    lines: tuple[str, ...]  # its `diff -u -N` lines
    note: str = ""  # what deploy does beyond applying it (replaces a Pod, prunes an object)


@dataclass(frozen=True)
class DiffResult:
    name: str
    form: str
    changes: tuple[Change, ...]  # in deploy's order: objects, pruned objects, host files

    @property
    def differs(self) -> bool:
        return any(c.lines for c in self.changes)


def diff(
    cluster: Cluster, host: Host, request: DeployRequest, report: Reporter = QUIET,
    planned: Plan | None = None,
) -> DiffResult:  # fmt: skip
    """What ``deploy(cluster, host, request)`` would change; nothing is changed (the API
    server sees dry runs and reads only, the host is only read). ``planned``: the plan deploy
    is about to apply (``deploy --diff``: the same lab port, the same files)."""
    planned = planned or plan(cluster, host, request, report, dry_run=True)
    spec, form, objects = planned.spec, planned.form, planned.objects
    apply.refuse_unrendered(objects, allowed_keys(spec, form))
    apply.require_served(cluster, objects)
    live_of = {id(obj): now for obj, now in apply.live_objects(cluster, objects)}
    foreign = [describe(o) for o in objects if (now := live_of.get(id(o))) is not None
               and not apply.owned_by(now, spec.name)]  # fmt: skip
    if foreign:
        report.warn(f"deploy would refuse to overwrite objects kschedctl did not create: "
                    f"{', '.join(foreign)}")  # fmt: skip
    try:
        refuse_tool_managed(spec.name, list(live_of.values()))
    except KschedError as err:  # a preview shows what deploy would change all the same
        report.warn(f"deploy would refuse: {err.message}")
    changes = [_object_change(cluster, obj, live_of.get(id(obj))) for obj in objects]
    changes += [
        _change(obj, obj, None, "deleted by deploy: the spec no longer renders it")
        for obj in stale_rbac_objects(cluster, spec, form, report)
    ]
    changes += [_file_change(path, text) for path, text in planned.files.items()]
    return DiffResult(spec.name, form, tuple(changes))


def _object_change(cluster: Cluster, obj: dict[str, Any], live: dict[str, Any] | None) -> Change:
    if obj["kind"] == "Pod" and live is not None and pod_replaced(obj, live):
        # The server refuses to change a Pod's spec (so no dry run): compare what kschedctl
        # writes with the same fields of the live Pod.
        return _change(
            obj, projected(normalised(live), obj), obj,
            "replaced by deploy: a bare Pod's spec cannot change, it is deleted and created",
        )  # fmt: skip
    return _change(obj, live, apply.dry_run_merged(cluster, obj))


def _change(
    obj: dict[str, Any], live: dict[str, Any] | None, merged: dict[str, Any] | None, note: str = ""
) -> Change:
    before, after = masked(normalised(live), normalised(merged))
    lines = unified(object_name(obj), _text(before), _text(after))
    return Change(describe(obj), tuple(lines), note if lines else "")


def _text(obj: dict[str, Any] | None) -> str:
    return "" if obj is None else to_yaml(obj, document=True)


def _file_change(path: Path, text: str) -> Change:
    try:
        now = read_user_file(path)
    except NotFoundError:
        now = ""
    except SpecError as err:  # not text, too big: deploy overwrites it all the same
        now = f"# unreadable: {err.message}\n"
    return Change(f"file {path}", tuple(unified(str(path).lstrip("/"), now, text)))
