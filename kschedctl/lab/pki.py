"""The lab's PKI, made with the ``openssl`` command (present on every Linux and macOS host).

One CA signs the API server's serving certificate and a client certificate per identity: the
admin (``system:masters``), and the controller-manager and default scheduler under their real
user names, so the built-in RBAC of a kubeadm cluster applies to them as it would in production.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kschedctl.errors import KschedError, NotFoundError

SERVICE_IP = "10.96.0.1"  # first address of the lab's --service-cluster-ip-range


@dataclass(frozen=True)
class ClientIdentity:
    file_stem: str
    user: str
    groups: tuple[str, ...] = ()


CLIENTS = (
    ClientIdentity("admin", "kubernetes-admin", ("system:masters",)),
    ClientIdentity("controller-manager", "system:kube-controller-manager"),
    ClientIdentity("scheduler", "system:kube-scheduler"),
)


def _openssl(*args: str, cwd: Path) -> None:
    openssl = shutil.which("openssl")
    if not openssl:
        raise NotFoundError(
            "openssl is not installed; the lab needs it to make its certificates",
            hint="install it (Debian/Ubuntu: apt install openssl; macOS: brew install openssl)",
        )
    proc = subprocess.run([openssl, *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise KschedError(f"openssl {args[0]} failed: {proc.stderr.strip()}")


def _key(name: str, pki: Path) -> None:
    _openssl(
        "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
        "-out", f"{name}.key", cwd=pki,
    )  # fmt: skip


def _sign(name: str, subject: str, extensions: str, pki: Path) -> None:
    _key(name, pki)
    (pki / f"{name}.ext").write_text(extensions)
    _openssl("req", "-new", "-key", f"{name}.key", "-subj", subject, "-out", f"{name}.csr", cwd=pki)
    _openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-set_serial", str(secrets.randbits(63)), "-days", "3650", "-sha256",
        "-extfile", f"{name}.ext", "-out", f"{name}.crt",
        cwd=pki,
    )  # fmt: skip
    (pki / f"{name}.csr").unlink()
    (pki / f"{name}.ext").unlink()


def generate(pki: Path, advertise_ip: str) -> None:
    """Write ca, apiserver, one client pair per identity, and the service-account key pair."""
    pki.mkdir(parents=True, exist_ok=True)
    _key("ca", pki)
    _openssl(
        "req", "-x509", "-new", "-key", "ca.key", "-subj", "/CN=kschedctl-lab-ca",
        "-days", "3650", "-sha256",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
        "-out", "ca.crt",
        cwd=pki,
    )  # fmt: skip
    names = ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
             "kubernetes.default.svc.cluster.local"]  # fmt: skip
    ips = sorted({"127.0.0.1", SERVICE_IP, advertise_ip})
    san = ",".join([f"DNS:{n}" for n in names] + [f"IP:{ip}" for ip in ips])
    _sign(
        "apiserver",
        "/CN=kube-apiserver",
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        f"extendedKeyUsage=serverAuth\nsubjectAltName={san}\n",
        pki,
    )
    for client in CLIENTS:
        subject = f"/CN={client.user}" + "".join(f"/O={g}" for g in client.groups)
        _sign(
            client.file_stem,
            subject,
            "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
            "extendedKeyUsage=clientAuth\n",
            pki,
        )
    _key("sa", pki)
    _openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)
    for key in pki.glob("*.key"):
        key.chmod(0o600)
