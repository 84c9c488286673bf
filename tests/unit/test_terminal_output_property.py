"""Property test: whatever the cluster says, every command's output is inert text (issue 22).

Hostile strings — escape sequences (screen clear, OSC 52 clipboard write, OSC 8 hidden link),
C0/C1 controls, DEL, CR, backspace, bidi overrides, zero-width and line-separator characters,
rich markup (``[link=javascript:…]``, ``[bold]``, ``[/]``), emoji codes and HTML — go into
plain-dict fixtures of events, schedulers, pods, nodes, log lines and a simulation report.
The pure view and printer functions of ``list``, ``events`` (table and watch lines),
``status``, ``why``, ``logs``, ``top nodes`` and ``simulate`` (terminal, HTML and SVG) print
them, piped and on a terminal. Then:

- the terminal text holds no control, format or separator character but the newline (and the
  tab in log lines), so no ESC, no C1, no bidi override reaches the terminal;
- the hostile text is shown literally, escaped (:func:`kschedctl.base.terminal.escape`): markup is
  never interpreted ("[bold]" stays "[bold]");
- the HTML and SVG exports hold no link and no element from the data, and no control
  character; ``-o yaml`` and ``-o json`` read back exactly and are inert too.

Derandomized; each property runs MAX_EXAMPLES cases.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from html.parser import HTMLParser
from typing import Any
from unittest import mock

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_filters_support import node, pod

from kschedctl.base import terminal
from kschedctl.cli import (
    eventrows,
    logview,
    output,
    picture_export,
    pictures,
    simulate_view,
    why_view,
)
from kschedctl.cli.inventory import list_columns, list_rows
from kschedctl.cli.status import _print_status
from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.observe.crash import ContainerProblem, CrashReport
from kschedctl.observe.diagnosis import diagnose
from kschedctl.observe.events import normalize
from kschedctl.observe.failedscheduling import Reported
from kschedctl.observe.loglines import Grep, LogLine
from kschedctl.observe.placement import placement
from kschedctl.observe.schedulers import Lease, Scheduler
from kschedctl.observe.simulation import CandidateResult, PodOutcome, SimulationReport, node_groups
from kschedctl.ops.list import SchedulerList
from kschedctl.ops.status import SchedulerStatus
from kschedctl.printers.formats import OutputFormat

MAX_EXAMPLES = 60

PIECES = [
    "\x1b[2J",  # clear the screen
    "\x1b]52;c;ZXZpbA==\x07",  # OSC 52: write the clipboard
    "\x1b]8;;http://evil\x1b\\text\x1b]8;;\x1b\\",  # OSC 8: a hidden link
    "\x1b[31m",
    "\x9b2J",  # C1 CSI
    "\x9d52;c;x\x9c",  # C1 OSC, ST
    "\r",
    "\x08",
    "\x00",
    "\x07",
    "\x7f",
    "\x85",
    "\t",
    "\n",
    "\u202e",  # RIGHT-TO-LEFT OVERRIDE
    "\u2066",  # LEFT-TO-RIGHT ISOLATE
    "\u200b",
    "\ufeff",
    "\u2028",
    "\U000e0041",  # TAG LATIN CAPITAL LETTER A
    "[link=javascript:alert(document.domain)]x[/link]",
    "[bold]",
    "[/]",
    "[red]",
    ":warning:",
    "<script>alert(1)</script>",
    '<a href="javascript:alert(1)">',
    "&amp;",
    "{title}",
    "\\",
    "ä日本",
]
hostile = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), min_size=1, max_size=5).map(
    lambda pieces: "x" + "".join(pieces)
)  # never empty: an object has a name

# Characters no terminal text may hold (checked here independently of kschedctl.base.terminal):
# controls (C0, DEL, C1), format characters, surrogates, private-use and unassigned code
# points, line and paragraph separators.
REFUSED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
RUN = settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def assert_inert(text: str, keep: str = "\n") -> None:
    bad = sorted({c for c in text if c not in keep and unicodedata.category(c) in REFUSED})
    assert not bad, f"raw {[hex(ord(c)) for c in bad]} in {text!r}"


def shown(value: str) -> str:
    """A one-line field as every printer shows it."""
    return terminal.escape(value)


# What rich writes for a style on a colour terminal; never in the data (PIECES' SGR-looking
# pieces are checked by the literal, escaped presence of each value instead).
SGR = re.compile(r"\x1b\[[0-9;]*m")


@contextlib.contextmanager
def terminal_output(tty: bool) -> Iterator[io.StringIO]:
    """stdout and stderr into one buffer, the consoles of kschedctl.cli.output writing there as
    to a pipe, or as to a colour terminal (FORCE_COLOR), 1,000 columns wide."""
    buffer = io.StringIO()
    env = {"COLUMNS": "1000", "TERM": "xterm-256color", "FORCE_COLOR": "1"}
    with mock.patch.dict(os.environ, env):
        if not tty:
            del os.environ["FORCE_COLOR"]
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            yield buffer


def printed(tty: bool, draw: Callable[..., Any], *args: Any) -> str:
    """What ``draw(*args)`` prints, without the colour codes rich adds on a terminal."""
    with terminal_output(tty) as buffer:
        draw(*args)
    text = buffer.getvalue()
    if tty:
        assert SGR.search(text) or not text.strip(), "not a colour terminal"
    return SGR.sub("", text)


# -- list ----------------------------------------------------------------------------------------


@RUN
@given(name=hostile, namespace=hostile, problem=hostile, holder=hostile, tty=st.booleans())
def test_list(name: str, namespace: str, problem: str, holder: str, tty: bool) -> None:
    s = Scheduler(name=name, form="pod", namespace=namespace, instance=holder, desired=1,
                  ready=0, lease=Lease(namespace, name, holder, 1.0, 15), leader=holder,
                  problem=problem, sources=[problem])  # fmt: skip
    found = SchedulerList([s])
    for kind in ("table", "wide"):
        fmt = OutputFormat(kind)
        text = printed(tty, output.print_table, list_columns(fmt), list_rows(found, fmt))
        assert_inert(text)
        for value in (name, problem):
            assert shown(value) in text


# -- events: the table and the lines of a watch ---------------------------------------------------


def event(note: str, reason: str, name: str, controller: str) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "metadata": {"name": "e", "namespace": "team-b", "uid": "u"},
        "eventTime": "2026-01-01T11:59:00.000000Z",
        "type": "Warning",
        "reason": reason,
        "note": note,
        "reportingController": controller,
        "reportingInstance": controller,
        "regarding": {"kind": "Pod", "namespace": "team-b", "name": name, "uid": "p"},
    }


@RUN
@given(note=hostile, reason=hostile, name=hostile, controller=hostile, tty=st.booleans())
def test_events(note: str, reason: str, name: str, controller: str, tty: bool) -> None:
    e = normalize(event(note, reason, name, controller))
    for kind in ("table", "wide"):
        columns = eventrows.event_columns(kind, True)
        rows = [eventrows.row(e, kind, True, NOW, tty)]
        text = printed(tty, output.print_table, columns, rows)
        assert_inert(text)
        assert shown(note) in text and shown(reason) in text

        def watch_line(fmt: OutputFormat) -> None:
            eventrows._line(output.stdout_console(), e, fmt, True)

        line = printed(tty, watch_line, OutputFormat(kind))
        assert_inert(line)
        assert shown(note) in line


# -- status ---------------------------------------------------------------------------------------


@RUN
@given(name=hostile, message=hostile, log=hostile, warning=hostile, tty=st.booleans())
def test_status(name: str, message: str, log: str, warning: str, tty: bool) -> None:
    crash = CrashReport(
        ContainerProblem("ns", name, name, "CrashLoopBackOff", message, restarts=2,
                         finished_at=message, hint=warning),
        previous_log=[log, message],
    )  # fmt: skip
    report = SchedulerStatus(
        name=name,
        scheduler=Scheduler(name=name, form="deployment", namespace=name, desired=1, ready=1,
                            lease=Lease("ns", name, message, 1.0, 15), problem=message),
        objects=[{"ref": name, "kind": "Deployment", "state": message}],
        access={"subject": name, "checks": [{"access": message, "allowed": False}]},
        rbac={"mode": "leastPrivilege", "clusterRoles": [name], "defaultLeaseUpdate": False},
        version={"server": "v1.36.3", "image": message, "skew": "ok"},
        events=[{"time": "1m", "type": "Warning", "reason": name, "object": name,
                 "message": message}],
        pending_pods=[f"ns/{name}"],
        warnings=[warning],
        problems=[crash],
        metrics={"problem": message, "replicas": []},
        double_booking=[{"message": message, "fix": warning,
                         "rejected": [{"pod": name, "scheduler": name, "message": log}]}],
    )  # fmt: skip
    text = printed(tty, _print_status, report)
    assert_inert(text)
    for value in (name, message, log, warning):
        # a line of text keeps the line breaks of a message; a table cell is one line
        assert terminal.escape(value, terminal.LINES) in text
    assert shown(message) in text  # the Recent events table


# -- why ------------------------------------------------------------------------------------------


@RUN
@given(name=hostile, node_name=hostile, event_note=hostile, tty=st.booleans())
def test_why(name: str, node_name: str, event_note: str, tty: bool) -> None:
    p = pod(name, namespace=name, cpu="8", schedulerName="default-scheduler")
    snap = NodeInfoSnapshot([node(node_name, cpu="2"), node("n-2", cpu="1")], [])
    scheduler = Scheduler(name="default-scheduler", form="process",
                          lease=Lease("kube-system", "kube-scheduler", node_name, 1.0, 15),
                          leader=node_name)  # fmt: skip
    d = diagnose(p, snap, [scheduler], reported=Reported(event=event_note, count=1))
    assert not d.schedulable
    text = printed(tty, lambda: why_view.print_diagnosis(d, True, nodes="all"))
    assert_inert(text)
    assert shown(f"{name}/{name}") in text and shown(node_name) in text
    grouped = printed(tty, lambda: why_view.print_diagnosis(d, True, nodes="grouped"))
    assert_inert(grouped)
    listed = printed(tty, why_view.print_pending, [d], True)
    assert_inert(listed)
    assert shown(name) in listed


# -- logs -----------------------------------------------------------------------------------------


@RUN
@given(lines=st.lists(hostile, min_size=1, max_size=3), pod_name=hostile, tty=st.booleans())
def test_logs(lines: list[str], pod_name: str, tty: bool) -> None:
    stream = [LogLine(pod_name, line, "2026-01-01T00:00:00Z", leader=True) for line in lines]
    stream.append(LogLine("other", "E0101 pods is forbidden [x]", None))

    def draw() -> None:
        logview.Printer(None, True, Grep(None))(stream, 2)

    text = printed(tty, draw)
    assert_inert(text, keep="\n\t")  # Go's stack traces indent with tabs
    for line in lines:
        shown_line = terminal.escape(line, terminal.LOG)
        # On a terminal rich expands a tab to spaces up to the next tab stop, as the terminal
        # itself would: the text between the tabs is what must be there, literally.
        pieces = shown_line.split("\t") if tty else [shown_line]
        assert all(piece in text for piece in pieces), (pieces, text)
    assert "[x]" in text


# -- top nodes ------------------------------------------------------------------------------------


@RUN
@given(node_name=hostile, scheduler=hostile, tty=st.booleans())
def test_top_nodes(node_name: str, scheduler: str, tty: bool) -> None:
    nodes = [node(node_name, cpu="2")]
    pods = [pod("p", node_name=node_name, cpu="3", schedulerName=scheduler)]
    picture = pictures.nodes_picture(placement(nodes, pods))
    text = printed(tty, lambda: output.stdout_console().print(picture))
    assert_inert(text)
    assert shown(node_name) in text and shown(scheduler) in text
    for suffix in (".html", ".svg"):
        assert_export(picture_export.render_export(picture, suffix, scheduler), suffix)


# -- simulate --report ----------------------------------------------------------------------------


def report(reason: str, name: str, node_name: str, snapshot: str) -> SimulationReport:
    nodes = [node(node_name, cpu="2"), node("n-2", cpu="2")]
    candidate = CandidateResult(
        name=name, source=f"{name}/scheduler.yaml", program="builtin", scheduler_names=(name,),
        strategy=name, outcomes=[PodOutcome(f"ns/{name}", None, reason, None, None),
                                 PodOutcome("ns/b", node_name, "", reason, 1.0)],
        preemptions=[], before=placement(nodes, []),
        after=placement(nodes, [pod("b", node_name=node_name, cpu="1", schedulerName=name)]),
        seconds=1.0,
    )  # fmt: skip
    other = CandidateResult(
        name="second", source=snapshot, program="builtin", scheduler_names=("second",),
        strategy=None, outcomes=[PodOutcome(f"ns/{name}", node_name, "", None, 1.0),
                                 PodOutcome("ns/b", None, reason, None, None)],
        preemptions=[], before=placement(nodes, []), after=placement(nodes, []), seconds=1.0,
    )  # fmt: skip
    return SimulationReport(snapshot, 2, 0, 2, 0, node_groups(nodes), [candidate, other],
                            lab=snapshot)  # fmt: skip


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)


def assert_export(page: str, suffix: str) -> None:
    """No element, attribute or control character from the data in an HTML or SVG page: only
    the elements and attributes rich's page is made of, so no link and no script."""
    assert_inert(page)
    if suffix == ".html":
        found = _Tags()
        found.feed(page)
        assert found.tags <= {"html", "head", "meta", "title", "style", "body", "pre", "code",
                              "span"}, found.tags  # fmt: skip
        assert found.attributes <= {"charset", "style", "class"}, found.attributes
        return
    elements = {e.tag.rpartition("}")[2] for e in ET.fromstring(page).iter()}
    assert elements <= {"svg", "style", "defs", "clipPath", "rect", "g", "text", "path",
                        "circle"}, elements  # fmt: skip
    names = {n.rpartition("}")[2] for e in ET.fromstring(page).iter() for n in e.attrib}
    assert "href" not in names


