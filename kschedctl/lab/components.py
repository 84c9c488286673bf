"""The lab's control-plane components: starting one, recording it, waiting for it, probing it.

Every process starts through :func:`start` (or :func:`start_again`, from its record), which
records it (pid + executable + start time, its argv and env) in ``lab.json`` the moment it
starts; :func:`wait` polls its health endpoint and turns an early exit into an error with the
end of its log; :func:`probe` and :func:`etcd_tls` speak each component's TLS.
"""

from __future__ import annotations

import socket
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from kschedctl.base.errors import LabError
from kschedctl.lab import pki, processes
from kschedctl.lab.state import ComponentState, LabDir, LabState

Progress = Callable[[str], None]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def advertise_address() -> str:
    """The host's outbound address (kube-apiserver refuses to advertise loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("192.0.2.254", 9))  # no packet is sent for UDP connect
            return str(sock.getsockname()[0])
        except OSError:
            return "127.0.0.1"


def start_component(
    lab: LabDir,
    state: LabState,
    name: str,
    bins: dict[str, Path],
    port: int,
    env: dict[str, str],
    args: list[str],
    exe: str | None = None,
    argv0: str | None = None,
) -> None:
    exe = exe or str(bins[name])
    log = lab.log(name)
    argv = [argv0 or exe, *args]
    extra = {k: v for k, v in env.items() if k == "HOME"}
    pid = processes.start(argv, log, processes.proxy_free_environment(extra), cwd=lab.dir)
    state.components[name] = ComponentState(
        pid=pid, exe=exe, port=port, log=str(log), argv=argv, env=extra,
        started=processes.start_ticks(pid),
    )  # fmt: skip
    lab._save(state)


def start_again(lab: LabDir, component: ComponentState) -> None:
    """Start a recorded component again (its argv, log and env) and record the process."""
    pid = processes.start(
        component.argv, Path(component.log),
        processes.proxy_free_environment(component.env), cwd=lab.dir,
    )  # fmt: skip
    component.pid, component.started = pid, processes.start_ticks(pid)


def wait(
    lab: LabDir, state: LabState, name: str, url: str, timeout: float, progress: Progress
) -> None:
    progress(f"waiting for {name} ({url})")
    component = state.components[name]
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if not component.running():
            raise LabError(
                f"{name} exited during start-up; the end of {component.log}:\n"
                + processes.log_tail(Path(component.log)),
                hint=_exit_hint(Path(component.log)),
            )
        ok, last = probe(lab, url)
        if ok:
            return
        time.sleep(0.2)
    raise LabError(
        f"{name} did not become healthy within {timeout:.0f}s ({url}: {last}); "
        f"the end of {component.log}:\n" + processes.log_tail(Path(component.log)),
    )


def probe(lab: LabDir, url: str) -> tuple[bool, str]:
    """GET a health endpoint: the API server with the admin identity, etcd with its health
    check client (verified against etcd's CA), others unverified."""
    context = None
    if url.startswith("https://"):
        if f":{_api_port(lab)}/" in url:
            context = ssl.create_default_context(cafile=str(lab.pki / "ca.crt"))
            context.load_cert_chain(str(lab.pki / "admin.crt"), str(lab.pki / "admin.key"))
        elif f":{_etcd_port(lab)}/" in url:
            context = etcd_tls(lab, pki.ETCD_HEALTHCHECK_CLIENT)
        else:
            context = ssl._create_unverified_context()  # self-signed component certs
    handler = urllib.request.ProxyHandler({})
    opener = urllib.request.build_opener(handler, urllib.request.HTTPSHandler(context=context))
    try:
        with opener.open(url, timeout=3) as response:
            body = response.read(200).decode(errors="replace")
            return response.status == 200, body
    except (urllib.error.URLError, OSError, ssl.SSLError) as err:
        return False, str(getattr(err, "reason", err))


def etcd_tls(lab: LabDir, client: str | None) -> ssl.SSLContext:
    """A TLS context that trusts etcd's CA and presents ``client``'s certificate (None:
    none)."""
    context = ssl.create_default_context(cafile=str(pki.etcd_file(lab.pki, "ca", "crt")))
    if client is not None:
        context.load_cert_chain(
            str(pki.etcd_file(lab.pki, client, "crt")),
            str(pki.etcd_file(lab.pki, client, "key")),
        )
    return context


def _api_port(lab: LabDir) -> int:
    state = lab.state()
    return state.api_port if state else -1


def _etcd_port(lab: LabDir) -> int:
    state = lab.state()
    etcd = state.components.get("etcd") if state else None
    return etcd.port if etcd else -1


def _exit_hint(log: Path) -> str | None:
    tail = processes.log_tail(log, 40)
    if "address already in use" in tail:
        return "another process took the port; run `kschedctl lab up` again (it picks free ports)"
    return None
