"""The real kube-scheduler as the oracle of ``validate``: on every corpus document
(tests/corpus/configs, sources in tests/corpus/SOURCES.md) ``kschedctl validate
--replaces-default`` must say valid exactly when kube-scheduler v1.36.3 (the lab's build)
accepts the config, except the deliberate differences below.

kube-scheduler is run live (``kschedctl.ops.judge``: ``--write-config-to``, no API server,
about 0.1 s a document, the corpus in ~25 s on 4 threads), so no verdict is cached.
``python tests/corpus/agreement.py`` prints the disagreements grouped by class.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kschedctl.lab import binaries

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "corpus"))
import agreement  # noqa: E402  (tests/corpus/agreement.py: one comparison for test and script)

pytestmark = pytest.mark.slow

# file → why kschedctl's verdict deliberately differs from kube-scheduler's --write-config-to run.
# (A ConfigMap wrapping a config is not a difference: both judges check the config it holds.)
DELIBERATE: dict[str, str] = {
    "mut-le-renew-within-retry-jitter.yaml": (
        "kube-scheduler refuses renewDeadline <= retryPeriod x 1.2 when it creates the leader "
        "elector (client-go leaderelection.NewLeaderElector), after --write-config-to exits: "
        "test_deliberate_differences_oracle.py shows it; validate reports it up front"
    ),
}


def _binary() -> Path:
    k8s = next(m for m in binaries.MODULES if m.key == "k8s")
    return k8s.cache_path() / "kube-scheduler"


@pytest.fixture(scope="module")
def outcomes() -> list[agreement.Outcome]:
    binary = _binary()
    if not binary.is_file():
        pytest.skip(f"no kube-scheduler at {binary}: `kschedctl lab build` builds it")
    return agreement.run(binary)


def test_corpus_is_large_enough() -> None:
    assert len(agreement.documents()) >= 200


def test_deliberate_differences_name_corpus_files() -> None:
    names = {p.name for p in agreement.documents()}
    assert set(DELIBERATE) <= names


def test_validate_agrees_with_kube_scheduler(outcomes: list[agreement.Outcome]) -> None:
    judged = [o for o in outcomes if o.oracle_accepts is not None]
    deliberate = [o for o in judged if o.name in DELIBERATE and not o.agrees]
    disagreements = [o for o in judged if o.name not in DELIBERATE and not o.agrees]
    counts = agreement.summary(outcomes)
    print(
        f"\ndocuments: {counts['documents']} (judged {len(judged)}), "
        f"both accept: {counts['bothAccept']}, both reject: {counts['bothReject']}, "
        f"deliberate differences: {len(deliberate)}, disagreements: {len(disagreements)}"
    )
    assert [o for o in outcomes if o.oracle_accepts is None] == [], "documents with no config"
    lines = [
        f"{o.name}: kube-scheduler "
        + ("accepted" if o.oracle_accepts else "refused: " + "; ".join(o.kube_scheduler.messages))  # type: ignore[union-attr]
        + " / validate "
        + ("valid" if o.validate_valid else "invalid: " + "; ".join(o.validate_problems))
        for o in disagreements
    ]
    assert not lines, f"{len(lines)} disagreement(s):\n" + "\n".join(lines)
