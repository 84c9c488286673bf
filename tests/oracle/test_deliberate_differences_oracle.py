"""Each row of the table of deliberate differences (docs/commands/offline.md, "Measured
agreement") is true of the lab's kube-scheduler: what its ``--write-config-to`` run says,
what ``validate`` says, and, for the leader elector's rule, the start-up refusal the row
describes (kube-scheduler run for real with ``delayCacheUntilActive: true``: no API server is
needed to reach the leader elector).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "corpus"))
import agreement  # noqa: E402  (tests/corpus/agreement.py)

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
LEADER_AT = (
    "leaderElection:\n  leaderElect: true\n  leaseDuration: 15s\n  renewDeadline: {renew}\n"
    "  retryPeriod: {retry}\n"
)
LEADER = LEADER_AT.format(renew="12s", retry="10s")
# A CERTIFICATE block whose contents are no certificate ("abc").
BAD_X509 = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCllXSmoKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

# The table's first cell → configs of that case, kube-scheduler's --write-config-to verdict,
# validate's verdict.
ROWS: dict[str, tuple[list[str], bool, bool]] = {
    "`renewDeadline` ≤ `retryPeriod` × 1.2": (
        [LEADER, LEADER + "delayCacheUntilActive: true\n"],
        True,
        False,
    ),
    "a control character in a value": (
        [
            'profiles:\n- schedulerName: "a\\tb"\n',
            "profiles:\n- schedulerName: !!binary YWJj\n",
            "profiles:\n- schedulerName: !local abc\n",
        ],
        True,
        False,
    ),
    "extender `caData` that is PEM but no valid X.509 certificate": (
        [f"extenders:\n- urlPrefix: http://127.0.0.1:1\n  tlsConfig: {{caData: {BAD_X509}}}\n"],
        False,
        True,
    ),
}


def _binary() -> Path:
    binary = agreement.default_binary()
    if binary is None:
        pytest.skip("no kube-scheduler: `kschedctl lab build` builds it")
    return binary


def test_the_docs_table_is_these_rows() -> None:
    text = (ROOT / "docs" / "commands" / "offline.md").read_text(encoding="utf-8")
    table = text.split("Every verdict agrees except these deliberate differences:", 1)[1]
    cells = re.findall(r"^\| (.+?) \| (?:accepted|refused) \|", table, re.M)
    assert len(cells) == len(ROWS)
    assert all(any(c.startswith(row) for c in cells) for row in ROWS), cells


@pytest.mark.parametrize("row", sorted(ROWS))
def test_row_holds(row: str, tmp_path: Path) -> None:
    configs, oracle_accepts, validate_valid = ROWS[row]
    for i, body in enumerate(configs):
        path = tmp_path / f"{i}.yaml"
        path.write_text(HEAD + body, encoding="utf-8")
        outcome = agreement.outcome(_binary(), path)
        assert outcome.oracle_accepts is oracle_accepts, outcome
        assert outcome.validate_valid is validate_valid, outcome


# 3600ms against 3s: client-go truncates 1.2 x 3e9 ns to exactly 3.6e9 and refuses.
@pytest.mark.parametrize(("renew", "retry"), [("12s", "10s"), ("3600ms", "3s")])
def test_leader_elector_refuses_without_an_api_server(
    renew: str, retry: str, tmp_path: Path
) -> None:
    config = tmp_path / "config.yaml"
    leader = LEADER_AT.format(renew=renew, retry=retry)
    config.write_text(HEAD + leader + "delayCacheUntilActive: true\n", encoding="utf-8")
    # No --write-config-to: it starts for real, and stops at the leader elector.
    argv = [str(_binary()), f"--config={config}", "--master=https://127.0.0.1:1"]
    proc = subprocess.run(
        [*argv, "--secure-port=0"], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert (
        "couldn't create leader elector: renewDeadline must be greater than "
        "retryPeriod*JitterFactor" in proc.stderr
    )
    # validate says it up front, in the same words
    [problem] = agreement.outcome(_binary(), config).validate_problems
    assert "renewDeadline must be greater than retryPeriod*JitterFactor" in problem
