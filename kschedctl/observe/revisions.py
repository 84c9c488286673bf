"""A scheduler's revisions as Secrets, like Helm's release records (pure).

Each successful deploy records one Secret of type ``kschedctl.io/revision.v1`` next to the
scheduler, named ``kschedctl.NAME.vN``: the spec as deployed (with its plugin files), the hash
of what it renders, the form, kschedctl's version, who, when, the command line's overrides and
a description; its status (deployed / superseded / failed) is a label, so marking the previous
revision superseded rewrites no data. A revision is read back as UNTRUSTED input: anyone who
may write Secrets in that namespace could have written it, so the size is bounded before and
after decompression, every field is type-checked, and its spec is loaded again by the caller
exactly as a user's file.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import zlib
from dataclasses import asdict, dataclass, field
from typing import Any

from kschedctl.base.errors import NotFoundError, SpecError, printable

SECRET_TYPE = "kschedctl.io/revision.v1"
REVISION_LABEL = "kschedctl.io/revision"
STATUS_LABEL = "kschedctl.io/revision-status"
DATA_KEY = "revision"
HISTORY_MAX = 10  # helm's --history-max default
STATUSES = ("deployed", "superseded", "failed")
# A Secret holds at most 1 MiB; the decompressed record at most 4 MiB (a gzip bomb stops there).
MAX_ENCODED = 1 << 20
MAX_DECODED = 4 << 20


@dataclass(frozen=True)
class Revision:
    """One recorded deploy. ``to_summary`` is what ``history -o json`` shows (no spec text)."""

    name: str
    namespace: str
    number: int
    form: str
    spec: str  # scheduler.yaml as deployed, overrides applied
    objects_hash: str  # rendered_digest of the spec in its form
    version: str  # kschedctl's
    by: str
    at: str  # RFC 3339
    description: str = ""
    overrides: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # builtin plugin files: path → text
    status: str = "deployed"

    @property
    def secret_name(self) -> str:
        return secret_name(self.name, self.number)

    def to_summary(self) -> dict[str, Any]:
        return {
            "revision": self.number,
            "updated": self.at,
            "status": self.status,
            "form": self.form,
            "version": self.version,
            "by": self.by,
            "description": self.description,
            "overrides": self.overrides,
            "objectsHash": self.objects_hash,
        }


def secret_name(name: str, number: int) -> str:
    return f"kschedctl.{name}.v{number}"


def to_secret(revision: Revision, labels: dict[str, str]) -> dict[str, Any]:
    """The Secret recording ``revision``; ``labels``: the scheduler's (its other objects')."""
    record = {k: v for k, v in asdict(revision).items() if k != "status"}
    payload = gzip.compress(json.dumps(record, sort_keys=True).encode(), mtime=0)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": SECRET_TYPE,
        "metadata": {
            "name": revision.secret_name,
            "namespace": revision.namespace,
            "labels": {
                **labels,
                REVISION_LABEL: str(revision.number),
                STATUS_LABEL: revision.status,
            },
        },
        "data": {DATA_KEY: base64.b64encode(payload).decode()},
    }


_FIELDS: dict[str, type] = {
    "name": str, "namespace": str, "number": int, "form": str, "spec": str,
    "objects_hash": str, "version": str, "by": str, "at": str, "description": str,
    "overrides": dict, "files": dict,
}  # fmt: skip


def from_secret(secret: dict[str, Any]) -> Revision:
    """The revision a Secret records; SpecError (exit 3) naming the Secret when it is not a
    well-formed revision of the scheduler and namespace its own name and place say."""
    meta = secret.get("metadata") or {}
    where = f"secret {printable(str(meta.get('name')))} -n {printable(str(meta.get('namespace')))}"

    def bad(why: str) -> SpecError:
        return SpecError(
            "", f"{where} is not a valid kschedctl revision: {why}",
            hint="it may have been edited by hand or be corrupt: delete it, or roll back to "
            "another revision (`kschedctl history NAME`)",
        )  # fmt: skip

    if secret.get("type") != SECRET_TYPE:
        raise bad(f"its type is not {SECRET_TYPE}")
    encoded = (secret.get("data") or {}).get(DATA_KEY)
    if not isinstance(encoded, str) or len(encoded) > MAX_ENCODED * 4 // 3 + 4:
        raise bad(f"data.{DATA_KEY} is missing or larger than {MAX_ENCODED} bytes")
    try:
        inflate = zlib.decompressobj(wbits=31)  # gzip framing
        raw = inflate.decompress(base64.b64decode(encoded, validate=True), MAX_DECODED)
        if inflate.unconsumed_tail:
            raise bad(f"it decompresses to more than {MAX_DECODED} bytes")
        record = json.loads(raw.decode())
    except (binascii.Error, zlib.error, UnicodeDecodeError, ValueError) as err:
        raise bad(f"data.{DATA_KEY} does not decode ({type(err).__name__})") from err
    if not isinstance(record, dict) or set(record) != set(_FIELDS):
        raise bad("its record does not hold exactly the fields of a revision")
    for key, kind in _FIELDS.items():
        if type(record[key]) is not kind:
            raise bad(f"{key} is not of type {kind.__name__}")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in record["files"].items()):
        raise bad("files must map paths to texts")
    labels = meta.get("labels") or {}
    status = labels.get(STATUS_LABEL, "deployed")
    if status not in STATUSES:
        raise bad(f"label {STATUS_LABEL} is not one of {', '.join(STATUSES)}")
    revision = Revision(**record, status=status)
    if (
        meta.get("name") != revision.secret_name
        or meta.get("namespace") != revision.namespace
        or labels.get(REVISION_LABEL) != str(revision.number)
    ):
        raise bad("its name, namespace or revision label disagree with its record")
    return revision


def number_of(secret: dict[str, Any]) -> int | None:
    """The revision number a Secret's label gives (None: not a number), read without decoding."""
    value = ((secret.get("metadata") or {}).get("labels") or {}).get(REVISION_LABEL, "")
    return int(value) if isinstance(value, str) and value.isdigit() and len(value) < 10 else None


