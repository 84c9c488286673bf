"""The runner process: watch pods, start a worker per runnable pod, adopt after a crash.

``kschedctl lab up`` starts it (``kschedctl lab runner --dir DIR``) after kwok and waits for
its ``/healthz``, which answers 200 once the first pod list has been handled. SIGTERM stops
the runner but not the processes it runs — like a kubelet restart, they keep running, and
``lab down`` stops them by their records; a new runner adopts them.
"""

from __future__ import annotations

import http.server
import logging
import shutil
import signal
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kschedctl.base.errors import KschedError, LabError
from kschedctl.kubeclient.client import Cluster
from kschedctl.kubeclient.watch import SYNC, list_and_watch
from kschedctl.lab import processes
from kschedctl.lab.cluster import Lab
from kschedctl.lab.components import free_port
from kschedctl.lab.images import KUBE_SCHEDULER, program_for
from kschedctl.lab.runner import spawn
from kschedctl.lab.runner.admission import Admitter
from kschedctl.lab.runner.container import Options
from kschedctl.lab.runner.kube import LabApi
from kschedctl.lab.runner.static import StaticPods
from kschedctl.lab.runner.worker import LabInfo, PodWorker

log = logging.getLogger("kschedctl.lab.runner")
RETRY_EVERY = 2.0
STATIC_POD_DIR = "manifests"  # the lab's /etc/kubernetes/manifests


def runnable_containers(pod: Mapping[str, Any]) -> dict[str, str]:
    """Container name -> program, for the containers of ``pod`` the lab really runs."""
    found = {}
    for container in (pod.get("spec") or {}).get("containers") or []:
        program = program_for(container)
        if program:
            found[container["name"]] = program
    return found


def grace_period(pod: Mapping[str, Any]) -> float:
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    value = meta.get("deletionGracePeriodSeconds")
    if value is None:
        value = spec.get("terminationGracePeriodSeconds", 30)
    return float(value)


