"""`kschedctl events --timeline`: a scheduler's decisions per minute, as a table with bars,
as data (-o json|yaml) or as a picture (--export). Loaded by `kschedctl events` only when
asked for."""

from __future__ import annotations

from kschedctl.base.errors import UsageError, shown_path
from kschedctl.cli import output, picture_export, pictures
from kschedctl.cli.common import connect
from kschedctl.cli.kube import Kube
from kschedctl.cli.options import TABLE_FORMATS, check_output
from kschedctl.ops.events import EventFilter, open_events
from kschedctl.ops.timeline import event_timeline, timeline_dict

# Minutes the table and the picture show by default: the last hour (the API server keeps
# events one hour by default, kube-apiserver --event-ttl); data formats give every minute.
TABLE_LIMIT = 60


def run_timeline(
    wanted: EventFilter,
    *,
    namespace: str | None,
    all_namespaces: bool,
    kube: Kube,
    timeline: bool,
    watch: bool,
    limit: int | None,
    export_to: str | None,
    out: str | None,
    no_headers: bool,
) -> None:
    if not timeline:
        flag = "--export" if export_to is not None else "--limit"
        raise UsageError(f"{flag} goes with --timeline", hint="kschedctl events --timeline …")
    if watch:
        raise UsageError("--timeline and -w/--watch cannot be combined",
                         hint="run `kschedctl events --timeline` again for a newer picture")  # fmt: skip
    # the timeline is counts, not events: no wide columns
    fmt = check_output(out, TABLE_FORMATS)
    target = picture_export.check_export(export_to)
    with connect(kube) as cluster:
        source = open_events(cluster, wanted, namespace=namespace, all_namespaces=all_namespaces)
        found = event_timeline(source)
    drawn = found.last(TABLE_LIMIT if limit is None else limit)
    if target is not None:
        title = f"kschedctl events {wanted.scheduler} --timeline" if wanted.scheduler else (
            "kschedctl events --timeline")  # fmt: skip
        picture_export.export(pictures.timeline_picture(drawn, wanted.scheduler), target, title)
        output.info(f"wrote {shown_path(target)}")
    if not fmt.is_table:
        output.emit(timeline_dict(found.last(limit)), fmt, no_headers=no_headers)
        return
    if not drawn.minutes:  # as `events` says it: a note on stderr, stdout stays empty
        where = "in any namespace" if all_namespaces else f"in namespace {source.namespace}"
        who = f" from {wanted.scheduler}" if wanted.scheduler else ""
        output.info(f"no scheduling decisions {where}{who}")
        return
    picture = pictures.timeline_picture(drawn, wanted.scheduler, headers=not no_headers)
    output.stdout_console().print(picture, highlight=False)
