"""``validate --kube-scheduler PATH``: a real kube-scheduler binary as a second judge of a config.

kube-scheduler builds everything a config decides before it needs the API server
(cmd/kube-scheduler/app/server.go ``Setup``, v1.36.3): decode (strict, first document only),
default, validate, then ``scheduler.New`` builds every profile's framework (unknown plugins,
wrong extension points, queueSort/bind counts, plugin args checked at construction). With
``--write-config-to`` it then writes the completed config and exits 0
(options/configfile.go ``LogOrWriteConfig``), so one short run gives the verdict: exit 0 is
"accepted", anything else is "refused" with klog's ``"command failed" err="..."`` line. No API
server is contacted on that path: ``--master`` points at a closed port only so building the
client cannot fail, and ``--secure-port 0`` skips serving (and its self-signed certificates).

Not seen by this judge (kube-scheduler checks them later, when it creates the leader elector:
at once with ``delayCacheUntilActive: true``, after the informers' first sync otherwise):
the leader elector's own rules (``renewDeadline`` must exceed ``retryPeriod`` x 1.2,
client-go tools/leaderelection ``NewLeaderElector``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kschedctl.base.errors import NotFoundError, Problem, SpecError, errors_in, shown_path

# klog's text format: "E1203 06:11:59.146155   19216 run.go:72] message"
_KLOG = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ [^\]]+\] ")
_FAILED = re.compile(r'"command failed" err=("(?:[^"\\]|\\.)*")')
# A config whose clientConnection.kubeconfig names a file absent here: kube-scheduler stops at
# building the client (after validation, before the framework); the judge retries with a stand-in.
_MISSING_KUBECONFIG = re.compile(r"^stat (.+): no such file or directory$")
# Output kept from one run: a refused config prints a few lines; the cap bounds hostile input.
_MAX_OUTPUT = 256 * 1024
_TIMEOUT = 60.0
_STAND_IN_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: unreachable
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: unreachable
  context: {cluster: unreachable, user: nobody}
current-context: unreachable
users:
- name: nobody
  user: {}
"""


def build_hint() -> str:
    """Where ``kschedctl lab build`` puts the kube-scheduler of the lab's pinned version."""
    # the lab's build table only on this error path: validate does not load it otherwise
    from kschedctl.lab import binaries

    k8s = next(m for m in binaries.MODULES if m.key == "k8s")
    built = k8s.cache_path() / "kube-scheduler"
    return f"`kschedctl lab build` builds one: {shown_path(built)}"


@dataclass(frozen=True)
class Verdict:
    """What kube-scheduler said about one config: accepted, or refused with its messages."""

    accepted: bool
    messages: list[str] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""  # e.g. the kubeconfig path the judge replaced by a stand-in
    written: str = ""  # the effective config it wrote (--write-config-to), when it accepted

    def to_dict(self) -> dict[str, Any]:
        """The ``kubeScheduler`` value of ``validate -o json`` (its keys are a contract)."""
        return {"accepted": self.accepted, "messages": list(self.messages)}


def check_binary(path: str | Path) -> Path:
    """``path`` if it is an executable file, else a NotFoundError (exit 5) saying how to get one."""
    binary = Path(path).expanduser()
    if not binary.is_file():
        raise NotFoundError(f"kube-scheduler binary {shown_path(binary)} not found", build_hint())
    if not os.access(binary, os.X_OK):
        raise NotFoundError(
            f"kube-scheduler binary {shown_path(binary)} is not executable",
            f"chmod +x it, or use another one: {build_hint()}",
        )
    return binary