def to_prune(numbers: list[int], keep: int) -> list[int]:
    """The revision numbers beyond the last ``keep`` (oldest first)."""
    ordered = sorted(set(numbers))
    return ordered[: max(0, len(ordered) - keep)]


def current(revisions: list[Revision]) -> Revision | None:
    """What runs now: the newest revision that deployed (a failed one is not what runs)."""
    deployed = [r for r in revisions if r.status != "failed"]
    return max(deployed, key=lambda r: r.number) if deployed else None


def rollback_target(revisions: list[Revision], wanted: int | None = None) -> Revision:
    """The revision ``rollback`` deploys: ``wanted``, or the newest one that differs from
    what runs now (after a failed deploy the last good one; otherwise the one before the
    current whose rendered objects differ); NotFoundError when there is none."""
    if not revisions:
        raise NotFoundError(
            "no revisions recorded", hint="deploy it with kschedctl first: each deploy records one"
        )
    if wanted is not None:
        for revision in revisions:
            if revision.number == wanted:
                return revision
        have = ", ".join(str(r.number) for r in sorted(revisions, key=lambda r: r.number))
        raise NotFoundError(
            f"no revision {wanted} (recorded: {have})", hint="see kschedctl history"
        )
    newest = max(revisions, key=lambda r: r.number)
    now = current(revisions)
    if newest.status == "failed" and now is not None:
        return now  # the failed deploy's objects run now: back to the last good one
    for revision in sorted(revisions, key=lambda r: r.number, reverse=True):
        if revision.status == "failed" or now is None:
            continue
        if revision.number < now.number and revision.objects_hash != now.objects_hash:
            return revision
    raise NotFoundError(
        "no earlier revision differs from what runs now",
        hint="name a revision: kschedctl rollback NAME REVISION (see kschedctl history)",
    )
