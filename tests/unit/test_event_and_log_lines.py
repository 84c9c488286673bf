"""Pure helpers of `events` and `logs`: event shapes, selectors, durations, log lines."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

from kschedctl.base.errors import NotFoundError, UsageError
from kschedctl.cli.logview import Printer, render_line
from kschedctl.hosts.journal import follow_file, journal_argv, klog_time, read_file
from kschedctl.k8s.events import (
    CORE_V1,
    EVENTS_V1,
    Query,
    failed_scheduling,
    field_selector,
    list_events,
)
from kschedctl.model.config.durations import parse_duration
from kschedctl.observe.events import (
    SCHEDULER_REASONS,
    normalize,
    parse_for,
    parse_types,
    select_events,
)
from kschedctl.observe.loglines import (
    Grep,
    Leadership,
    LogLine,
    as_json,
    classify,
    merge,
    source_colour,
    split_timestamp,
)

NOTE = "0/4 nodes are available: 4 node(s) had untolerated taint(s)."

EVENTS_V1_OBJ = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "p.1", "namespace": "ns", "uid": "e1",
                 "creationTimestamp": "2026-01-01T00:00:00Z"},
    "eventTime": "2026-01-01T00:00:00.100000Z",
    "series": {"count": 3, "lastObservedTime": "2026-01-01T00:05:00.000000Z"},
    "reportingController": "default-scheduler",
    "reportingInstance": "default-scheduler-cp",
    "action": "Scheduling",
    "reason": "FailedScheduling",
    "regarding": {"kind": "Pod", "namespace": "ns", "name": "p", "uid": "u1"},
    "note": NOTE,
    "type": "Warning",
}  # fmt: skip

CORE_OBJ = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "p.2", "namespace": "ns", "uid": "e2"},
    "involvedObject": {"kind": "Pod", "namespace": "ns", "name": "p", "uid": "u1"},
    "reason": "Scheduled",
    "message": "Successfully assigned ns/p to n1",
    "source": {"component": "my-scheduler"},
    "firstTimestamp": "2026-01-01T00:01:00Z",
    "lastTimestamp": "2026-01-01T00:02:00Z",
    "count": 2,
    "type": "Normal",
}


def test_both_event_shapes_become_one() -> None:
    new, old = normalize(EVENTS_V1_OBJ), normalize(CORE_OBJ)
    assert (new.reason, new.message, new.count, new.controller) == (
        "FailedScheduling", NOTE, 3, "default-scheduler",
    )  # fmt: skip
    assert new.time == datetime(2026, 1, 1, 0, 5, tzinfo=timezone.utc)  # the series' last
    assert new.object == "Pod/p" and new.failed
    assert (old.message, old.count, old.controller, old.object) == (
        "Successfully assigned ns/p to n1", 2, "my-scheduler", "Pod/p",
    )  # fmt: skip
    assert old.time == datetime(2026, 1, 1, 0, 2, tzinfo=timezone.utc) and not old.failed
    data = new.to_dict()
    assert data["regarding"] == {"kind": "Pod", "namespace": "ns", "name": "p", "uid": "u1"}
    assert data["time"] == "2026-01-01T00:05:00Z"


def test_select_orders_filters_and_deduplicates() -> None:
    new, old = normalize(EVENTS_V1_OBJ), normalize(CORE_OBJ)
    assert select_events([new, old, new]) == [old, new]  # oldest to newest, once each
    assert select_events([new, old], types=("Warning",)) == [new]
    assert select_events([new, old], reasons=("Scheduled",)) == [old]
    now = datetime(2026, 1, 1, 0, 6, tzinfo=timezone.utc)
    assert select_events([new, old], since=timedelta(minutes=2), now=now) == [new]


@pytest.mark.parametrize(
    ("target", "parsed"),
    [("pod/web", ("Pod", "web")), ("web", ("Pod", "web")), ("po/web", ("Pod", "web")),
     ("node/n1", ("Node", "n1")), ("deployment/d", ("Deployment", "d"))],
)  # fmt: skip
def test_parse_for(target: str, parsed: tuple[str, str]) -> None:
    assert parse_for(target) == parsed


@pytest.mark.parametrize("bad", ["pod/", "/x"])
def test_parse_for_rejects_half_names(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_for(bad)


def test_parse_types() -> None:
    assert parse_types(None) == ("Normal", "Warning")
    assert parse_types("warning") == ("Warning",)
    assert parse_types("Warning,Normal") == ("Warning", "Normal")
    with pytest.raises(ValueError, match="unknown event type"):
        parse_types("Error")


def test_field_selectors_per_api() -> None:
    query = Query("ns", controller="mine", kind="Pod", name="p", type="Warning")
    assert field_selector(EVENTS_V1, query, "FailedScheduling") == (
        "reportingController=mine,regarding.kind=Pod,regarding.name=p,"
        "reason=FailedScheduling,type=Warning"
    )
    assert field_selector(CORE_V1, query) == (
        "source=mine,involvedObject.kind=Pod,involvedObject.name=p,type=Warning"
    )
    assert field_selector(EVENTS_V1, Query(None)) is None


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30), ("10m", 600), ("2h", 7200), ("1h30m", 5400), ("2d", 172800), ("1.5h", 5400)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["", "10", "5x", "m", "-1m", "1m x", "0s"])
def test_bad_durations_name_the_format(bad: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_duration(bad)
    assert err.value.exit_code == 2
    assert "30s, 10m" in (err.value.hint or "")


# -- log lines -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('E0101 reflector.go:1] "Unhandled Error" err="pods is forbidden: User x"', "forbidden"),
        ('I0101 leaderelection.go:258] "Attempting to acquire leader lease..." lock="kube-system/x"',
         "lease-wait"),
        ('I0101 leaderelection.go:272] "Successfully acquired lease" lock="kube-system/x"',
         "lease-acquired"),
        ('E0101 leaderelection.go:1] "failed to renew lease" lock="kube-system/x"', "lease-lost"),
        ('I0101 schedule_one.go:1] "Unable to schedule pod; no fit; waiting" pod="a/b"',
         "scheduling-failure"),
        ("E0101 server.go:1] something broke", "error"),
        ("I0101 server.go:1] Serving securely", None),
    ],
    ids=["forbidden", "lease-wait", "acquired", "lease-lost", "failure", "error", "plain"],
)  # fmt: skip
def test_classify(text: str, kind: str | None) -> None:
    assert classify(text) == kind


def test_timestamps_split_and_merge_in_time_order() -> None:
    assert split_timestamp("2026-01-01T00:00:01.123456789Z I0101 hello") == (
        "2026-01-01T00:00:01.123456789Z", "I0101 hello",
    )  # fmt: skip
    assert split_timestamp("no stamp") == (None, "no stamp")
    a = [LogLine("a", "a1", "2026-01-01T00:00:01.5Z"), LogLine("a", "a2", "2026-01-01T00:00:03Z")]
    b = [LogLine("b", "b1", "2026-01-01T00:00:02.000000001Z")]
    assert [x.text for x in merge([a, b])] == ["a1", "b1", "a2"]


def test_render_plain_and_marked_up() -> None:
    line = LogLine("sched-1", "E0101 pods is forbidden [x]", "2026-01-01T00:00:00Z", leader=True)
    assert render_line(line, prefix=True, timestamps=False, color=False) == (
        "[sched-1 (leader)] E0101 pods is forbidden [x]"
    )
    assert render_line(line, prefix=False, timestamps=True, color=False) == (
        "2026-01-01T00:00:00Z E0101 pods is forbidden [x]"
    )
    marked = render_line(line, prefix=True, timestamps=False, color=True)
    assert isinstance(marked, Text)  # styled text, never markup: "[x]" stays as it is
    assert marked.plain == "[sched-1 (leader)] E0101 pods is forbidden [x]"
    styles = {str(span.style) for span in marked.spans}
    assert styles == {f"bold {source_colour('sched-1')}", "bold red"}


def test_each_pod_keeps_a_colour_of_its_own() -> None:
    pods = [f"my-scheduler-7d9f8c-{x}" for x in ("abcde", "fghij", "klmno", "pqrst")]
    colours = [source_colour(p) for p in pods]
    assert colours == [source_colour(p) for p in pods]  # stable: by name, not by order
    assert len(set(colours)) > 1
    follower = render_line(LogLine(pods[0], "x"), prefix=True, timestamps=False, color=True)
    assert isinstance(follower, Text)
    assert {str(s.style) for s in follower.spans} == {colours[0]}  # not bold: not leading


T0, T1, T2, T3 = (f"2026-01-01T00:00:0{i}.000001Z" for i in range(4))


def _marked(leadership: Leadership, lines: list[LogLine]) -> list[tuple[str, str, bool]]:
    return [(x.source, x.text, x.leader) for x in map(leadership.mark, lines)]


def test_leader_only_from_when_the_lease_was_acquired() -> None:
    lines = [LogLine("a", "I0101 starting", T0), LogLine("b", "I0101 starting", T0),
             LogLine("a", "I0101 attempting to acquire leader lease", T1),
             LogLine("a", "I0101 serving", T3), LogLine("b", "I0101 waiting", T3)]  # fmt: skip
    assert _marked(Leadership("a", "2026-01-01T00:00:02.000000Z"), lines) == [
        ("a", "I0101 starting", False), ("b", "I0101 starting", False),
        ("a", "I0101 attempting to acquire leader lease", False),
        ("a", "I0101 serving", True), ("b", "I0101 waiting", False),
    ]  # fmt: skip


def test_the_pods_own_lines_mark_earlier_terms() -> None:
    # "b" led, stepped down; "a" holds the Lease now: b's term is marked from its own lines
    lines = [LogLine("b", "I0101 successfully acquired lease ns/s", T0),
             LogLine("b", "I0101 scheduled", T1),
             LogLine("b", "E0101 leaderelection lost", T2),
             LogLine("b", "I0101 after", T3)]  # fmt: skip
    assert [x[2] for x in _marked(Leadership("a", T2), lines)] == [True, True, True, False]
    own = [LogLine("k", "became the leader (Lease ns/k, identity k_1)", T0),
           LogLine("k", "released the Lease ns/k", T1), LogLine("k", "x", T2)]  # fmt: skip
    assert [x[2] for x in _marked(Leadership(), own)] == [True, True, False]


def test_a_pods_own_acquisition_line_wins_over_late_line_times() -> None:
    # the runtime stamped the whole start-up after the Lease's acquireTime (T0): the pod's
    # own "successfully acquired lease" line still says where its term begins
    lines = [LogLine("a", "I0101 starting", T2), LogLine("a", "I0101 flags", T2),
             LogLine("a", "I0101 successfully acquired lease kube-system/a", T2),
             LogLine("a", "I0101 scheduled", T3)]  # fmt: skip
    leadership = Leadership("a", T0)
    assert [x[2] for x in _marked(leadership, leadership.witness(lines))] == [
        False,
        False,
        True,
        True,
    ]
    # without the acquisition line in view (--tail cut it), the Lease marks the term
    tail = Leadership("a", T0)
    assert [x[2] for x in _marked(tail, tail.witness(lines[3:]))] == [True]


def test_json_lines_are_a_contract() -> None:
    line = LogLine("s-1", "I0101 hi", T0, leader=True, container="kube-scheduler")
    assert as_json(line) == {"pod": "s-1", "container": "kube-scheduler", "leader": True,
                             "time": T0, "message": "I0101 hi"}  # fmt: skip


def test_json_and_raw_printing(capsys: pytest.CaptureFixture[str]) -> None:
    lines = [LogLine("s-1", "I0101 a\x1b[2J", T0, container="c"), LogLine("s-2", "I0101 b", T1)]
    Printer(None, False, Grep(None), "raw")(lines, 2)
    assert capsys.readouterr().out == "I0101 a^[[2J\nI0101 b\n"
    Printer(None, False, Grep("b"), "json")(lines, 2)
    out = capsys.readouterr().out.splitlines()
    assert [json.loads(x) for x in out] == [as_json(lines[1])]


def test_render_escapes_what_the_scheduler_wrote() -> None:
    line = LogLine("s", "I0101 pod \x1b]52;c;ZXZpbA==\x07x\r\x9b2J\u202e\tat main.go", None)
    for color in (False, True):
        shown = render_line(line, prefix=True, timestamps=False, color=color)
        plain = shown.plain if isinstance(shown, Text) else shown
        assert plain == "[s] I0101 pod ^[]52;c;ZXZpbA==\\x07x\\r\\x9b2J\\u202e\tat main.go"


def test_grep() -> None:
    keep = Grep("lease|forbidden")
    assert keep(LogLine("a", "acquired lease")) and not keep(LogLine("a", "other"))
    assert Grep(None)(LogLine("a", "anything"))
    with pytest.raises(ValueError, match="invalid --grep"):
        Grep("(")


# -- host logs -----------------------------------------------------------------------------------


def test_klog_time_is_local_time_without_a_year() -> None:
    now = datetime(2026, 1, 2, 12, 0, tzinfo=timezone.utc)
    moment = klog_time("I0102 11:59:00.500000   1 server.go:1] x", now)
    assert moment is not None
    local = datetime(2026, 1, 2, 11, 59, 0, 500000).astimezone(timezone.utc)
    assert moment == local
    december = klog_time("I1231 23:00:00.000000   1 x", now)
    assert december is not None and december.year == 2025
    assert klog_time("not klog", now) is None


def test_read_file_tail_and_since(tmp_path: Path) -> None:
    now = datetime.now().astimezone()
    old = (now - timedelta(hours=1)).strftime("I%m%d %H:%M:%S.000000")
    new = (now - timedelta(seconds=5)).strftime("I%m%d %H:%M:%S.000000")
    path = tmp_path / "s.log"
    path.write_text(f"{old} 1 a.go:1] old\n{new} 1 a.go:1] new\n  continued\n")
    lines, offset = read_file(path, "s", since_seconds=None, tail=2)
    assert [x.text[-3:] for x in lines] == ["new", "ued"]
    assert offset == path.stat().st_size
    recent, _ = read_file(path, "s", since_seconds=60, tail=None)
    assert [x.text.strip()[-3:] for x in recent] == ["new", "ued"]
    assert recent[1].time == recent[0].time  # a continuation line keeps its header's time


def test_follow_file_sees_appends_and_truncation(tmp_path: Path) -> None:
    path = tmp_path / "s.log"
    path.write_text("before\n")
    stop = threading.Event()
    lines = follow_file(path, "s", stop)
    got: list[str] = []

    def reader() -> None:
        for line in lines:
            got.append(line.text)
            if len(got) == 2:
                stop.set()

    thread = threading.Thread(target=reader)
    thread.start()
    with open(path, "a") as handle:
        handle.write("after\n")
    deadline = datetime.now() + timedelta(seconds=5)
    while not got and datetime.now() < deadline:
        stop.wait(0.05)
    path.write_text("new\n")  # truncated and rewritten, as a restarted unit's log
    thread.join(5)
    stop.set()
    assert got == ["after", "new"]


def test_journal_argv() -> None:
    assert journal_argv("mine", follow=True, since_seconds=600, tail=20) == [
        "journalctl", "-u", "mine.service", "--no-pager", "-o", "cat",
        "--since", "-600s", "-n", "20", "-f",
    ]  # fmt: skip


def test_read_file_leaves_a_partial_line_to_the_follow(tmp_path: Path) -> None:
    path = tmp_path / "s.log"
    path.write_text("")
    assert read_file(path, "s", since_seconds=None, tail=None) == ([], 0)
    path.write_text("whole\npart")
    lines, offset = read_file(path, "s", since_seconds=None, tail=None)
    assert [x.text for x in lines] == ["whole"] and offset == len("whole\n")


class FakeCluster:
    """Answers list requests from a table; records the (path, fieldSelector) asked for."""

    def __init__(self, served: bool, items: list[dict[str, Any]]) -> None:
        self.served = served
        self.items = items
        self.asked: list[tuple[str, str | None]] = []

    def get(self, path: str, **_query: Any) -> dict[str, Any]:
        if path == EVENTS_V1 and not self.served:
            raise NotFoundError("the server could not find the requested resource")
        return {}

    def list(self, path: str, **query: Any) -> list[dict[str, Any]]:
        if path.startswith(EVENTS_V1) and not self.served:
            raise NotFoundError("the server could not find the requested resource")
        self.asked.append((path, query.get("fieldSelector")))
        return self.items


def test_events_use_events_k8s_io_when_served() -> None:
    fake = FakeCluster(True, [EVENTS_V1_OBJ])
    found = list_events(fake, Query("ns", controller="default-scheduler"))  # type: ignore[arg-type]
    assert [e.reason for e in found] == ["FailedScheduling"]
    assert fake.asked == [
        ("/apis/events.k8s.io/v1/namespaces/ns/events", "reportingController=default-scheduler")
    ]


def test_events_fall_back_to_core_v1() -> None:
    fake = FakeCluster(False, [CORE_OBJ])
    found = list_events(fake, Query(None))  # type: ignore[arg-type]
    # Without a scheduler name: one request per scheduler reason, filtered by the server.
    assert fake.asked == [("/api/v1/events", f"reason={r}") for r in SCHEDULER_REASONS]
    assert {e.controller for e in found} == {"my-scheduler"}
    failures = failed_scheduling(fake, "ns", "p")  # type: ignore[arg-type]
    assert fake.asked[-1] == (
        "/api/v1/namespaces/ns/events",
        "involvedObject.kind=Pod,involvedObject.name=p,reason=FailedScheduling",
    )
    assert failures["u1"][1] == 2  # the core event's count
