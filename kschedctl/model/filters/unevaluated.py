"""``UNEVALUATED``: the Filter plugins kube-scheduler runs by default (in some supported
version) that kschedctl does not evaluate, each with what goes unchecked — the one declared
list beside ``FILTERS``.

``not_evaluated`` (``cycle.py``) names the one a pod needs with that text, so `why` withholds
its summary and kschedctl's scheduler refuses the pod rather than let a node silently fit.
``tests/unit/test_filters_coverage.py`` walks every supported version's default Filter
plugins: each is a modelled row of ``FILTERS`` or a key here; the troubleshooting page lists
these keys (drift-tested).
"""

from __future__ import annotations

from .verdicts import NODE_VOLUME_LIMITS

__all__ = ["UNEVALUATED", "IN_TREE_LIMITS"]

# kube-scheduler before 1.31 ran these beside NodeVolumeLimits; a pod that needs them
# needs NodeVolumeLimits too, and is flagged as needing that.
IN_TREE_LIMITS = ("EBSLimits", "GCEPDLimits", "AzureDiskLimits")

UNEVALUATED: dict[str, str] = {
    NODE_VOLUME_LIMITS: "the node's CSI attach limit (a CSINode's allocatable count), for CSI "
    "and CSI-migrated volumes",
    **{
        name: "the node's in-tree attach limit (kube-scheduler before 1.31), flagged as "
        "NodeVolumeLimits"
        for name in IN_TREE_LIMITS
    },
}
