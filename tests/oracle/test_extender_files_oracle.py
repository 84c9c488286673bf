"""The lab's kube-scheduler as the oracle of an extender's TLS files (issue 28).

kube-scheduler reads an extender's caFile/certFile/keyFile when it builds the extenders and
refuses a file it cannot read (``couldn't build extenders: open …: no such file or
directory``). Here both run on this machine, so ``validate`` must give the same verdict, and
kube-scheduler's own words, for each case. The certificates are the lab's PKI (openssl).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kschedctl.lab import pki

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "corpus"))
import agreement  # noqa: E402  (tests/corpus/agreement.py)

pytestmark = pytest.mark.slow

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
EXTENDER = "extenders:\n- urlPrefix: https://127.0.0.1:1\n  filterVerb: filter\n"

# case → (extender lines with {pki} and {missing}, whether kube-scheduler accepts)
CASES = {
    "ca-missing": ("  tlsConfig: {{caFile: {missing}}}\n", False),
    "ca-there": ("  tlsConfig: {{caFile: {pki}/ca.crt}}\n", True),
    "ca-not-pem": ("  tlsConfig: {{caFile: {pki}/sa.pub}}\n", False),
    "ca-a-directory": ("  tlsConfig: {{caFile: {pki}}}\n", False),
    "cert-missing-https": (
        "  enableHTTPS: true\n  tlsConfig: {{certFile: {missing}, keyFile: {pki}/admin.key}}\n",
        False,
    ),
    "key-missing-after-ca": (
        "  tlsConfig: {{caFile: {pki}/ca.crt, certFile: {pki}/admin.crt, keyFile: {missing}}}\n",
        False,
    ),
    "pair-there": (
        "  enableHTTPS: true\n"
        "  tlsConfig: {{caFile: {pki}/ca.crt, certFile: {pki}/admin.crt, keyFile: {pki}/admin.key}}\n",
        True,
    ),
    # no CA, no pair, not insecure, no serverName: client-go never reads the file
    "cert-alone-unread": ("  tlsConfig: {{certFile: {missing}}}\n", True),
    "ca-missing-but-inline-data": ("  tlsConfig: {{caFile: {missing}, caData: {ca_data}}}\n", True),
}


@pytest.fixture(scope="module")
def lab_pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("pki")
    pki.generate(where, "127.0.0.1")
    return where


@pytest.mark.parametrize("case", sorted(CASES))
def test_validate_agrees_with_kube_scheduler(case: str, lab_pki: Path, tmp_path: Path) -> None:
    import base64

    binary = agreement.default_binary()
    if binary is None:
        pytest.skip("no kube-scheduler: `kschedctl lab build` builds it")
    lines, accepted = CASES[case]
    ca_data = base64.b64encode((lab_pki / "ca.crt").read_bytes()).decode()
    body = lines.format(pki=lab_pki, missing=tmp_path / "absent.pem", ca_data=ca_data)
    path = tmp_path / f"{case}.yaml"
    path.write_text(HEAD + EXTENDER + body, encoding="utf-8")
    outcome = agreement.outcome(binary, path)
    assert outcome.oracle_accepts is accepted, outcome
    assert outcome.agrees, outcome
    if not accepted:
        [theirs] = outcome.kube_scheduler.messages  # type: ignore[union-attr]
        theirs = theirs.removeprefix("couldn't build extenders: ")
        assert any(theirs in ours for ours in outcome.validate_problems), (theirs, outcome)
