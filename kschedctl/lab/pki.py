"""The lab's PKI, made with the ``openssl`` command (present on every Linux and macOS host).

One CA signs the API server's serving certificate and a client certificate per identity: the
admin (``system:masters``), and the controller-manager and default scheduler under their real
user names, so the built-in RBAC of a kubeadm cluster applies to them as it would in production.

etcd has a CA of its own (``etcd/``, as kubeadm does): it accepts only clients that present a
certificate of that CA — the API server's ``apiserver-etcd-client`` and the lab's health check —
never one of the Kubernetes identities, which would otherwise reach the store past RBAC.

Private keys are 0600 from the moment openssl writes them (it runs under umask 077), in
directories of mode 0700.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kschedctl.base.errors import KschedError, NotFoundError
from kschedctl.lab.private import private_dir

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
    proc = subprocess.run(
        [openssl, *args], cwd=cwd, capture_output=True, text=True, umask=0o077
    )  # every file it writes is private from the start
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


ETCD_DIR = "etcd"
ETCD_SERVER = "server"  # serving and peer certificate of the lab's one etcd member
ETCD_APISERVER_CLIENT = "apiserver-etcd-client"
ETCD_HEALTHCHECK_CLIENT = "healthcheck-client"
_CLIENT_EXTENSIONS = (
    "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
    "extendedKeyUsage=clientAuth\n"
)


def _ca(pki: Path, common_name: str) -> None:
    _key("ca", pki)
    _openssl(
        "req", "-x509", "-new", "-key", "ca.key", "-subj", f"/CN={common_name}",
        "-days", "3650", "-sha256",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
        "-out", "ca.crt",
        cwd=pki,
    )  # fmt: skip


def _etcd(pki: Path) -> None:
    """etcd's own CA, its serving certificate, and the two clients it accepts."""
    etcd = private_dir(pki / ETCD_DIR)
    _ca(etcd, "kschedctl-lab-etcd-ca")
    _sign(
        ETCD_SERVER,
        "/CN=kschedctl-lab-etcd",
        # clientAuth too: it is also the member's peer certificate, as kubeadm's etcd certs are.
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n",
        etcd,
    )
    _sign(ETCD_APISERVER_CLIENT, "/CN=kube-apiserver-etcd-client", _CLIENT_EXTENSIONS, etcd)
    _sign(ETCD_HEALTHCHECK_CLIENT, "/CN=kube-etcd-healthcheck-client", _CLIENT_EXTENSIONS, etcd)


def etcd_file(pki: Path, stem: str, suffix: str) -> Path:
    """``<pki>/etcd/<stem>.<suffix>``: ca.crt, server.key, apiserver-etcd-client.crt, …"""
    return pki / ETCD_DIR / f"{stem}.{suffix}"


def generate(pki: Path, advertise_ip: str) -> None:
    """Write ca, apiserver, one client pair per identity, the service-account key pair, and
    etcd's CA with its server and client pairs."""
    private_dir(pki)
    _ca(pki, "kschedctl-lab-ca")
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
        _sign(client.file_stem, subject, _CLIENT_EXTENSIONS, pki)
    _key("sa", pki)
    _openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)
    _etcd(pki)
    for key in pki.rglob("*.key"):
        key.chmod(0o600)
    for public in [*pki.rglob("*.crt"), pki / "sa.pub"]:
        public.chmod(0o644)  # certificates and public keys are not secret