def binary_digest(binary: str | Path) -> str:
    """sha256 of the binary: verdicts are a function of (binary, document)."""
    digest = hashlib.sha256()
    with open(binary, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def judge(binary: str | Path, config: str | Path, *, timeout: float = _TIMEOUT) -> Verdict:
    """Run ``binary`` on ``config`` (its text, or a Path to read) and return its verdict."""
    text = (
        config.read_bytes().decode("utf-8", "surrogateescape")
        if isinstance(config, Path)
        else config
    )
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kschedctl-judge-") as tmp:
        work = Path(tmp)
        verdict = _run(Path(binary), text, work, timeout)
        missing = _missing_kubeconfig(verdict)
        if missing is not None and missing in text:
            stand_in = work / "kubeconfig"
            stand_in.write_text(_STAND_IN_KUBECONFIG, encoding="utf-8")
            verdict = _run(Path(binary), text.replace(missing, str(stand_in)), work, timeout)
            verdict = replace(
                verdict, note=f"kubeconfig {missing} is absent here: judged with a stand-in"
            )
    return replace(verdict, seconds=time.monotonic() - started)


def _run(binary: Path, text: str, work: Path, timeout: float) -> Verdict:
    config = work / "config"
    config.write_bytes(text.encode("utf-8", "surrogateescape"))
    written = work / "written-config.yaml"
    argv = [
        str(binary),
        f"--config={config}",
        f"--write-config-to={written}",
        "--master=https://127.0.0.1:1",
        "--secure-port=0",
    ]
    # A fresh session: on a timeout, Ctrl-C, SIGTERM or SIGHUP (kschedctl.base.signals) the whole
    # process group is killed, nothing outlives us.
    with subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=work,
        start_new_session=True,
    ) as proc:
        try:
            output, _ = proc.communicate(timeout=timeout)
        except BaseException as err:
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            if not isinstance(err, subprocess.TimeoutExpired):
                raise
            return Verdict(
                False, [f"kube-scheduler did not finish within {timeout:.0f}s: no verdict"]
            )
    lines = output[:_MAX_OUTPUT].decode("utf-8", "replace").splitlines()
    if proc.returncode == 0:
        effective = b""
        with (
            contextlib.suppress(OSError),
            open(written, "rb") as handle,
        ):  # a build may not write it
            effective = handle.read(_MAX_OUTPUT)  # bounded like its output
        return Verdict(True, written=effective.decode("utf-8", "replace"))
    return Verdict(False, error_messages(lines) or [f"exit status {proc.returncode}"])


def _missing_kubeconfig(verdict: Verdict) -> str | None:
    if verdict.accepted or len(verdict.messages) != 1:
        return None
    match = _MISSING_KUBECONFIG.match(verdict.messages[0])
    return match.group(1) if match else None


def error_messages(lines: list[str]) -> list[str]:
    """kube-scheduler's error as separate messages, klog prefixes stripped.

    The error is klog's ``"command failed" err="..."`` (a Go-quoted string); an aggregate
    (k8s.io/apimachinery util/errors) prints as ``[a, b, c]`` and is split into its parts.
    Without that line (a crash), the error-level lines are the messages.
    """
    for index, line in enumerate(lines):
        match = _FAILED.search(line)
        if match:
            return split_aggregate(_go_unquote(match.group(1)))
        if line.endswith('"command failed" err=<'):
            # klog writes a multi-line value as err=<, its lines tab-indented, then " >"
            body = []
            for rest in lines[index + 1 :]:
                if rest == " >":
                    break
                body.append(rest.removeprefix("\t"))
            return split_aggregate("\n".join(body).strip())
    errors = [_KLOG.sub("", line) for line in lines if line.startswith(("E", "F"))]
    return [e for e in errors if e and "The manifest file is empty" not in e]


def _go_unquote(quoted: str) -> str:
    try:
        value = json.loads(quoted)
    except ValueError:
        return quoted[1:-1]
    return value if isinstance(value, str) else quoted


# Where an aggregate's next part starts: ", " then a field path and ": " (profiles[0].x: ...),
# or one of the framework's own sentences; a ", " inside a quoted value never splits.
_PART = re.compile(r", (?=[A-Za-z][\w.\[\]-]*: |[a-z][a-z ]+ (?:plugin|profile))")


def split_aggregate(message: str) -> list[str]:
    """``[a, b]`` → ``["a", "b"]``; any other message is one part."""
    if not (message.startswith("[") and message.endswith("]")):
        return [message]
    inner = message[1:-1]
    parts, start = [], 0
    for match in _PART.finditer(inner):
        if _outside_quotes(inner[start : match.start()]):
            parts.append(inner[start : match.start()].strip())
            start = match.end()
    parts.append(inner[start:].strip())
    return [p for p in parts if p] or [message]


def _outside_quotes(text: str) -> bool:
    """Whether ``text`` ends outside a double-quoted Go string (escapes respected)."""
    quoted, escaped = False, False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = quoted
        elif char == '"':
            quoted = not quoted
    return not quoted


# A ConfigMap value kube-scheduler would be pointed at: it names the kind or the group, or it
# has the top-level profiles key of a config that forgot both (kube-scheduler refuses that one).
@dataclass(frozen=True)
class JudgedConfig:
    """One config kube-scheduler can be asked about: where it is, and its text."""

    where: str  # "" for the whole file, else e.g. ConfigMap/x.data[config.yaml]
    text: str


