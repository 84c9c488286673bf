"""The lab's kube-scheduler as the oracle of YAML 1.1 booleans (issue 28).

For every spelling go-yaml v2 reads as a boolean (and a few it does not), one config sets every
boolean field of a KubeSchedulerConfiguration to it; kube-scheduler's effective config
(``--write-config-to``) must hold the value kschedctl decoded, and ``validate`` must accept
or refuse exactly as kube-scheduler does (a quoted spelling, a boolean key, leader election
judged as on).
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.model.config.decode import decode_config_text
from kschedctl.ops.judge import judge

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "corpus"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
import agreement  # noqa: E402  (tests/corpus/agreement.py)
from test_config_yaml_booleans import FALSE, HEAD, STRINGS, TRUE  # noqa: E402

pytestmark = pytest.mark.slow

# Every boolean field at once; the extender is never called (--write-config-to exits first).
ALL_FIELDS = """\
leaderElection:
  leaderElect: {v}
enableProfiling: {v}
enableContentionProfiling: {v}
delayCacheUntilActive: {v}
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: InterPodAffinity
    args:
      ignorePreferredTermsOfExistingPods: {v}
extenders:
- urlPrefix: http://127.0.0.1:1
  filterVerb: filter
  enableHTTPS: {v}
  nodeCacheCapable: {v}
  ignorable: {v}
  tlsConfig:
    insecure: {v}
  managedResources:
  - name: example.com/gpu
    ignoredByScheduler: {v}
"""
PATHS: list[list[Any]] = [
    ["leaderElection", "leaderElect"],
    ["enableProfiling"],
    ["enableContentionProfiling"],
    ["delayCacheUntilActive"],
    ["profiles", 0, "pluginConfig", "InterPodAffinity", "ignorePreferredTermsOfExistingPods"],
    ["extenders", 0, "enableHTTPS"],
    ["extenders", 0, "nodeCacheCapable"],
    ["extenders", 0, "ignorable"],
    ["extenders", 0, "tlsConfig", "insecure"],
    ["extenders", 0, "managedResources", 0, "ignoredByScheduler"],
]
# validate vs kube-scheduler, accept or refuse (values: whether the binary accepts).
VERDICTS = {
    "leader-on": ("leaderElection:\n  leaderElect: ON\n  leaseDuration: 1s\n", False),
    "leader-On": ("leaderElection:\n  leaderElect: On\n  leaseDuration: 1s\n", False),
    "leader-OFF": ("leaderElection:\n  leaderElect: OFF\n  leaseDuration: 1s\n", True),
    "leader-quoted-on": ('leaderElection:\n  leaderElect: "on"\n', False),
    "leader-oN": ("leaderElection:\n  leaderElect: oN\n", False),
    "insecure-ON-with-ca": (
        "extenders:\n- urlPrefix: http://127.0.0.1:1\n  tlsConfig: {insecure: ON, caData: Zm9v}\n",
        False,
    ),
    "key-on": ("on: 1\n", False),
    "profiling-Y": ("enableProfiling: Y\n", True),
}


def _binary() -> Path:
    binary = agreement.default_binary()
    if binary is None:
        pytest.skip("no kube-scheduler: `kschedctl lab build` builds it")
    return binary


def _value(doc: Any, path: list[Any]) -> Any:
    for step in path:
        if isinstance(doc, list) and isinstance(step, str):  # pluginConfig by plugin name
            doc = next(c["args"] for c in doc if c["name"] == step)
        else:
            doc = doc[step] if isinstance(doc, list) else doc.get(step)
    return doc


def _effective(binary: Path, spelling: str) -> tuple[str, list[Any], list[Any]]:
    text = HEAD + ALL_FIELDS.format(v=spelling)
    verdict = judge(binary, text)
    assert verdict.accepted, (spelling, verdict.messages)
    written = yaml.safe_load(verdict.written)
    ours = decode_config_text(text).doc
    # an omitempty false is absent from what kube-scheduler writes
    theirs = [bool(_value(written, p)) for p in PATHS]
    return spelling, theirs, [_value(ours, p) for p in PATHS]


def test_effective_values_match_kube_scheduler() -> None:
    binary = _binary()
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda s: _effective(binary, s), TRUE + FALSE))
    for spelling, theirs, ours in results:
        assert theirs == [spelling in TRUE] * len(PATHS), (spelling, theirs)
        assert ours == theirs, (spelling, ours, theirs)
    print(f"\n{len(results)} spellings x {len(PATHS)} fields: kschedctl reads what kube-scheduler")


@pytest.mark.parametrize("spelling", STRINGS[:3])
def test_other_casings_are_refused_by_both(spelling: str, tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + f"enableProfiling: {spelling}\n", encoding="utf-8")
    outcome = agreement.outcome(_binary(), path)
    assert outcome.oracle_accepts is False
    assert outcome.agrees, outcome


@pytest.mark.parametrize("case", sorted(VERDICTS))
def test_validate_agrees_with_kube_scheduler(case: str, tmp_path: Path) -> None:
    body, accepted = VERDICTS[case]
    path = tmp_path / f"{case}.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    outcome = agreement.outcome(_binary(), path)
    assert outcome.oracle_accepts is accepted, outcome
    assert outcome.agrees, outcome
