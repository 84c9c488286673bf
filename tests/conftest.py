"""Shared test setup.

Unit and CLI tests point KUBECONFIG at a file that does not exist, so they can never reach a
real cluster by accident. The e2e tests (tests/e2e) bring up one lab for the session and set
their own kubeconfig explicitly.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _no_real_cluster(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    missing = tmp_path_factory.getbasetemp() / "no-such-kubeconfig"
    monkeypatch.setenv("KUBECONFIG", str(missing))


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lab PKI (CA, serving and client certificates) for tests that run real TLS servers."""
    from kschedctl.lab.pki import generate

    directory = tmp_path_factory.mktemp("pki") / "pki"
    generate(directory, "127.0.0.1")
    return directory
