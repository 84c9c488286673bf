"""The typed dicts in observe/bodies.py are the keys the producers really write, in order."""

from __future__ import annotations

from typing import get_type_hints

from kschedctl.observe.bodies import LeaseEntry, SchedulerEntry
from kschedctl.observe.schedulers import Lease, Scheduler


def test_scheduler_entry_keys_are_to_dict_keys_in_order() -> None:
    entry = Scheduler("s", "deployment", lease=Lease("kube-system", "s", "s-0_x", 1.25, 15))
    data = entry.to_dict()
    assert list(data) == list(get_type_hints(SchedulerEntry))
    assert data["lease"] is not None
    assert list(data["lease"]) == list(get_type_hints(LeaseEntry))
    assert data["lease"]["renewAgeSeconds"] == 1.2


def test_scheduler_entry_without_lease() -> None:
    assert Scheduler("s", "none", served=False).to_dict()["lease"] is None