def targets(text: str, source: str) -> list[JudgedConfig]:
    """The configs of one file that kube-scheduler would read, as ``validate`` finds them.

    A config file is handed over whole (kube-scheduler reads its first document); a ConfigMap
    hands over each ``data`` value holding a KubeSchedulerConfiguration; a kschedctl spec hands
    over the config ``render`` writes for it. Text kschedctl cannot parse is handed over whole:
    kube-scheduler may well read it (a JSON document is JSON to it).
    """
    # the YAML reader and renderer only for this option: plain `validate` does not pay
    from kschedctl.model.config.decode import holds_config
    from kschedctl.model.config.schema import AliasBudget, YamlError, parse_yaml

    try:
        docs = parse_yaml(text, AliasBudget())
    except YamlError:
        return [JudgedConfig("", text)]
    found: list[JudgedConfig] = []
    manifests = False
    late_config = False  # a config after another document: kube-scheduler reads the first
    for index, doc in enumerate(docs):
        if not isinstance(doc, dict):
            continue
        kind, api = doc.get("kind"), str(doc.get("apiVersion", ""))
        if index and (kind == "KubeSchedulerConfiguration" or "kubescheduler.config.k8s.io" in api):
            late_config = True
        where = f"[{index}]." if len(docs) > 1 else ""
        if kind == "ConfigMap":
            manifests = True
            data = doc.get("data")
            name = (
                (doc.get("metadata") or {}).get("name")
                if isinstance(doc.get("metadata"), dict)
                else None
            )
            for key, value in (data if isinstance(data, dict) else {}).items():
                if isinstance(value, str) and holds_config(value):
                    label = (
                        f"{where}ConfigMap/{name}.data[{key}]"
                        if name
                        else f"{where}ConfigMap.data[{key}]"
                    )
                    found.append(JudgedConfig(label, value))
        elif api.startswith("kschedctl.") or kind == "Scheduler":
            manifests = True
            rendered = _rendered_config(doc, source)
            if rendered is not None:
                found.append(JudgedConfig(f"{where}rendered config".lstrip("."), rendered))
        elif (
            kind != "KubeSchedulerConfiguration"
            and "kubescheduler.config.k8s.io" not in api
            and kind
        ):
            manifests = True
    if late_config:
        found.insert(0, JudgedConfig("", text))
    if found or manifests:
        return found
    return [JudgedConfig("", text)]


def _rendered_config(doc: dict[str, Any], source: str) -> str | None:
    """The config ``render`` writes for a spec; None if the spec is invalid or runs no
    kube-scheduler build (``program: builtin``; ``custom`` runs one with plugins of its own)."""
    # on use: the renderer (Jinja) only for a spec file
    from kschedctl.render.context import config_file
    from kschedctl.spec import spec_from_dict

    spec, problems = spec_from_dict(doc, source)
    if spec is None or problems or spec.program == "builtin":
        return None
    return config_file(spec, spec.scheduler_config())


@dataclass(frozen=True)
class FileVerdict:
    """kube-scheduler's verdict on every config of one file, folded into one."""

    verdicts: list[tuple[str, Verdict]]

    @property
    def accepted(self) -> bool:
        return all(v.accepted for _, v in self.verdicts)

    @property
    def messages(self) -> list[str]:
        many = len(self.verdicts) > 1
        return [
            f"{where}: {m}" if many and where else m
            for where, v in self.verdicts
            for m in v.messages
        ]

    def to_dict(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "messages": self.messages}


def judge_file(binary: str | Path, path: str | Path) -> FileVerdict | None:
    """kube-scheduler's verdict on the configs of ``path``; None if it holds none."""
    # on use, like the renderer above
    from kschedctl.base import userfile

    target = Path(path)
    if userfile.path_kind(target) == "directory":
        from kschedctl.spec import SPEC_FILE  # on use (a workspace directory)

        target = target / SPEC_FILE
    try:
        text = userfile.read_user_file(target)
    except (NotFoundError, SpecError):
        return None  # validate reports the unreadable file itself
    found = targets(text, str(target))
    if not found:
        return None
    return FileVerdict([(t.where, judge(binary, t.text)) for t in found])


def is_valid(problems: list[Problem]) -> bool:
    """kschedctl's verdict: no problem of severity error."""
    return not errors_in(problems)