@RUN
@given(reason=hostile, name=hostile, node_name=hostile, snapshot=hostile, tty=st.booleans())
def test_simulate_report(reason: str, name: str, node_name: str, snapshot: str, tty: bool) -> None:
    found = report(reason, name, node_name, snapshot)
    picture = simulate_view.report_picture(found, None)
    text = printed(tty, lambda: output.stdout_console().print(picture))
    assert_inert(text)
    assert shown(reason) in text
    for suffix in (".html", ".svg"):
        page = picture_export.render_export(picture, suffix, f"kschedctl simulate {name}")
        assert_export(page, suffix)


def test_the_issue_s_report_link_stays_text() -> None:
    """Issue 22, example 6: a reason in rich's markup became a live javascript: link."""
    found = report("[link=javascript:alert(document.domain)]x[/link]", "a", "n-1", "snap.yaml")
    page = picture_export.render_export(
        simulate_view.report_picture(found, None), ".html", "kschedctl simulate"
    )
    assert_export(page, ".html")
    assert "[link=javascript:alert(document.domain)]x[/link]" in page


# -- messages and the data formats ----------------------------------------------------------------


@RUN
@given(message=hostile, tty=st.booleans())
def test_messages(message: str, tty: bool) -> None:
    def draw() -> None:
        output.info(message)
        output.warn(message)
        output.echo(message)
        output.print_table(["a"], [[message]])

    text = printed(tty, draw)
    assert_inert(text)
    assert terminal.escape(message, terminal.LINES) in text


