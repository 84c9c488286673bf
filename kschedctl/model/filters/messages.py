"""The FailedScheduling message kube-scheduler writes, rebuilt from an :class:`Evaluation`.

``FitError.Error()`` (pkg/scheduler/framework/types.go, v1.36)::

    "0/<N> nodes are available:" + (" <PreFilter msg>." | " <sorted 'count reason' list>.")
                                 + (" <PostFilter msg>" if any)

The histogram counts every reason of the first failing filter on every node (a node short of
cpu and memory counts twice) and sorts the ``"<count> <reason>"`` strings lexicographically
(``sort.Strings``: "10 …" sorts before "2 …"). The PostFilter part joins, with ", ", the
messages of the PostFilter plugins that did not succeed, in profile order:

- DynamicResources (GA and on since 1.34): "no new claims to deallocate" for a pod without
  ResourceClaims, or when its own PreFilter rejected the pod (a missing claim or class: no
  claims stored yet); "still not schedulable" for one with claims when none can be
  deallocated (deallocating an allocated claim another node cannot reach is not modelled).
  When another PreFilter rejected the pod with
  UnschedulableAndUnresolvable, the DynamicResources PreFilter never ran and its PostFilter
  fails to read its state: the whole PostFilter message is then "not found" and
  DefaultPreemption does not run (v1.36.3 source; real clusters show e.g. "0/3 nodes are
  available: pod has unbound immediate PersistentVolumeClaims. not found").
- DefaultPreemption: "preemption: " + either the ineligibility text, or another FitError over
  all nodes where nodes not tried read "Preemption is not helpful for scheduling", nodes without
  lower-priority pods "No preemption victims found for incoming pod", others the filter reason
  left after removing every lower-priority pod. When preemption finds a candidate the PostFilter
  succeeds and the message has no PostFilter part at all.

The event note is cut to 1024 bytes with a trailing " ..." (the pod condition is not).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .verdicts import (
    DYNAMIC_RESOURCES,
    REASON_PREEMPTION_NOT_HELPFUL,
    REASON_TAINT,
    SCHEDULING_ERROR,
    UNRESOLVABLE,
    Evaluation,
    Reason,
)

__all__ = ["failed_scheduling_message", "reason_text", "fit_error_message", "NO_NODES_MESSAGE"]

NO_NODES_MESSAGE = "no nodes available to schedule pods"
NOTE_LENGTH_LIMIT = 1024


def _norm(version: Sequence[int]) -> tuple[int, int, int | None]:
    if len(version) < 2:
        raise ValueError(f"server_version needs (major, minor[, patch]), got {version!r}")
    patch = version[2] if len(version) > 2 else None
    return int(version[0]), int(version[1]), patch


def _generic_taint_wording(v: tuple[int, int, int | None]) -> bool:
    """1.35+ and 1.34.2+ (cherry-pick #135023) no longer name the taint. A (1, 34) without a
    patch number is taken as a current 1.34 patch release."""
    major, minor, patch = v
    if (major, minor) >= (1, 35):
        return True
    if (major, minor) == (1, 34):
        return patch is None or patch >= 2
    return False


def reason_text(reason: Reason, server_version: Sequence[int] = (1, 36)) -> str:
    """The reason string as a kube-scheduler of ``server_version`` words it."""
    if reason.message != REASON_TAINT or reason.taint is None:
        return reason.message
    v = _norm(server_version)
    if _generic_taint_wording(v):
        return REASON_TAINT
    key, value = reason.taint.get("key", ""), reason.taint.get("value", "")
    if (v[0], v[1]) >= (1, 25):
        return f"node(s) had untolerated taint {{{key}: {value}}}"
    if (v[0], v[1]) >= (1, 18):
        return f"node(s) had taint {{{key}: {value}}}, that the pod didn't tolerate"
    return "node(s) had taints that the pod didn't tolerate"


def fit_error_message(
    num_nodes: int, reasons: Iterable[str], absent: int = 0, absent_reason: str = ""
) -> str:
    """``FitError.Error()`` without a PostFilter part, from one reason string per node failure
    (repeat a string once per node and per reason) plus ``absent`` nodes sharing one reason."""
    counts: dict[str, int] = {}
    for r in reasons:
        counts[r] = counts.get(r, 0) + 1
    if absent > 0 and absent_reason:
        counts[absent_reason] = counts.get(absent_reason, 0) + absent
    entries = sorted(f"{n} {r}" for r, n in counts.items())
    msg = f"0/{num_nodes} nodes are available:"
    if entries:
        msg += " " + ", ".join(entries) + "."
    return msg


def _preemption_text(evaluation: Evaluation) -> str | None:
    """DefaultPreemption's message without the "preemption: " prefix; None when it succeeds
    (a candidate exists) or was not computed."""
    p = evaluation.preemption
    if p is None:
        return None
    if p.ineligible is not None:
        return p.ineligible
    if p.candidates:
        return None
    reasons = [r for rs in p.node_reasons.values() for r in rs]
    return fit_error_message(
        p.num_nodes or evaluation.num_nodes,
        reasons,
        (p.num_nodes or evaluation.num_nodes) - len(p.node_reasons),
        REASON_PREEMPTION_NOT_HELPFUL,
    )


def _postfilter_message(
    evaluation: Evaluation, v: tuple[int, int, int | None], dra_enabled: bool
) -> str:
    if (v[0], v[1]) < (1, 24):
        return ""  # the PostFilter message joined the event in 1.24 (PR #107775)
    parts: list[str] = []
    if dra_enabled:
        pre = evaluation.prefilter
        if pre is not None and pre.code == UNRESOLVABLE and pre.plugin != DYNAMIC_RESOURCES:
            # the DynamicResources PreFilter never ran: its PostFilter finds no state
            return "not found"
        # With claims, the plugin says "still not schedulable" unless it releases one.
        if evaluation.dra_release is not None:
            parts.append(evaluation.dra_release.message)
        else:
            parts.append(
                "still not schedulable"
                if evaluation.pod_has_claims
                else "no new claims to deallocate"
            )
    if evaluation.preemption is not None:
        p = evaluation.preemption
        if p.helps:
            return ""  # PostFilter succeeded: the pod is nominated, no PostFilter text
        text = _preemption_text(evaluation)
        if text:
            parts.append("preemption: " + text)
    return ", ".join(parts)


def _truncate(message: str) -> str:
    data = message.encode()
    if len(data) <= NOTE_LENGTH_LIMIT:
        return message
    suffix = " ..."
    return data[: NOTE_LENGTH_LIMIT - len(suffix)].decode(errors="ignore") + suffix


def failed_scheduling_message(
    evaluation: Evaluation,
    server_version: Sequence[int] = (1, 36),
    *,
    dra_enabled: bool | None = None,
    truncate: bool = True,
) -> str | None:
    """The FailedScheduling event message kube-scheduler would write for this evaluation.

    ``server_version`` is ``(major, minor)`` or ``(major, minor, patch)`` of kube-scheduler;
    it selects the taint wording, the DynamicResources PostFilter text (``dra_enabled``
    defaults to ``version >= 1.34``) and the pre-1.27 double period after the PostFilter text.
    Returns None when some node fits (kube-scheduler writes no FailedScheduling event then).
    ``truncate`` applies the event's 1024-byte note limit; the pod's PodScheduled condition
    carries the full text (pass ``truncate=False``).
    """
    if evaluation.schedulable:
        return None
    if evaluation.num_nodes == 0:
        return NO_NODES_MESSAGE
    for nv in evaluation.nodes:
        errors = [r for r in nv.scheduler_reasons if r.code == SCHEDULING_ERROR]
        if errors:  # the attempt failed with this error: no histogram, no PostFilter
            return _truncate(errors[0].message) if truncate else errors[0].message
    v = _norm(server_version)
    dra = dra_enabled if dra_enabled is not None else (v[0], v[1]) >= (1, 34)
    if evaluation.prefilter is not None:
        msg = f"0/{evaluation.num_nodes} nodes are available: {evaluation.prefilter.message}."
    else:
        msg = fit_error_message(
            evaluation.num_nodes,
            (
                reason_text(r, server_version)
                for nv in evaluation.nodes
                for r in nv.scheduler_reasons
            ),
        )
    post = _postfilter_message(evaluation, v, dra)
    if post:
        # Until 1.26 FitError appended the PostFilter message with " %v." (a double period).
        msg += f" {post}." if (v[0], v[1]) < (1, 27) else f" {post}"
    return _truncate(msg) if truncate else msg


def histogram(evaluation: Evaluation, server_version: Sequence[int] = (1, 36)) -> Mapping[str, int]:
    """Reason counts as kube-scheduler of ``server_version`` words them."""
    counts: dict[str, int] = {}
    for nv in evaluation.nodes:
        for r in nv.scheduler_reasons:
            t = reason_text(r, server_version)
            counts[t] = counts.get(t, 0) + 1
    return counts
