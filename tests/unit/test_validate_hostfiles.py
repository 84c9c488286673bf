"""Extender TLS files kube-scheduler reads when it builds the extenders (issue 28).

Which files it reads is pure (model/config/validation_settings.extender_tls_files); whether
they are there is looked up on this machine (ops/validate_hostfiles.py), here in tmp_path.
The lab's kube-scheduler confirms the verdicts: tests/oracle/test_extender_files_oracle.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kschedctl.model.config.validation_settings import extender_tls_files
from kschedctl.ops.validate import check_path
from kschedctl.ops.validate_hostfiles import extender_file_problems

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _doc(tls: dict[str, Any], **extender: Any) -> dict[str, Any]:
    return {"extenders": [{"urlPrefix": "http://x", "tlsConfig": tls, **extender}]}


@pytest.mark.parametrize(
    ("tls", "extender", "read"),
    [
        ({"caFile": "/a"}, {}, ["caFile"]),
        (
            {"caFile": "/a", "certFile": "/c", "keyFile": "/k"},
            {},
            ["caFile", "certFile", "keyFile"],
        ),
        ({"certFile": "/c", "keyFile": "/k"}, {}, ["certFile", "keyFile"]),
        # no CA, no pair, not insecure, no serverName: client-go builds no TLS config
        ({"certFile": "/c"}, {}, []),
        ({"keyFile": "/k"}, {}, []),
        # enableHTTPS without a CA is insecure: then every file is read
        ({"certFile": "/c"}, {"enableHTTPS": True}, ["certFile"]),
        ({"certFile": "/c", "serverName": "s"}, {}, ["certFile"]),
        ({"certFile": "/c", "insecure": True}, {}, ["certFile"]),
        # inline data wins over the file
        ({"caFile": "/a", "caData": "Zm9v"}, {}, []),
        ({"certFile": "/c", "certData": "Zm9v", "keyFile": "/k"}, {}, ["keyFile"]),
        # a CA with insecure is refused before any file is read
        ({"caFile": "/a", "insecure": True}, {}, []),
        ({"caFile": ""}, {}, []),
    ],
)
def test_which_files_kube_scheduler_reads(
    tls: dict[str, Any], extender: dict[str, Any], read: list[str]
) -> None:
    files = extender_tls_files(_doc(tls, **extender), "x.")
    assert [f.rsplit(".", 1)[1] for f, _ in files] == read
    assert all(f.startswith("x.extenders[0].tlsConfig.") for f, _ in files)


def test_every_extender_in_order() -> None:
    doc = {"extenders": [{"tlsConfig": {"caFile": "/1"}}, "junk", {"tlsConfig": {"caFile": "/2"}}]}
    assert [p for _, p in extender_tls_files(doc)] == ["/1", "/2"]


def test_missing_file_in_kube_schedulers_words(tmp_path: Path) -> None:
    missing = tmp_path / "ca.crt"
    [problem] = extender_file_problems(_doc({"caFile": str(missing)}))
    assert problem.path == "extenders[0].tlsConfig.caFile"
    assert problem.message.startswith(
        f"couldn't build extenders: open {missing}: no such file or directory ("
    )
    assert "on its own host" in problem.message
    assert problem.is_error


def test_a_directory_and_a_ca_without_pem(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text("not a certificate\n")
    doc = _doc({"caFile": str(ca), "certFile": str(tmp_path), "keyFile": str(ca)})
    problems = extender_file_problems(doc)
    assert [p.path.rsplit(".", 1)[1] for p in problems] == ["caFile", "certFile"]
    assert "unable to parse bytes as PEM block" in problems[0].message
    assert f"read {tmp_path}: is a directory" in problems[1].message


def test_files_that_are_there(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text(PEM)
    key = tmp_path / "k"
    key.write_text("anything: client-go reads a cert/key file pair only when it connects\n")
    assert (
        extender_file_problems(_doc({"caFile": str(ca), "certFile": str(key), "keyFile": str(key)}))
        == []
    )


HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def test_validate_reports_a_config_file_but_not_a_configmap(tmp_path: Path) -> None:
    body = "extenders:\n- urlPrefix: http://x\n  tlsConfig: {caFile: /nonexistent/ca.crt}\n"
    config = tmp_path / "c.yaml"
    config.write_text(HEAD + body)
    problems = check_path(str(config), replaces_default=True).problems
    assert [p.path for p in problems] == ["extenders[0].tlsConfig.caFile"]
    # In a ConfigMap the path is in the pod's volumes: nothing this machine can tell.
    inner = (HEAD + body).replace("\n", "\n    ")
    cm = tmp_path / "cm.yaml"
    cm.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: kube-system}\n"
        f"data:\n  config.yaml: |\n    {inner}\n"
    )
    assert check_path(str(cm), replaces_default=True).problems == []


def test_a_ca_of_other_pem_blocks(tmp_path: Path) -> None:
    # client-go createErrorParsingCAData skips blocks that are not certificates
    ca = tmp_path / "sa.pub"
    ca.write_text("-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----\n")
    [problem] = extender_file_problems(_doc({"caFile": str(ca)}))
    assert problem.message.endswith("no valid certificate authority data seen")