def test_the_consoles_never_read_markup() -> None:
    shown = "[link=javascript:alert(1)]x[/link] [bold]y[/] :warning:"
    for tty in (False, True):
        text = printed(tty, lambda: output.stdout_console().print(shown))
        assert text == shown + "\n"
        text = printed(tty, lambda: output.stderr_console().print(shown))
        assert text == shown + "\n"


@RUN
@given(data=st.dictionaries(hostile, hostile | st.lists(hostile, max_size=2), max_size=3))
def test_yaml_and_json_are_exact_and_inert(data: dict[str, Any]) -> None:
    for kind in ("yaml", "json"):
        text = printed(False, output.emit, data, OutputFormat(kind))
        assert_inert(text)
        assert (yaml.safe_load(text) if kind == "yaml" else json.loads(text)) == data
    custom = printed(False, output.emit, data, OutputFormat("custom-columns", "A:.a"))
    assert_inert(custom)


def test_the_sanitiser_writes_escapes_as_kubectl_does() -> None:
    assert terminal.escape("a\x1b[2Jb\rc") == "a^[[2Jb\\rc"  # cli-runtime's EscapeTerminal
    assert terminal.escape("\x9b\x7f\x00\u202e\u2028\U000e0041") == (
        "\\x9b\\x7f\\x00\\u202e\\u2028\\U000e0041"
    )
    assert terminal.escape("a\nb\tc") == "a\\nb\\tc"
    assert terminal.escape("a\nb\tc", terminal.LINES) == "a\nb\\tc"
    assert terminal.escape("é ✓ 日本 [bold]\xa0") == "é ✓ 日本 [bold]\xa0"
    once = terminal.escape("\x1b]8;;http://evil\x1b\\x\x1b]8;;\x1b\\")
    assert terminal.escape(once) == once
