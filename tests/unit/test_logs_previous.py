"""`kschedctl logs --previous` (ops.logs): which forms have a previous container, and errors."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.base.errors import NotFoundError, UsageError
from kschedctl.k8s.logs import Replica
from kschedctl.observe.loglines import Leadership, LogLine
from kschedctl.observe.schedulers import Scheduler
from kschedctl.ops import logs


def _serve(monkeypatch: pytest.MonkeyPatch, entry: Scheduler, replicas: list[Replica]) -> None:
    monkeypatch.setattr(logs, "snapshot", lambda _cluster: None)
    monkeypatch.setattr(logs, "discover", lambda _snap: [entry])
    monkeypatch.setattr(logs, "replicas", lambda _cluster, _entry: replicas)
    monkeypatch.setattr(logs, "leadership", lambda _cluster, _entry: Leadership())


PODS = [Replica("ns", "s-1", "kube-scheduler"), Replica("ns", "s-2", "kube-scheduler")]


def test_previous_reads_every_replicas_previous_container(monkeypatch: pytest.MonkeyPatch) -> None:
    _serve(monkeypatch, Scheduler("s", "deployment", namespace="ns"), PODS)
    calls: list[dict[str, Any]] = []

    def read_all(_cluster: Any, chosen: list[Replica], **kw: Any) -> list[LogLine]:
        calls.append(kw)
        kw["warn"]('s-2: previous terminated container "kube-scheduler" in pod "s-2" not found')
        return [LogLine("s-1", "Error: unknown flag: --bogus")]

    monkeypatch.setattr(logs, "read_all", read_all)
    warnings: list[str] = []
    stream = logs.open_logs(None, None, logs.LogsRequest("s", previous=True), warnings.append)  # type: ignore[arg-type]
    assert [line.text for line in stream.lines] == ["Error: unknown flag: --bogus"]
    assert calls[0]["previous"] is True and stream.sources == 2
    assert warnings and "s-2" in warnings[0]


def test_previous_when_no_replica_restarted_is_not_found(monkeypatch: pytest.MonkeyPatch) -> None:
    _serve(monkeypatch, Scheduler("s", "pod", namespace="ns"), PODS[:1])

    def read_all(_cluster: Any, chosen: list[Replica], **kw: Any) -> list[LogLine]:
        kw["warn"]('s-1: previous terminated container "kube-scheduler" in pod "s-1" not found')
        return []

    monkeypatch.setattr(logs, "read_all", read_all)
    with pytest.raises(NotFoundError, match="no previous container to read: s-1: previous") as err:
        logs.open_logs(None, None, logs.LogsRequest("s", previous=True))  # type: ignore[arg-type]
    assert "only a container that restarted has one" in err.value.hint


def test_previous_and_follow_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _serve(monkeypatch, Scheduler("s", "pod", namespace="ns"), PODS)
    with pytest.raises(UsageError, match="cannot be combined"):
        logs.open_logs(None, None, logs.LogsRequest("s", follow=True, previous=True))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("form", "hint"),
    [("service", "journalctl -u s.service keeps every run"), ("process", "wherever that process")],
)
def test_host_forms_have_no_previous_container(
    monkeypatch: pytest.MonkeyPatch, form: str, hint: str
) -> None:
    _serve(monkeypatch, Scheduler("s", form), [])
    with pytest.raises(UsageError, match="--previous reads a pod's previous container") as err:
        logs.open_logs(None, None, logs.LogsRequest("s", previous=True))  # type: ignore[arg-type]
    assert hint in err.value.hint
