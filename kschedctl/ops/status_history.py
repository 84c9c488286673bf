"""`status`'s revision and drift: the current revision (number, when, by whom) and the fields
where the live objects differ from what that revision renders (observe/drift.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kschedctl.base.errors import ForbiddenError, KschedError
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.drift import Drift, drifts
from kschedctl.observe.revisions import current
from kschedctl.ops.deploy import cluster_objects
from kschedctl.ops.history import read_history
from kschedctl.ops.rollback import revision_spec
from kschedctl.render.forms import HOST_FORMS


@dataclass
class RevisionState:
    revision: dict[str, Any] | None = None  # the current revision's summary (history's fields)
    drift: list[Drift] | None = None  # None: not compared (no revision, a host form, …)
    notes: list[str] = field(default_factory=list)  # why drift was not compared, and such


def revision_state(
    cluster: Cluster, name: str, namespace: str | None, live: list[dict[str, Any]]
) -> RevisionState:
    """``live``: the scheduler's objects as the cluster has them (managedFields included);
    none (a scheduler kschedctl did not deploy): no revisions to read."""
    state = RevisionState()
    if not namespace or not live:
        return state
    try:
        found = read_history(cluster, name, namespace)
    except ForbiddenError as err:
        state.notes.append(f"revisions not readable: {err.message}")
        return state
    state.notes += [f"left out of the history: {problem}" for problem in found.unreadable]
    now = current(found.revisions)
    if now is None:
        return state
    state.revision = now.to_summary()
    if now.form in HOST_FORMS:
        state.notes.append(f"drift: not compared for the {now.form} form (its files are on a host)")
        return state
    try:
        rendered = cluster_objects(revision_spec(now), now.form)
    except KschedError as err:
        state.notes.append(f"drift: revision {now.number} does not render: {err.message}")
        return state
    state.drift = drifts(rendered, live)
    return state
