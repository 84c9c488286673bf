"""Revision Secrets (observe/revisions.py): encoding round trip, the checks on reading one
back (untrusted: any writer of the namespace's Secrets), the bound, rollback's choice."""

from __future__ import annotations

import base64
import gzip
import json
from dataclasses import replace
from typing import Any

import pytest

from kschedctl.base.errors import NotFoundError, SpecError
from kschedctl.observe.revisions import (
    DATA_KEY,
    MAX_DECODED,
    STATUS_LABEL,
    Revision,
    from_secret,
    number_of,
    rollback_target,
    to_prune,
    to_secret,
)

LABELS = {"app.kubernetes.io/managed-by": "kschedctl", "kschedctl.io/scheduler": "s1"}


def revision(number: int = 1, **changes: Any) -> Revision:
    base = Revision(
        name="s1", namespace="kube-system", number=number, form="deployment",
        spec="apiVersion: kschedctl.io/v1alpha1\nkind: Scheduler\nmetadata:\n  name: s1\n",
        objects_hash=f"hash{number}", version="0.1.0", by="admin",
        at="2026-01-01T00:00:00Z", description="install", overrides={"replicas": 2},
        files={"plugins/a.py": "x = 1\n"},
    )  # fmt: skip
    return replace(base, **changes)


def _with_record(secret: dict[str, Any], edit: Any) -> dict[str, Any]:
    record = json.loads(gzip.decompress(base64.b64decode(secret["data"][DATA_KEY])))
    edit(record)
    payload = gzip.compress(json.dumps(record).encode())
    secret["data"][DATA_KEY] = base64.b64encode(payload).decode()
    return secret


def test_round_trip_keeps_every_field_and_the_status_label() -> None:
    rev = revision(3, status="superseded")
    secret = to_secret(rev, LABELS)
    assert secret["metadata"]["name"] == "kschedctl.s1.v3"
    assert secret["type"] == "kschedctl.io/revision.v1"
    assert secret["metadata"]["labels"]["kschedctl.io/revision"] == "3"
    assert secret["metadata"]["labels"]["kschedctl.io/scheduler"] == "s1"
    assert from_secret(secret) == rev
    assert number_of(secret) == 3


def test_encoding_is_stable() -> None:
    assert to_secret(revision(), LABELS) == to_secret(revision(), LABELS)


@pytest.mark.parametrize(
    "tamper, why",
    [
        (lambda s: s.update(type="Opaque"), "type"),
        (lambda s: s["data"].update({DATA_KEY: "!!not base64"}), "does not decode"),
        (lambda s: s["data"].pop(DATA_KEY), "missing"),
        (lambda s: s["metadata"].update(name="kschedctl.s1.v9"), "disagree"),
        (lambda s: s["metadata"].update(namespace="other"), "disagree"),
        (lambda s: s["metadata"]["labels"].update({STATUS_LABEL: "bogus"}), "label"),
        (lambda s: _with_record(s, lambda r: r.update(number="1")), "number is not of type int"),
        (lambda s: _with_record(s, lambda r: r.update(extra=1)), "exactly the fields"),
        (lambda s: _with_record(s, lambda r: r.update(files={"a": 1})), "files"),
    ],
    ids=["type", "base64", "no-data", "name", "namespace", "status", "type-of-field",
         "extra-field", "files"],
)  # fmt: skip
def test_a_malformed_secret_is_refused_naming_it(tamper: Any, why: str) -> None:
    secret = to_secret(revision(), LABELS)
    tamper(secret)
    with pytest.raises(SpecError) as err:
        from_secret(secret)
    assert why in err.value.message
    assert "not a valid kschedctl revision" in err.value.message
    assert err.value.exit_code == 3


def test_a_gzip_bomb_stops_at_the_bound() -> None:
    secret = to_secret(revision(), LABELS)
    bomb = gzip.compress(b"{" + b" " * (MAX_DECODED + 10) + b"}")
    secret["data"][DATA_KEY] = base64.b64encode(bomb).decode()
    with pytest.raises(SpecError, match="decompresses to more than"):
        from_secret(secret)


def test_to_prune_keeps_the_newest() -> None:
    assert to_prune(list(range(1, 12)), 10) == [1]
    assert to_prune([3, 1, 2], 10) == []
    assert to_prune([5, 6, 7], 1) == [5, 6]


def test_rollback_defaults_to_the_one_before_the_current_that_differs() -> None:
    revs = [
        revision(1, status="superseded"),
        revision(2, status="superseded", objects_hash="hash1"),  # the same as 1
        revision(3, objects_hash="hash1"),
    ]
    with pytest.raises(NotFoundError):
        rollback_target(revs)
    revs.append(revision(4))
    revs[2] = replace(revs[2], status="superseded")
    assert rollback_target(revs).number == 3


def test_after_a_failed_deploy_rollback_goes_to_the_last_good_one() -> None:
    revs = [revision(1, status="superseded"), revision(2), revision(3, status="failed")]
    assert rollback_target(revs).number == 2


def test_a_named_revision_and_a_missing_one() -> None:
    revs = [revision(1, status="superseded"), revision(2)]
    assert rollback_target(revs, 1).number == 1
    with pytest.raises(NotFoundError, match="no revision 7 .recorded: 1, 2."):
        rollback_target(revs, 7)
    with pytest.raises(NotFoundError, match="no revisions"):
        rollback_target([])
