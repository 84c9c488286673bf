"""What the pod's scheduler last said about it, read back (pure).

kube-scheduler writes its verdict as a FailedScheduling event and the PodScheduled condition:
``0/N nodes are available: <count> <reason>, …. <PostFilter text>``. :class:`Reported` holds
that text, :func:`parse_failed_scheduling` reads it back into counts, and
:func:`reported_findings` compares it with the verdict ``why`` computed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kschedctl.model.filters import Evaluation
from kschedctl.observe.findings import INFO, WARNING, Finding
from kschedctl.printers.formats import json_fields


@dataclass(frozen=True)
class Reported:
    """What the pod's scheduler last said about it: the latest FailedScheduling event and the
    PodScheduled condition (the same text, the condition untruncated)."""

    event: str | None = None
    event_time: str | None = None
    count: int = 0
    condition: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return json_fields(self)


def reported_findings(
    reported: Reported | None, would: str | None, ev: Evaluation, unrun: bool = False
) -> list[Finding]:
    if reported is None or not reported.event or would is None:
        # With plugins not run, the event may be a plugin's reason: "now fits" is not known.
        if reported is not None and reported.event and ev.schedulable and not unrun:
            return [
                Finding(
                    "reported-stale",
                    INFO,
                    f"the scheduler's last FailedScheduling ({reported.event_time}) said "
                    f"{reported.event!r}; the cluster has changed since and the pod now fits: "
                    "the next retry (on a cluster event, or within 5 minutes) should place it",
                )
            ]
        return []
    if reported.event == would:
        return [
            Finding(
                "reported-matches",
                INFO,
                "the scheduler's latest FailedScheduling event says exactly this",
            )
        ]
    return [
        Finding(
            "reported-differs",
            WARNING,
            f"the scheduler's latest FailedScheduling ({reported.event_time}) says "
            f"{reported.event!r}, which differs from this evaluation: the event may predate a "
            "change, or the scheduler sees other state (assumed or nominated pods, volumes, a "
            "non-default profile)",
        )
    ]


_HEAD = re.compile(r"^0/(\d+) nodes are available: ")


def parse_failed_scheduling(message: str) -> tuple[int, dict[str, int], str]:
    """(N, {reason: count}, PostFilter text) from a FailedScheduling message.

    Splits on the first ``". "`` after the histogram; reason strings contain no ``". "``.
    A PreFilter rejection comes back as a single reason counted N times.
    """
    match = _HEAD.match(message)
    if not match:
        raise ValueError(f"not a FailedScheduling message: {message!r}")
    total = int(match.group(1))
    rest = message[match.end() :]
    body, sep, post = rest.partition(". ")
    if not sep:
        body = rest.removesuffix(".")
    counts: dict[str, int] = {}
    for part in body.split(", "):
        number, _, reason = part.partition(" ")
        if number.isdigit():
            counts[reason] = counts.get(reason, 0) + int(number)
        else:
            counts[part] = total  # a PreFilter message applies to every node
    return total, counts, post