class Runner:
    def __init__(self, lab_dir: Path, options: Options, health_port: int) -> None:
        self.lab = Lab(lab_dir)
        self.options = options
        self.health_port = health_port
        self.stop = threading.Event()
        self.synced = threading.Event()
        self.workers: dict[str, PodWorker] = {}
        self.lock = threading.RLock()  # the watch thread and the retry loop both sync pods
        self.retry: dict[str, dict[str, Any]] = {}  # uid -> pod whose node could not be checked
        self.adoptable: dict[str, dict[str, dict[str, Any]]] = {}
        self.watch_thread: threading.Thread | None = None

    # -- main ----------------------------------------------------------------------------------

    def run(self) -> int:
        state = self.lab.state()
        if state is None or "kube-scheduler" not in state.components:
            raise LabError(
                f"no lab in {self.lab.dir}", hint="the runner is started by `kschedctl lab up`"
            )
        info = LabInfo(
            dir=self.lab.dir,
            api_port=state.api_port,
            binaries={KUBE_SCHEDULER: Path(state.components["kube-scheduler"].exe)},
            lab_version=state.versions.get("k8s.io/kubernetes", ""),
            free_port=free_port,
        )
        _setup_logging()
        _prefix, how = spawn.hostname_wrapper()
        if _prefix:
            log.info("processes get their pod's hostname via %s", how)
        else:
            log.warning(
                "cannot give processes their pod's hostname (%s); leader-election "
                "identities will carry this host's name",
                how,
            )
        self.api = LabApi(Cluster.connect(str(self.lab.kubeconfig)))
        self.admitter = Admitter(self.api)
        self.info = info
        for _path, record in spawn.read_records(self.lab.dir):
            self.adoptable.setdefault(record["uid"], {})[record.get("container", "")] = record
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stop.set())
        server = self._health_server()
        self.watch_thread = threading.Thread(target=self._watch, name="watch", daemon=True)
        self.watch_thread.start()
        log.info("watching pods on kwok nodes (lab %s, API port %d)", self.lab.dir, info.api_port)
        static = StaticPods(self.api.cluster, self.lab.dir / STATIC_POD_DIR)
        while not self.stop.wait(RETRY_EVERY):
            self._retry()
            self.admitter.retry()
            static.sync()
            for name in self.lab.revive():
                log.warning("%s had exited; started it again (like systemd's Restart=always)", name)
        log.info("stopping; the processes keep running (a new runner adopts them)")
        server.shutdown()
        self.admitter.close()
        with self.lock:
            workers = list(self.workers.values())
        for worker in workers:
            worker.detach()
        for worker in workers:
            worker.join(timeout=5)
        return 0 if self.watch_thread.is_alive() or self.synced.is_set() else 1

    # -- watch ---------------------------------------------------------------------------------

    def _watch(self) -> None:
        try:
            for event in list_and_watch(
                self.api.cluster,
                "/api/v1/pods",
                self.stop,
                on_error=lambda err: log.warning("pod watch: %s; retrying", err),
                fieldSelector="spec.nodeName!=",
            ):
                if event.type == SYNC:
                    self._resync(event.objects)
                elif event.type == "DELETED":
                    self._gone(event.object)
                else:
                    self._sync(event.object)
        except Exception:
            log.exception("the pod watch failed; the runner stops")
            self.stop.set()

    def _resync(self, pods: list[dict[str, Any]]) -> None:
        with self.lock:
            self.admitter.resync(pods)
        seen = set()
        for pod in pods:
            seen.add(pod["metadata"]["uid"])
            self._sync(pod)
        with self.lock:
            gone = [w for uid, w in self.workers.items() if uid not in seen]
        for worker in gone:
            worker.terminate(grace_period(worker.pod))
        if not self.synced.is_set():
            self._clean_orphans()
            self.synced.set()
            log.info("initial sync done: %d pod(s) run", len(self.workers))

    def _sync(self, pod: dict[str, Any]) -> None:
        with self.lock:
            self._sync_locked(pod)

    def _sync_locked(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        uid = meta["uid"]
        try:
            admitted = self.admitter.admitted(pod)  # the kubelet's admission, for every pod
        except KschedError as err:
            ref = f"{meta['namespace']}/{meta['name']}"
            log.warning("%s: cannot admit it yet: %s", ref, err.message)
            self.retry[uid] = pod
            return
        with self.lock:
            worker = self.workers.get(uid)
        if worker is not None:
            worker.update(pod)
            if meta.get("deletionTimestamp"):
                worker.terminate(grace_period(pod))
            return
        if meta.get("deletionTimestamp") or (pod.get("status") or {}).get("phase") in (
            "Succeeded",
            "Failed",
        ):
            return
        if not admitted:
            self.retry.pop(uid, None)
            return
        runnable = runnable_containers(pod)
        if not runnable:
            return
        try:
            if not self.api.is_kwok_node(pod["spec"]["nodeName"]):
                return
        except KschedError as err:
            log.warning(
                "%s/%s: cannot check node %s: %s",
                meta["namespace"],
                meta["name"],
                pod["spec"]["nodeName"],
                err.message,
            )
            self.retry[uid] = pod
            return
        self.retry.pop(uid, None)
        worker = PodWorker(
            pod,
            runnable,
            self.info,
            self.api,
            self.options,
            self.adoptable.pop(uid, {}),
            self._done,
        )
        with self.lock:
            self.workers[uid] = worker
        log.info(
            "%s/%s: runs %s on node %s",
            meta["namespace"],
            meta["name"],
            ", ".join(f"{n} ({p})" for n, p in runnable.items()),
            pod["spec"]["nodeName"],
        )
        worker.start()

    def _gone(self, pod: dict[str, Any]) -> None:
        uid = pod["metadata"]["uid"]
        with self.lock:
            self.admitter.gone(pod)
            self.retry.pop(uid, None)
            worker = self.workers.get(uid)
        if worker is not None:
            worker.terminate(grace_period(pod))

    def _done(self, uid: str) -> None:
        with self.lock:
            self.workers.pop(uid, None)

    def _retry(self) -> None:
        with self.lock:
            pending = list(self.retry.values())
        for pod in pending:
            self._sync(pod)

    def _clean_orphans(self) -> None:
        """Processes and pod directories an earlier runner left for pods no longer run."""
        orphans = [r for records in self.adoptable.values() for r in records.values()]
        self.adoptable.clear()
        with self.lock:
            live = set(self.workers)
        for pod_dir in (self.lab.dir / "pods").glob("*"):
            if pod_dir.name.rsplit("_", 1)[-1] not in live:
                shutil.rmtree(pod_dir, ignore_errors=True)
        if orphans:
            threading.Thread(
                target=_stop_orphans, args=(self.lab.dir, orphans), name="orphans", daemon=True
            ).start()

    # -- health --------------------------------------------------------------------------------

    def _health_server(self) -> http.server.ThreadingHTTPServer:
        runner = self

        class Health(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
                watching = runner.watch_thread is not None and runner.watch_thread.is_alive()
                ok = self.path == "/healthz" and runner.synced.is_set() and watching
                body = b"ok\n" if ok else b"not synced\n"
                self.send_response(200 if ok else (404 if self.path != "/healthz" else 503))
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", self.health_port), Health)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, name="health", daemon=True).start()
        return server


def _stop_orphans(lab_dir: Path, records: list[dict[str, Any]]) -> None:
    for record in records:
        if processes.stop(int(record["pid"]), str(record["exe"]), started=record.get("started")):
            log.info("stopped %s (pid %s): its pod is gone", record.get("name"), record["pid"])
        spawn.record_path(
            lab_dir,
            {
                "metadata": {
                    "namespace": record["namespace"],
                    "name": record["pod"],
                    "uid": record["uid"],
                }
            },
            record["container"],
        ).unlink(missing_ok=True)


def _setup_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    formatter = logging.Formatter(
        "%(asctime)s.%(msecs)03dZ %(levelname)s %(message)s", "%Y-%m-%dT%H:%M:%S"
    )
    formatter.converter = time.gmtime
    handler.setFormatter(formatter)
    root = logging.getLogger("kschedctl")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    root.propagate = False


def main(lab_dir: Path, options: Options, health_port: int) -> int:
    return Runner(lab_dir, options, health_port).run()
